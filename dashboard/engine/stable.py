"""Stable-entry selection (§9.1), budget fitting (§9.2: skip and continue) and the
cross-session tail (§8: 10 newest summaries, others' first 3, last 800 characters).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from dashboard.records import Memory, Summary

from ..records import plain
from .lazy import MadeOnRead
from .render import STABLE_BUDGET, render_stable, stable_fact, stable_room

STRUCTURAL_TYPES = frozenset({"decision", "constraint", "workflow", "profile", "preference"})
INCIDENTAL_KEPT = 3
TAIL_READ = 10
TAIL_KEPT = 3
TAIL_CHARS = 800
TAIL_SEPARATOR = "\n\n---\n\n"


def all_entries(project: Iterable[Memory], user: Iterable[Memory]) -> list[Memory]:
    """Live rows of the project file then the user file (each in ``ORDER BY created_at``
    order), stably sorted by created_at."""
    rows = [m for m in project if m.deleted_at is None]
    rows += [m for m in user if m.deleted_at is None]
    # Two already-sorted runs: timsort merges them in one linear pass.
    rows.sort(key=attrgetter("created_at"))
    return rows


@dataclass(frozen=True)
class Selected:
    """One stable entry: why it was selected and whether the budget let it in."""

    memory: Memory
    because: str  # "user scope", "type <t>", "recent incidental 1/3", ...
    cost: int  # characters its fact takes, newline included
    shown: bool
    room_before: int  # characters left when the fit reached this entry

    @property
    def evicted(self) -> bool:
        """True when selected but left out by the 2000-character budget."""
        return not self.shown

    def to_dict(self) -> dict[str, Any]:
        """Plain form for the JSON twin."""
        return {
            **plain(self.memory, "id", "title", "scope", "type", "store"),
            **plain(self, "because", "cost", "shown", "room_before"),
            "evicted_reason": ("over budget: needs %d, %d left" % (self.cost, self.room_before))
            if not self.shown
            else "",
        }


BECAUSE = {t: f"type {t}" for t in STRUCTURAL_TYPES}


def select(entries: Sequence[Memory]) -> list[tuple[Memory, str]]:
    """The stable set with the rule that picked each entry, created_at ascending. ``entries`` is the
    all-entries order. A repeated id (the same id in both files) is taken once by the always-rules, as agentao
    does."""
    seen: set[str] = set()
    picked: list[tuple[Memory, str]] = []
    incidental: list[Memory] = []
    added = False
    for m in entries:
        if m.id in seen:
            continue
        if m.scope == "user":
            seen.add(m.id)
            picked.append((m, "user scope"))
        elif m.type in STRUCTURAL_TYPES:
            seen.add(m.id)
            picked.append((m, BECAUSE[m.type]))
        else:
            incidental.append(m)
    # reverse=True keeps equal stamps in their original order, like agentao.
    incidental.sort(key=attrgetter("updated_at"), reverse=True)
    for n, m in enumerate(incidental[:INCIDENTAL_KEPT], 1):
        if m.id not in seen:
            seen.add(m.id)
            picked.append((m, f"recent incidental {n}/{INCIDENTAL_KEPT}"))
            added = True
    if added:
        picked.sort(key=lambda pair: pair[0].created_at)
    return picked


# No fact is shorter than one with every field empty: once the room left is
# below that, the walk can stop, as no older entry could fit either.
MIN_FACT_COST = len(stable_fact(Memory("", "", "", "", "", "", confidence=""))) + 1
_COSTS_HELD = 400_000


class FactCosts:
    """Characters each row's stable fact takes (newline included), remembered per row object
    (a snapshot hands out the same record while it lives; hashing one costs more)."""

    def __init__(self) -> None:
        self._held: dict[int, tuple[Memory, int]] = {}

    def __call__(self, memory: Memory) -> int:
        hit = self._held.get(id(memory))
        if hit is not None and hit[0] is memory:
            return hit[1]
        cost = len(stable_fact(memory)) + 1
        if len(self._held) >= _COSTS_HELD:
            self._held.clear()
        self._held[id(memory)] = (memory, cost)
        return cost


class Fitted(MadeOnRead[Selected]):
    """Every selected entry with its fit, in selection order (oldest first); :class:`Selected`
    records are made on access, so a large block costs only the facts it shows."""

    def __init__(
        self,
        picked: Sequence[tuple[Memory, str]],
        costs: list[int],
        shown_at: list[int],
        rooms_after: list[int],
    ):
        self._picked = picked
        self._costs = costs
        self._rooms = rooms_after  # room before any shown entry, then after each
        self._order = [-i for i in shown_at]  # shown indices negated: ascending, for bisect

    def __len__(self) -> int:
        return len(self._picked)

    @property
    def picked(self) -> Sequence[tuple[Memory, str]]:
        """``select``'s answer these entries were fitted from: (row, the rule that picked it)."""
        return self._picked

    def _rows(self, start: int, stop: int) -> list[Selected]:
        return [self._one(i) for i in range(start, stop)]

    def _one(self, i: int) -> Selected:
        memory, because = self._picked[i]
        newer_shown = bisect_left(self._order, -i)  # shown entries newer than i
        shown = newer_shown < len(self._order) and self._order[newer_shown] == -i
        return Selected(memory, because, self._costs[i], shown, self._rooms[newer_shown])

    def shown(self) -> list[Selected]:
        """The entries the block holds, in selection order."""
        return [self[-j] for j in reversed(self._order)]

    def listed(self, evicted: int) -> list[tuple[int, Selected]]:
        """(index, entry) of the entries the block holds and of the first ``evicted`` left out by
        its budget, in selection order: what a page lists of thousands chosen, without making
        the rest."""
        found: list[int] = []
        i = 0
        while len(found) < evicted and i < len(self._picked):  # the left out are the unshown ones
            if not self._shown(i):
                found.append(i)
            i += 1
        at = sorted({*found, *(-j for j in self._order)})
        return [(i, self[i]) for i in at]

    def _shown(self, i: int) -> bool:
        at = bisect_left(self._order, -i)
        return at < len(self._order) and self._order[at] == -i

    def block(self, tail: str) -> str:
        """The ``<memory-stable>`` block these entries and ``tail`` make (``""`` if none)."""
        return render_stable((stable_fact(s.memory) for s in self.shown()), tail)

    def find(self, memory: Memory) -> Selected | None:
        """The entry of the row with ``memory``'s id in ``memory``'s file, or None if not selected."""
        for i in range(len(self._picked)):
            m = self._picked[i][0]
            if m.id == memory.id and m.store == memory.store:
                return self[i]
        return None


