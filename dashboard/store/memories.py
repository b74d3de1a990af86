"""Reading memories: the filtered, sorted, paged list across both files, and one row."""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from typing import Any

from ..records import Event, Memory
from . import rows, search
from .connection import StoreProblem, read
from .registry import StoreRef
from .search import ascii_lower
from .snapshot import FileRows, rows_of, sql_order

SORTS = {
    "updated": "updated_at",
    "created": "created_at",
    "title": "title",
    "key": "key_normalized",
    "type": "type",
    "scope": "scope",
}
MAX_PER_PAGE = 200
PER_PAGE = 30  # a page of the list stays under 100 KB of HTML (about 2.5 KB a row with its actions)


@dataclass(frozen=True)
class MemoryFilters:
    """The list's filters; ``q`` has `/memory search` semantics (contract §6)."""

    scope: str | None = None
    type: str | None = None
    source: str | None = None
    confidence: str | None = None
    tag: str | None = None
    q: str | None = None
    include_deleted: bool = False
    sort: str = "updated"
    descending: bool = True
    page: int = 1
    per_page: int = PER_PAGE


@dataclass
class MemoryPage:
    items: list[Memory] = field(default_factory=list)
    total: int = 0
    page: int = 1
    per_page: int = PER_PAGE
    problems: dict[str, StoreProblem] = field(default_factory=dict)  # store key -> StoreProblem left out
    choices: dict[str, list[Any]] = field(default_factory=dict)  # column -> values, when asked for

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def _matches(snap: FileRows, f: MemoryFilters) -> list[int]:
    """Positions of ``snap``'s rows the filters keep, in ascending sort order."""
    keep = snap.order(SORTS[f.sort])
    rows = snap.rows
    if not f.include_deleted:
        keep = [i for i in keep if rows[i].deleted_at is None]
    for column in ("scope", "type", "source", "confidence"):
        value = getattr(f, column)
        if value:
            keep = [i for i in keep if getattr(rows[i], column) == value]
    if f.tag:
        tag, tags = ascii_lower(f.tag), snap.tags
        keep = [i for i in keep if tag in tags[i]]
    if f.q:
        hits = search.matching(snap.haystacks, snap.odd, f.q)
        keep = [i for i in keep if hits[i]]
    return keep


def list_memories(refs: list[StoreRef], f: MemoryFilters, choices: tuple[str, ...] = ()) -> MemoryPage:
    """One page of memories from each file's snapshot, filtered, sorted and paged; a store that
    cannot be read is named in ``problems``; ``choices``: columns the drop-downs need."""
    column = SORTS[f.sort]
    problems: dict[str, StoreProblem] = {}
    runs: list[tuple[str, tuple[Memory, ...], list[int]]] = []
    total, values = 0, {c: set[Any]() for c in choices}
    for ref in refs:
        try:
            snap = rows_of(ref)
        except StoreProblem as problem:
            problems[ref.key] = problem
            continue
        keep = _matches(snap, f)
        total += len(keep)
        runs.append((snap.path, snap.rows, keep))
        for c in choices:
            values[c].update(snap.values(c))
    # ORDER BY column, file, id, all one way: each file's run is sorted already,
    # so only the rows up to the page's end are merged.
    start = (f.page - 1) * f.per_page
    value = attrgetter(column)
    try:
        items = _page(runs, lambda pm: (value(pm[1]), pm[0], pm[1].id), f, start)
    except TypeError:  # the files hold different kinds in the column: SQLite's order across kinds
        items = _page(runs, lambda pm: (sql_order(value(pm[1])), pm[0], sql_order(pm[1].id)), f, start)
    return MemoryPage(
        items=items,
        total=total,
        page=f.page,
        per_page=f.per_page,
        problems=problems,
        choices={c: sorted(v, key=sql_order) for c, v in values.items()},
    )


def _page(
    runs: list[tuple[str, tuple[Memory, ...], list[int]]],
    key: Callable[[tuple[str, Memory]], Any],
    f: MemoryFilters,
    start: int,
) -> list[Memory]:
    def run(path: str, rows: tuple[Memory, ...], keep: list[int]) -> Iterator[tuple[str, Memory]]:
        return ((path, rows[i]) for i in (reversed(keep) if f.descending else keep))

    merged = heapq.merge(*(run(*r) for r in runs), key=key, reverse=f.descending)
    return [m for _, m in islice(merged, start, start + f.per_page)]


def get_memory(ref: StoreRef, memory_id: str) -> tuple[Memory | None, list[Event]]:
    """One row (live or soft-deleted) and its event history, oldest event first."""

    def run(conn: sqlite3.Connection) -> tuple[Memory | None, list[Event]]:
        events = conn.execute(
            "SELECT * FROM memory_events WHERE memory_id = ? ORDER BY id", (memory_id,)
        ).fetchall()
        return rows.memory_by_id(conn, memory_id, ref.key), [rows.event(e, ref.key) for e in events]

    return read(ref.path, run)
