"""Readers for the findings scan: every row that still holds text, in batches of at most
``BATCH`` by rowid, each batch one ``connection.read`` (read whole or again, never twice).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from ..records import Memory, ReviewItem, Summary
from .connection import _decode_text as decode_text
from .connection import read
from .registry import StoreRef
from .rows import text_select

BATCH = 500  # rows per read: 2 MB of text at agentao's 4,000-character limit
STABLE_BATCH = 5_000  # rows per read of what the stable selection needs: no text, ~100 bytes a row

REVIEW_COLUMNS = ("id", "scope", "type", "key_normalized", "title", "content", "evidence", "status")
MEMORY_COLUMNS = (*REVIEW_COLUMNS[:6], "created_at", "updated_at", "deleted_at")
SUMMARY_COLUMNS = ("id", "session_id", "summary_text", "created_at")
# What the stable selection needs of every live row (engine.stable.select): no text.
STABLE_COLUMNS = ("id", "scope", "type", "created_at", "updated_at")

TABLES = {
    "memories": MEMORY_COLUMNS,
    "memory_review_queue": REVIEW_COLUMNS,
    "session_summaries": SUMMARY_COLUMNS,
}
SCANNED = TABLES  # the scanned tables, for reading one row again


def _record(table: str, store: str) -> Callable[[tuple[Any, ...]], Any]:
    if table == "memories":
        return lambda r: Memory(
            r[0], r[1], r[2], r[3], r[4], r[5], created_at=r[6], updated_at=r[7], deleted_at=r[8], store=store
        )
    if table == "memory_review_queue":
        return lambda r: ReviewItem(
            r[0], r[1], r[2], r[3], r[4], r[5], evidence=r[6], status=r[7], store=store
        )
    return lambda r: Summary(r[0], r[1], r[2], created_at=r[3], store=store)


def _rows(ref: StoreRef, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    def run(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples, made records below
        conn.text_factory = str  # decode in C; only invalid UTF-8 pays for the tolerant decoder
        try:
            return cur.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc).lower():
                raise
            conn.text_factory = decode_text
            return conn.cursor().execute(sql, params).fetchall()

    return read(ref.path, run)


def count_rows(ref: StoreRef, table: str) -> int:
    """How many rows ``table`` holds (what "scanned 12,000 of 50,000" counts against)."""
    return int(_rows(ref, f"SELECT count(*) FROM {table}")[0][0])


def batches(ref: StoreRef, table: str) -> Iterator[list[Any]]:
    """Every row of ``table`` (memories live and soft-deleted, reviews of any status,
    summaries) as records, in rowid order, ``BATCH`` rows per read."""
    make = _record(table, ref.key)
    sql = f"SELECT rowid, {text_select(TABLES[table])} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?"
    for rows in _by_rowid(ref, sql, BATCH):
        yield [make(r[1:]) for r in rows]


def _by_rowid(ref: StoreRef, sql: str, size: int) -> Iterator[list[Any]]:
    """The rows of ``sql`` (rowid first; ``WHERE rowid > ? ORDER BY rowid LIMIT ?``), ``size`` per
    read, each read its own short transaction."""
    last = -(2**63)
    while True:
        rows = _rows(ref, sql, (last, size))
        if not rows:
            return
        last = rows[-1][0]
        yield rows
        if len(rows) < size:
            return


def stable_batches(ref: StoreRef) -> Iterator[list[tuple[Any, ...]]]:
    """What the stable selection needs of every memory row (no text), in rowid order,
    ``STABLE_BATCH`` rows per read, live and deleted alike (a bounded reader says how many of the rows it read):
    ``(rowid, id, scope, type, created_at, updated_at, live)`` tuples."""
    sql = (
        f"SELECT rowid, {text_select(STABLE_COLUMNS)}, deleted_at IS NULL FROM memories"
        " WHERE rowid > ? ORDER BY rowid LIMIT ?"
    )
    yield from _by_rowid(ref, sql, STABLE_BATCH)


def summary_tail(ref: StoreRef, limit: int) -> list[Summary]:
    """The ``limit`` newest session summaries, newest first (the tail's order, contract §8)."""
    make = _record("session_summaries", ref.key)
    return [
        make(r)
        for r in _rows(
            ref,
            f"SELECT {text_select(SUMMARY_COLUMNS)} FROM session_summaries "
            "ORDER BY created_at DESC, rowid LIMIT ?",
            (limit,),
        )
    ]


def scan_row(ref: StoreRef, table: str, row_id: str) -> Memory | ReviewItem | Summary | None:
    """One row of a scanned table as the scan reads it (a record), or None if it is gone."""
    rows = _rows(
        ref,
        f"SELECT {text_select(TABLES[table])} FROM {table} WHERE id = ? ORDER BY rowid LIMIT 1",
        (row_id,),
    )
    return _record(table, ref.key)(rows[0]) if rows else None
