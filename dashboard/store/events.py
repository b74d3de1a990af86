"""The event log of each store, read for the activity feed and the live pulse.

``memory_events`` cannot say who wrote (agentao's tools, its cap, approvals and this
dashboard write alike); what can be told: an ``update`` right after a ``soft_delete`` is a
restore (only a dashboard makes one), a ``crystallized`` write at an approval came from it,
what this dashboard wrote since it started (``writes`` reports it, in memory only), a
deleted row with no ``soft_delete`` event was wiped, and a ``sqlite_sequence`` ahead of the
log counts purged changes.  Approvals and rejections write no event.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .connection import read
from .held import held
from .registry import StoreRef
from .rows import as_text, text_select
from .search import ascii_lower

_OWN_KEPT = 5000
_own_lock = threading.Lock()
_own_events: deque[tuple[Any, ...]] = deque(maxlen=_OWN_KEPT)  # (event id, memory id, kind, stamp)
_own_reviews: deque[tuple[Any, ...]] = deque(maxlen=_OWN_KEPT)  # (item id, status, stamp)
_own_counters: deque[tuple[str, int]] = deque(maxlen=_OWN_KEPT)  # (file path, change counter after our write)
_backfills: deque[int | None] = deque(maxlen=_OWN_KEPT)  # event ids (note_backfill)
_own_approvals: deque[tuple[str, str, str]] = deque(maxlen=_OWN_KEPT)  # (item id, memory store, memory id)

_MEMORY = text_select(("title", "key_normalized", "scope", "source", "updated_at", "deleted_at"))
# The log's own columns, a BLOB (a hand edit) read as TEXT like every other column.
_EVENT = "e.id, " + ", ".join(
    f"CASE WHEN typeof(e.{c}) = 'blob' THEN CAST(e.{c} AS TEXT) ELSE e.{c} END AS {c}"
    for c in ("memory_id", "event_type", "timestamp")
)


def note_own_event(event_id: int | None, memory_id: str, kind: str, stamp: str) -> None:
    """``writes`` tells us of each event it logged (checked again by every field on reading,
    so a rolled-back write whose id the agent reused is never taken for ours)."""
    with _own_lock:
        _own_events.append((event_id, memory_id, kind, stamp))


def note_backfill(event_id: int | None) -> None:
    """An event this dashboard wrote for a deletion that happened earlier without one (a
    clear, undone by a restore: ``undelete``): its own for the pulse, not for the feed."""
    with _own_lock:
        _backfills.append(event_id)


def backfill(event_id: Any) -> bool:
    with _own_lock:
        return event_id in _backfills


def note_own_review(item_id: str, status: str, stamp: str) -> None:
    with _own_lock:
        _own_reviews.append((item_id, status, stamp))


def note_own_approval(item_id: str, store: str, memory_id: str) -> None:
    """An approval of ours and the memory it saved: agentao's reject may still land on the
    item later (it checks, then writes), and the pulse then says the approval was undone."""
    with _own_lock:
        _own_approvals.append((item_id, store, memory_id))


def own_approval(item_id: Any) -> tuple[str, str] | None:
    """(memory store, memory id) of this dashboard's newest approval of ``item_id``, if any."""
    with _own_lock:
        found = [(store, memory) for item, store, memory in _own_approvals if item == item_id]
    return found[-1] if found else None


def change_counter(conn: sqlite3.Connection) -> int:
    """agentao's change counter of the memories (``schema_meta.memories_change``), 0 if odd."""
    try:
        row = conn.execute("SELECT value FROM schema_meta WHERE key = 'memories_change'").fetchone()
        return int(as_text(row[0])) if row else 0
    except (sqlite3.OperationalError, TypeError, ValueError):  # no such table: a foreign file
        return 0


def note_own_counter(path: Path | str, conn: sqlite3.Connection) -> None:
    """A write of ours that moves the counter without an event of its own (a hard purge,
    a wipe): the counter it left, read on ``conn`` inside that write's transaction.  While
    the file still holds that counter, the change is ours, not the agent's."""
    with _own_lock:
        _own_counters.append((str(path), change_counter(conn)))


