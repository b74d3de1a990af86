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

from bisect import bisect_left, bisect_right
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
                 incidental: list[Memory], incidental_keys: list, ids: set[str], ranks: set):
        self._rows = rows                  # id(record) -> record, every live row
        self._always = always              # always-rule rows, all-entries order
        self._always_keys = always_keys
        self._incidental = incidental      # ascending (updated_at, rank)
        self._incidental_keys = incidental_keys
        self._ids = ids                    # memory ids, unique (else an FullWalk)
        self._ranks = ranks                # all-entries places, unique likewise

    @staticmethod
    def build(project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        """From each file's live rows in the file's listing order."""
        entries = all_entries(project, user)
        ids = {m.id for m in entries}
        ranks = {_rank(m) for m in entries}
        labelled = (all(m.store == "project" for m in project)
                    and all(m.store == "user" for m in user))
        if len(ids) != len(entries) or len(ranks) != len(entries) or not labelled:
            return FullWalk(entries)
        always = [m for m in entries if _always(m)]
        incidental = sorted((m for m in entries if not _always(m)),
                            key=lambda m: (m.updated_at, _rank(m)))
        return Selection({id(m): m for m in entries}, always, [_rank(m) for m in always],
                         incidental, [(m.updated_at, _rank(m)) for m in incidental], ids, ranks)

    def moved_to(self, project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        """The selection for new rows, patched from this one when few rows changed."""
        now = {id(m): m for m in (*project, *user) if m.deleted_at is None}
        gone = self._rows.keys() - now.keys()
        new = now.keys() - self._rows.keys()
        if not gone and not new:
            return self
        if len(gone) + len(new) > _PATCH_LIMIT:
            return Selection.build(project, user)
        always, always_keys = list(self._always), list(self._always_keys)
        incidental, incidental_keys = list(self._incidental), list(self._incidental_keys)
        ids, ranks = set(self._ids), set(self._ranks)
        for key in gone:
            m = self._rows[key]
            ids.discard(m.id)
            ranks.discard(_rank(m))
            if _always(m):
                _remove(always, always_keys, _rank(m), m)
            else:
                _remove(incidental, incidental_keys, (m.updated_at, _rank(m)), m)
        for key in new:
            m = now[key]
            if m.id in ids or _rank(m) in ranks:
                return Selection.build(project, user)   # select()'s tie rules decide
            ids.add(m.id)
            ranks.add(_rank(m))
            if _always(m):
                _insert(always, always_keys, _rank(m), m)
            else:
                _insert(incidental, incidental_keys, (m.updated_at, _rank(m)), m)
        return Selection(now, always, always_keys, incidental, incidental_keys, ids, ranks)

    def picked(self, hidden: Iterable[str] = frozenset()) -> list[tuple[Memory, str]]:
        """What ``select`` gives for the rows minus ``hidden`` ids, created_at ascending."""
        hidden = frozenset(hidden)
        picked = [(m, _because(m)) for m in self._always if not hidden or m.id not in hidden]
        stamps = [m.created_at for m, _ in picked]
        for n, m in enumerate(self._top_incidental(hidden), 1):
            # select() appends these after the always-rule rows and sorts stably
            # by created_at: each goes after everything with its stamp so far.
            at = bisect_right(stamps, m.created_at)
            stamps.insert(at, m.created_at)
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
    every answer is ``select``'s own walk."""

    def __init__(self, entries: list[Memory]):
        self._entries = entries

    def moved_to(self, project: Sequence[Memory], user: Sequence[Memory]) -> Selection | FullWalk:
        return Selection.build(project, user)

    def picked(self, hidden: Iterable[str] = frozenset()) -> list[tuple[Memory, str]]:
        hidden = frozenset(hidden)
        return select([m for m in self._entries if m.id not in hidden])


def _remove(rows: list, keys: list, key, record) -> None:
    at = bisect_left(keys, key)
    while rows[at] is not record:
        at += 1
    del rows[at], keys[at]


def _insert(rows: list, keys: list, key, record) -> None:
    at = bisect_left(keys, key)
    keys.insert(at, key)
    rows.insert(at, record)
