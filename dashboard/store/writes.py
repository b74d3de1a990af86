"""Writing agentao's memory files the way agentao 0.5.17 writes them (contract §4.6, §5, §7).

Every action re-reads its own rows inside its write transaction and raises
``WriteConflict`` (writing nothing) when they moved since the page showed them.  The
checks and writes work on an open connection, so two-file actions run them under
``lockstep.write_all``.  Statements mirror agentao's: upsert among live rows by (scope,
key), a new 8-hex id, one event stamped as the row, local wall-clock stamps.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path

from flask_babel import gettext as _

from .. import clock
from ..contract import PlannedSave
from ..records import Memory, ReviewItem, plain
from . import events, rows
from .connection import StoreProblem, read, write

AUTO_CAP = 50  # live source='auto' rows agentao keeps per scope (contract §4.7)
NONE = "none"  # fingerprint of "no live row there"


class WriteConflict(Exception):
    """The file no longer holds what the page showed; nothing was written. ``kind`` is ``changed``
    (re-decide), ``not_pending`` (already decided) or ``gone`` (row missing or deleted). str() is a sentence
    for a person."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Expect:
    """What the page was rendered with; each field set is checked inside the transaction."""

    row_id: str | None = None  # the row being edited/deleted must still be live...
    updated_at: str | None = None  # ...still carry this updated_at...
    row: str | None = None  # ...and still have this fingerprint (a same-second change)
    target: str | None = None  # fingerprint of the live row at the plan's (scope, key), or NONE


@dataclass(frozen=True)
class Saved:
    memory_id: str
    event: str  # "create" or "update"
    timestamp: str
    before: Memory | None


def now() -> str:
    """agentao's stamp for now, from the dashboard's one clock (``clock.stamp``)."""
    return clock.stamp()


