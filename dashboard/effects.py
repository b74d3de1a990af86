"""What an action would do to the ``<memory-stable>`` block a brand-new session gets.

"Before" is the engine's block over the rows as they are.  "After" is the
same engine over the rows as the action would leave them:

* a save (approve, edit, the first half of a move) substitutes the Memory
  record the write would produce, built from the very ``PlannedSave`` the
  write executes: the overwritten row keeps its id, position and
  ``created_at``; a new row goes last with ``created_at = updated_at = now``;
* a soft delete (and the second half of a move) hides the row's id, as the
  preview screen's what-if does.

Ids and dates never appear in the block, so the stand-in id of a new row and
a clock a few seconds early do not change the text; ``updated_at = now``
still makes the row the most recent one, which is what the incidental rule
looks at.

"Before" comes from ``engine.stable_view`` with the preview screen's cache (the
rows are the files' rows).  "After" runs the engine's stable path itself —
``all_entries`` -> ``select`` -> ``fit`` -> ``render_stable``, the four steps
``preview`` takes for this block — because the block needs no tokens, and
indexing hypothetical rows for every card of the review page cost ~25 ms a
card at 2,000 memories.  The tests pin the two paths together: each
prediction equals ``preview``'s block over the files after the real write.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .contract import PlannedSave
from .engine import all_entries, session_tail, stable_view
from .engine.render import STABLE_BUDGET, render_stable, stable_fact
from .engine.stable import INCIDENTAL_KEPT, STRUCTURAL_TYPES, FactCosts, fit, select
from .preview_source import Snapshot
from .records import Memory
from .store.writes import AUTO_CAP, now as agentao_now

NEW_ID = "(new)"   # never a real id: agentao's are hex


@dataclass(frozen=True)
class BlockEffect:
    """The stable block before and after one action, with its size against the budget."""

    before: str
    after: str
    budget: int

    @property
    def before_size(self) -> int:
        return len(self.before)

    @property
    def after_size(self) -> int:
        return len(self.after)

    @property
    def delta(self) -> int:
        return self.after_size - self.before_size

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def diff(self) -> str:
        """A compact unified diff (one line of context) of the two blocks."""
        return "\n".join(difflib.unified_diff(
            self.before.splitlines(), self.after.splitlines(),
            "memory-stable now", "memory-stable after", n=1, lineterm=""))

    def to_dict(self) -> dict:
        return {"before_chars": self.before_size, "after_chars": self.after_size,
                "budget": self.budget, "delta": self.delta, "changed": self.changed,
                "diff": self.diff, "after": self.after}


def current_block(snap: Snapshot, hidden=frozenset()) -> str:
    """The block agentao would send a new session now (what ``/memory status`` sizes)."""
    # query="" : the stable block depends on neither the query nor the clock.
    return stable_view(snap.project, snap.user, snap.summaries, hidden_ids=hidden,
                       cache=snap.cache, version=snap.version)[0]


def stable_block(project, user, summaries, hidden=frozenset(),
                 costs: FactCosts | None = None) -> str:
    """The engine's stable path over any rows (new session), without indexing them.

    ``costs`` remembers fact lengths of rows that outlive the call (pass the
    snapshot cache's when computing several effects over the same snapshot).
    """
    entries = [m for m in all_entries(project, user) if m.id not in hidden]
    tail = session_tail(summaries, None)
    fitted = fit(select(entries), tail, costs)
    return render_stable((stable_fact(s.memory) for s in fitted.shown()), tail)


def would_save(plan: PlannedSave, existing: Memory | None, stamp: str | None = None) -> Memory:
    """The row ``writes.save_memory(plan)`` would leave: updated in place, or new."""
    stamp = stamp or agentao_now()
    return Memory(
        id=existing.id if existing else NEW_ID, scope=plan.scope, type=plan.type,
        key_normalized=plan.key_normalized, title=plan.title, content=plan.content,
        tags=tuple(plan.tags), keywords=tuple(plan.keywords), source=plan.source,
        confidence=plan.confidence, sensitivity="normal",
        created_at=existing.created_at if existing else stamp, updated_at=stamp,
        store=plan.store)


def _substitute(rows: list[Memory], row: Memory) -> list[Memory]:
    out = [row if m.id == row.id else m for m in rows]
    return out if row.id in {m.id for m in rows} else out + [row]


def _over_auto_cap(rows: list[Memory], scope: str) -> list[str]:
    # An auto save makes the write soft-delete the oldest auto rows beyond the cap
    # (writes._enforce_auto_cap, as agentao does); the prediction hides the same ones.
    auto = [m for m in rows if m.scope == scope and m.live and m.source == "auto"]
    auto.sort(key=lambda m: (m.updated_at, m.created_at))
    return [m.id for m in auto[:max(0, len(auto) - AUTO_CAP)]]


class Memo:
    """Work shared by several effects over one snapshot (one request's review cards)."""

    def __init__(self) -> None:
        self._ranked: list | None = None
        self._always: set[int] = set()

    def contenders(self, snap: Snapshot, removed: int) -> set[int]:
        """Rows (by identity) that can be selected once ``removed`` rows are gone and one added.

        Every always-rule row, plus the ``INCIDENTAL_KEPT + removed`` most recently
        updated incidental rows in the engine's own order: no other row can reach
        the top three, so the engine over just these selects what it would over all.
        """
        if self._ranked is None:
            incidental = []
            for m in all_entries(snap.project, snap.user):
                if m.scope == "user" or m.type in STRUCTURAL_TYPES:
                    self._always.add(id(m))
                else:
                    incidental.append(m)
            incidental.sort(key=lambda m: m.updated_at, reverse=True)   # select()'s sort
            self._ranked = incidental
        return self._always | {id(m) for m in self._ranked[:INCIDENTAL_KEPT + removed]}


def save_effect(snap: Snapshot, plan: PlannedSave, existing: Memory | None,
                hide=(), memo: Memo | None = None) -> BlockEffect:
    """Before/after for a planned save (plus ids soft-deleted by the same action)."""
    memo = memo or Memo()
    row = would_save(plan, existing)
    project, user = list(snap.project), list(snap.user)
    if plan.store == "user":
        user = _substitute(user, row)
    else:
        project = _substitute(project, row)
    if plan.source == "auto":
        hide = {*hide, *_over_auto_cap(user if plan.store == "user" else project, plan.scope)}
    keep = memo.contenders(snap, len(hide) + 1)
    project = [m for m in project if m is row or id(m) in keep]
    user = [m for m in user if m is row or id(m) in keep]
    after = stable_block(project, user, snap.summaries, frozenset(hide), snap.cache.costs)
    return BlockEffect(current_block(snap), after, STABLE_BUDGET)


def delete_effect(snap: Snapshot, memory: Memory) -> BlockEffect:
    """Before/after for soft-deleting ``memory`` (its id hidden, as the preview's what-if)."""
    return BlockEffect(current_block(snap), current_block(snap, frozenset({memory.id})),
                       STABLE_BUDGET)
