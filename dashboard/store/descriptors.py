"""Reading a store's files outside SQLite without dropping anyone's locks.

Closing any descriptor of a SQLite file drops every POSIX lock this process holds on it
(sqlite.org "How To Corrupt", 2.2), so every file of a store (main, ``-shm``) is read
through one descriptor per file that stays open, never with ``open()``.
"""

from __future__ import annotations

import fcntl
import os
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

_FDS: OrderedDict[str, tuple[tuple[int, int], int]] = OrderedDict()
_LOCK = threading.Lock()
_FDS_MAX = 32  # a server shows two stores; tests make many short-lived ones
_CHUNK = 1 << 20

# SQLite's lock bytes in the main file (os_unix.c): PENDING, RESERVED, then the SHARED range.
PENDING_BYTE = 0x40000000
RESERVED_BYTE = PENDING_BYTE + 1
LOCK_RANGE = 2 + 510
# struct flock on Linux and the BSDs: l_type, l_whence, l_start, l_len, l_pid (+ padding).
_FLOCK = "hhqqi4x"
# An open-file-description lock query also reports this process's own POSIX locks (the
# dashboard's other threads); a classic F_GETLK would not.  Linux has it; elsewhere the
# classic query still sees every other process.
_GETLK = getattr(fcntl, "F_OFD_GETLK", fcntl.F_GETLK)


def _fd(
    path: Path, flags: int = os.O_RDONLY, cache: OrderedDict[str, tuple[tuple[int, int], int]] | None = None
) -> int:
    cache = _FDS if cache is None else cache
    st = os.stat(path)
    key = (st.st_dev, st.st_ino)
    entry = cache.pop(str(path), None)
    if entry is not None and entry[0] != key:
        os.close(entry[1])
        entry = None
    if entry is None:
        entry = (key, os.open(path, flags))
    cache[str(path)] = entry
    while len(cache) > _FDS_MAX:
        os.close(cache.popitem(last=False)[1][1])
    return entry[1]


def read_header(path: Path, size: int = 100) -> bytes:
    """The first ``size`` bytes of a store, read without closing a descriptor in use."""
    with _LOCK:
        return os.pread(_fd(path), size, 0)


def lock_held(path: Path, start: int, length: int) -> bool:
    """Whether any connection, here or in another process, holds a lock on those bytes of
    ``path`` (a lock query, nothing taken); True when the query cannot be made."""
    query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, start, length, 0)
    try:
        with _LOCK:
            answer = fcntl.fcntl(_fd(path), _GETLK, query)
    except OSError:
        return True
    return bool(struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK)


def copy_to(path: Path, dest: Path) -> int:
    """Copy ``path``'s bytes into the new file ``dest`` through the kept descriptor; returns the size."""
    copied = 0
    with open(dest, "xb") as out:
        while True:
            with _LOCK:
                chunk = os.pread(_fd(path), _CHUNK, copied)
            if not chunk:
                return copied
            out.write(chunk)
            copied += len(chunk)


class KeptReader:
    """A read-only file object over the kept descriptor of ``path`` (``seek``/``read``/``tell``).

    FileNotFoundError when absent; reads the file found when made, even if replaced meanwhile,
    and b"" once that descriptor is no longer kept.  Closing it closes nothing."""

    def __init__(self, path: Path):
        self.path, self.pos = Path(path), 0
        with _LOCK:
            fd = _fd(self.path)
            self.entry = _FDS[str(self.path)]
            self.size = os.fstat(fd).st_size

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else (self.size + offset if whence == 2 else self.pos + offset)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, size: int = -1) -> bytes:
        size = max(0, self.size - self.pos) if size is None or size < 0 else size
        with _LOCK:
            if _FDS.get(str(self.path)) is not self.entry:
                return b""  # closed since: another file took its path
            data = os.pread(self.entry[1], size, self.pos)
        self.pos += len(data)
        return data

    def __enter__(self) -> KeptReader:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False


def read_bytes(path: Path) -> bytes | None:
    """All of a file's bytes through its kept descriptor; None when it is not there."""
    try:
        with KeptReader(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return None


_RW: OrderedDict[str, tuple[tuple[int, int], int]] = OrderedDict()


@contextmanager
def alone(path: Path) -> Iterator[bool]:
    """True while this process holds a write lock on ``path``'s lock bytes: no connection of
    any process has the store open.  An open-file-description lock (given back by unlock, never
    by closing); without OFD locks (not Linux) False."""
    setlk = getattr(fcntl, "F_OFD_SETLK", None)
    if setlk is None:
        yield False
        return
    with _LOCK:
        try:
            fd = _fd(Path(path), os.O_RDWR, _RW)
            fcntl.fcntl(
                fd, setlk, struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, PENDING_BYTE, LOCK_RANGE, 0)
            )
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.fcntl(
                fd, setlk, struct.pack(_FLOCK, fcntl.F_UNLCK, os.SEEK_SET, PENDING_BYTE, LOCK_RANGE, 0)
            )
