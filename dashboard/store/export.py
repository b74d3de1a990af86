"""Reading everything one store holds, for the export (read-only, one snapshot per file)."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import rows
from .connection import read
from .registry import StoreRef
from ..records import Memory, ReviewItem, Summary


@dataclass
class StoreContents:
    """What one file holds: live rows, their event history, and (optionally) the invisible rest.

    ``events`` maps memory id -> {"count", "by_type": {event_type: n}, "first", "last"}.
    """

    ref: StoreRef
    live: list[Memory] = field(default_factory=list)
    events: dict = field(default_factory=dict)
    soft_deleted: list[Memory] = field(default_factory=list)
    reviews: list[ReviewItem] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)


def _event_history(conn) -> dict:
    history: dict = {}
    for r in conn.execute("SELECT memory_id, event_type, COUNT(*) AS n, MIN(timestamp) AS first,"
                          " MAX(timestamp) AS last FROM (SELECT"
                          f" {rows.text_select(('memory_id', 'event_type', 'timestamp'))}"
                          " FROM memory_events)"
                          " GROUP BY memory_id, event_type ORDER BY memory_id, event_type"):
        h = history.setdefault(r["memory_id"], {"count": 0, "by_type": {}, "first": None,
                                                "last": None})
        h["count"] += r["n"]
        h["by_type"][r["event_type"]] = r["n"]
        h["first"] = min(filter(None, (h["first"], r["first"])), default=None)
        h["last"] = max(filter(None, (h["last"], r["last"])), default=None)
    return history


def store_contents(ref: StoreRef, include_invisible: bool = False) -> StoreContents:
    """Everything the export shows from one file, read in one read-only snapshot.

    Live memories come ordered by scope, type, creation time and id, the order
    the export groups them in.  With ``include_invisible`` the soft-deleted rows,
    every review-queue item (any status) and every session summary are read too:
    agentao never shows those as memories, but they are still in the file.
    Raises StoreProblem when the file cannot be read.
    """
    def run(conn) -> StoreContents:
        out = StoreContents(ref)
        found = conn.execute("SELECT * FROM memories ORDER BY scope, type, created_at, id")
        for r in found:
            memory = rows.memory(r, ref.key)
            if memory.live:
                out.live.append(memory)
            elif include_invisible:
                out.soft_deleted.append(memory)
        out.events = _event_history(conn)
        if include_invisible:
            out.reviews = [rows.review(r, ref.key) for r in conn.execute(
                "SELECT * FROM memory_review_queue ORDER BY status, created_at, id")]
            out.summaries = [rows.summary(r, ref.key) for r in conn.execute(
                "SELECT * FROM session_summaries ORDER BY created_at, id")]
        return out
    return read(ref.path, run)
