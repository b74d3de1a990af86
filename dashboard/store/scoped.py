"""The reads behind a scoped forget ("forget what is about me", "forget everything"): every
row's id and scope, the counts the forget page says, the person's own memories, and every text
handed over row by row.  Read-only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from itertools import chain
from typing import Any

from . import plan
from .connection import read
from .registry import StoreRef
from .rows import as_text


def scoped_rows(ref: StoreRef) -> dict[str, Any]:
    """Every memory, review item and summary id with what a scoped forget picks by (read-only):
    ``memories`` (id, scope, live), ``reviews`` (id, scope), ``summaries``, ``events`` (a count).
    Only text ids (a purge names rows by id in its fingerprint)."""

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        return {
            "memories": [
                (r["id"], r["scope"], r["deleted_at"] is None)
                for r in conn.execute(
                    "SELECT id, scope, deleted_at FROM memories WHERE typeof(id) = 'text' ORDER BY rowid"
                )
            ],
            "reviews": [
                (r["id"], r["scope"])
                for r in conn.execute(
                    "SELECT id, scope FROM memory_review_queue WHERE typeof(id) = 'text' ORDER BY rowid"
                )
            ],
            "summaries": [
                r["id"]
                for r in conn.execute(
                    "SELECT id FROM session_summaries WHERE typeof(id) IN ('text', 'integer') ORDER BY rowid"
                )
            ],
            "events": conn.execute("SELECT count(*) FROM memory_events").fetchone()[0],
        }

    return read(ref.path, run)


def scoped_counts(ref: StoreRef) -> dict[str, int]:
    """How many rows of each kind ``scoped_rows`` lists, counted by SQLite (read-only), with the
    memories a wipe of the file's own scope leaves behind (``memories_kept``: live rows of
    another scope): what the forget page says, without reading every id."""

    def run(conn: sqlite3.Connection) -> dict[str, int]:
        memories, kept = conn.execute(
            "SELECT count(*), coalesce(sum(deleted_at IS NULL AND scope IS NOT ?), 0) FROM memories"
            " WHERE typeof(id) = 'text'",
            (ref.kind,),
        ).fetchone()
        return {
            "memories": memories - kept,
            "memories_kept": kept,
            "reviews": conn.execute(
                "SELECT count(*) FROM memory_review_queue WHERE typeof(id) = 'text'"
            ).fetchone()[0],
            "summaries": conn.execute(
                "SELECT count(*) FROM session_summaries WHERE typeof(id) IN ('text', 'integer')"
            ).fetchone()[0],
            "events": conn.execute("SELECT count(*) FROM memory_events").fetchone()[0],
        }

    return read(ref.path, run)


def user_memory_texts(ref: StoreRef) -> list[tuple[str, str, str, str]]:
    """(id, key, title, content) of every memory of scope ``user`` in the file, live or
    soft-deleted (read-only): the person's own memories, which say who they are."""

    def run(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
        return [
            (r[0], *(v if isinstance(v := as_text(x), str) else "" for x in r[1:]))
            for r in conn.execute(
                "SELECT id, key_normalized, title, content FROM memories"
                " WHERE scope = 'user' AND typeof(id) = 'text' ORDER BY rowid"
            )
        ]

    return read(ref.path, run)


def scoped_texts(
    ref: StoreRef,
    visit: Callable[[str, str, str, bool, tuple[str, ...]], None],
    begin: Callable[[], None] = lambda: None,
    stop: Callable[[], bool] | None = None,
) -> bool:
    """Hand every memory, review item and summary (text ids) to ``visit(kind, id, scope, live,
    texts)`` as read, so a large store is never held whole (read-only).  ``begin()`` comes before
    each try (a read torn by an agent's write is read again, from the start); ``stop()`` is asked
    every ``plan.STEP`` rows, and ends the read when true.  Whether every row was visited."""

    def text(v: Any) -> str:
        v = as_text(v)
        return v if isinstance(v, str) else ""

    def run(conn: sqlite3.Connection) -> bool:
        begin()
        rows = chain(  # one query after the other, each row as it comes
            (
                ("memory", r[0], text(r[1]), r[2] is None, (text(r[3]), text(r[4]), text(r[5])))
                for r in conn.execute(
                    "SELECT id, scope, deleted_at, key_normalized, title, content FROM memories"
                    " WHERE typeof(id) = 'text' ORDER BY rowid"
                )
            ),
            (
                ("review", r[0], text(r[1]), True, (text(r[2]), text(r[3]), text(r[4])))
                for r in conn.execute(
                    "SELECT id, scope, title, content, evidence FROM memory_review_queue"
                    " WHERE typeof(id) = 'text' ORDER BY rowid"
                )
            ),
            (
                ("summary", r[0], "", True, (text(r[1]),))
                for r in conn.execute(
                    "SELECT id, summary_text FROM session_summaries"
                    " WHERE typeof(id) IN ('text', 'integer') ORDER BY rowid"
                )
            ),
        )
        for n, row in enumerate(rows, 1):
            visit(*row)
            if stop is not None and n % plan.STEP == 0 and stop():
                return False
        return True

    return read(ref.path, run)
