"""SQL for a purge's dry run: the rows a choice names, and how they stand when the purge comes.

Each row carries a digest of all its columns, taken when listed and again inside the
purge's transaction: rows added meanwhile are kept, gone ones skipped, changed ones stop it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from flask_babel import gettext as _

REVIEW_STATUSES = ("pending", "approved", "rejected")
CATEGORIES = ("soft_deleted", *(f"review:{s}" for s in REVIEW_STATUSES), "summaries", "events")
KINDS = ("memory_deleted", "memory", "review", "summary", "event")  # erase order: events last
TABLES = {
    "memory_deleted": "memories",
    "memory": "memories",
    "review": "memory_review_queue",
    "summary": "session_summaries",
    "event": "memory_events",
}
DIGEST_HEX = 8  # 32 bits: a changed row passes for unchanged once in four billion
IDS = "id IN (SELECT value FROM json_each(?))"  # every id of a JSON array, in one statement
STEP = 1000  # rows a bounded read takes between two questions whether to stop


@dataclass(frozen=True)
class PlanRow:
    """One row a purge will erase; ``texts`` (what the byte scan looks for, not titles) never
    leave the process; ``digest`` covers every column as listed ("" for events: by id alone)."""

    kind: str
    id: str
    label: str = ""
    texts: tuple[str, ...] = ()
    digest: str = ""

    @property
    def bytes(self) -> int:
        # A hand edit can leave a BLOB (bytes) or NULL where agentao writes text.
        return sum(
            len(t) if isinstance(t, bytes) else len(str(t or "").encode("utf-8", "surrogatepass"))
            for t in self.texts
        )


@dataclass(frozen=True)
class Selection:
    """What the user chose: categories, and single memories, review items or summaries by id."""

    categories: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()
    review_ids: tuple[str, ...] = ()
    summary_ids: tuple[Any, ...] = ()  # "forget what is about me" takes the summaries holding personal data

    def __bool__(self) -> bool:
        return bool(self.categories or self.memory_ids or self.review_ids or self.summary_ids)


class DryRun(list["PlanRow"]):
    """The rows a dry run listed (PlanRows, in erase order), and the selection that listed them. A plain list
    of rows works too: it names exactly those rows, and nothing can arrive in it."""

    def __init__(self, rows: Iterable[PlanRow] = (), selection: Selection | None = None):
        super().__init__(rows)
        self.selection = selection or Selection()
        self.complete = True  # False: cut short by its caller's ``stop`` (rows_for)


@dataclass
class Comparison:
    """A dry run against the file as it is now (current versions of the rows)."""

    matched: list[PlanRow] = field(default_factory=list)  # confirmed and unchanged: these go
    gone: list[PlanRow] = field(default_factory=list)  # confirmed, no longer in the file
    changed: list[PlanRow] = field(default_factory=list)  # confirmed, but not as the dry run saw them
    arrived: list[PlanRow] = field(default_factory=list)  # chosen now, not in the dry run: kept


def digest(row: sqlite3.Row) -> str:
    """A short hash of every column of ``row``; the same row read twice gives the same one."""
    # Texts as they are, other values by repr (a type mark keeps None apart from
    # "None"): repr() of a long text escapes it and cost twice the read itself.
    flat = "\x00".join("s" + v if isinstance(v, str) else "o" + repr(v) for v in row)
    return hashlib.sha256(flat.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_HEX]


def _row(kind: str, r: sqlite3.Row, event_label: str = "") -> PlanRow:
    """``event_label``: the event's words, translated once for many (20,000 events: 0.5 s)."""
    if kind in ("memory_deleted", "memory"):
        return PlanRow(kind, r["id"], r["title"], (r["content"],), digest(r))
    if kind == "review":
        from ..words import label  # the human word for the status (words imports no store)

        return PlanRow(
            kind,
            r["id"],
            _("%(status)s: %(title)s", status=label("review_status", r["status"]), title=r["title"]),
            (r["content"], r["evidence"]),
            digest(r),
        )
    if kind == "summary":
        return PlanRow(
            kind, r["id"], _("session %(id)s", id=r["session_id"]), (r["summary_text"],), digest(r)
        )
    said = event_label or _("%(event)s of %(memory)s")
    return PlanRow(
        kind, str(r["id"]), said % {"event": r["event_type"], "memory": r["memory_id"]}, (), digest(r)
    )


