"""How to read a store without changing it, even when SQLite would repair it on open.

Two states of the files make any ordinary SQLite open write to them:

* a **hot rollback journal** (sqlite.org/lockingv3.html "Hot journals",
  fileformat2.html "The Rollback Journal"): a writer that does not use WAL
  (older agentao versions, other tools) was killed mid-transaction.  The main
  file may already hold its uncommitted pages, and the original pages are in
  ``-journal``.  A read-write open rolls the journal back into the file; a
  ``mode=ro`` open refuses to read (SQLITE_READONLY_ROLLBACK); an
  ``immutable=1`` open ignores the journal and shows the uncommitted pages.
* a **-wal nobody holds** (agentao crashed after committing, before its last
  connection folded the -wal into the file; or it closed while a reader held
  the file, which keeps the last connection from folding it in): the saves are
  committed, but only the -wal has them, and the first connection to open the
  files rebuilds the WAL index, writing or creating ``-shm`` even when opened
  ``mode=ro``.

Either way the store is read from a *private copy*: the files are copied into a
temporary folder, SQLite opens the copy read-write and rolls it back or
recovers it there, and the copy is then read like any quiet file.  That shows
exactly what agentao will show once it opens the project (SQLite decides the
roll-back, not us), and the user's files keep every byte.  A copy is made once
per state of the files and reused while they stay as they are; it is removed
when they change, when the dashboard exits, or to keep at most a few.  A store
larger than ``COPY_BUDGET_BYTES`` (or larger than the free space beside the
temporary folder allows) is not copied: it is reported instead, with what to do.

"Nobody holds the files" is asked the way SQLite itself decides: a hot journal
needs no RESERVED lock on the main file; a live WAL connection always holds a
SHARED lock on it.  The locks are queried through the descriptor that stays
open (see ``descriptors``), never by opening and closing the main file.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .descriptors import LOCK_RANGE, PENDING_BYTE, RESERVED_BYTE, copy_to, lock_held

COPY_BUDGET_BYTES = 256 * 1024 * 1024
MAX_COPIES = 4
_PREFIX = "agentao-dashboard-copy-"
WAL_HEADER_BYTES = 32   # a -wal shorter than its header holds no frame
# A -wal nobody holds that was written this recently belongs to an agent between two
# operations (agentao opens and closes the file for each): it is back within
# milliseconds, so the read waits for it instead of copying a store it is about to change.
WAL_SETTLE_NS = 100_000_000

# How a store is opened: ``immutable`` (nothing touched, trusted only while no file moves),
# ``shared`` (mode=ro with SQLite's locks, while a live process owns the side files),
# ``copy`` (a private, recovered copy); ``wait``: not now, plan again in a moment.
IMMUTABLE, SHARED, COPY, WAIT = "immutable", "shared", "copy", "wait"


@dataclass(frozen=True)
class Plan:
    mode: str
    reason: str | None = None   # for copies: "interrupted_write" or "wal_left"


def side(path: Path, suffix: str) -> Path:
    return Path(str(path) + suffix)


def _stat(p: Path):
    try:
        s = p.stat()
    except OSError:
        return None
    return (s.st_size, s.st_mtime_ns, s.st_ino)


def signature(path: Path) -> tuple:
    """(main file, -wal, -journal) as (size, mtime, inode) or None: what any writer changes."""
    return tuple(_stat(side(path, s)) for s in ("", "-wal", "-journal"))


def _hot_journal(db: Path) -> bool:
    # SQLite's own test (pager.c hasHotJournal): the journal exists and is not
    # empty, the main file is not empty, nobody holds RESERVED, and the
    # journal's first byte is not zero (a zeroed header is a finished
    # PERSIST-mode journal).  Journals carry no locks: opening one is harmless.
    try:
        if side(db, "-journal").stat().st_size == 0 or db.stat().st_size == 0:
            return False
        if lock_held(db, RESERVED_BYTE, 1):
            return False   # a live writer owns the journal; SQLite's locks keep a read consistent
        with open(side(db, "-journal"), "rb") as fh:
            return fh.read(1) not in (b"", b"\0")
    except OSError:
        return False


def plan(path: Path) -> Plan:
    """How to open ``path`` now so that the read shows committed rows only and writes nothing.

    A private copy kept for ``path`` is removed as soon as the files no longer need one
    (agentao, or a write from the dashboard, repaired them): it holds the user's text.
    """
    found = _plan(Path(path))
    if found.mode in (IMMUTABLE, SHARED) and str(path) in _COPIES:
        with _COPIES_LOCK:
            if str(path) in _COPIES:
                _retire(_COPIES.pop(str(path)))
    return found


def _plan(db: Path) -> Plan:
    if _hot_journal(db):
        return Plan(COPY, "interrupted_write")
    wal = _stat(side(db, "-wal"))
    if wal is not None:
        if lock_held(db, PENDING_BYTE, LOCK_RANGE):
            return Plan(SHARED)   # a live connection: it keeps -shm valid, no recovery runs
        if wal[0] < WAL_HEADER_BYTES:
            return Plan(IMMUTABLE)   # nothing in the -wal: the main file is the whole store
        if 0 <= time.time_ns() - wal[1] < WAL_SETTLE_NS:
            return Plan(WAIT)
        return Plan(COPY, "wal_left")
    if side(db, "-journal").exists() and lock_held(db, RESERVED_BYTE, 1):
        return Plan(SHARED)   # a live non-WAL writer mid-transaction: wait for its commit
    return Plan(IMMUTABLE)


def _happened(reason: str, db: Path) -> str:
    if reason == "interrupted_write":
        return (f"A program was interrupted while writing to this store: its unfinished change "
                f"is still in {db.name}-journal.")
    return (f"Saves to this store are still only in {db.name}-wal and no program has it open to "
            "fold them into the file (agentao was stopped, or closed while the store was read).")


def _next(reason: str, where: str) -> str:
    if reason == "interrupted_write":
        return f"agentao will roll it back the next time it opens {where}."
    return f"agentao folds them into the file the next time it opens {where}."


def notice(path: Path, kind: str) -> dict | None:
    """What the user must know about what is shown, or None.

    Only an interrupted write is worth a word: what the file holds is not what
    is shown.  Saves left in a -wal are committed and shown as they are; that
    state is ordinary (it also follows an agent that closed while the
    dashboard was reading) and needs no alarm, only the private copy.
    """
    found = plan(path)
    if found.reason != "interrupted_write":
        return None
    where = "the project" if kind == "project" else "the user store (every agentao session does)"
    return {"kind": found.reason,
            "message": f"{_happened(found.reason, Path(path))} It is shown as it was before that "
                       "change, read from a private copy: the files are not touched. "
                       f"{_next(found.reason, where)}"}


# -- private copies ---------------------------------------------------------------------

@dataclass
class _Copy:
    sig: tuple
    folder: str
    file: Path
    users: int = 0
    retired: bool = False


_COPIES: "OrderedDict[str, _Copy]" = OrderedDict()
_COPIES_LOCK = threading.Lock()


class CannotCopy(Exception):
    """No private copy can be made (budget, free space); str() says why and what to do."""


@contextmanager
def private_copy(path: Path, sig: tuple, reason: str) -> Iterator[Path | None]:
    """A recovered private copy of ``path`` as its files are at ``sig``, kept while in use.

    Yields None when the files changed while they were copied (read again).
    Raises CannotCopy, or the sqlite3/OS error that recovering the copy met.
    """
    key = str(path)
    with _COPIES_LOCK:
        copy = _COPIES.get(key)
        if copy is not None and copy.sig != sig:
            _retire(_COPIES.pop(key))
            copy = None
        if copy is None:
            copy = _make(Path(path), sig, reason)
            if copy is not None:
                _COPIES[key] = copy
                while len(_COPIES) > MAX_COPIES:
                    _retire(_COPIES.popitem(last=False)[1])
        if copy is not None:
            copy.users += 1
            _COPIES.move_to_end(key)
    if copy is None:
        yield None
        return
    try:
        yield copy.file
    finally:
        with _COPIES_LOCK:
            copy.users -= 1
            if copy.retired and copy.users == 0:
                shutil.rmtree(copy.folder, ignore_errors=True)


def _retire(copy: _Copy) -> None:
    copy.retired = True
    if copy.users == 0:
        shutil.rmtree(copy.folder, ignore_errors=True)


def _make(db: Path, sig: tuple, reason: str) -> _Copy | None:
    size = sum(s[0] for s in sig if s is not None)
    tmp = tempfile.gettempdir()

    def refuse(why: str) -> CannotCopy:
        return CannotCopy(f"{_happened(reason, db)} Reading it in place would change the files, "
                          f"and {why}, so the store is not shown. {_next(reason, 'this store')}")
    if size > COPY_BUDGET_BYTES:
        raise refuse(f"at {_mb(size)} it is larger than the {_mb(COPY_BUDGET_BYTES)} the "
                     "dashboard copies to read a store")
    try:
        if shutil.disk_usage(tmp).free < 2 * size + COPY_BUDGET_BYTES // 8:
            raise OSError(f"{tmp} has too little free space")
        _sweep(tmp)
        folder = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
    except OSError as exc:
        raise refuse(f"no private copy could be made ({exc})") from None
    try:
        target = Path(folder) / "memory.db"
        copy_to(db, target)            # the main file through the kept descriptor (locks!)
        for suffix in ("-journal", "-wal"):
            try:
                shutil.copyfile(side(db, suffix), side(target, suffix))
            except FileNotFoundError:
                pass
        if signature(db) != sig:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        _recover(target)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _Copy(sig, folder, target)


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n < 10 * 2**20 else f"{n / 2**20:.0f} MB"


def _recover(target: Path) -> None:
    # The copy is ours: SQLite rolls back its journal or rebuilds its WAL index
    # on the first read, and the closing connection folds the -wal in, leaving
    # one self-contained file that is then opened with immutable=1.
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.close()


_SWEPT: set[str] = set()


def _sweep(tmp: str) -> None:
    # A dashboard stopped by a signal never ran its atexit: its copies, which
    # hold the user's text, are removed by the next one that makes a copy there.
    if tmp in _SWEPT:
        return
    _SWEPT.add(tmp)
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(_PREFIX):].split("-")[0] if entry.name.startswith(_PREFIX) else ""
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass   # alive (or not ours to ask about): leave it


@atexit.register
def _remove_all() -> None:
    with _COPIES_LOCK:
        while _COPIES:
            shutil.rmtree(_COPIES.popitem()[1].folder, ignore_errors=True)
