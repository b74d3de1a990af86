"""A write on a full disk: saying so, and leaving no side files behind.

SQLite reports a full disk as an I/O error when it cannot grow ``-shm`` or the first
``-wal`` frame, and leaves them behind; ``is_disk_full`` asks the file system, and
``tidy_failed_write`` removes what the write created when that is provably safe.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from . import descriptors

# SQLite's primary result codes (the low byte of an extended code).
SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN = 10, 13, 14
# A short write needs its -shm and a few -wal frames: with less room than this
# left, an I/O error on a write is the disk being full.
LOW_SPACE = 1 << 20


def room_left(folder: Path) -> int | None:
    """Bytes this process may still write on ``folder``'s file system (0 when it is out of
    inodes, so no file can be created there); None when the system cannot say."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    if st.f_files and not st.f_favail:
        return 0
    # root may also fill the blocks reserved for it (ext4 keeps 5%).
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


def is_disk_full(path: Path, exc: BaseException, writing: bool) -> bool:
    """Whether ``exc``, raised on the store at ``path``, means there is no room to write. SQLITE_FULL and
    ENOSPC always do; an I/O error (or a side file that could not be created) does when it came from a write
    and the room left is low."""
    if getattr(exc, "errno", None) == errno.ENOSPC or "disk is full" in str(exc).lower():
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return False
    if code & 0xFF == SQLITE_FULL:
        return True
    if writing and code & 0xFF in (SQLITE_IOERR, SQLITE_CANTOPEN):
        room = room_left(Path(path).parent)
        return room is not None and room < LOW_SPACE
    return False


def tidy_failed_write(path: Path, before: dict[str, int | None], now: dict[str, int | None]) -> None:
    """Remove the -wal and -shm a failed write created: only when neither was there ``before``,
    the -wal is empty and no connection of any process has the store open."""
    if before["-wal"] is not None or now["-wal"]:  # not ours, or it may hold frames
        return
    created = [s for s in ("-wal", "-shm") if before[s] is None and now[s] is not None]
    if not created:
        return
    with descriptors.alone(path) as alone:
        if alone:
            for suffix in created:
                Path(str(path) + suffix).unlink(missing_ok=True)
