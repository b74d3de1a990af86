"""The dashboard's `/memory status`: what each file is and what it holds."""

from __future__ import annotations

import copy
import os
import sqlite3
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from . import held, recovery
from .connection import REQUIRED_TABLES, SUPPORTED_SCHEMA, StoreProblem, folder_writable, read, side_files
from .descriptors import read_header
from .registry import StoreRef
from .rows import text_select, whole_number

_JOURNAL_BY_HEADER = {1: "delete (rollback journal)", 2: "wal"}  # journal_mode: a twin value
_AGENTAO_THEN = {
    "project": _l(
        "agentao cannot open it either: it keeps this project's memories in a temporary "
        "store, lost when it exits."
    ),
    "user": _l(
        "agentao cannot open it either: it reads no user memories and saves user-scope "
        "memories in the project store."
    ),
}


@dataclass
class StoreStatus:
    """Health and contents of one store; ``problem`` is set when it cannot be read."""

    ref: StoreRef
    problem: StoreProblem | None = None
    read_only_reason: str | None = None
    notice: dict[str, Any] | None = None  # what is shown is not what the file holds: see recovery.notice
    size: int = 0
    journal_mode: str = ""
    schema_version: str | None = None
    change_counter: int | None = None
    missing_tables: list[str] = field(default_factory=list)
    side_files: dict[str, int | None] = field(default_factory=dict)
    page_size: int = 0
    page_count: int = 0
    freelist_count: int = 0
    counts: list[dict[str, Any]] = field(default_factory=list)
    live: int = 0
    deleted: int = 0
    pending_reviews: int = 0
    reviews_by_status: dict[str, int] = field(default_factory=dict)
    summaries: int = 0
    sessions: int = 0
    latest_summary_chars: int = 0

    @property
    def readable(self) -> bool:
        return self.problem is None

    @property
    def writable(self) -> bool:
        return self.problem is None and self.read_only_reason is None

    def take_counts(self, rows: list[dict[str, Any]]) -> None:
        """Memories per (scope, type, source, confidence, deleted), with the live/deleted sums."""
        self.counts = rows
        self.live = sum(r["n"] for r in rows if not r["deleted"])
        self.deleted = sum(r["n"] for r in rows if r["deleted"])

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("ref", "problem")}
        d.update(
            store=self.ref.key,
            kind=self.ref.kind,
            path=str(self.ref.path),
            problem=None
            if self.problem is None
            else {"kind": self.problem.kind, "message": str(self.problem)},
        )
        return d


def _journal_mode(path: Path) -> str:
    header = read_header(path)  # never open()/close() a store: see read_header
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return "unknown"
    return _JOURNAL_BY_HEADER.get(header[18], "unknown (%d)" % header[18])


def _collect(conn: sqlite3.Connection, st: StoreStatus, deep: bool) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    st.missing_tables = [t for t in REQUIRED_TABLES if t not in tables]
    st.page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    st.page_count = conn.execute("PRAGMA page_count").fetchone()[0]
    st.freelist_count = conn.execute("PRAGMA freelist_count").fetchone()[0]
    if "schema_meta" in tables:
        meta = dict(conn.execute("SELECT key, value FROM schema_meta").fetchall())
        st.schema_version = meta.get("version")
        counter = meta.get("memories_change")
        st.change_counter = whole_number(counter)
    if not deep:
        return  # every page needs health; only the overview pays for the counts
    if "memories" in tables:
        st.take_counts(
            [
                dict(r)
                for r in conn.execute(
                    f"SELECT {text_select(('scope', 'type', 'source', 'confidence'))},"
                    " deleted_at IS NOT NULL AS deleted,"
                    " COUNT(*) AS n FROM memories GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
                )
            ]
        )
    if "memory_review_queue" in tables:
        st.reviews_by_status = dict(
            conn.execute(
                f"SELECT {text_select(('status',))}, COUNT(*) FROM memory_review_queue GROUP BY 1"
            ).fetchall()
        )
        st.pending_reviews = st.reviews_by_status.get("pending", 0)
    if "session_summaries" in tables:
        st.summaries, st.sessions = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT session_id) FROM session_summaries"
        ).fetchone()
        latest = conn.execute(
            "SELECT LENGTH(summary_text) FROM session_summaries ORDER BY created_at DESC LIMIT 1"
        ).fetchone()
        st.latest_summary_chars = latest[0] if latest else 0


