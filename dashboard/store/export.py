"""Reading everything one store holds, for the export: an outline first, then the rows in pieces.

The outline holds only rowids, so the export streams a few hundred rows per read
(50,000 rows of 4,000 characters read whole took 150 s); ``version`` is read before and
after, so a write in between is said, not passed off as consistent.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ..records import Memory, ReviewItem, Summary
from . import rows
from .connection import read
from .registry import StoreRef


@dataclass(frozen=True)
class Outline:
    """One file's export order without its text: ``live`` is (scope, type, rowid) per live
    memory, the others rowids; ``events`` (memory id -> counts and first/last stamps) is read
    in one pass, as memory_events has no index on memory_id."""

    ref: StoreRef
    live: tuple[tuple[str, str, int], ...]
    soft_deleted: tuple[int, ...]
    reviews: tuple[int, ...]
    summaries: tuple[int, ...]
    events: dict[str, dict[str, Any]]
    version: tuple[Any, ...]


_VERSION = (
    "SELECT (SELECT value FROM schema_meta WHERE key = 'memories_change'),"
    " (SELECT COUNT(*) FROM memories), (SELECT COUNT(*) FROM memory_events),"
    " (SELECT COUNT(*) || ' ' || IFNULL(MAX(updated_at), '') FROM memory_review_queue),"
    " (SELECT COUNT(*) FROM session_summaries)"
)


def _version(conn: sqlite3.Connection) -> tuple[Any, ...]:
    return tuple(conn.execute(_VERSION).fetchone())


def version(ref: StoreRef) -> tuple[Any, ...]:
    """What changes whenever anyone writes memories, events, reviews or summaries."""
    return read(ref.path, _version)


def outline(ref: StoreRef, include_invisible: bool = False) -> Outline:
    """The order of everything the export shows from one file, in one snapshot. Raises StoreProblem when the
    file cannot be read."""

    def run(conn: sqlite3.Connection) -> Outline:
        live, deleted = [], []
        for r in conn.execute(
            f"SELECT rowid AS rid, {rows.text_select(('scope', 'type'))},"
            " deleted_at IS NULL AS live FROM memories"
            " ORDER BY memories.scope, memories.type, created_at, id"
        ):
            if r["live"]:
                live.append((r["scope"], r["type"], r["rid"]))
            elif include_invisible:
                deleted.append(r["rid"])
        reviews = summaries = ()
        if include_invisible:
            reviews = tuple(
                r[0]
                for r in conn.execute("SELECT rowid FROM memory_review_queue ORDER BY status, created_at, id")
            )
            summaries = tuple(
                r[0] for r in conn.execute("SELECT rowid FROM session_summaries ORDER BY created_at, id")
            )
        return Outline(
            ref, tuple(live), tuple(deleted), reviews, summaries, _event_history(conn), _version(conn)
        )

    return read(ref.path, run)


def _event_history(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    history: dict[str, dict[str, Any]] = {}
    for r in conn.execute(
        "SELECT memory_id, event_type, COUNT(*) AS n, MIN(timestamp) AS first,"
        " MAX(timestamp) AS last FROM (SELECT"
        f" {rows.text_select(('memory_id', 'event_type', 'timestamp'))}"
        " FROM memory_events)"
        " GROUP BY memory_id, event_type ORDER BY memory_id, event_type"
    ):
        h = history.setdefault(r["memory_id"], {"count": 0, "by_type": {}, "first": None, "last": None})
        h["count"] += r["n"]
        h["by_type"][r["event_type"]] = r["n"]
        h["first"] = min(filter(None, (h["first"], r["first"])), default=None)
        h["last"] = max(filter(None, (h["last"], r["last"])), default=None)
    return history


def _piece(ref: StoreRef, table: str, cls: type[rows.R], rowids: list[int]) -> dict[int, rows.R]:
    marks = ",".join("?" * len(rowids))
    sql = f"SELECT rowid, * FROM {table} WHERE rowid IN ({marks})"
    return read(
        ref.path, lambda conn: {r["rowid"]: rows.record(cls, r, ref.key) for r in conn.execute(sql, rowids)}
    )


def memories(ref: StoreRef, rowids: list[int]) -> dict[int, Memory]:
    """rowid -> Memory for one piece; a rowid gone since the outline is simply absent."""
    return _piece(ref, "memories", Memory, rowids)


def reviews(ref: StoreRef, rowids: list[int]) -> dict[int, ReviewItem]:
    """rowid -> review-queue item for one piece."""
    return _piece(ref, "memory_review_queue", ReviewItem, rowids)


def summaries(ref: StoreRef, rowids: list[int]) -> dict[int, Summary]:
    """rowid -> session summary for one piece."""
    return _piece(ref, "session_summaries", Summary, rowids)
