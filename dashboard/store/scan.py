"""Bulk readers for the findings scan: every row that still holds text, minimal columns.

Rows come back as plain tuples (no ``sqlite3.Row``, no record objects) because
a scan reads every row of both files and the per-row overhead dominates.  The
readers return lists rather than calling back per row: ``connection.read``
may run its function a second time when the agent opens the file mid-read,
and a callback would then see rows twice.
"""

from __future__ import annotations

import sqlite3

from .connection import _decode_text as decode_text, read
from .registry import StoreRef
from .rows import text_select

MEMORY_COLUMNS = ("id", "scope", "type", "key_normalized", "title", "content",
                  "updated_at", "deleted_at")
REVIEW_COLUMNS = ("id", "scope", "type", "key_normalized", "title", "content",
                  "evidence", "status")
SUMMARY_COLUMNS = ("id", "session_id", "summary_text", "created_at")


# Positions of the columns in the tuples the readers return.  Plain tuples of
# strings, unlike named tuples, are untracked by the cyclic collector once it
# has seen them, so the 100,000 rows of a scan stop costing every collection.
(M_ID, M_SCOPE, M_TYPE, M_KEY, M_TITLE, M_CONTENT, M_UPDATED_AT, M_DELETED_AT) = range(8)
(R_ID, R_SCOPE, R_TYPE, R_KEY, R_TITLE, R_CONTENT, R_EVIDENCE, R_STATUS) = range(8)
(S_ID, S_SESSION_ID, S_SUMMARY_TEXT, S_CREATED_AT) = range(4)


def _all(ref: StoreRef, table: str, columns, order: str, where: str = "",
         params: tuple = ()) -> list[tuple]:
    sql = f"SELECT {text_select(columns)} FROM {table} {where} ORDER BY {order}"

    def run(conn):
        cur = conn.cursor()
        cur.row_factory = None   # plain tuples: several times faster than sqlite3.Row
        # Decode in C; only a file holding invalid UTF-8 pays for the tolerant decoder.
        conn.text_factory = str
        try:
            return cur.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc).lower():
                raise
            conn.text_factory = decode_text
            return conn.cursor().execute(sql, params).fetchall()
    return read(ref.path, run)


def scan_memories(ref: StoreRef) -> list[tuple]:
    """Every memory row of one file, live and soft-deleted, in rowid order (``M_*`` positions)."""
    return _all(ref, "memories", MEMORY_COLUMNS, "rowid")


def scan_review_items(ref: StoreRef) -> list[tuple]:
    """Every review-queue row of one file, whatever its status (``R_*`` positions)."""
    return _all(ref, "memory_review_queue", REVIEW_COLUMNS, "rowid")


def scan_summaries(ref: StoreRef) -> list[tuple]:
    """Every session summary of one file, newest first (the tail's order, contract §8; ``S_*``)."""
    return _all(ref, "session_summaries", SUMMARY_COLUMNS, "created_at DESC, rowid")


# The scanned tables and their readers' columns, for reading one row again.
SCANNED = {"memories": MEMORY_COLUMNS, "memory_review_queue": REVIEW_COLUMNS,
           "session_summaries": SUMMARY_COLUMNS}


def scan_row(ref: StoreRef, table: str, row_id: str) -> tuple | None:
    """One row of a scanned table as the scan reads it (same positions), or None if it is gone."""
    rows = _all(ref, table, SCANNED[table], "rowid", "WHERE id = ?", (row_id,))
    return rows[0] if rows else None
