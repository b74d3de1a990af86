"""SQL for forgetting: agentao's wipe (contract §13), the residue queries, and the hard purge
(exactly the dry run's rows, ``secure_delete`` on, then VACUUM and a WAL truncate).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import events
from .connection import StoreProblem, describe_error, open_rw, read, rollback_quietly, settle, write
from .plan import (  # noqa: F401
    CATEGORIES,
    IDS,
    KINDS,
    REVIEW_STATUSES,
    Comparison,
    DryRun,
    PlanRow,
    Selection,
    compare,
    rows_for,
)
from .registry import StoreRef

CHECKPOINT_BUSY_MS = 1000

# How each kind of row is erased.  The guard re-checks, inside the write
# transaction, the condition the dry run saw, so nothing outside it goes.
# Each statement takes every id of its kind as one JSON array and returns the
# ids it deleted.
_DELETE = {
    "memory_deleted": f"DELETE FROM memories WHERE {IDS} AND deleted_at IS NOT NULL RETURNING id",
    "memory": f"DELETE FROM memories WHERE {IDS} RETURNING id",
    "review": f"DELETE FROM memory_review_queue WHERE {IDS} RETURNING id",
    "summary": f"DELETE FROM session_summaries WHERE {IDS} RETURNING id",
    # A plan names events by their integer id written as text.
    "event": "DELETE FROM memory_events WHERE id IN (SELECT CAST(value AS INTEGER) FROM json_each(?))"
    " AND memory_id NOT IN (SELECT id FROM memories) RETURNING id",
}


@dataclass
class EraseOutcome:
    """What the write transaction and the maintenance after it did. Filled in as the steps commit, so a caller
    whose ``erase`` raised still knows which rows are gone (and which texts a retry must look for)."""

    deleted: dict[str, int] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)  # confirmed rows gone before the purge came
    kept: list[dict[str, str]] = field(default_factory=list)  # rows that arrived after the dry run
    erased: list[PlanRow] = field(default_factory=list)  # the PlanRows deleted, current texts
    committed: bool = False
    checkpoint: tuple[int, int, int] | None = None  # (busy, wal frames, frames checkpointed)


class RowsChanged(StoreProblem):
    """Confirmed rows changed since the dry run: the purge refused before writing."""

    def __init__(self, rows: list[PlanRow]):
        super().__init__(
            "changed", f"{len(rows)} of the confirmed rows changed since the dry run ({count_kinds(rows)})."
        )
        self.rows = rows


def count_kinds(rows: Iterable[PlanRow | dict[str, Any]]) -> str:
    """'2 review, 1 memory_deleted': how many rows of each kind, for a sentence."""
    counts: dict[str, int] = {}
    for r in rows:
        kind = r.kind if isinstance(r, PlanRow) else r["kind"]
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in counts.items())


# -- agentao's wipe ---------------------------------------------------------


def _mark_deleted(conn: sqlite3.Connection, column: Literal["scope", "id"], value: str, now: str) -> int:
    """agentao's soft delete of the live rows whose ``column`` is ``value``: how many it marked."""
    return conn.execute(
        f"UPDATE memories SET deleted_at = ?, updated_at = ? WHERE {column} = ? AND deleted_at IS NULL",
        (now, now, value),
    ).rowcount


def clear_scope(ref: StoreRef, scope: str, now: str) -> int:
    """Soft-delete every live row of ``scope`` in one file, no events (agentao ``clear``)."""
    with write(ref.path) as conn:
        cleared = _mark_deleted(conn, "scope", scope, now)
        events.note_own_counter(ref.path, conn)  # no event to tell the pulse it was ours
        return cleared


def delete_all_summaries(ref: StoreRef) -> int:
    """Hard-delete every session summary of one file, all sessions."""
    with write(ref.path) as conn:
        return conn.execute("DELETE FROM session_summaries").rowcount


def soft_delete_memory(ref: StoreRef, memory_id: str, now: str) -> bool:
    """agentao's single soft delete: mark the row and log a ``soft_delete`` event."""
    with write(ref.path) as conn:
        changed = _mark_deleted(conn, "id", memory_id, now)
        if changed:
            logged = conn.execute(
                "INSERT INTO memory_events (memory_id, event_type, timestamp) VALUES (?, 'soft_delete', ?)",
                (memory_id, now),
            )
            events.note_own_event(logged.lastrowid, memory_id, "soft_delete", now)
        return bool(changed)


def summaries_remain(ref: StoreRef) -> bool:
    """Whether any summary is left; a file that cannot be read cannot confirm it."""
    try:
        return read(
            ref.path, lambda c: c.execute("SELECT 1 FROM session_summaries LIMIT 1").fetchone() is not None
        )
    except StoreProblem:
        return True


# -- residue ------------------------------------------------------------------


def residue_rows(ref: StoreRef) -> dict[str, Any]:
    """Rows that still hold forgotten text, and the file's free pages (read-only)."""

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        soft = [
            dict(r)
            for r in conn.execute(
                "SELECT id, scope, title, deleted_at,"
                " length(CAST(content AS BLOB)) + length(CAST(title AS BLOB)) AS bytes"
                " FROM memories WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC, id"
            )
        ]
        reviews = [
            dict(r)
            for r in conn.execute(
                "SELECT id, status, scope, type, title, content, evidence, updated_at"
                " FROM memory_review_queue ORDER BY status, updated_at DESC, id"
            )
        ]
        events = conn.execute(
            "SELECT count(*) AS n, count(DISTINCT e.memory_id) AS memories FROM memory_events e"
            " LEFT JOIN memories m ON m.id = e.memory_id"
            " WHERE m.id IS NULL OR m.deleted_at IS NOT NULL"
        ).fetchone()
        summaries = conn.execute(
            "SELECT count(*) AS n, coalesce(sum(length(CAST(summary_text AS BLOB))), 0) AS bytes"
            " FROM session_summaries"
        ).fetchone()
        pragma = {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_size", "page_count", "freelist_count")
        }
        return {
            "soft_deleted": soft,
            "reviews": reviews,
            "events": {"rows": events["n"], "memories": events["memories"]},
            "summaries": {"count": summaries["n"], "bytes": summaries["bytes"]},
            **pragma,
        }

    return read(ref.path, run)


