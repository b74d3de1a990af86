"""SQL for forgetting: agentao's wipe, the residue queries, and the hard purge.

The wipe statements are the ones agentao's ``wipe_all`` runs (contract §13):
one transaction per step, soft delete without events, a real DELETE of the
summaries.  The hard purge is ours: it deletes exactly the rows a dry run
listed (by id, each with a guard so a row that changed meanwhile is skipped),
with ``secure_delete`` on, then VACUUMs and truncates the WAL.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import quote

from .connection import BUSY_TIMEOUT_S, StoreProblem, describe_error, read, write
from .registry import StoreRef

REVIEW_STATUSES = ("pending", "approved", "rejected")
CATEGORIES = ("soft_deleted", *(f"review:{s}" for s in REVIEW_STATUSES), "summaries", "events")
CHECKPOINT_BUSY_MS = 1000

# How each kind of row is erased.  The guard re-checks, inside the write
# transaction, the condition the dry run saw, so nothing outside it goes.
# Each statement takes every id of its kind as one JSON array and returns the
# ids it deleted.
_IDS = "id IN (SELECT value FROM json_each(?))"
_DELETE = {
    "memory_deleted": f"DELETE FROM memories WHERE {_IDS} AND deleted_at IS NOT NULL RETURNING id",
    "memory": f"DELETE FROM memories WHERE {_IDS} RETURNING id",
    "review": f"DELETE FROM memory_review_queue WHERE {_IDS} RETURNING id",
    "summary": f"DELETE FROM session_summaries WHERE {_IDS} RETURNING id",
    # A plan names events by their integer id written as text.
    "event": "DELETE FROM memory_events WHERE id IN (SELECT CAST(value AS INTEGER) FROM json_each(?))"
             " AND memory_id NOT IN (SELECT id FROM memories) RETURNING id",
}


@dataclass(frozen=True)
class PlanRow:
    """One row a purge will erase; ``texts`` never leave the process.

    ``texts`` are what the byte scan looks for: a memory's content, a review
    item's captured phrase and evidence, a summary's text.  Titles (the keys)
    go with the row but are not searched for: a few bytes like "editor" say
    nothing in raw bytes, and each short text costs a pass over the file.
    """

    kind: str
    id: str
    label: str
    texts: tuple[str, ...] = ()

    @property
    def bytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.texts)


@dataclass
class EraseOutcome:
    """What the write transaction and the maintenance after it did."""

    deleted: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    checkpoint: tuple | None = None   # (busy, wal frames, frames checkpointed)


# -- agentao's wipe ---------------------------------------------------------

def clear_scope(ref: StoreRef, scope: str, now: str) -> int:
    """Soft-delete every live row of ``scope`` in one file, no events (agentao ``clear``)."""
    with write(ref.path) as conn:
        return conn.execute("UPDATE memories SET deleted_at = ?, updated_at = ?"
                            " WHERE scope = ? AND deleted_at IS NULL", (now, now, scope)).rowcount


def delete_all_summaries(ref: StoreRef) -> int:
    """Hard-delete every session summary of one file, all sessions."""
    with write(ref.path) as conn:
        return conn.execute("DELETE FROM session_summaries").rowcount


def soft_delete_memory(ref: StoreRef, memory_id: str, now: str) -> bool:
    """agentao's single soft delete: mark the row and log a ``soft_delete`` event."""
    with write(ref.path) as conn:
        changed = conn.execute("UPDATE memories SET deleted_at = ?, updated_at = ?"
                               " WHERE id = ? AND deleted_at IS NULL",
                               (now, now, memory_id)).rowcount
        if changed:
            conn.execute("INSERT INTO memory_events (memory_id, event_type, timestamp)"
                         " VALUES (?, 'soft_delete', ?)", (memory_id, now))
        return bool(changed)


def summaries_remain(ref: StoreRef) -> bool:
    """Whether any summary is left; a file that cannot be read cannot confirm it."""
    try:
        return read(ref.path, lambda c: c.execute(
            "SELECT 1 FROM session_summaries LIMIT 1").fetchone() is not None)
    except StoreProblem:
        return True


# -- residue ------------------------------------------------------------------

def residue_rows(ref: StoreRef) -> dict:
    """Rows that still hold forgotten text, and the file's free pages (read-only)."""
    def run(conn):
        soft = [dict(r) for r in conn.execute(
            "SELECT id, scope, title, deleted_at,"
            " length(CAST(content AS BLOB)) + length(CAST(title AS BLOB)) AS bytes"
            " FROM memories WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC, id")]
        reviews = [dict(r) for r in conn.execute(
            "SELECT id, status, scope, type, title, content, evidence, updated_at"
            " FROM memory_review_queue ORDER BY status, updated_at DESC, id")]
        events = conn.execute(
            "SELECT count(*) AS n, count(DISTINCT e.memory_id) AS memories FROM memory_events e"
            " LEFT JOIN memories m ON m.id = e.memory_id"
            " WHERE m.id IS NULL OR m.deleted_at IS NOT NULL").fetchone()
        summaries = conn.execute(
            "SELECT count(*) AS n, coalesce(sum(length(CAST(summary_text AS BLOB))), 0) AS bytes"
            " FROM session_summaries").fetchone()
        pragma = {name: conn.execute(f"PRAGMA {name}").fetchone()[0]
                  for name in ("page_size", "page_count", "freelist_count")}
        return {"soft_deleted": soft, "reviews": reviews,
                "events": {"rows": events["n"], "memories": events["memories"]},
                "summaries": {"count": summaries["n"], "bytes": summaries["bytes"]}, **pragma}
    return read(ref.path, run)


