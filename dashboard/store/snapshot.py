"""One immutable snapshot of each store file's memories, re-read whole when the file moves.

Every row (live and deleted), the 10 newest summaries and the change counter, read in one
transaction and kept while the file's stamp holds (``held``).  Rows are in agentao's
listing order: ``created_at``, then (scope, key) as its index walk gives them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any

from ..engine.stable import TAIL_READ  # summaries agentao reads for the tail (contract §8)
from ..records import Memory, Summary
from . import rows as rowmod
from .connection import read
from .held import held
from .recovery import Stamp
from .registry import StoreRef
from .rows import text_select, whole_number
from .search import ascii_lower, haystack, json_strings

COLUMNS = rowmod.columns(Memory)
SEARCHED = ("title", "content", "key_normalized", "tags_json", "keywords_json")


def sql_order(value: Any) -> tuple[int, Any]:
    """A sort key ordering values as SQLite's ORDER BY does across storage classes:
    NULL, numbers, text (BINARY: code point order, as UTF-8 bytes compare), blobs."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, value) if isinstance(value, str) else (3, value)


@dataclass(frozen=True, eq=False)
class FileRows:
    """One file's rows as read in one transaction; never changed after it is made."""

    key: str  # the store key: "project" or "user"
    path: str
    stamp: Stamp
    counter: int | None  # schema_meta.memories_change (None: absent or odd)
    rows: tuple[Memory, ...]  # every row, in agentao's listing order
    summaries: tuple[Summary, ...] = ()  # the newest TAIL_READ, newest first
    # Rows the search haystack cannot decide (odd JSON, NUL, non-text fields):
    # position -> the searched columns as stored, for agentao's predicate in SQL.
    odd: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    _values: dict[Any, Any] = field(default_factory=dict, repr=False)

    def order(self, column: str) -> list[int]:
        """Positions of the rows sorted by ``column`` then id, as SQLite's ORDER BY sorts
        them; made once per snapshot and column (every list page needs one)."""
        key = ("order", column)
        if key not in self._values:
            rows, get = self.rows, attrgetter(column)
            try:
                found = sorted(range(len(rows)), key=lambda i: (get(rows[i]), rows[i].id))
            except TypeError:  # a column mixing kinds (a hand edit): SQLite's order across kinds
                found = sorted(
                    range(len(rows)), key=lambda i: (sql_order(get(rows[i])), sql_order(rows[i].id))
                )
            self._values[key] = found
        order: list[int] = self._values[key]
        return order

    def values(self, column: str) -> set[Any]:
        """The distinct values of ``column`` among live rows (the filter drop-downs)."""
        if column not in self._values:
            self._values[column] = {getattr(m, column) for m in self.live}
        held: set[Any] = self._values[column]
        return held

    @cached_property
    def live(self) -> list[Memory]:
        """The live rows, in agentao's listing order (what the engine takes)."""
        return [m for m in self.rows if m.deleted_at is None]

    @cached_property
    def by_key(self) -> dict[tuple[str, str], Memory] | None:
        """The live rows by (scope, key): the rows a save would update, made once per snapshot
        (each page of review cards asks); None when a key repeats or a row is kept as stored
        (``odd``): the file then decides, comparing values as SQLite stores them."""
        found = {(m.scope, m.key_normalized): m for m in self.live}
        return found if not self.odd and len(found) == len(self.live) else None

    @cached_property
    def haystacks(self) -> list[str]:
        """Per row, the searched fields lower-cased and joined (see ``search``)."""
        return [haystack(m) for m in self.rows]

    @cached_property
    def tags(self) -> list[frozenset[str]]:
        """Per row, its tags folded as SQLite's LOWER folds them (the tag filter); equal sets
        are one set (most rows have none or one of a few tags)."""
        sets: dict[frozenset[str], frozenset[str]] = {}
        return [
            sets.setdefault(found, found)
            for found in (
                frozenset(ascii_lower(t) for t in m.tags)
                if i not in self.odd
                else frozenset(ascii_lower(t) for t in json_strings(self.odd[i][3])[0])
                for i, m in enumerate(self.rows)
            )
        ]


def rows_of(ref: StoreRef) -> FileRows:
    """The file's snapshot, read again whole if its stamp moved (``held``); raises StoreProblem."""
    return held(
        "rows",
        (ref.path,),
        key=ref.key,
        work=lambda stamp: read(ref.path, lambda conn: _read(conn, ref, stamp[0])),
    )


def _read(conn: sqlite3.Connection, ref: StoreRef, stamp: Stamp) -> FileRows:
    conn.execute("BEGIN")  # one read transaction: counter, rows and summaries agree
    try:
        meta = conn.execute("SELECT value FROM schema_meta WHERE key = 'memories_change'").fetchone()
        found = conn.execute(
            f"SELECT {text_select(COLUMNS)} FROM memories ORDER BY created_at, scope, key_normalized"
        ).fetchall()
        summaries = tuple(
            rowmod.summary(r, ref.key)
            for r in conn.execute(
                "SELECT * FROM session_summaries ORDER BY created_at DESC LIMIT ?", (TAIL_READ,)
            )
        )
    finally:
        conn.execute("COMMIT")
    records, odd = [], {}
    # The codes, tags and keywords repeat across rows (at 10,000 memories some 150,000
    # keywords, 3,000 of them distinct): a snapshot is held while the file stays put, so
    # each distinct one is held once (bench/bench_rss.py).
    shared: dict[str, str] = {}
    for i, row in enumerate(found):
        m, plain = _memory(row, ref.key, shared)
        records.append(m)
        if not plain:
            odd[i] = tuple(row[c] for c in SEARCHED)
    return FileRows(
        ref.key, str(ref.path), stamp, whole_number(meta[0]) if meta else None, tuple(records), summaries, odd
    )


def _memory(row: sqlite3.Row, store: str, shared: dict[str, str]) -> tuple[Memory, bool]:
    """The row as a record, and whether the search haystack alone decides it; equal codes,
    tags and keywords are the one string in ``shared``."""
    tags, plain_tags = json_strings(row["tags_json"])
    keywords, plain_keywords = json_strings(row["keywords_json"])
    if not (plain_tags and plain_keywords):
        return rowmod.memory(row, store, shared), False
    m = rowmod.record(
        Memory,
        row,
        store,
        shared,
        tags=tuple(map(shared.setdefault, tags, tags)),
        keywords=tuple(map(shared.setdefault, keywords, keywords)),
    )
    texts = (m.title, m.content, m.key_normalized)
    return m, all(
        isinstance(t, str) and "\0" not in t and "\x1f" not in t for t in (*texts, *m.tags, *m.keywords)
    )
