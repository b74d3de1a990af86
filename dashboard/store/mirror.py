"""An in-memory, indexed copy of the ``memories`` tables, for fast listing and search.

agentao's files have no index on the columns people sort and filter by, and
the dashboard must not add one (browsing never writes).  With 100,000 rows a
sort or a count over the file is a full scan on every page view.  So each
app keeps a private in-memory SQLite database holding the rows of every store,
with indexes, a tag table and a lower-cased search column; the list is still
filtered, sorted and paged in SQL, just on this copy.

Freshness: before each query the copy compares each store's change signature
(``memories_change`` counter, file and ``-wal`` size and mtime).  When one
moved it reloads the rows whose ``updated_at`` is at or after the newest one
it holds (every agentao write sets ``updated_at``), then checks the row count;
any mismatch (a hard delete, a hand edit with an old timestamp) reloads that
store completely.  The copy is guarded by one lock; queries take milliseconds.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from .connection import StoreProblem, read
from .registry import StoreRef

_COLUMNS = ("id, scope, type, key_normalized, title, content, tags_json, keywords_json, source,"
            " confidence, sensitivity, created_at, updated_at, deleted_at")
_DDL = """
CREATE TABLE memories (store TEXT NOT NULL, id TEXT NOT NULL, scope TEXT, type TEXT,
  key_normalized TEXT, title TEXT, content TEXT, tags_json TEXT, keywords_json TEXT, source TEXT,
  confidence TEXT, sensitivity TEXT, created_at TEXT, updated_at TEXT, deleted_at TEXT,
  haystack TEXT, PRIMARY KEY (store, id)) WITHOUT ROWID;
CREATE INDEX m_updated ON memories(updated_at, store, id);
CREATE INDEX m_created ON memories(created_at, store, id);
CREATE INDEX m_title ON memories(title, store, id);
CREATE INDEX m_key ON memories(key_normalized, store, id);
CREATE INDEX m_type ON memories(type, store, id);
CREATE INDEX m_scope ON memories(scope, store, id);
CREATE INDEX m_deleted ON memories(deleted_at);
CREATE TABLE tags (store TEXT NOT NULL, id TEXT NOT NULL, tag TEXT NOT NULL);
CREATE INDEX t_tag ON tags(tag);
CREATE INDEX t_row ON tags(store, id);
"""
# The search column holds every field /memory search looks at, lower-cased by
# SQLite's own LOWER (ASCII only, as agentao's query).  Matching it with LIKE
# finds a superset of agentao's matches; the exact predicate then runs on those.
_JSON_VALUES = ("COALESCE((SELECT group_concat(LOWER(j.value), char(10)) FROM json_each(CASE WHEN"
                " json_valid({col}) THEN {col} ELSE '[]' END) j), '')")
_HAYSTACK = ("LOWER(title) || char(10) || LOWER(content) || char(10) || LOWER(key_normalized)"
             " || char(10) || " + _JSON_VALUES.format(col="tags_json")
             + " || char(10) || " + _JSON_VALUES.format(col="keywords_json"))


def _signature(ref: StoreRef, conn: sqlite3.Connection | None = None):
    def stat(p: Path):
        try:
            s = p.stat()
            return (s.st_size, s.st_mtime_ns)
        except OSError:
            return None
    return (stat(ref.path), stat(Path(str(ref.path) + "-wal")))


class Mirror:
    """The per-app in-memory copy; use ``query(refs, fn)``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.executescript(_DDL)
        self._seen: dict[str, tuple] = {}

    def query(self, refs: list[StoreRef], fn) -> tuple[object, dict[str, StoreProblem]]:
        """Bring the copy up to date for ``refs`` and run ``fn(conn, keys)`` on it.

        ``keys`` are the stores that could be read; a store whose rows cannot
        be read (damaged page, lock) is left out and its problem returned, so
        the other store keeps working.
        """
        problems: dict[str, StoreProblem] = {}
        with self._lock:
            for ref in refs:
                try:
                    self._refresh(ref)
                except StoreProblem as problem:
                    self._drop(ref.key)
                    problems[ref.key] = problem
            keys = [r.key for r in refs if r.key not in problems]
            for stale in set(self._seen) - set(keys):
                self._drop(stale)
            return fn(self._conn, keys), problems

    def _drop(self, key: str) -> None:
        with self._conn:
            self._conn.execute("DELETE FROM memories WHERE store = ?", (key,))
            self._conn.execute("DELETE FROM tags WHERE store = ?", (key,))
        self._seen.pop(key, None)

    def _refresh(self, ref: StoreRef) -> None:
        sig = _signature(ref)
        if self._seen.get(ref.key, (None,))[0] == sig:
            return
        c = self._conn
        mark = c.execute("SELECT MAX(updated_at) FROM memories WHERE store = ?",
                         (ref.key,)).fetchone()[0]

        def load(conn):
            total = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
            if mark is None:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM memories").fetchall()
            else:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE updated_at >= ?",
                                    (mark,)).fetchall()
            return total, rows

        total, rows = read(ref.path, load)
        with c:
            self._upsert(ref.key, rows)
            held = c.execute("SELECT COUNT(*) FROM memories WHERE store = ?", (ref.key,)).fetchone()[0]
        if held != total:
            with c:
                self._drop(ref.key)
                _, rows = read(ref.path, lambda conn: (0, conn.execute(
                    f"SELECT {_COLUMNS} FROM memories").fetchall()))
                self._upsert(ref.key, rows)
        self._seen[ref.key] = (sig,)

    def _upsert(self, key: str, rows) -> None:
        c = self._conn
        ids = [(key, r["id"]) for r in rows]
        c.executemany("DELETE FROM tags WHERE store = ? AND id = ?", ids)
        c.executemany(
            f"INSERT OR REPLACE INTO memories (store, {_COLUMNS}, haystack) VALUES"
            " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, NULL)", [(key, *tuple(r)) for r in rows])
        c.executemany(f"UPDATE memories SET haystack = {_HAYSTACK} WHERE store = ? AND id = ?", ids)
        c.executemany(
            "INSERT INTO tags (store, id, tag) SELECT m.store, m.id, LOWER(t.value) FROM memories m,"
            " json_each(CASE WHEN json_valid(m.tags_json) THEN m.tags_json ELSE '[]' END) t"
            " WHERE m.store = ? AND m.id = ?", ids)


def mirror_for(app_extensions: dict) -> Mirror:
    """The app's mirror, created on first use (never at import or app creation)."""
    mirror = app_extensions.get("memory_mirror")
    if mirror is None:
        mirror = app_extensions.setdefault("memory_mirror", Mirror())
    return mirror