def fingerprint(record: Memory | ReviewItem | None) -> str:
    """A short digest of every column of a row, so a same-second change is still noticed."""
    if record is None:
        return NONE
    data = record.to_dict()
    data.pop("store", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- reads
def _live_at(conn: sqlite3.Connection, scope: str, key: str, store: str) -> Memory | None:
    row = conn.execute(
        "SELECT * FROM memories WHERE scope = ? AND key_normalized = ? AND deleted_at IS NULL", (scope, key)
    ).fetchone()
    return rows.memory(row, store) if row else None


def live_at(path: Path, scope: str, key: str, store: str) -> Memory | None:
    """The live row a save with this scope and key would update, if any."""
    return read(path, lambda conn: _live_at(conn, scope, key, store))


def target_of(
    path: Path, plan: PlannedSave, known: Exception | None = None
) -> tuple[Memory | None, Exception | None]:
    """(the live row ``plan`` would update, None) or (None, why the file cannot be read). ``known`` is a
    problem the page already knows of that file: it is not read again."""
    if known is not None:
        return None, known
    try:
        return live_at(path, plan.scope, plan.key_normalized, plan.store), None
    except StoreProblem as unreadable:
        return None, unreadable


def review_item(path: Path, item_id: str) -> ReviewItem | None:
    """One review-queue row by id, whatever its status (the review queue is the project's)."""
    return read(path, lambda conn: rows.review_by_id(conn, item_id, "project"))


# --------------------------------------------------------------------------- checks (in a transaction)
def row_as_seen(conn: sqlite3.Connection, expect: Expect, store: str = "project") -> Memory | None:
    """The row ``expect.row_id`` as the page showed it, or WriteConflict (gone / changed)."""
    if expect.row_id is None:
        return None
    memory = rows.memory_by_id(conn, expect.row_id, store)
    if memory is None or not memory.live:
        raise WriteConflict(
            "gone", _("Memory %(id)s is no longer live; nothing was changed.", id=expect.row_id)
        )
    return unchanged_since(memory, expect)


def unchanged_since(memory: Memory, expect: Expect) -> Memory:
    """``memory`` if it is still as the page showed it (its stamp, its fingerprint); else the
    conflict a person reads ("changed since you looked")."""
    if (expect.updated_at is not None and memory.updated_at != expect.updated_at) or (
        expect.row is not None and fingerprint(memory) != expect.row
    ):
        raise WriteConflict(
            "changed",
            _(
                "Memory %(id)s changed since you looked (updated %(stamp)s); reload and decide again.",
                id=memory.id,
                stamp=memory.updated_at,
            ),
        )
    return memory


def _holds(row: Memory, plan: PlannedSave) -> bool:
    # The target already carries exactly what this save writes: a retried
    # write after a crash, not somebody else's change.
    return (row.title, row.content, row.tags, row.keywords, row.type, row.source, row.confidence) == (
        plan.title,
        plan.content,
        plan.tags,
        plan.keywords,
        plan.type,
        plan.source,
        plan.confidence,
    )


def target_as_seen(conn: sqlite3.Connection, plan: PlannedSave, expect: Expect = Expect()) -> Memory | None:
    """The live row the save would update, or WriteConflict if it is not the one the page showed
    (one already holding exactly the plan is this action's first half, from before a crash)."""
    existing = _live_at(conn, plan.scope, plan.key_normalized, plan.store)
    if (
        expect.target is not None
        and fingerprint(existing) != expect.target
        and not (existing is not None and _holds(existing, plan))
    ):
        raise WriteConflict(
            "changed",
            _(
                "The memory '%(key)s' in the %(store)s store changed "
                "since you looked; reload and decide again.",
                key=plan.key_normalized,
                store=plan.store,
            ),
        )
    if expect.row_id is not None and (existing is None or existing.id != expect.row_id):
        raise WriteConflict(
            "changed", _("This save would not land on the memory you were editing; nothing was changed.")
        )
    return existing


def pending_as_seen(conn: sqlite3.Connection, item_id: str, seen: str | None = None) -> ReviewItem:
    """The review item, still pending and (if ``seen`` is given) unchanged, or WriteConflict."""
    item = rows.review_by_id(conn, item_id, "project")
    if item is None or item.status != "pending":
        raise WriteConflict(
            "not_pending",
            _("Review item %(id)s is no longer pending (it is %(status)s).", id=item_id, status=item.status)
            if item
            else _("Review item %(id)s is no longer pending (it does not exist).", id=item_id),
        )
    if seen is not None and fingerprint(item) != seen:
        raise WriteConflict(
            "changed",
            _(
                "Review item %(id)s changed since you looked (the agent proposed it again); reload "
                "and decide again.",
                id=item_id,
            ),
        )
    return item


# --------------------------------------------------------------------------- writes (in a transaction)
def _event(conn: sqlite3.Connection, memory_id: str, kind: str, stamp: str) -> None:
    cursor = conn.execute(
        "INSERT INTO memory_events (memory_id, event_type, timestamp) VALUES (?, ?, ?)",
        (memory_id, kind, stamp),
    )
    events.note_own_event(cursor.lastrowid, memory_id, kind, stamp)  # the feed's "this dashboard"


def _soft_delete(conn: sqlite3.Connection, memory_id: str, stamp: str) -> bool:
    changed = conn.execute(
        "UPDATE memories SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL",
        (stamp, stamp, memory_id),
    ).rowcount
    if changed:
        _event(conn, memory_id, "soft_delete", stamp)
    return bool(changed)


def _enforce_auto_cap(conn: sqlite3.Connection, scope: str, stamp: str) -> None:
    # agentao soft-deletes the oldest auto rows (by updated_at) beyond 50 per scope.
    auto = conn.execute(
        "SELECT id FROM memories WHERE scope = ? AND deleted_at IS NULL"
        " AND source = 'auto' ORDER BY updated_at ASC, created_at ASC",
        (scope,),
    ).fetchall()
    for row in auto[: max(0, len(auto) - AUTO_CAP)]:
        _soft_delete(conn, row["id"], stamp)


def _fresh_id(conn: sqlite3.Connection) -> str:
    # agentao's format, 8 hex digits.  At 100,000+ rows a random draw can hit an id
    # already in use (soft-deleted rows keep theirs), and agentao's own insert then
    # fails; drawing again keeps the format and never fails the user's action.
    while True:
        candidate = uuid.uuid4().hex[:8]
        if conn.execute("SELECT 1 FROM memories WHERE id = ?", (candidate,)).fetchone() is None:
            return candidate


def put(conn: sqlite3.Connection, plan: PlannedSave, existing: Memory | None) -> Saved:
    """agentao's upsert of ``plan``: onto ``existing`` (from ``target_as_seen``) or a new row."""
    stamp = now()
    values = {
        **plain(plan, "scope", "type", "key_normalized", "title", "content", "source", "confidence"),
        "tags": json.dumps(list(plan.tags)),
        "keywords": json.dumps(list(plan.keywords)),
        "at": stamp,
    }
    if existing is not None:
        conn.execute(
            "UPDATE memories SET title = :title, content = :content, tags_json = :tags,"
            " keywords_json = :keywords, type = :type, source = :source, confidence = :confidence,"
            " sensitivity = 'normal', updated_at = :at WHERE id = :id",
            {**values, "id": existing.id},
        )
        memory_id, kind = existing.id, "update"
    else:
        memory_id, kind = _fresh_id(conn), "create"
        conn.execute(
            "INSERT INTO memories (id, scope, type, key_normalized, title, content, tags_json,"
            " keywords_json, source, confidence, sensitivity, created_at, updated_at)"
            " VALUES (:id, :scope, :type, :key_normalized, :title, :content, :tags, :keywords,"
            " :source, :confidence, 'normal', :at, :at)",
            {**values, "id": memory_id},
        )
    _event(conn, memory_id, kind, stamp)
    if plan.source == "auto":
        _enforce_auto_cap(conn, plan.scope, stamp)
    return Saved(memory_id, kind, stamp, existing)


def delete_row(conn: sqlite3.Connection, memory_id: str) -> bool:
    """``/memory delete``'s soft delete: deleted_at = updated_at = now, one event."""
    return _soft_delete(conn, memory_id, now())


def mark(conn: sqlite3.Connection, item_id: str, status: str) -> str:
    """Set a review item's status (agentao writes no event for it); returns the new updated_at."""
    assert status in ("approved", "rejected")
    stamp = now()
    conn.execute(
        "UPDATE memory_review_queue SET status = ?, updated_at = ? WHERE id = ?", (status, stamp, item_id)
    )
    events.note_own_review(item_id, status, stamp)
    return stamp


# --------------------------------------------------------------------------- one-file actions
def save_memory(path: Path, plan: PlannedSave, expect: Expect = Expect()) -> Saved:
    """Write a planned save as agentao's upsert does: update the live (scope, key) row in place
    (``update``) or insert a fresh 8-hex id (``create``); WriteConflict when ``expect`` fails."""
    with write(path) as conn:
        row_as_seen(conn, expect, plan.store)
        return put(conn, plan, target_as_seen(conn, plan, expect))


def soft_delete(path: Path, memory_id: str, expect: Expect = Expect()) -> bool:
    """Soft-delete one row as ``/memory delete`` does, if it is still as ``expect`` says."""
    with write(path) as conn:
        row_as_seen(conn, expect)
        return delete_row(conn, memory_id)


def set_review_status(path: Path, item_id: str, status: str, seen: str | None = None) -> str:
    """Move a pending review item to ``approved``/``rejected``; returns the new updated_at. ``seen`` is the
    item's fingerprint on the page. The item must still be pending (else ``not_pending``) and unchanged (else
    ``changed``)."""
    with write(path) as conn:
        pending_as_seen(conn, item_id, seen)
        return mark(conn, item_id, status)