# -- dry run ------------------------------------------------------------------

def plan_rows(ref: StoreRef, categories=(), memory_ids=(), review_ids=()) -> list[PlanRow]:
    """Exactly the rows a purge of ``categories`` (and the given ids) would erase."""
    categories = set(categories)
    memory_ids, review_ids = list(memory_ids), list(review_ids)

    def run(conn):
        plan: list[PlanRow] = []
        purged_memories = []
        if "soft_deleted" in categories:
            # Table order: the DELETE then walks the b-tree front to back.
            for r in conn.execute("SELECT id, title, content FROM memories"
                                  " WHERE deleted_at IS NOT NULL ORDER BY rowid"):
                plan.append(PlanRow("memory_deleted", r["id"], r["title"], (r["content"],)))
                purged_memories.append(r["id"])
        for mid in memory_ids:
            r = conn.execute("SELECT id, title, content FROM memories WHERE id = ?", (mid,)).fetchone()
            if r is not None and r["id"] not in purged_memories:
                plan.append(PlanRow("memory", r["id"], r["title"], (r["content"],)))
                purged_memories.append(r["id"])
        statuses = [s for s in REVIEW_STATUSES if f"review:{s}" in categories]
        wanted = conn.execute(
            f"SELECT id, status, title, content, evidence FROM memory_review_queue"
            f" WHERE status IN ({','.join('?' * len(statuses))})"
            f" OR id IN ({','.join('?' * len(review_ids))}) ORDER BY status, id",
            (*statuses, *review_ids))
        for r in wanted:
            plan.append(PlanRow("review", r["id"], f"{r['status']}: {r['title']}",
                                (r["content"], r["evidence"])))
        if "summaries" in categories:
            for r in conn.execute("SELECT id, session_id, summary_text FROM session_summaries"
                                  " ORDER BY rowid"):
                plan.append(PlanRow("summary", r["id"], f"session {r['session_id']}",
                                    (r["summary_text"],)))
        # Events of memories already gone, plus those of the memories this purge
        # removes; a memory purged by id always takes its own events with it.
        orphans = "memory_id NOT IN (SELECT id FROM memories) OR " if "events" in categories else ""
        owners = purged_memories if "events" in categories else memory_ids
        if orphans or owners:
            for r in conn.execute(
                    "SELECT id, memory_id, event_type FROM memory_events"
                    f" WHERE {orphans}memory_id IN ({','.join('?' * len(owners))}) ORDER BY id",
                    owners):
                plan.append(PlanRow("event", str(r["id"]), f"{r['event_type']} of {r['memory_id']}"))
        return plan
    return read(ref.path, run)


# -- the hard purge -------------------------------------------------------------

def _open_rw(path: Path) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise StoreProblem("missing", f"{path} does not exist.")
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True,
                               timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        # secure_delete zeroes freed content; temp_store=MEMORY keeps VACUUM's
        # working copy of the database out of a temporary file on disk.
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        # A bigger page cache keeps the DELETE from spilling pages to the WAL twice.
        conn.execute("PRAGMA cache_size = -262144")   # up to 256 MB, allocated as used
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        raise describe_error(path, exc) from exc
    return conn


def _delete(conn: sqlite3.Connection, plan: list[PlanRow], outcome: EraseOutcome) -> None:
    order = ("memory_deleted", "memory", "review", "summary", "event")  # events after memories
    for kind in order:
        ids = [r.id for r in plan if r.kind == kind]
        if not ids:
            continue
        # One statement per kind: deleting row by row cost a fifth of a 100 MB purge.
        gone = {str(r[0]) for r in conn.execute(_DELETE[kind], (json.dumps(ids),))}
        for row_id in ids:
            if row_id in gone:
                gone.discard(row_id)   # listed twice: the second one found nothing
                outcome.deleted[kind] = outcome.deleted.get(kind, 0) + 1
            else:
                outcome.skipped.append({"kind": kind, "id": row_id})


def _vacuum(conn: sqlite3.Connection) -> None:
    conn.execute("VACUUM")


def _checkpoint(conn: sqlite3.Connection) -> tuple:
    conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_BUSY_MS}")
    return tuple(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())


def erase(ref: StoreRef, plan: list[PlanRow],
          on_step: Callable[[str], None] = lambda step: None) -> EraseOutcome:
    """Delete ``plan`` in one BEGIN IMMEDIATE transaction, then VACUUM and truncate the WAL.

    A locked file raises StoreProblem("locked") before anything changed.  An
    empty plan still VACUUMs and checkpoints: that is how a purge interrupted
    after its DELETE is finished by running it again.
    """
    outcome = EraseOutcome()
    conn = _open_rw(ref.path)
    try:
        try:
            on_step("delete")
            conn.execute("BEGIN IMMEDIATE")
            try:
                _delete(conn, plan, outcome)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            on_step("vacuum")
            _vacuum(conn)
            on_step("checkpoint")
            outcome.checkpoint = _checkpoint(conn)
        except sqlite3.Error as exc:
            raise describe_error(ref.path, exc) from exc
    finally:
        conn.close()
    return outcome


def remaining_text(ref: StoreRef) -> bytes:
    """Every text value still stored in the file, joined: fragments found here are live data."""
    def run(conn):
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        parts = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                parts.extend(v for v in row if isinstance(v, str))
        return "\x00".join(parts).encode("utf-8", "surrogatepass")
    return read(ref.path, run)
