"""Opening agentao's memory files: read-only for browsing, short transactions for writes.

Why two read modes: agentao keeps its files in WAL mode.  A ``mode=ro``
connection to a WAL database creates ``-wal`` and ``-shm`` side files when
they are missing and, being read-only, cannot remove them again — browsing
would leave litter beside the user's file.  When no ``-wal`` file exists the
whole database is in the main file, so we read it with ``immutable=1``, which
touches nothing.  If a ``-wal`` appears while we read (the agent opened the
file meanwhile) the read is repeated with ``mode=ro``, which is then safe
because the agent owns the side files.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar
from urllib.parse import quote

from . import full_disk

T = TypeVar("T")

SUPPORTED_SCHEMA = "3"
REQUIRED_TABLES = ("schema_meta", "memories", "session_summaries", "memory_events",
                   "memory_review_queue")
BUSY_TIMEOUT_S = 2.0
# A lock-free read is retried when an agent write landed during it.  An agent
# saving in a loop (load.py: ~90 saves a second) tears a read of a few
# milliseconds often enough that 6 tries failed about once in 2,000 requests;
# up to 24 tries with short, growing waits make that vanishingly rare.  A long
# read is not retried past READ_RETRY_S: it reports "kept changing" instead of
# keeping the page waiting (the memories copy reads in short pieces for this).
READ_ATTEMPTS = 24
READ_RETRY_S = 3.0


class StoreProblem(Exception):
    """A store cannot be read or written; ``kind`` is machine-readable, str() is for people."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _uri(path: Path, immutable: bool) -> str:
    params = "mode=ro&immutable=1" if immutable else "mode=ro"
    return f"file:{quote(str(path))}?{params}"


def describe_error(path: Path, exc: BaseException, writing: bool = False) -> StoreProblem:
    """Turn a sqlite3/OS error into a StoreProblem a person can act on.

    ``writing``: the error came from a write, where an I/O error on a nearly
    full file system is reported as the full disk it is.
    """
    text = str(exc)
    low = text.lower()
    if full_disk.is_disk_full(path, exc, writing):
        return StoreProblem("disk_full", "The disk is full: nothing was changed, free space and "
                            f"try again (writing {path}; SQLite: {text}).")
    if "readonly" in low or "read-only" in low:
        return StoreProblem("read_only", f"{path} cannot be written ({text}); nothing was changed.")
    if "locked" in low or "busy" in low:
        return StoreProblem("locked", f"{path} is locked by another process; try again in a moment.")
    if "not a database" in low:
        return StoreProblem("not_a_database", f"{path} is not an SQLite database.")
    if "malformed" in low or "corrupt" in low:
        return StoreProblem("corrupt", f"{path} is damaged (SQLite: {text}). Nothing was changed.")
    if isinstance(exc, PermissionError) or "unable to open" in low or "readonly" in low:
        return StoreProblem("unreadable", f"{path} cannot be opened ({text}).")
    verb = "written" if writing else "read"
    return StoreProblem("unreadable", f"{path} could not be {verb} ({type(exc).__name__}: {text}).")


def _decode_text(raw: bytes) -> str:
    # A row written with invalid UTF-8 must still display (as U+FFFD), not crash the page.
    return raw.decode("utf-8", "replace")


def _wal(path: Path) -> Path:
    return Path(str(path) + "-wal")


def _signature(path: Path) -> tuple:
    """(has -wal, size, mtime, inode): what an agent write changes."""
    try:
        st = path.stat()
    except OSError:
        return (_wal(path).exists(), None, None, None)
    return (_wal(path).exists(), st.st_size, st.st_mtime_ns, st.st_ino)


def file_stamp(path: Path) -> tuple:
    """(size, mtime) of a database file and of its ``-wal``: every commit moves one.

    Cheap enough to ask on every request; what has been derived from a file is
    reused while its stamp stays the same.
    """
    def stat(p: Path):
        try:
            s = p.stat()
            return (s.st_size, s.st_mtime_ns)
        except OSError:
            return None
    return (stat(Path(path)), stat(_wal(Path(path))))


def _moved(files: dict, quiet: dict, before: dict) -> bool:
    """Whether a lock-free (immutable) read may have seen a file change under it."""
    return any(quiet[a] and _signature(p) != before[a] for a, p in files.items())