def rows_for(
    conn: sqlite3.Connection, selection: Selection, stop: Callable[[], bool] | None = None
) -> DryRun:
    """Exactly the rows a purge of ``selection`` would erase, read on ``conn``.

    ``stop()`` is asked every ``STEP`` memories; when true the memories are listed no further, nor
    the suggestions and summaries, and the plan is not ``complete``: it names the memories listed
    with their history, which a purge of ``selection`` erases, keeping the rest as arrived since."""
    categories = set(selection.categories)
    memory_ids, review_ids = list(selection.memory_ids), list(selection.review_ids)
    plan = DryRun(selection=selection)
    purged_memories: dict[str, None] = {}  # in order, and a set: 17,939 ids were 3.6 s as a list
    # Table order (the DELETE then walks the b-tree front to back), the soft-deleted first; the
    # ids asked for in one statement (one each was 19,000 of them for a user store of 100,000).
    deleted = (
        conn.execute("SELECT * FROM memories WHERE deleted_at IS NOT NULL ORDER BY rowid")
        if "soft_deleted" in categories
        else ()
    )
    asked = (
        conn.execute(f"SELECT * FROM memories WHERE {IDS} ORDER BY rowid", (json.dumps(memory_ids),))
        if memory_ids
        else ()
    )
    memories = chain((("memory_deleted", r) for r in deleted), (("memory", r) for r in asked))
    for kind, r in memories:
        if r["id"] not in purged_memories:
            plan.append(_row(kind, r))
            purged_memories[r["id"]] = None
            if stop is not None and len(purged_memories) % STEP == 0 and stop():
                plan.complete = False
                break
    statuses = [s for s in REVIEW_STATUSES if f"review:{s}" in categories]
    if plan.complete:
        wanted = conn.execute(
            f"SELECT * FROM memory_review_queue WHERE status IN ({','.join('?' * len(statuses))})"
            f" OR id IN ({','.join('?' * len(review_ids))}) ORDER BY status, id",
            (*statuses, *review_ids),
        )
        plan.extend(_row("review", r) for r in wanted)
    if plan.complete and ("summaries" in categories or selection.summary_ids):
        every = "summaries" in categories
        plan.extend(
            _row("summary", r)
            for r in conn.execute(
                f"SELECT * FROM session_summaries WHERE ? OR {IDS} ORDER BY rowid",
                (every, json.dumps(list(selection.summary_ids))),
            )
        )
    # Events of memories already gone, plus those of the memories this purge
    # removes; a memory purged by id always takes its own events with it.
    orphans = "memory_id NOT IN (SELECT id FROM memories) OR " if "events" in categories else ""
    if "events" in categories:
        owners = list(purged_memories)
    else:
        owners = memory_ids if plan.complete else [m for m in memory_ids if m in purged_memories]
    if orphans or owners:
        label = _("%(event)s of %(memory)s")
        plan.extend(
            _row("event", r, label)
            for r in conn.execute(
                f"SELECT * FROM memory_events WHERE {orphans}memory_id IN"
                f" ({','.join('?' * len(owners))}) ORDER BY id",
                owners,
            )
        )
    return plan


def _by_id(conn: sqlite3.Connection, keys: Iterable[tuple[str, Any]]) -> dict[tuple[str, Any], PlanRow]:
    """The current version of each (kind, id) in ``keys`` that is still in its table."""
    found = {}
    for kind in KINDS:
        ids = [i for k, i in keys if k == kind]
        if not ids:
            continue
        cast = "CAST(value AS INTEGER)" if kind == "event" else "value"
        for r in conn.execute(
            f"SELECT * FROM {TABLES[kind]} WHERE id IN (SELECT {cast} FROM json_each(?))", (json.dumps(ids),)
        ):
            found[kind, str(r["id"])] = _row(kind, r)
    return found


def compare(conn: sqlite3.Connection, dry_run: DryRun) -> Comparison:
    """Sort the confirmed rows into unchanged / gone / changed, and find the arrivals. A confirmed row the
    selection no longer names, though it is still in its table (a soft-deleted memory restored, say), counts
    as changed."""
    selection = getattr(dry_run, "selection", Selection())
    now = {(r.kind, r.id): r for r in rows_for(conn, selection)} if selection else {}
    confirmed = {(r.kind, r.id): r for r in dry_run}
    elsewhere = _by_id(conn, [key for key in confirmed if key not in now])
    out = Comparison()
    for key, seen in confirmed.items():
        current = now.get(key) or elsewhere.get(key)
        if current is None:
            out.gone.append(seen)
        elif (seen.digest and seen.digest != current.digest) or (selection and key not in now):
            out.changed.append(current)
        else:
            out.matched.append(current)
    out.arrived = [r for key, r in now.items() if key not in confirmed]
    return out
