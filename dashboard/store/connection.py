"""Opening agentao's memory files: read-only for browsing, short transactions for writes.

A ``mode=ro`` open of a WAL file leaves ``-wal``/``-shm`` litter, so without a ``-wal``
the file is read ``immutable=1`` (and read again if one appears meanwhile); with one,
``mode=ro`` (the agent owns the side files).  Files SQLite would repair on open are
read from a private repaired copy (``recovery``, ``copies``).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from flask_babel import gettext as _

from . import copies, full_disk, intents, recovery
from .descriptors import read_header  # noqa: F401 - status reads headers from here
from .registry import obstacle

T = TypeVar("T")

SUPPORTED_SCHEMA = "3"
REQUIRED_TABLES = ("schema_meta", "memories", "session_summaries", "memory_events", "memory_review_queue")
BUSY_TIMEOUT_S = 2.0
# A lock-free read is retried when an agent write landed during it.  An agent
# saving in a loop (load.py: ~90 saves a second) tears a read of a few
# milliseconds often enough that 6 tries failed about once in 2,000 requests;
# up to 24 tries with short, growing waits make that vanishingly rare.  A long
# read is not retried past READ_RETRY_S: it reports "kept changing" instead of
# keeping the page waiting (the memories copy reads in short pieces for this).
READ_ATTEMPTS = 24
READ_RETRY_S = 3.0
# As Datasette's sql_time_limit_ms: SQLite calls back every READ_STEPS virtual machine
# steps and a read past READ_TIME_LIMIT_S is stopped there, so no request holds a
# thread however large the file (the pages say the answer was cut).
READ_TIME_LIMIT_S = 5.0
READ_STEPS = 10_000
# A thread no request waits on (the preview's index, views/preview/reading.py) sets its own.
read_time_limit: ContextVar[float | None] = ContextVar("read_time_limit", default=None)


class StoreProblem(Exception):
    """A store cannot be read or written; ``kind`` is machine-readable, str() is for people."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _uri(path: Path, immutable: bool) -> str:
    params = "mode=ro&immutable=1" if immutable else "mode=ro"
    return f"file:{quote(str(path))}?{params}"


def not_there(path: Path) -> StoreProblem:
    """Why there is no store file to open at ``path``: nothing there yet, or something else."""
    reason = obstacle(Path(path))
    if reason is None:
        return StoreProblem("missing", _("%(path)s does not exist.", path=path))
    return StoreProblem("not_a_file", _("%(path)s %(reason)s.", path=path, reason=reason))


def describe_error(path: Path, exc: BaseException, writing: bool = False) -> StoreProblem:
    """Turn a sqlite3/OS error into a StoreProblem a person can act on. ``writing``: the error came from a
    write, where an I/O error on a nearly full file system is reported as the full disk it is."""
    text = str(exc)
    low = text.lower()
    if full_disk.is_disk_full(path, exc, writing):
        return StoreProblem(
            "disk_full",
            _(
                "The disk is full: nothing was changed, free space and "
                "try again (writing %(path)s; SQLite: %(error)s).",
                path=path,
                error=text,
            ),
        )
    if "readonly" in low or "read-only" in low:
        return StoreProblem(
            "read_only",
            _("%(path)s cannot be written (%(error)s); nothing was changed.", path=path, error=text),
        )
    if "locked" in low or "busy" in low:
        return StoreProblem(
            "locked", _("%(path)s is locked by another process; try again in a moment.", path=path)
        )
    if "not a database" in low:
        return StoreProblem("not_a_database", _("%(path)s is not an SQLite database.", path=path))
    if "malformed" in low or "corrupt" in low:
        return StoreProblem(
            "corrupt",
            _("%(path)s is damaged (SQLite: %(error)s). Nothing was changed.", path=path, error=text),
        )
    if isinstance(exc, PermissionError) or "unable to open" in low or "readonly" in low:
        return StoreProblem("unreadable", _("%(path)s cannot be opened (%(error)s).", path=path, error=text))
    error = "%s: %s" % (type(exc).__name__, text)  # the exception's own words, not translated
    if writing:
        return StoreProblem(
            "unreadable", _("%(path)s could not be written (%(error)s).", path=path, error=error)
        )
    return StoreProblem("unreadable", _("%(path)s could not be read (%(error)s).", path=path, error=error))


