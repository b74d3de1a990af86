"""How to read a store without changing it, even when SQLite would repair it on open.

A hot rollback journal (a non-WAL writer killed mid-transaction) or a ``-wal`` nobody
holds makes any SQLite open write; such a store is read from a private copy that SQLite
repairs (``copies``), showing what agentao will show.  "Nobody holds" is asked as SQLite
decides it (RESERVED / SHARED locks), through ``descriptors``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask_babel import gettext as _

from .descriptors import LOCK_RANGE, PENDING_BYTE, RESERVED_BYTE, lock_held, read_header

WAL_HEADER_BYTES = 32  # a -wal shorter than its header holds no frame
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
    reason: str | None = None  # for copies: "interrupted_write" or "wal_left"


def side(path: Path, suffix: str) -> Path:
    return Path(str(path) + suffix)


# (size, mtime, inode) of a file, or None when it is not there.
Signature = tuple["tuple[int, int, int] | None", ...]


def _stat(p: Path) -> tuple[int, int, int] | None:
    try:
        s = p.stat()
    except OSError:
        return None
    return (s.st_size, s.st_mtime_ns, s.st_ino)


def signature(path: Path) -> Signature:
    """(main file, -wal, -journal) as (size, mtime, inode) or None: what any writer changes."""
    return tuple(_stat(side(path, s)) for s in ("", "-wal", "-journal"))


# The files' signature and, while a -wal exists, the first copy of the -wal's index header
# (the -shm's first 48 bytes: change counter, last committed frame, salts, checksums).
Stamp = tuple[Signature, "bytes | None"]
WAL_INDEX_HEADER_BYTES = 48


def stamp(path: Path) -> Stamp:
    """What a value read from ``path`` is kept on: ``signature`` alone misses a commit.

    A WAL writer writes (and syncs) its frames into the -wal first and publishes the commit
    in the -shm's index header last; a read in between sees the rows before the commit,
    and publishing moves no size, time or inode.  The index header moves with every commit
    (its frame count and running checksum), so it is part of the stamp."""
    sig = signature(path)
    if sig[1] is None:
        return sig, None
    try:
        return sig, read_header(side(path, "-shm"), WAL_INDEX_HEADER_BYTES)
    except OSError:
        return sig, None  # no -shm: nobody writes the -wal (a writer's open makes one)


def _hot_journal(db: Path) -> bool:
    # SQLite's own test (pager.c hasHotJournal): the journal exists and is not
    # empty, the main file is not empty, nobody holds RESERVED, and the
    # journal's first byte is not zero (a zeroed header is a finished
    # PERSIST-mode journal).  Journals carry no locks: opening one is harmless.
    try:
        if side(db, "-journal").stat().st_size == 0 or db.stat().st_size == 0:
            return False
        if lock_held(db, RESERVED_BYTE, 1):
            return False  # a live writer owns the journal; SQLite's locks keep a read consistent
        return read_header(side(db, "-journal"), 1) not in (b"", b"\0")
    except OSError:
        return False


def plan(path: Path) -> Plan:
    """How to open ``path`` now so that the read shows committed rows only and writes nothing."""
    db = Path(path)
    if _hot_journal(db):
        return Plan(COPY, "interrupted_write")
    wal = _stat(side(db, "-wal"))
    if wal is not None:
        if lock_held(db, PENDING_BYTE, LOCK_RANGE):
            return Plan(SHARED)  # a live connection: it keeps -shm valid, no recovery runs
        if wal[0] < WAL_HEADER_BYTES:
            return Plan(IMMUTABLE)  # nothing in the -wal: the main file is the whole store
        if 0 <= time.time_ns() - wal[1] < WAL_SETTLE_NS:
            return Plan(WAIT)
        return Plan(COPY, "wal_left")
    if side(db, "-journal").exists() and lock_held(db, RESERVED_BYTE, 1):
        return Plan(SHARED)  # a live non-WAL writer mid-transaction: wait for its commit
    return Plan(IMMUTABLE)


def happened(reason: str, db: Path) -> str:
    """What left the files needing a repair, in a sentence."""
    if reason == "interrupted_write":
        return _(
            "A program was interrupted while writing to this store: its unfinished change "
            "is still in %(file)s.",
            file=db.name + "-journal",
        )
    return _(
        "Saves to this store are still only in %(file)s and no program has it open to fold "
        "them into the file (agentao was stopped, or closed while the store was read).",
        file=db.name + "-wal",
    )


def what_next(reason: str, kind: str) -> str:
    """What agentao will do about it, and when (``kind``: project, user, or any other for
    "this store")."""
    if reason == "interrupted_write":
        if kind == "project":
            return _("agentao will roll it back the next time it opens the project.")
        if kind == "user":
            return _(
                "agentao will roll it back the next time it opens the user store (every "
                "agentao session does)."
            )
        return _("agentao will roll it back the next time it opens this store.")
    if kind == "project":
        return _("agentao folds them into the file the next time it opens the project.")
    if kind == "user":
        return _(
            "agentao folds them into the file the next time it opens the user store (every "
            "agentao session does)."
        )
    return _("agentao folds them into the file the next time it opens this store.")


def notice(path: Path, kind: str) -> dict[str, Any] | None:
    """What the user must know about what is shown, or None: only an interrupted write (saves
    left in a -wal are committed, shown as they are, and need no alarm)."""
    found = plan(path)
    if found.reason != "interrupted_write":
        return None
    return {
        "kind": found.reason,
        "message": _(
            "%(happened)s It is shown as it was before that change, read from a "
            "private copy: the files are not touched. %(next)s",
            happened=happened(found.reason, Path(path)),
            next=what_next(found.reason, kind),
        ),
    }