# What _collect reads: what a held reading gives back.
_READ_FIELDS = [
    f.name
    for f in fields(StoreStatus)
    if f.name not in ("ref", "problem", "read_only_reason", "notice", "size", "journal_mode", "side_files")
]


def _contents(ref: StoreRef, st: StoreStatus, deep: bool) -> None:
    """Fill what ``_collect`` reads, held while the file stamp holds (every page shows it:
    bench/results/caches-10k.txt); a deep reading also answers a shallow one."""
    access = (os.geteuid(), _may_read(ref.path))
    found = held.peek("status", (ref.path,), (True, access))
    if found is None:
        found = held.held("status", (ref.path,), lambda _stamp: _reading(ref, deep), key=(deep, access))
    for name, value in found.items():
        setattr(st, name, copy.copy(value))


def _reading(ref: StoreRef, deep: bool) -> dict[str, Any]:
    st = StoreStatus(ref)
    read(ref.path, lambda conn: _collect(conn, st, deep))
    return {name: getattr(st, name) for name in _READ_FIELDS}


def _may_read(path: Path | str) -> bool:
    # os.access, not open(): closing a descriptor of a store drops SQLite's locks.
    # The effective ids only when they differ (a server started by root as another user).
    effective = {"effective_ids": True} if os.geteuid() != os.getuid() else {}
    return all(
        os.access(p, os.R_OK, **effective)
        for p in (path, *(str(path) + s for s in ("-wal", "-journal") if os.path.exists(str(path) + s)))
    )


def inspect(ref: StoreRef, force_read_only: bool = False, deep: bool = True) -> StoreStatus:
    """Health of one store and, when ``deep``, everything the overview counts; never raises."""
    st = StoreStatus(ref)
    if not ref.exists:
        reason = ref.obstacle
        if reason is not None:
            st.problem = StoreProblem(
                "not_a_file",
                _(
                    "%(path)s %(reason)s. The dashboard shows nothing from it and "
                    "changes nothing there; %(agentao)s Move it away and agentao "
                    "creates its store there the next time it starts.",
                    path=ref.path,
                    reason=reason,
                    agentao=_AGENTAO_THEN[ref.kind],
                ),
            )
        else:
            st.problem = StoreProblem(
                "missing",
                _(
                    "No store at %(path)s: agentao creates it there the first time it saves a memory.",
                    path=ref.path,
                ),
            )
        return st
    try:
        st.size = ref.path.stat().st_size
        st.side_files = side_files(ref.path)
        if st.size == 0 and not any(
            os.path.getsize(str(ref.path) + x)
            for x in ("-wal", "-journal")
            if os.path.exists(str(ref.path) + x)
        ):
            # SQLite reads an empty file as an empty database, and agentao opens it so: it
            # creates its tables there when it starts.  Nothing to show, nothing wrong.
            st.problem = StoreProblem(
                "missing",
                _(
                    "%(path)s is an empty file (0 bytes): agentao opens it as an empty store and "
                    "creates its tables in it the next time it starts. The dashboard never writes "
                    "to it.",
                    path=ref.path,
                ),
            )
            return st
        st.journal_mode = _journal_mode(ref.path)
        _contents(ref, st, deep)
        st.notice = recovery.notice(ref.path, ref.kind)
    except StoreProblem as problem:
        st.problem = problem
        return st
    except OSError as exc:
        st.problem = StoreProblem(
            "unreadable", _("%(path)s cannot be read (%(error)s).", path=ref.path, error=exc)
        )
        return st
    if st.missing_tables:
        st.problem = StoreProblem(
            "missing_tables",
            _(
                "%(path)s is not an agentao memory store: missing table(s) %(tables)s.",
                path=ref.path,
                tables=", ".join(st.missing_tables),
            ),
        )
    elif st.schema_version != SUPPORTED_SCHEMA:
        st.read_only_reason = _(
            "Schema version %(version)r is not the version 3 this dashboard "
            "understands; it is shown read-only.",
            version=st.schema_version,
        )
    elif force_read_only:
        st.read_only_reason = _("The dashboard was started read-only.")
    elif not folder_writable(ref.path):
        st.read_only_reason = _("The file or its folder is not writable; the dashboard is read-only here.")
    return st