def _decode_text(raw: bytes) -> str:
    # A row written with invalid UTF-8 must still display (as U+FFFD), not crash the page.
    return raw.decode("utf-8", "replace")


def file_stamp(path: Path | str) -> recovery.Stamp:
    """The file, its ``-wal`` and ``-journal`` as (size, mtime, inode) or None, and the -wal's
    index header (``recovery.stamp``): every commit moves one, cheap enough for every request."""
    return recovery.stamp(Path(path))


def _moved(path: Path, plan: recovery.Plan, before: recovery.Signature) -> bool:
    """Whether a lock-free read (immutable, or of a copy) may have missed a change of the file."""
    return plan.mode != recovery.SHARED and recovery.signature(path) != before


def _open_uri(path: Path, plan: recovery.Plan, sig: recovery.Signature, pins: ExitStack) -> str | None:
    """The URI to read ``path`` by ``plan``; None when its copy met a change (read again)."""
    if plan.mode != recovery.COPY:
        copies.drop(path)  # repaired meanwhile (by agentao, or a write): the copy must go
        return _uri(path, plan.mode == recovery.IMMUTABLE)
    assert plan.reason is not None  # a copy is planned with its reason
    try:
        copy = pins.enter_context(copies.private_copy(path, sig, plan.reason))
    except copies.CannotCopy as exc:
        raise StoreProblem("needs_recovery", f"{path}: {exc}") from None
    return None if copy is None else _uri(copy, True)