def own_counter(path: Path | str, counter: int) -> bool:
    with _own_lock:
        return (str(path), counter) in _own_counters


def own_event(event_id: Any, memory_id: Any, kind: Any, stamp: Any) -> bool:
    with _own_lock:
        return (event_id, memory_id, kind, stamp) in _own_events


def own_review(item_id: Any, status: Any, stamp: Any) -> bool:
    with _own_lock:
        return (item_id, status, stamp) in _own_reviews


# --------------------------------------------------------------------------- the pulse
@dataclass(frozen=True)
class Mark:
    """Where a store's log stood: newest event id, change counter and the review queue's
    newest stamp, rowid, counts (all, pending, rejected) and occurrences ("|"-joined: stamps
    are whole seconds, so each of those moves with one change, the rejected count with
    agentao's reject of an item this dashboard approved in that second).  The pulse compares
    two marks."""

    last_event: int
    counter: int
    reviews: str


def _review_mark(conn: sqlite3.Connection) -> str:
    found = conn.execute(
        "SELECT MAX(CAST(updated_at AS TEXT)), MAX(rowid), COUNT(*),"
        " TOTAL(status = 'pending'), TOTAL(occurrences), TOTAL(status = 'rejected')"
        " FROM memory_review_queue"
    ).fetchone()
    return "|".join(str(v if v is not None else "") for v in found)


def mark_of(ref: StoreRef) -> Mark:
    """The store's mark, read again only when its file stamp moved (``held``): every open
    page's pulse asks every 2 s, and a quiet store should be left alone."""

    def run(conn: sqlite3.Connection) -> Mark:
        last = conn.execute("SELECT MAX(id) FROM memory_events").fetchone()[0]
        return Mark(int(last or 0), change_counter(conn), _review_mark(conn))

    return held("mark", (ref.path,), lambda _stamp: read(ref.path, run))


def news(ref: StoreRef, since: Mark, cap: int = 5) -> dict[str, Any]:
    """What moved in the store since ``since``: the newest ``cap`` events after its event id
    (and how many there are), review rows changed after its review stamp, and whether the
    change counter moved further than the events explain (a clear writes no event)."""

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        conn.execute("BEGIN")
        try:
            events = _events(conn, "e.id > ?", [since.last_event, cap])
            total = conn.execute(
                "SELECT COUNT(*) FROM memory_events WHERE id > ?", (since.last_event,)
            ).fetchone()[0]
            now = _review_mark(conn)
            reviews = _reviews_since(conn, since.reviews, now, cap) if now != since.reviews else []
        finally:
            conn.execute("COMMIT")
        return {"events": events, "total": total, "reviews": reviews}

    return read(ref.path, run)


def _events(conn: sqlite3.Connection, where: str, args: list[Any]) -> list[dict[str, Any]]:
    # The newest log rows matching ``where`` (the last arg: how many), joined with their memory.
    sql = f"SELECT {_EVENT}, {_MEMORY} FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id"
    return [dict(r) for r in conn.execute(f"{sql} WHERE {where} ORDER BY e.id DESC LIMIT ?", args)]


def _reviews_since(conn: sqlite3.Connection, mark: str, now: str, cap: int) -> list[dict[str, Any]]:
    """Review rows written after a mark: a newer stamp or a newer row; failing both (the
    queue moved within the mark's second: a decision, an occurrence), the rows of that
    second -- unless rows were only deleted (a purge: the rows left did not change)."""
    stamp, _sep, rest = mark.partition("|")
    top = rest.partition("|")[0]
    counted = [part.split("|")[2] if part.count("|") >= 2 else "" for part in (mark, now)]
    # A mark with no rowid (a page from before rowids were kept): the stamp alone.
    newest = int(top) if top.isdigit() and len(top) <= 18 else 2**63 - 1 if not top else 0
    columns = text_select(("id", "status", "title", "updated_at", "created_at"))
    found = [
        dict(r)
        for r in conn.execute(
            f"SELECT {columns} FROM memory_review_queue WHERE CAST(updated_at AS TEXT) > ?"
            " OR rowid > ? ORDER BY CAST(updated_at AS TEXT) DESC, rowid DESC LIMIT ?",
            (stamp, newest, cap),
        )
    ]
    fewer = all(c.isdigit() and len(c) <= 18 for c in counted) and int(counted[1]) < int(counted[0])
    if not found and stamp and not fewer:
        found = [
            dict(r)
            for r in conn.execute(
                f"SELECT {columns} FROM memory_review_queue WHERE CAST(updated_at AS TEXT) = ?"
                " ORDER BY rowid DESC LIMIT ?",
                (stamp, cap),
            )
        ]
    return found


