"""Stable-entry selection, the cross-session tail and budget fitting.

Selection (contract §9.1): user-scope rows and structural types always; of
the other ("incidental") rows, the 3 most recently updated.  Fitting (§9.2):
walk newest-created first and *skip and continue* when a fact does not fit.
Tail (§8): the 10 newest summaries of every session, minus the current
session's, first 3 kept, shown oldest first, last 800 characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from dashboard.records import Memory, Summary

from .render import STABLE_BUDGET, stable_room

STRUCTURAL_TYPES = frozenset({"decision", "constraint", "workflow", "profile", "preference"})
INCIDENTAL_KEPT = 3
TAIL_READ = 10
TAIL_KEPT = 3
TAIL_CHARS = 800
TAIL_SEPARATOR = "\n\n---\n\n"


def all_entries(project: Iterable[Memory], user: Iterable[Memory]) -> list[Memory]:
    """Live rows of the project file then the user file, stably sorted by created_at.

    Each list must already be in the file's ``ORDER BY created_at`` order
    (which is rowid order among equal stamps): at equal ``created_at`` the
    input order decides, and project rows stay before user rows.
    """
    rows = [m for m in project if m.deleted_at is None]
    rows += [m for m in user if m.deleted_at is None]
    rows.sort(key=lambda m: m.created_at)
    return rows


@dataclass(frozen=True)
class Selected:
    """One stable entry: why it was selected and whether the budget let it in."""

    memory: Memory
    because: str          # "user scope", "type <t>", "recent incidental 1/3", ...
    cost: int             # characters its fact takes, newline included
    shown: bool
    room_before: int      # characters left when the fit reached this entry

    @property
    def evicted(self) -> bool:
        """True when selected but left out by the 2000-character budget."""
        return not self.shown

    def to_dict(self) -> dict:
        """Plain form for the JSON twin."""
        return {"id": self.memory.id, "title": self.memory.title,
                "scope": self.memory.scope, "type": self.memory.type,
                "store": self.memory.store, "because": self.because,
                "cost": self.cost, "shown": self.shown,
                "room_before": self.room_before,
                "evicted_reason": ("over budget: needs %d, %d left"
                                   % (self.cost, self.room_before)) if not self.shown else ""}


def select(entries: Sequence[Memory]) -> list[tuple[Memory, str]]:
    """The stable set with the rule that picked each entry, created_at ascending.

    ``entries`` is the all-entries order.  A repeated id (the same id in both
    files) is taken once by the always-rules, as agentao does.
    """
    seen: set[str] = set()
    picked: list[tuple[Memory, str]] = []
    incidental: list[Memory] = []
    for m in entries:
        if m.id in seen:
            continue
        if m.scope == "user":
            seen.add(m.id)
            picked.append((m, "user scope"))
        elif m.type in STRUCTURAL_TYPES:
            seen.add(m.id)
            picked.append((m, f"type {m.type}"))
        else:
            incidental.append(m)
    # reverse=True keeps equal stamps in their original order, like agentao.
    incidental.sort(key=lambda m: m.updated_at, reverse=True)
    for n, m in enumerate(incidental[:INCIDENTAL_KEPT], 1):
        if m.id not in seen:
            seen.add(m.id)
            picked.append((m, f"recent incidental {n}/{INCIDENTAL_KEPT}"))
    picked.sort(key=lambda pair: pair[0].created_at)
    return picked


def fit(picked: Sequence[tuple[Memory, str]], tail: str,
        fact_text: Callable[[Memory], str], budget: int = STABLE_BUDGET) -> list[Selected]:
    """Decide which selected entries the budget shows, in selection order.

    Newest-created first; an entry that does not fit is skipped and the walk
    continues with older ones, so a small old fact can get in past a big new
    one.  ``fact_text`` renders one fact (callers pass a cached renderer).
    """
    room = stable_room(tail, budget)
    out: list[Selected | None] = [None] * len(picked)
    for i in range(len(picked) - 1, -1, -1):
        memory, because = picked[i]
        cost = len(fact_text(memory)) + 1
        shown = room - cost >= 0
        out[i] = Selected(memory, because, cost, shown, room)
        if shown:
            room -= cost
    return out  # type: ignore[return-value]


def session_tail(summaries: Iterable[Summary], session_id: str | None) -> str:
    """The cross-session tail agentao puts in ``<session>`` (may be ``""``).

    ``summaries`` are the project file's rows in rowid order (or already
    newest first, as SQLite returns them); rows from the user file are
    ignored because agentao never reads them.  ``session_id``
    None stands for a brand-new session, which owns no summary.
    """
    rows = [s for s in summaries if s.store == "project"]
    # Stable sort: equal stamps keep rowid order, matching SQLite's sorter.
    rows.sort(key=lambda s: s.created_at, reverse=True)
    others = [s for s in rows[:TAIL_READ] if s.session_id != session_id]
    if not others:
        return ""
    text = TAIL_SEPARATOR.join(s.summary_text for s in reversed(others[:TAIL_KEPT]))
    if len(text) > TAIL_CHARS:
        text = text[-TAIL_CHARS:]
        cut = text.find("\n")
        if cut != -1:
            text = text[cut + 1:]
    return text.strip()
