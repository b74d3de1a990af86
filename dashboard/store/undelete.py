"""Restoring a soft-deleted memory: the one write agentao itself never makes.

Clearing ``deleted_at`` gives back an ordinary live row; ``updated_at`` becomes now and one
``update`` event is logged (after the ``soft_delete`` agentao's ``/memory clear`` did not log,
at its ``deleted_at``).  Refused, writing nothing, when the content holds a credential,
a live row holds its (scope, key), or its scope already keeps agentao's 50 auto rows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flask_babel import gettext as _

from ..contract import find_secret
from ..records import Memory
from . import events, rows, writes
from .connection import read, write
from .writes import AUTO_CAP, Expect, Saved, WriteConflict, _event, _live_at


def obstacle(conn: sqlite3.Connection, memory: Memory) -> str | None:
    """Why ``memory`` cannot be restored now, in words for a person; None when it can."""
    if find_secret(memory.content):
        return _(
            "Its content looks like it holds a credential, and agentao refuses to save such "
            "content; it stays deleted (a purge removes it from the file). Nothing was changed."
        )
    holder = _live_at(conn, memory.scope, memory.key_normalized, memory.store)
    if holder is not None:
        return _(
            "The live memory %(id)s already holds the key '%(key)s' in the %(scope)s scope, "
            "and agentao keeps one live memory per key; delete or rename that one first. "
            "Nothing was changed.",
            id=holder.id,
            key=memory.key_normalized,
            scope=memory.scope,
        )
    if memory.source == "auto":
        auto = conn.execute(
            "SELECT COUNT(*) FROM memories WHERE scope = ? AND source = 'auto' AND deleted_at IS NULL",
            (memory.scope,),
        ).fetchone()[0]
        if auto >= AUTO_CAP:
            return _(
                "The %(scope)s scope already keeps %(num)d auto-saved memories, agentao's "
                "limit of %(cap)d: its next auto save would soft-delete the oldest of them to "
                "make room. Nothing was changed.",
                scope=memory.scope,
                num=auto,
                cap=AUTO_CAP,
            )
    return None


def restore_obstacle(path: Path, memory: Memory) -> str | None:
    """``obstacle`` read from the file (for the page, before any click)."""
    return read(path, lambda conn: obstacle(conn, memory))


def _deleted_as_seen(conn: sqlite3.Connection, expect: Expect, store: str) -> Memory:
    memory = rows.memory_by_id(conn, expect.row_id, store)
    if memory is None:
        raise WriteConflict(
            "gone",
            _(
                "Memory %(id)s is no longer in the %(store)s store (purged); nothing was changed.",
                id=expect.row_id,
                store=store,
            ),
        )
    if memory.live:
        raise WriteConflict("changed", _("Memory %(id)s is live already; nothing was changed.", id=memory.id))
    return writes.unchanged_since(memory, expect)


def restore(path: Path, expect: Expect, store: str) -> Saved:
    """Make the soft-deleted row ``expect.row_id`` live again, if it is still as the page showed."""
    with write(path) as conn:
        memory = _deleted_as_seen(conn, expect, store)
        problem = obstacle(conn, memory)
        if problem is not None:
            raise WriteConflict("blocked", problem)
        last = conn.execute(
            "SELECT event_type FROM memory_events WHERE memory_id = ? ORDER BY id DESC LIMIT 1", (memory.id,)
        ).fetchone()
        if last is None or last[0] != "soft_delete":
            # Cleared without an event (agentao's /memory clear, a Forget): the log learns when
            # it was deleted, or "what changed since" would take it for live all along.
            _event(conn, memory.id, "soft_delete", str(memory.deleted_at))
            events.note_backfill(conn.execute("SELECT last_insert_rowid()").fetchone()[0])
        stamp = writes.now()
        conn.execute(
            "UPDATE memories SET deleted_at = NULL, updated_at = ? WHERE id = ? AND deleted_at IS NOT NULL",
            (stamp, memory.id),
        )
        _event(conn, memory.id, "update", stamp)
        return Saved(memory.id, "update", stamp, memory)