# -- dry run ------------------------------------------------------------------


def plan_rows(
    ref: StoreRef,
    categories: Iterable[str] = (),
    memory_ids: Iterable[str] = (),
    review_ids: Iterable[str] = (),
    summary_ids: Iterable[Any] = (),
    stop: Callable[[], bool] | None = None,
) -> DryRun:
    """Exactly the rows a purge of ``categories`` (and the given ids) would erase (``stop``: see
    ``rows_for``)."""
    selection = Selection(tuple(categories), tuple(memory_ids), tuple(review_ids), tuple(summary_ids))
    return read(ref.path, lambda conn: rows_for(conn, selection, stop))


def most_rows(ref: StoreRef) -> int:
    """The most rows a dry run of this store can name: the rows it holds, plus its highest
    event id (events are named by id, and each id once).  A fingerprint naming more is
    refused before its rows are built."""

    def run(conn: sqlite3.Connection) -> int:
        held: int = sum(
            conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("memories", "memory_review_queue", "session_summaries")
        )
        seq = conn.execute("SELECT MAX(id) FROM memory_events").fetchone()[0] or 0
        try:
            seq = max(
                seq,
                int(
                    conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memory_events'").fetchone()[0]
                ),
            )
        except (TypeError, ValueError, sqlite3.OperationalError):
            pass
        return held + seq

    return read(ref.path, run)


def check(ref: StoreRef, dry_run: DryRun) -> Comparison:
    """The dry run against the file now, read-only: what a purge would erase, skip and keep."""
    return read(ref.path, lambda conn: compare(conn, dry_run))


# -- the hard purge -------------------------------------------------------------


def _open_rw(path: Path) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise StoreProblem("missing", f"{path} does not exist.")
    # secure_delete zeroes freed content; temp_store=MEMORY keeps VACUUM's working copy
    # off the disk; a bigger page cache (up to 256 MB, as used) keeps the DELETE from
    # spilling pages to the WAL twice.
    return open_rw(
        path, "PRAGMA secure_delete = ON", "PRAGMA temp_store = MEMORY", "PRAGMA cache_size = -262144"
    )


def _delete(conn: sqlite3.Connection, rows: list[PlanRow]) -> tuple[list[PlanRow], list[dict[str, str]]]:
    """Delete ``rows`` kind by kind; returns (rows deleted, {kind, id} of those a guard kept)."""
    deleted: list[PlanRow] = []
    skipped: list[dict[str, str]] = []
    for kind in KINDS:  # events after memories
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        # One statement per kind: deleting row by row cost a fifth of a 100 MB purge.
        gone = {str(r[0]) for r in conn.execute(_DELETE[kind], (json.dumps([r.id for r in mine]),))}
        for row in mine:
            if row.id in gone:
                gone.discard(row.id)  # listed twice: the second one found nothing
                deleted.append(row)
            else:
                skipped.append({"kind": kind, "id": row.id})
    return deleted, skipped


def _vacuum(conn: sqlite3.Connection) -> None:
    conn.execute("VACUUM")


def _checkpoint(conn: sqlite3.Connection) -> tuple[int, int, int]:
    conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_BUSY_MS}")
    return tuple(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())


def erase(
    ref: StoreRef,
    dry_run: DryRun,
    on_step: Callable[[str], None] = lambda step: None,
    outcome: EraseOutcome | None = None,
) -> EraseOutcome:
    """Erase the confirmed rows of ``dry_run`` in one BEGIN IMMEDIATE transaction, then VACUUM and truncate
    the WAL. Unchanged rows go, gone ones are skipped, new ones kept (``outcome.kept``); a changed one raises
    RowsChanged before any write. An empty plan still VACUUMs (finishing a purge)."""
    outcome = outcome if outcome is not None else EraseOutcome()
    settle(ref.path)  # a two-file action left half done on this store is finished first
    conn = _open_rw(ref.path)
    try:
        try:
            on_step("delete")
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = compare(conn, dry_run)
                if now.changed:
                    raise RowsChanged(now.changed)
                deleted, guarded = _delete(conn, now.matched)
                events.note_own_counter(ref.path, conn)  # the live pulse: this change is ours
                conn.execute("COMMIT")
            except BaseException:
                rollback_quietly(conn)
                raise
            outcome.committed, outcome.erased = True, deleted
            outcome.skipped = [{"kind": r.kind, "id": r.id} for r in now.gone] + guarded
            outcome.kept = [{"kind": r.kind, "id": r.id} for r in now.arrived]
            for r in deleted:
                outcome.deleted[r.kind] = outcome.deleted.get(r.kind, 0) + 1
            on_step("vacuum")
            _vacuum(conn)
            on_step("checkpoint")
            outcome.checkpoint = _checkpoint(conn)
        except sqlite3.Error as exc:
            raise describe_error(ref.path, exc, writing=True) from exc
    finally:
        conn.close()
    return outcome


def remaining_text(ref: StoreRef) -> bytes:
    """Every text value still stored in the file, joined: fragments found here are live data."""

    def run(conn: sqlite3.Connection) -> bytes:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        parts = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                parts.extend(v for v in row if isinstance(v, str))
        return "\x00".join(parts).encode("utf-8", "surrogatepass")

    return read(ref.path, run)