_SKIP = 256  # entries compared at C speed (min of a slice) while none can fit


def fit(
    picked: Sequence[tuple[Memory, str]],
    tail: str,
    cost: Callable[[Memory], int] | None = None,
    budget: int = STABLE_BUDGET,
    costs: list[int] | None = None,
) -> Fitted:
    """Decide which selected entries the budget shows, in selection order. Walks newest-created first,
    skipping an entry that does not fit and going on. ``cost`` gives a fact's length plus newline (a
    :class:`FactCosts` remembers it); ``costs``, when known, is that for every entry of ``picked``."""
    if costs is None:
        cost = cost or FactCosts()
        costs = [cost(m) for m, _ in picked]
    room = stable_room(tail, budget)
    shown_at: list[int] = []
    rooms = [room]
    i = len(picked) - 1
    while i >= 0 and room >= MIN_FACT_COST:
        if costs[i] <= room:
            shown_at.append(i)
            room -= costs[i]
            rooms.append(room)
            i -= 1
            continue
        # The next older entry that fits: whole slices that cannot are passed over.
        i -= 1
        while i >= 0:
            start = max(0, i - _SKIP + 1)
            if min(costs[start : i + 1]) > room:
                i = start - 1
                continue
            while costs[i] > room:
                i -= 1
            break
    return Fitted(picked, costs, shown_at, rooms)


def session_tail(summaries: Iterable[Summary], session_id: str | None) -> str:
    """The cross-session tail agentao puts in ``<session>`` (may be ``""``), from the project
    file's summaries (rowid order or newest first); ``session_id`` None: a new session."""
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
            text = text[cut + 1 :]
    return text.strip()
