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
looks at.  Hypothetical rows go through their own EngineCache, never the
preview screen's (that one is keyed on the change counters, and these rows
are not in the files).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime, timezone

from .contract import PlannedSave
from .engine import EngineCache, preview
from .preview_source import Snapshot
from .records import Memory
from .store.writes import now as agentao_now

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


def _block(project, user, summaries, hidden=frozenset(), cache=None, version=None):
    # query="" : the stable block does not depend on the query or the clock.
    result = preview(project, user, summaries, query="", now=datetime.now(timezone.utc),
                     hidden_ids=hidden, cache=cache, version=version)
    return result.stable_block, result.stable_budget.limit


def current_block(snap: Snapshot) -> str:
    """The block agentao would send a new session now (what ``/memory status`` sizes)."""
    return _block(snap.project, snap.user, snap.summaries, cache=snap.cache,
                  version=snap.version)[0]


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


def _effect(snap: Snapshot, whatif: EngineCache, project, user, hidden) -> BlockEffect:
    before = current_block(snap)
    after, budget = _block(project, user, snap.summaries, frozenset(hidden), cache=whatif)
    return BlockEffect(before, after, budget)


def save_effect(snap: Snapshot, whatif: EngineCache, plan: PlannedSave,
                existing: Memory | None, hide=()) -> BlockEffect:
    """Before/after for a planned save (plus ids soft-deleted by the same action)."""
    row = would_save(plan, existing)
    project, user = list(snap.project), list(snap.user)
    if plan.store == "user":
        user = _substitute(user, row)
    else:
        project = _substitute(project, row)
    return _effect(snap, whatif, project, user, hide)


def delete_effect(snap: Snapshot, memory: Memory) -> BlockEffect:
    """Before/after for soft-deleting ``memory`` (its id hidden, as the preview's what-if)."""
    before = current_block(snap)
    after, budget = _block(snap.project, snap.user, snap.summaries, frozenset({memory.id}),
                           cache=snap.cache, version=snap.version)
    return BlockEffect(before, after, budget)


def whatif_cache(extensions: dict) -> EngineCache:
    """The app's cache for hypothetical rows, created on first use."""
    return extensions.setdefault("effects_cache", EngineCache())