# --------------------------------------------------------------------------- the feed
def _window(
    column: str, since: str | None, until: str | None, words: str = "", title: str = ""
) -> tuple[str, list[str]]:
    sql: list[str] = []
    args: list[str] = []
    if words and title:  # case-insensitive for ASCII, as agentao's own LIKE search
        sql.append(f"instr(lower(CAST({title} AS TEXT)), ?) > 0")
        args.append(ascii_lower(words))
    if since:
        sql.append(f"{column} >= ?")
        args.append(since)
    if until:
        sql.append(f"{column} < ?")
        args.append(until)
    return (" AND ".join(sql) or "1"), args


def history(
    ref: StoreRef, since: str | None, until: str | None, limit: int, words: str = ""
) -> dict[str, Any]:
    """The newest ``limit`` entries of each kind in [since, until) whose title holds ``words``,
    and how many: ``events`` (joined with their row; None columns: purged), ``reviews``
    decided, ``wipes`` (deletes with no event, by stamp), ``prior`` (id -> log rows, for restores)."""

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        conn.execute("BEGIN")
        try:
            where, args = _window("e.timestamp", since, until, words, "m.title")
            events = _events(conn, where, [*args, limit])
            joined = " LEFT JOIN memories m ON m.id = e.memory_id" if words else ""
            n_events = conn.execute(
                f"SELECT COUNT(*) FROM memory_events e{joined} WHERE {where}", args
            ).fetchone()[0]
            where, args = _window("updated_at", since, until, words, "title")
            decided = f"status IN ('approved', 'rejected') AND {where}"
            reviews = [
                dict(r)
                for r in conn.execute(
                    f"SELECT {text_select(('id', 'status', 'title', 'key_normalized', 'scope', 'updated_at'))}"
                    f" FROM memory_review_queue WHERE {decided}"
                    " ORDER BY updated_at DESC, id DESC LIMIT ?",
                    (*args, limit),
                )
            ]
            n_reviews = conn.execute(
                f"SELECT COUNT(*) FROM memory_review_queue WHERE {decided}", args
            ).fetchone()[0]
            where, args = _window("m.deleted_at", since, until, words, "m.title")
            # LEFT JOIN, not NOT EXISTS: SQLite builds a transient index on the log for it.
            wiped = (
                " FROM memories m LEFT JOIN memory_events e ON e.memory_id = m.id"
                " AND e.event_type = 'soft_delete' AND e.timestamp = m.deleted_at"
                f" WHERE m.deleted_at IS NOT NULL AND e.id IS NULL AND {where}"
            )
            groups = conn.execute(
                "SELECT CAST(m.deleted_at AS TEXT) AS deleted_at, COUNT(*) AS n"
                + wiped
                + " GROUP BY 1 ORDER BY 1 DESC",
                args,
            ).fetchall()
            n_wipes, wipes = len(groups), [dict(r) for r in groups[:limit]]
            titles: dict[str, list[str]] = {w["deleted_at"]: [] for w in wipes}
            if wipes:  # up to 5 titles of each wipe shown, in one read (one transient index)
                marks = ",".join("?" * len(wipes))
                for stamp, title in conn.execute(
                    "SELECT d, t FROM (SELECT CAST(m.deleted_at AS TEXT) AS d,"
                    " CAST(m.title AS TEXT) AS t, ROW_NUMBER() OVER (PARTITION BY"
                    " m.deleted_at ORDER BY CAST(m.title AS TEXT)) AS n"
                    + wiped
                    + f" AND CAST(m.deleted_at AS TEXT) IN ({marks})) WHERE n <= 5",
                    (*args, *titles),
                ):
                    titles[stamp].append(title)
            for w in wipes:
                w["titles"] = titles[w["deleted_at"]]
            ids = sorted({e["memory_id"] for e in events if e["event_type"] == "update"})
            prior: dict[str, list[tuple[int, str]]] = {}
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                for r in conn.execute(
                    "SELECT CAST(memory_id AS TEXT), id, CAST(event_type AS TEXT)"
                    " FROM memory_events"
                    f" WHERE memory_id IN ({','.join('?' * len(part))})"
                    " ORDER BY id",
                    part,
                ):
                    prior.setdefault(r[0], []).append((r[1], r[2]))
        finally:
            conn.execute("COMMIT")
        return {
            "events": events,
            "reviews": reviews,
            "wipes": wipes,
            "prior": prior,
            "total": n_events + n_reviews + n_wipes,
        }

    # Held (``held``): a reload, the live region's refresh: unchanged files, no SQL.
    return held("history", (ref.path,), lambda _stamp: read(ref.path, run), key=(since, until, limit, words))


