"""An in-memory, indexed copy of the ``memories`` tables, for fast listing and search.

agentao's files have no index on the columns people sort and filter by, and
the dashboard must not add one (browsing never writes).  With 100,000 rows a
sort or a count over the file is a full scan on every page view.  So each app
keeps a private in-memory SQLite database holding the rows of every store,
with indexes and a tag table; the list is still filtered, sorted and paged in
SQL, just on this copy.

Search: agentao's ``/memory search`` is a LIKE over five fields, which no
index serves; ``search`` answers it from per-row lower-cased "haystack"
strings kept here, and the matching rows go into a temp table that the list
query joins.

Freshness: before each query the copy compares each store's file signature
(size and mtime of the database and its ``-wal``).  When one moved it reads,
in one read transaction, the change counter (``schema_meta.memories_change``,
bumped by a trigger once per row any writer touches) and the event log
(``memory_events``, one row per create / update / soft delete).  If the
counter advanced by exactly the number of new events, only those memories are
re-read, by primary key; otherwise something changed rows without events (a
clear, a wipe, a purge, a hand edit, a writer without the triggers) and the
store is reloaded whole.  One lock guards the copy; queries take milliseconds.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from ..records import Memory
from .connection import StoreProblem, file_stamp, read
from .registry import StoreRef
from .live_order import LiveOrder
from .tallies import Tallies
from .rows import memory as as_memory, text_select, whole_number
from .search import LastSearch, ascii_lower, haystack, json_strings
from .terms import TermIndex

COLUMNS = ("id", "scope", "type", "key_normalized", "title", "content", "tags_json",
           "keywords_json", "source", "confidence", "sensitivity", "created_at", "updated_at",
           "deleted_at")
SORT_COLUMNS = ("updated_at", "created_at", "title", "key_normalized", "type", "scope")
_TABLES = ["CREATE TABLE memories (rid INTEGER PRIMARY KEY, store TEXT NOT NULL, live INTEGER,"
           f" {', '.join(COLUMNS)}, UNIQUE (store, id))",
           "CREATE TABLE tags (rid INTEGER NOT NULL, tag TEXT NOT NULL)",
           "CREATE TEMP TABLE hits (rid INTEGER PRIMARY KEY)"]
# Secondary indexes are built after the first load: building an index over
# loaded rows is several times faster than maintaining it row by row.
_DDL = ["CREATE INDEX t_tag ON tags(tag, rid)", "CREATE INDEX t_rid ON tags(rid)"]
# (live, column, store, id): serves "live rows ordered by column" without a sort;
# (column, store, id): the same with soft-deleted rows included.
for _col in SORT_COLUMNS:
    _DDL.append(f"CREATE INDEX live_{_col} ON memories(live, {_col}, store, id)")
    _DDL.append(f"CREATE INDEX all_{_col} ON memories({_col}, store, id)")
for _col in ("source", "confidence"):
    _DDL.append(f"CREATE INDEX live_{_col} ON memories(live, {_col})")


class Mirror:
    """The per-app in-memory copy; use ``query(refs, fn)``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        for statement in _TABLES:
            self._conn.execute(statement)
        self._indexed = False
        self._seen: dict[str, tuple] = {}
        self._hay: dict[int, str] = {}   # rid -> search haystack (see ``search``)
        self._odd: set[int] = set()      # rids whose haystack alone cannot decide a search
        self._terms = TermIndex()         # words of the haystacks -> rids
        self._search = LastSearch()
        # rid -> (file path, the row as a record), for the preview engine,
        # which needs every live row in agentao's order.
        # The record is made on first use: the memories list never needs it.
        self._rec: dict[int, tuple[str, str, object]] = {}   # rid -> (path, key, row or Memory)
        self._live = LiveOrder()   # per path, once asked for: live records in order, patched
        self.tallies = Tallies()   # the overview's counts per path, kept row by row
        self.generation = 0   # moves whenever the copy changes; keys ``memo``
        self.memo: dict = {}  # small derived results, used under the lock

    def query(self, refs: list[StoreRef], fn) -> tuple[object, dict[str, StoreProblem]]:
        """Bring the copy up to date for ``refs`` and run ``fn(self, labels)`` under the lock.

        Rows are held per file (the ``store`` column is the file's path, so a
        project switch can never mix two files); ``labels`` maps each readable
        file's path to its store key.  A store whose rows cannot be read (damaged
        page, lock) is left out and its problem returned, keyed by store key, so
        the other store keeps working.
        """
        problems: dict[str, StoreProblem] = {}
        with self._lock:
            for ref in refs:
                try:
                    self._refresh(ref)
                except StoreProblem as problem:
                    self._drop(str(ref.path))
                    problems[ref.key] = problem
            labels = {str(r.path): r.key for r in refs if r.key not in problems}
            if not self._indexed:
                with self._conn:
                    for statement in _DDL:
                        self._conn.execute(statement)
                self._indexed = True
            return fn(self, labels), problems

    def live_records(self, refs: list[StoreRef]) -> tuple[dict[str, list[Memory]], dict[str, StoreProblem]]:
        """Every live row of each store as records, in agentao's listing order.

        agentao lists live rows with ``ORDER BY created_at``; SQLite answers it
        by scanning the partial unique index on (scope, key_normalized) and
        sorting stably, so equal stamps come in (scope, key) order — a total
        order, since that pair is unique among live rows (checked against
        agentao in tests/test_preview_page.py).  Returns the lists by store
        key, and the problems of stores left out.
        """
        def collect(m, labels):
            for ident in labels:
                if not m._live.held(ident):
                    m._live.build(ident, m._records_of(ident))
            return {key: m._live.rows(ident) for ident, key in labels.items()}
        return self.query(refs, collect)

    def _records_of(self, ident: str):
        for rid, (path, label, held) in self._rec.items():
            if path == ident:
                if not isinstance(held, Memory):
                    held = as_memory(held, label)
                    self._rec[rid] = (path, label, held)
                yield held

    def held(self) -> set[str]:
        """Paths of the files whose rows the copy holds."""
        return set(self._seen)

    @property
    def conn(self) -> sqlite3.Connection:
        return self._conn

    def mark_hits(self, query: str) -> bytes | None:
        """Mark the rows agentao's search for ``query`` matches (see ``LastSearch``).

        Remembered until the copy changes, so the next page, another sort or
        another filter on the same search (the usual next request) reuse it.
        """
        return self._search.hits(self._conn, self._terms, self._hay, self._odd, self.generation, query)

    def count_hits(self, paths, live_only: bool) -> int | None:
        """How many rows of these files ``mark_hits`` marked, or None when it put them in ``hits``."""
        return self._search.count(self._terms, paths, live_only)

    def _drop(self, key: str) -> None:
        self.generation += 1
        with self._conn:
            gone = [r[0] for r in self._conn.execute("SELECT rid FROM memories WHERE store = ?", (key,))]
            self._conn.execute("DELETE FROM tags WHERE rid IN (SELECT rid FROM memories WHERE store = ?)", (key,))
            self._conn.execute("DELETE FROM memories WHERE store = ?", (key,))
        self._forget_rows(gone)
        self._seen.pop(key, None)
        self._live.drop(key)
        self.tallies.drop(key)

    def _forget_rows(self, rids: list[int]) -> list:
        """Take rows out of everything kept beside the SQL copy; returns what ``_rec`` held for them."""
        self._terms.remove({rid: self._hay.pop(rid) for rid in rids})
        self._odd.difference_update(rids)
        return [self._rec.pop(rid)[2] for rid in rids]

    def _refresh(self, ref: StoreRef) -> None:
        ident = str(ref.path)
        sig = file_stamp(ref.path)
        held = self._seen.get(ident)
        if held is not None and held[0] == sig:
            return
        select = f"SELECT {text_select(COLUMNS)} FROM memories"

        def probe(conn):
            # One read transaction, so the counter, the events and the rows agree.
            conn.execute("BEGIN")
            try:
                meta = conn.execute(
                    "SELECT value FROM schema_meta WHERE key = 'memories_change'").fetchone()
                counter = whole_number(meta[0]) if meta else None
                last_event = conn.execute("SELECT MAX(id) FROM memory_events").fetchone()[0] or 0
                if held is None or counter is None or held[1] is None:
                    return counter, last_event, None
                if counter == held[1]:
                    return counter, last_event, []
                ids = [r[0] for r in conn.execute(
                    "SELECT memory_id FROM memory_events WHERE id > ?", (held[2],))]
                if len(ids) != counter - held[1]:
                    return counter, last_event, None   # a clear or a hard delete: no events
                wanted = sorted(set(ids))
                return counter, last_event, conn.execute(
                    f"{select} WHERE id IN ({', '.join('?' * len(wanted))})", wanted).fetchall()
            finally:
                conn.execute("COMMIT")

        counter, last_event, changed = read(ref.path, probe)
        if changed is None:
            self._drop(ident)
            self._upsert(ident, _read_whole(ref.path, select), ref.key)
        elif changed:
            self._upsert(ident, changed, ref.key)
        self._seen[ident] = (sig, counter, last_event)

    def _upsert(self, key: str, rows, label: str) -> None:
        self.generation += 1
        c = self._conn
        with c:
            old = {}
            for row in rows:
                found = c.execute("SELECT rid FROM memories WHERE store = ? AND id = ?",
                                  (key, row["id"])).fetchone() if self._seen.get(key) else None
                if found:
                    old[row["id"]] = found[0]
            if old:
                rids = list(old.values())
                self.tallies.count(c, key, "rid IN (SELECT value FROM json_each(?))",
                                   (json.dumps(rids),), -1)
                c.executemany("DELETE FROM tags WHERE rid = ?", [(r,) for r in rids])
                c.executemany("DELETE FROM memories WHERE rid = ?", [(r,) for r in rids])
                for held in self._forget_rows(rids):
                    if self._live.held(key):
                        self._live.remove(key, held)
            start = (c.execute("SELECT MAX(rid) FROM memories").fetchone()[0] or 0) + 1
            records, tags = [], []
            for rid, row in enumerate(rows, start):
                records.append((rid, key, int(row["deleted_at"] is None), *tuple(row)))
                if self._live.held(key):
                    # Followed in order: the record is needed now, not on first use.
                    record = as_memory(row, label)
                    self._rec[rid] = (key, label, record)
                    self._live.add(key, record)
                else:
                    self._rec[rid] = (key, label, row)
                row_tags, plain = json_strings(row["tags_json"])
                tags.extend((rid, ascii_lower(t)) for t in row_tags)
                self._hay[rid], plain = haystack(row, row_tags, plain)
                if not plain:
                    self._odd.add(rid)
            self._terms.add((rid, self._hay[rid], key, live) for rid, _, live, *_ in records)
            c.executemany(f"INSERT INTO memories (rid, store, live, {', '.join(COLUMNS)}) VALUES"
                          f" ({', '.join('?' * (len(COLUMNS) + 3))})", records)
            c.executemany("INSERT INTO tags (rid, tag) VALUES (?, ?)", tags)
            self.tallies.count(c, key, "rid >= ?", (start,), 1)


