"""The stable selection kept up to date across versions instead of rebuilt per change.

``select`` walks every live row; at 100,000 rows that walk costs more than
the rest of a page, and an agent saving in a loop asks for it several times
a second.  :class:`Selection` holds what the walk produces — the always-rule
rows in all-entries order and the incidental rows ranked by ``updated_at`` —
and moves to the next version by the rows that changed (found by object
identity: the store's copy hands out the same record while a row is
unchanged), with binary searches.  Any case the patch would have to reason
about (the same id in both files, two rows in one place, many changes) is
rebuilt whole with ``select``'s own walk, so the answer is always
``select(entries)``; tests compare the two.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable, Sequence

from dashboard.records import Memory

from .render import STABLE_BUDGET
from .stable import (BECAUSE, INCIDENTAL_KEPT, STRUCTURAL_TYPES, FactCosts, Fitted, all_entries,
                     fit, select)

_PATCH_LIMIT = 256   # changed rows beyond which a rebuild is cheaper


def _rank(m: Memory) -> tuple:
    # all_entries' order: created_at, then project before user, then the
    # file's own (scope, key) order, which is unique among live rows.
    return (m.created_at, m.store != "project", m.scope, m.key_normalized)


def _always(m: Memory) -> bool:
    return m.scope == "user" or m.type in STRUCTURAL_TYPES


def _because(m: Memory) -> str:
    return "user scope" if m.scope == "user" else BECAUSE[m.type]


class Selection:
    """One version's stable candidates; immutable once made, shared between threads."""

    def __init__(self, lists: tuple[Sequence[Memory], Sequence[Memory]], always: list,
                 always_keys: list, always_costs: list[int], incidental: list[Memory],
                 incidental_keys: list, by_id: dict[str, Memory], ranks: set, cost: FactCosts):
        self._lists = lists                # (project, user) rows this version was made from
        self._always = always              # (row, why) of always-rule rows, all-entries order
        self._always_keys = always_keys    # their _rank
        self._always_costs = always_costs  # their fact lengths (fit needs every one)
        self._cost = cost
        self._incidental = incidental      # ascending (updated_at, rank)
        self._incidental_keys = incidental_keys
        self._by_id = by_id                # memory id -> record, unique (else a FullWalk)
        self._ranks = ranks                # all-entries places, unique likewise

    @staticmethod
    def build(project: Sequence[Memory], user: Sequence[Memory],
              cost: FactCosts | None = None) -> Selection | FullWalk:
        """From each file's live rows in the file's listing order; ``cost`` remembers
        fact lengths across versions (the engine cache's)."""
        cost = cost or FactCosts()
        entries = all_entries(project, user)
        by_id = {m.id: m for m in entries}
        rank_of = [_rank(m) for m in entries]
        ranks = set(rank_of)
        labelled = (all(m.store == "project" for m in project)
                    and all(m.store == "user" for m in user))
        if len(by_id) != len(entries) or len(ranks) != len(entries) or not labelled:
            return FullWalk(project, user, cost)
        always = [(m, r) for m, r in zip(entries, rank_of) if _always(m)]
        incidental = sorted(((m.updated_at, r), m) for m, r in zip(entries, rank_of)
                            if not _always(m))   # keys unique: rows never compared
        return Selection((project, user), [(m, _because(m)) for m, _ in always],
                         [r for _, r in always], [cost(m) for m, _ in always],
                         [m for _, m in incidental], [k for k, _ in incidental],
                         by_id, ranks, cost)

    def moved_to(self, project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        """The selection for new rows, patched from this one when few rows changed."""
        gone, new = [], []
        for before, after in zip(self._lists, (project, user)):
            left, came = _difference(before, after)
            gone += [m for m in left if m.deleted_at is None]
            new += [m for m in came if m.deleted_at is None]
        if not gone and not new:
            return self
        if len(gone) + len(new) > _PATCH_LIMIT:
            return Selection.build(project, user, self._cost)
        patched = self._patched((project, user), gone, new)
        return patched if patched is not None else Selection.build(project, user, self._cost)

    def with_row(self, row: Memory) -> Selection | FullWalk:
        """This selection as if ``row`` were saved in its file: it takes the place
        of the live row with its id there, or is added."""
        old = self._by_id.get(row.id)
        if old is not None and old.store != row.store:
            return self._walk().with_row(row)
        # A hypothetical selection, only ever fitted: it keeps this one's lists.
        patched = self._patched(self._lists, [old] if old is not None else [], [row])
        return patched if patched is not None else self._walk().with_row(row)

    def _patched(self, lists: tuple, gone: list[Memory], new: list[Memory]) -> Selection | None:
        # None when a new row shares an id or a place with a row that stays:
        # then select()'s tie rules decide, over a full walk.
        always = (list(self._always), list(self._always_keys), list(self._always_costs))
        incidental = (list(self._incidental), list(self._incidental_keys))
        by_id, ranks = dict(self._by_id), set(self._ranks)
        for m in gone:
            del by_id[m.id]
            ranks.discard(_rank(m))
            if _always(m):
                _remove(always, _rank(m))
            else:
                _remove(incidental, (m.updated_at, _rank(m)))
        for m in new:
            if m.id in by_id or _rank(m) in ranks:
                return None
            by_id[m.id] = m
            ranks.add(_rank(m))
            if _always(m):
                _insert(always, _rank(m), ((m, _because(m)), self._cost(m)))
            else:
                _insert(incidental, (m.updated_at, _rank(m)), (m,))
        return Selection(lists, always[0], always[1], always[2], incidental[0], incidental[1],
                         by_id, ranks, self._cost)

    def _walk(self) -> FullWalk:
        return FullWalk(*self._lists, self._cost)

    def picked(self, hidden: Iterable[str] = frozenset()) -> list[tuple[Memory, str]]:
        """What ``select`` gives for the rows minus ``hidden`` ids, created_at ascending."""
        return self._picked(frozenset(hidden))[0]

    def fit(self, tail: str, hidden: Iterable[str] = frozenset(),
            budget: int = STABLE_BUDGET) -> Fitted:
        """``stable.fit`` over :meth:`picked`, with the fact lengths this selection keeps."""
        picked, costs, keys = self._picked(frozenset(hidden))
        return fit(picked, tail, budget=budget, costs=costs, keys=keys)

    def _picked(self, hidden: frozenset) -> tuple[list, list[int], list[tuple]]:
        lists = (list(self._always), list(self._always_keys), list(self._always_costs))
        for memory_id in hidden:
            m = self._by_id.get(memory_id)
            if m is not None and _always(m):
                _remove(lists, _rank(m))
        picked, keys, costs = lists
        for n, m in enumerate(self._top_incidental(hidden), 1):
            # select() appends these after the always-rule rows and sorts stably
            # by created_at: each goes after everything with its stamp so far
            # ((stamp, 2) sorts after every rank with that stamp: 2 > True).
            at = bisect_left(keys, (m.created_at, 2))
            keys.insert(at, _rank(m))
            picked.insert(at, (m, f"recent incidental {n}/{INCIDENTAL_KEPT}"))
            costs.insert(at, self._cost(m))
        return picked, costs, keys

    def _top_incidental(self, hidden: frozenset) -> list[Memory]:
        # Newest updated_at first; equal stamps in all-entries order (select's
        # stable reverse sort).  Gather from the end, ties included, then order.
        group: list[Memory] = []
        for m in reversed(self._incidental):
            if len(group) >= INCIDENTAL_KEPT and m.updated_at != group[-1].updated_at:
                break
            if m.id not in hidden:
                group.append(m)
        group.sort(key=_rank)
        group.sort(key=lambda m: m.updated_at, reverse=True)
        return group[:INCIDENTAL_KEPT]


class FullWalk:
    """Rows a patch cannot follow (an id in both files, two rows in one place):
    every answer is ``select``'s own walk over all-entries order."""

    def __init__(self, project: Sequence[Memory], user: Sequence[Memory], cost: FactCosts):
        self._project = [m for m in project if m.deleted_at is None]
        self._user = [m for m in user if m.deleted_at is None]
        self._cost = cost

    def moved_to(self, project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        return Selection.build(project, user, self._cost)

    def with_row(self, row: Memory) -> FullWalk:
        """As :meth:`Selection.with_row`, in the file's listing order after the save."""
        rows = self._user if row.store == "user" else self._project
        swapped = [row if m.id == row.id else m for m in rows]
        if not any(m.id == row.id for m in rows):
            swapped.append(row)
        swapped.sort(key=_rank)   # within one file: (created_at, scope, key)
        if row.store == "user":
            return FullWalk(self._project, swapped, self._cost)
        return FullWalk(swapped, self._user, self._cost)

    def picked(self, hidden: Iterable[str] = frozenset()) -> list[tuple[Memory, str]]:
        hidden = frozenset(hidden)
        return select([m for m in all_entries(self._project, self._user) if m.id not in hidden])

    def fit(self, tail: str, hidden: Iterable[str] = frozenset(),
            budget: int = STABLE_BUDGET) -> Fitted:
        return fit(self.picked(hidden), tail, self._cost, budget)


def _difference(before: Sequence[Memory], after: Sequence[Memory]) -> tuple[list, list]:
    """Rows only in ``before`` and rows only in ``after``, by identity.

    The common head and tail are measured with slice comparisons (C speed;
    a list compares its items by identity first), so an agent appending rows
    costs a few binary-search steps, not a pass over 100,000 rows.  A row
    replaced by an equal one counts as unchanged, which changes no answer.
    """
    head = _common_head(before, after)
    before, after = before[head:], after[head:]
    tail = _common_head(before[::-1], after[::-1])
    before, after = before[:len(before) - tail], after[:len(after) - tail]
    was = dict(zip(map(id, before), before))
    now = dict(zip(map(id, after), after))
    return [was[k] for k in was.keys() - now.keys()], [now[k] for k in now.keys() - was.keys()]


def _common_head(a: Sequence, b: Sequence) -> int:
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:   # a[:lo] == b[:lo]; a[:hi + 1] != b[:hi + 1]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _remove(lists: tuple, key) -> None:
    # lists = (rows, keys, *parallel); keys are unique in a Selection.
    at = bisect_left(lists[1], key)
    for values in lists:
        del values[at]


def _insert(lists: tuple, key, items: tuple) -> None:
    # ``items``: the row, then one value per parallel list.
    at = bisect_left(lists[1], key)
    lists[1].insert(at, key)
    for values, item in zip((lists[0], *lists[2:]), items):
        values.insert(at, item)