def read(path: Path, fn: Callable[[sqlite3.Connection], T],
         attach: dict[str, Path] | None = None) -> T:
    """Run ``fn(conn)`` on a read-only connection to ``path`` without changing any file.

    ``attach`` maps schema aliases to further stores opened the same way on the
    same connection (so one query can page across both files).  Raises
    StoreProblem when a file is missing, damaged or locked.
    """
    files = {"main": Path(path), **{k: Path(v) for k, v in (attach or {}).items()}}
    for p in files.values():
        if not p.is_file():
            raise StoreProblem("missing", f"{p} does not exist.")
    started = time.monotonic()
    for attempt in range(READ_ATTEMPTS):
        if attempt:
            if time.monotonic() - started > READ_RETRY_S:
                break
            time.sleep(0.002 * min(attempt, 10))  # let the agent finish its checkpoint
        # immutable=1 takes no locks, so it is only trusted if nothing touched the
        # file meanwhile: no -wal appeared and the file's size/mtime stayed put.
        # (An agent save can open, commit, checkpoint into the main file and
        # delete its -wal entirely within one of our reads.)
        before = {alias: _signature(p) for alias, p in files.items()}
        quiet = {alias: not before[alias][0] for alias in files}
        current = None
        try:
            conn = sqlite3.connect(_uri(files["main"], quiet["main"]), uri=True,
                                   timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            try:
                conn.row_factory = sqlite3.Row
                conn.text_factory = _decode_text
                for alias, p in files.items():
                    current = p
                    if alias != "main":
                        conn.execute(f"ATTACH DATABASE ? AS {alias}", (_uri(p, quiet[alias]),))
                current = files["main"]
                result = fn(conn)
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            if _moved(files, quiet, before):
                continue  # a torn read while the agent wrote, not damage: read again
            raise describe_error(current or files["main"], exc) from exc
        if _moved(files, quiet, before):
            continue
        return result
    raise StoreProblem("locked", f"{path} kept changing while it was read; try again.")


@contextmanager
def write(path: Path) -> Iterator[sqlite3.Connection]:
    """A short ``BEGIN IMMEDIATE`` transaction on an existing store, as agentao writes.

    Commits on success, rolls back on any error.  Never creates the file, and a
    failed write leaves no side file the store did not have (see full_disk).
    """
    path = Path(path)
    if not path.is_file():
        raise StoreProblem("missing", f"{path} does not exist.")
    if not folder_writable(path):
        # WAL needs to create side files in the folder, so check before SQLite half-tries.
        raise StoreProblem("read_only", f"{path} or its folder is not writable; the dashboard "
                           "is read-only there and nothing was changed.")
    before = side_files(path)
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True,
                               timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
    except sqlite3.Error as exc:
        raise describe_error(path, exc, writing=True) from exc
    conn.row_factory = sqlite3.Row
    conn.text_factory = _decode_text
    committed = False
    try:
        try:
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("BEGIN IMMEDIATE")
            _check_schema(conn, path)
        except sqlite3.Error as exc:
            raise describe_error(path, exc, writing=True) from exc
        except StoreProblem:
            _rollback(conn)
            raise
        try:
            yield conn
        except sqlite3.Error as exc:
            # e.g. SQLITE_FULL mid-transaction: SQLite may already have rolled back.
            _rollback(conn)
            raise describe_error(path, exc, writing=True) from exc
        except BaseException:
            _rollback(conn)
            raise
        try:
            conn.execute("COMMIT")
            committed = True
        except sqlite3.Error as exc:
            _rollback(conn)
            raise describe_error(path, exc, writing=True) from exc
    finally:
        conn.close()
        if not committed:
            full_disk.tidy_failed_write(path, before, side_files(path))


def _rollback(conn: sqlite3.Connection) -> None:
    # Closing rolls back as well: a ROLLBACK that fails (the disk is full) must not
    # replace the error that says why the write failed.
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
        raise StoreProblem("missing_tables", f"{path} lacks table(s) {', '.join(missing)}; "
                           "it is shown read-only and nothing was changed.")
    row = conn.execute("SELECT value FROM schema_meta WHERE key = 'version'").fetchone()
    if row is None or str(row[0]) != SUPPORTED_SCHEMA:
        raise StoreProblem("schema", f"{path} has schema version {None if row is None else row[0]!r}, "
                           f"not {SUPPORTED_SCHEMA}; it is shown read-only and nothing was changed.")


_HEADER_FDS: "OrderedDict[str, tuple[tuple[int, int], int]]" = OrderedDict()
_HEADER_LOCK = threading.Lock()
_HEADER_FDS_MAX = 32  # a server shows two stores; tests make many short-lived ones


def read_header(path: Path, size: int = 100) -> bytes:
    """The first ``size`` bytes of a store, read without closing a descriptor in use.

    Closing *any* descriptor of a SQLite file drops every POSIX lock this
    process holds on it, including the read locks of connections in other
    threads (sqlite.org "How To Corrupt An SQLite Database File", 2.2).  The
    agent then believes it is alone, checkpoints and deletes its -wal under
    our readers, and they report a damaged file.  So one descriptor per file
    stays open; it is closed only once its path names another file, or when
    more than a few dozen files have been looked at (long gone test files).
    """
    st = os.stat(path)
    key = (st.st_dev, st.st_ino)
    with _HEADER_LOCK:
        entry = _HEADER_FDS.pop(str(path), None)
        if entry is not None and entry[0] != key:
            os.close(entry[1])
            entry = None
        if entry is None:
            entry = (key, os.open(path, os.O_RDONLY))
        _HEADER_FDS[str(path)] = entry
        while len(_HEADER_FDS) > _HEADER_FDS_MAX:
            os.close(_HEADER_FDS.popitem(last=False)[1][1])
        return os.pread(entry[1], size, 0)


def side_files(path: Path) -> dict[str, int | None]:
    """Sizes of the SQLite side files beside ``path`` (None = absent)."""
    out = {}
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
