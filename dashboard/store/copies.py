"""Private copies of a store that SQLite must repair before it can be read (see ``recovery``).

Made in a 0700 temporary folder, repaired there by SQLite, then read ``immutable=1``; the
user's files keep every byte.  A copy holds the user's text: kept per signature of the
files, pinned while read, and removed when they change, past ``MAX_COPIES``, at exit or
by the next dashboard.  Too large a store is refused with ``CannotCopy``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from flask_babel import gettext as _

from .descriptors import copy_to
from .recovery import Signature, happened, side, signature, what_next

COPY_BUDGET_BYTES = 256 * 1024 * 1024
MAX_COPIES = 4
_PREFIX = "agentao-dashboard-copy-"


@dataclass
class _Copy:
    sig: Signature
    folder: str
    file: Path
    users: int = 0
    retired: bool = False


_COPIES: OrderedDict[str, _Copy] = OrderedDict()
_COPIES_LOCK = threading.Lock()


class CannotCopy(Exception):
    """No private copy can be made (budget, free space); str() says why and what to do."""


@contextmanager
def private_copy(path: Path, sig: Signature, reason: str) -> Iterator[Path | None]:
    """A recovered private copy of ``path`` as its files are at ``sig``, kept while in use. Yields None when
    the files changed while they were copied (read again). Raises CannotCopy, or the sqlite3/OS error that
    recovering the copy met."""
    key = str(path)
    with _COPIES_LOCK:
        copy = _COPIES.get(key)
        if copy is not None and (copy.sig != sig or not copy.file.exists()):  # moved, or swept
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


def drop(path: Path) -> None:
    """Remove the copy kept for ``path``, if any: its files no longer need one."""
    if str(path) in _COPIES:
        with _COPIES_LOCK:
            if str(path) in _COPIES:
                _retire(_COPIES.pop(str(path)))


def _retire(copy: _Copy) -> None:
    copy.retired = True
    if copy.users == 0:
        shutil.rmtree(copy.folder, ignore_errors=True)


def _make(db: Path, sig: Signature, reason: str) -> _Copy | None:
    size = sum(s[0] for s in sig if s is not None)
    tmp = tempfile.gettempdir()

    def refuse(why: str) -> CannotCopy:
        return CannotCopy(
            _(
                "%(happened)s Reading it in place would change the files, and "
                "%(why)s, so the store is not shown. %(next)s",
                happened=happened(reason, db),
                why=why,
                next=what_next(reason, "store"),
            )
        )

    if size > COPY_BUDGET_BYTES:
        raise refuse(
            _(
                "at %(size)s it is larger than the %(budget)s the dashboard copies to read a store",
                size=_mb(size),
                budget=_mb(COPY_BUDGET_BYTES),
            )
        )
    try:
        if shutil.disk_usage(tmp).free < 2 * size + COPY_BUDGET_BYTES // 8:
            raise OSError(f"{tmp} has too little free space")
        _sweep(tmp)
        folder = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
    except OSError as exc:
        raise refuse(_("no private copy could be made (%(error)s)", error=exc)) from None
    try:
        target = Path(folder) / "memory.db"
        copy_to(db, target)  # the main file through the kept descriptor (locks!)
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
        pid = entry.name[len(_PREFIX) :].split("-")[0] if entry.name.startswith(_PREFIX) else ""
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass  # alive (or not ours to ask about): leave it


@atexit.register
def _remove_all() -> None:
    with _COPIES_LOCK:
        while _COPIES:
            shutil.rmtree(_COPIES.popitem()[1].folder, ignore_errors=True)