_PIECE = 5000   # rows per read when a file is loaded whole


def _read_whole(path: Path, select: str) -> list:
    """Every row of ``memories``, read in pieces of _PIECE rows in rowid order.

    One read of 100,000 rows takes seconds, and an agent saving meanwhile
    tears a lock-free read (it is retried from the start, again and again
    while the agent keeps saving).  Short reads are torn rarely and retried
    cheaply.  A row the agent changes between two pieces is read again by the
    next refresh: the change counter and the last event were taken before.
    """
    rows: list = []
    after = None

    def piece(conn):
        conn.execute("BEGIN")
        try:
            where, args = ("", ()) if after is None else ("WHERE rowid > ?", (after,))
            found = conn.execute(f"{select} {where} ORDER BY rowid LIMIT {_PIECE}", args).fetchall()
            last = conn.execute(f"SELECT rowid FROM memories {where} ORDER BY rowid"
                                f" LIMIT 1 OFFSET {len(found) - 1}", args).fetchone() if found else None
            return found, last[0] if last else None
        finally:
            conn.execute("COMMIT")
    while True:
        found, after = read(path, piece)
        rows += found
        if len(found) < _PIECE or after is None:
            return rows


def mirror_for(app_extensions: dict) -> Mirror:
    """The app's mirror, created on first use (never at import or app creation)."""
    mirror = app_extensions.get("memory_mirror")
    if mirror is None:
        mirror = app_extensions.setdefault("memory_mirror", Mirror())
    return mirror