def deleted_then(ref: StoreRef, ids: Iterable[str], moment: str) -> set[str]:
    """Which of ``ids`` were deleted at ``moment``: their last logged event before it is a
    ``soft_delete`` (a row brought back since, by a restore, still says so in the log)."""
    ids = sorted(set(ids))
    if not ids:
        return set()

    def run(conn: sqlite3.Connection) -> set[str]:
        gone: set[str] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            gone.update(
                r[0]
                for r in conn.execute(
                    "SELECT m FROM (SELECT CAST(memory_id AS TEXT) AS m, CAST(event_type AS TEXT) AS k,"
                    " ROW_NUMBER() OVER (PARTITION BY memory_id ORDER BY id DESC) AS n"
                    f" FROM memory_events WHERE memory_id IN ({','.join('?' * len(part))})"
                    " AND CAST(timestamp AS TEXT) < ?) WHERE n = 1 AND k = 'soft_delete'",
                    (*part, moment),
                )
            )
        return gone

    return read(ref.path, run)


def approvals_near(ref: StoreRef, stamps: list[str]) -> list[dict[str, Any]]:
    """Suggestions approved at the given stamps or up to 2 s after (approve saves the
    memory, then marks the suggestion in a second transaction): id, scope, key, stamp."""
    if not stamps:
        return []
    low, high = min(stamps), max(stamps)[:17] + "99"  # a bound past any second in that minute

    def run(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        return [
            dict(r)
            for r in conn.execute(
                f"SELECT {text_select(('id', 'scope', 'key_normalized', 'updated_at'))}"
                " FROM memory_review_queue WHERE status = 'approved'"
                " AND CAST(updated_at AS TEXT) >= ? AND CAST(updated_at AS TEXT) <= ?",
                (low, high),
            )
        ]

    return read(ref.path, run)


def extent(ref: StoreRef) -> dict[str, Any]:
    """How far back the log reaches: its first stamp, how many events it holds, and how
    many were logged but are gone (a purge deletes a row's events with it)."""

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        first = conn.execute(
            "SELECT CAST(timestamp AS TEXT) FROM memory_events ORDER BY id LIMIT 1"
        ).fetchone()
        held = conn.execute("SELECT COUNT(*) FROM memory_events").fetchone()[0]
        seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memory_events'").fetchone()
        unlogged = conn.execute(
            "SELECT COUNT(*) FROM memories m LEFT JOIN memory_events e ON e.memory_id = m.id"
            " WHERE e.id IS NULL"
        ).fetchone()[0]
        return {
            "first": first[0] if first else None,
            "events": held,
            "erased": max(0, int(seq[0] if seq else 0) - held) if seq else 0,
            "unlogged": unlogged,
        }

    return read(ref.path, run)
