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

from .stable import INCIDENTAL_KEPT, STRUCTURAL_TYPES, all_entries, select

_PATCH_LIMIT = 256   # changed rows beyond which a rebuild is cheaper


def _rank(m: Memory) -> tuple:
    # all_entries' order: created_at, then project before user, then the
    # file's own (scope, key) order, which is unique among live rows.
    return (m.created_at, m.store != "project", m.scope, m.key_normalized)


def _always(m: Memory) -> bool:
    return m.scope == "user" or m.type in STRUCTURAL_TYPES


def _because(m: Memory) -> str:
    return "user scope" if m.scope == "user" else f"type {m.type}"


class Selection:
    """One version's stable candidates; immutable once made, shared between threads."""

    def __init__(self, rows: dict[int, Memory], always: list[Memory], always_keys: list,
                 incidental: list[Memory], incidental_keys: list, by_id: dict[str, Memory],
                 ranks: set):
        self._rows = rows                  # id(record) -> record, every live row
        self._always = always              # (row, why) of always-rule rows, all-entries order
        self._always_keys = always_keys    # their _rank
        self._incidental = incidental      # ascending (updated_at, rank)
        self._incidental_keys = incidental_keys
        self._by_id = by_id                # memory id -> record, unique (else a FullWalk)
        self._ranks = ranks                # all-entries places, unique likewise

    @staticmethod
    def build(project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        """From each file's live rows in the file's listing order."""
        entries = all_entries(project, user)
        by_id = {m.id: m for m in entries}
        ranks = {_rank(m) for m in entries}
        labelled = (all(m.store == "project" for m in project)
                    and all(m.store == "user" for m in user))
        if len(by_id) != len(entries) or len(ranks) != len(entries) or not labelled:
            return FullWalk(project, user)
        always = [(m, _because(m)) for m in entries if _always(m)]
        incidental = sorted((m for m in entries if not _always(m)),
                            key=lambda m: (m.updated_at, _rank(m)))
        return Selection({id(m): m for m in entries}, always, [_rank(m) for m, _ in always],
                         incidental, [(m.updated_at, _rank(m)) for m in incidental], by_id, ranks)

    def moved_to(self, project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        """The selection for new rows, patched from this one when few rows changed."""
        now = {id(m): m for m in (*project, *user) if m.deleted_at is None}
        gone = self._rows.keys() - now.keys()
        new = now.keys() - self._rows.keys()
        if not gone and not new:
            return self
        if len(gone) + len(new) > _PATCH_LIMIT:
            return Selection.build(project, user)
        patched = self._patched(now, [self._rows[key] for key in gone], [now[key] for key in new])
        return patched if patched is not None else Selection.build(project, user)

    def with_row(self, row: Memory) -> Selection | FullWalk:
        """This selection as if ``row`` were saved in its file: it takes the place
        of the live row with its id there, or is added."""
        old = self._by_id.get(row.id)
        if old is not None and old.store != row.store:
            return self._walk().with_row(row)
        gone = [old] if old is not None else []
        rows = dict(self._rows)
        for m in gone:
            del rows[id(m)]
        rows[id(row)] = row
        patched = self._patched(rows, gone, [row])
        return patched if patched is not None else self._walk().with_row(row)

    def _patched(self, rows: dict[int, Memory], gone: list[Memory],
                 new: list[Memory]) -> Selection | None:
        # None when a new row shares an id or a place with a row that stays:
        # then select()'s tie rules decide, over a full walk.
        always, always_keys = list(self._always), list(self._always_keys)
        incidental, incidental_keys = list(self._incidental), list(self._incidental_keys)
        by_id, ranks = dict(self._by_id), set(self._ranks)
        for m in gone:
            del by_id[m.id]
            ranks.discard(_rank(m))
            if _always(m):
                _remove(always, always_keys, _rank(m), m, pairs=True)
            else:
                _remove(incidental, incidental_keys, (m.updated_at, _rank(m)), m)
        for m in new:
            if m.id in by_id or _rank(m) in ranks:
                return None
            by_id[m.id] = m
            ranks.add(_rank(m))
            if _always(m):
                _insert(always, always_keys, _rank(m), (m, _because(m)))
            else:
                _insert(incidental, incidental_keys, (m.updated_at, _rank(m)), m)
        return Selection(rows, always, always_keys, incidental, incidental_keys, by_id, ranks)

    def _walk(self) -> FullWalk:
        rows = sorted(self._rows.values(), key=_rank)
        return FullWalk([m for m in rows if m.store == "project"],
                        [m for m in rows if m.store == "user"])

    def picked(self, hidden: Iterable[str] = frozenset()) -> list[tuple[Memory, str]]:
        """What ``select`` gives for the rows minus ``hidden`` ids, created_at ascending."""
        hidden = frozenset(hidden)
        picked, keys = list(self._always), list(self._always_keys)
        for memory_id in hidden:
            m = self._by_id.get(memory_id)
            if m is not None and _always(m):
                _remove(picked, keys, _rank(m), m, pairs=True)
        for n, m in enumerate(self._top_incidental(hidden), 1):
            # select() appends these after the always-rule rows and sorts stably
            # by created_at: each goes after everything with its stamp so far
            # ((stamp, 2) sorts after every rank with that stamp: 2 > True).
            at = bisect_left(keys, (m.created_at, 2))
            keys.insert(at, _rank(m))
            picked.insert(at, (m, f"recent incidental {n}/{INCIDENTAL_KEPT}"))
        return picked

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

    def __init__(self, project: Sequence[Memory], user: Sequence[Memory]):
        self._project = [m for m in project if m.deleted_at is None]
        self._user = [m for m in user if m.deleted_at is None]

    def moved_to(self, project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        return Selection.build(project, user)

    def with_row(self, row: Memory) -> FullWalk:
        """As :meth:`Selection.with_row`, in the file's listing order after the save."""
        rows = self._user if row.store == "user" else self._project
        swapped = [row if m.id == row.id else m for m in rows]
        if not any(m.id == row.id for m in rows):
            swapped.append(row)
        swapped.sort(key=lambda m: (m.created_at, m.scope, m.key_normalized))
        if row.store == "user":
            return FullWalk(self._project, swapped)
        return FullWalk(swapped, self._user)

    def picked(self, hidden: Iterable[str] = frozenset()) -> list[tuple[Memory, str]]:
        hidden = frozenset(hidden)
        return select([m for m in all_entries(self._project, self._user) if m.id not in hidden])


def _remove(rows: list, keys: list, key, record, pairs: bool = False) -> None:
    at = bisect_left(keys, key)
    while (rows[at][0] if pairs else rows[at]) is not record:
        at += 1
    del rows[at], keys[at]


def _insert(rows: list, keys: list, key, record) -> None:
    at = bisect_left(keys, key)
    keys.insert(at, key)
    rows.insert(at, record)
