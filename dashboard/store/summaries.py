"""Reading session summaries and the review queue (both live in the project file)."""

from __future__ import annotations

import sqlite3

from ..records import ReviewItem, Summary
from . import rows
from .connection import read
from .registry import StoreRef


def list_summaries(ref: StoreRef) -> list[Summary]:
    """All summaries of one file, newest first."""
    return read(
        ref.path,
        lambda conn: [
            rows.summary(r, ref.key)
            for r in conn.execute("SELECT * FROM session_summaries ORDER BY created_at DESC")
        ],
    )


def list_review_items(ref: StoreRef, status: str | None = None) -> list[ReviewItem]:
    """Review items, pending first by occurrences as `/memory review` orders them."""

    def run(conn: sqlite3.Connection) -> list[ReviewItem]:
        if status == "pending":
            sql = (
                "SELECT * FROM memory_review_queue WHERE status = 'pending'"
                " ORDER BY occurrences DESC, created_at DESC"
            )
            found = conn.execute(sql)
        elif status:
            found = conn.execute(
                "SELECT * FROM memory_review_queue WHERE status = ? ORDER BY updated_at DESC", (status,)
            )
        else:
            found = conn.execute("SELECT * FROM memory_review_queue ORDER BY created_at DESC")
        return [rows.review(r, ref.key) for r in found]

    return read(ref.path, run)
