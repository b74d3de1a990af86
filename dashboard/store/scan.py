"""Bulk readers for the findings scan: every row that still holds text, minimal columns.

Rows come back as plain tuples (no ``sqlite3.Row``, no record objects) because
a scan reads every row of both files and the per-row overhead dominates.  The
readers return lists rather than calling back per row: ``connection.read``
may run its function a second time when the agent opens the file mid-read,
and a callback would then see rows twice.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from .connection import _decode_text as decode_text, read
from .registry import StoreRef

MEMORY_COLUMNS = ("id", "scope", "type", "key_normalized", "title", "content",
                  "updated_at", "deleted_at")
REVIEW_COLUMNS = ("id", "scope", "type", "key_normalized", "title", "content",
                  "evidence", "status")
SUMMARY_COLUMNS = ("id", "session_id", "summary_text", "created_at")


class MemoryRow(NamedTuple):
    id: str
    scope: str
    type: str
    key_normalized: str
    title: str
    content: str
    updated_at: str
    deleted_at: str | None


class ReviewRow(NamedTuple):
    id: str
    scope: str
    type: str
    key_normalized: str
    title: str
    content: str
    evidence: str
    status: str


class SummaryRow(NamedTuple):
    id: str
    session_id: str
    summary_text: str
    created_at: str


def _all(ref: StoreRef, table: str, columns, row_type, order: str):
    sql = f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}"

    def run(conn):
        cur = conn.cursor()
        cur.row_factory = None   # plain tuples: several times faster than sqlite3.Row
        # Decode in C; only a file holding invalid UTF-8 pays for the tolerant decoder.
        conn.text_factory = str
        try:
            return list(map(row_type._make, cur.execute(sql)))
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc).lower():
                raise
            conn.text_factory = decode_text
            return list(map(row_type._make, conn.cursor().execute(sql)))
    return read(ref.path, run)


def scan_memories(ref: StoreRef) -> list[MemoryRow]:
    """Every memory row of one file, live and soft-deleted, in rowid order."""
    return _all(ref, "memories", MEMORY_COLUMNS, MemoryRow, "rowid")


def scan_review_items(ref: StoreRef) -> list[ReviewRow]:
    """Every review-queue row of one file, whatever its status."""
    return _all(ref, "memory_review_queue", REVIEW_COLUMNS, ReviewRow, "rowid")


def scan_summaries(ref: StoreRef) -> list[SummaryRow]:
    """Every session summary of one file, newest first (the tail's order, contract §8)."""
    return _all(ref, "session_summaries", SUMMARY_COLUMNS, SummaryRow, "created_at DESC, rowid")