def read(path: Path, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn(conn)`` on a read-only connection to ``path`` without changing any file.

    Raises StoreProblem when the file is missing, damaged, locked or too large to repair on a
    private copy."""
    path = Path(path)
    if not path.is_file():
        raise not_there(path)
    started = time.monotonic()
    for attempt in range(READ_ATTEMPTS):
        if attempt:
            if time.monotonic() - started > READ_RETRY_S:
                break
            time.sleep(0.002 * min(attempt, 10))  # let the agent finish its checkpoint
        # immutable=1 takes no locks, so it is only trusted if nothing touched the
        # files meanwhile: no -wal or -journal appeared and the file's size/mtime
        # stayed put.  (An agent save can open, commit, checkpoint into the main
        # file and delete its -wal entirely within one of our reads.)  The same
        # holds for a private copy: it shows the files as they were when copied.
        before = recovery.signature(path)
        plan = recovery.plan(path)
        if plan.mode == recovery.WAIT:
            continue  # an agent between two operations: it is back in a moment
        try:
            with ExitStack() as pins:
                uri = _open_uri(path, plan, before, pins)
                if uri is None:
                    continue  # a copy met a write: read again
                conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
                try:
                    conn.row_factory = sqlite3.Row
                    conn.text_factory = _decode_text
                    limit = read_time_limit.get() or READ_TIME_LIMIT_S
                    deadline = time.monotonic() + limit
                    # (B023: the handler goes with conn, closed before the loop binds a new deadline)
                    conn.set_progress_handler(lambda: time.monotonic() > deadline, READ_STEPS)  # noqa: B023
                    result = fn(conn)
                finally:
                    conn.close()
        except (sqlite3.Error, OSError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
                raise StoreProblem(
                    "time_limit",
                    _(
                        "Reading %(path)s took longer than %(seconds)s s and was stopped: this answer "
                        "is cut short. Narrow what you asked for, or try again.",
                        path=path,
                        seconds=read_time_limit.get() or READ_TIME_LIMIT_S,
                    ),
                ) from exc
            if _moved(path, plan, before) or _needs_rollback(exc):
                continue  # a torn read while the agent wrote, not damage: read again
            raise describe_error(path, exc) from exc
        if _moved(path, plan, before):
            continue
        return result
    raise StoreProblem("locked", _("%(path)s kept changing while it was read; try again.", path=path))


def _needs_rollback(exc: BaseException) -> bool:
    # A mode=ro open found a hot journal that was not hot when planned (its writer
    # died just now) and refused, writing nothing: plan again, which copies it.
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_READONLY_ROLLBACK"


def settle(*paths: Path | str) -> list[intents.Report]:
    """Finish a two-file action that stopped half way on these stores (``intents.settle``)
    before anything else is written to them; StoreProblem("half_done") when it cannot be
    finished now, saying what is half done and that this write was not made."""
    try:
        return intents.settle(*paths)
    except intents.Unfinished as exc:
        raise StoreProblem(
            "half_done",
            _(
                "%(what)s Nothing else is written to these stores "
                "until it is finished, so this action was not done.",
                what=exc,
            ),
        ) from None


@contextmanager
def write(path: Path, settled: bool = False) -> Iterator[sqlite3.Connection]:
    """A short ``BEGIN IMMEDIATE`` transaction on an existing store, as agentao writes.

    Commits on success, rolls back on any error, never creates the file, and leaves no side
    file a failed write made; a half-done two-file action is finished first unless ``settled``."""
    path = Path(path)
    if not path.is_file():
        raise not_there(path)
    if not settled:
        settle(path)
    if not folder_writable(path):
        # WAL needs to create side files in the folder, so check before SQLite half-tries.
        raise StoreProblem(
            "read_only",
            _(
                "%(path)s or its folder is not writable; the dashboard "
                "is read-only there and nothing was changed.",
                path=path,
            ),
        )
    before = side_files(path)
    conn = open_rw(path)
    committed = False
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
            _check_schema(conn, path)
        except sqlite3.Error as exc:
            raise describe_error(path, exc, writing=True) from exc
        except StoreProblem:
            rollback_quietly(conn)
            raise
        try:
            yield conn
        except sqlite3.Error as exc:
            # e.g. SQLITE_FULL mid-transaction: SQLite may already have rolled back.
            rollback_quietly(conn)
            raise describe_error(path, exc, writing=True) from exc
        except BaseException:
            rollback_quietly(conn)
            raise
        try:
            conn.execute("COMMIT")
            committed = True
        except sqlite3.Error as exc:
            rollback_quietly(conn)
            raise describe_error(path, exc, writing=True) from exc
    finally:
        conn.close()
        if not committed:
            full_disk.tidy_failed_write(path, before, side_files(path))


def open_rw(path: Path, *pragmas: str) -> sqlite3.Connection:
    """A read-write connection (autocommit, rows decoded as reads decode them), foreign keys on."""
    try:
        conn = sqlite3.connect(
            f"file:{quote(str(path))}?mode=rw",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        conn.text_factory = _decode_text
        for pragma in (*pragmas, "PRAGMA foreign_keys = ON"):
            conn.execute(pragma)
    except sqlite3.Error as exc:
        raise describe_error(path, exc, writing=True) from exc
    return conn


def rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open, never raising (after SQLITE_FULL SQLite has
    rolled back already: a failing ROLLBACK must not hide why the write failed)."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    # Never write into a file whose format we do not know (newer agentao, or not agentao's).
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise StoreProblem(
            "missing_tables",
            _(
                "%(path)s lacks table(s) %(tables)s; it is shown read-only and nothing was changed.",
                path=path,
                tables=", ".join(missing),
            ),
        )
    row = conn.execute("SELECT value FROM schema_meta WHERE key = 'version'").fetchone()
    if row is None or str(row[0]) != SUPPORTED_SCHEMA:
        raise StoreProblem(
            "schema",
            f"{path} has schema version {None if row is None else row[0]!r}, "
            f"not {SUPPORTED_SCHEMA}; it is shown read-only and nothing was changed.",
        )


def side_files(path: Path) -> dict[str, int | None]:
    """Sizes of the SQLite side files beside ``path`` (None = absent)."""
    out: dict[str, int | None] = {}
    for suffix in ("-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        try:
            out[suffix] = p.stat().st_size
        except FileNotFoundError:  # absent, or the agent removed it just now
            out[suffix] = None
    return out


def folder_writable(path: Path) -> bool:
    """Whether writes are possible at all: the file and its folder must be writable."""
    path = Path(path)
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
