"""The files around an SQLite database, read as bytes: side files, copies, the WAL.

Nothing here opens SQLite or writes: the residue report must not change a
byte, and a -wal or -shm may vanish at any moment (the agent removes them
when its last connection closes), so every read tolerates a missing file.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from ..store.descriptors import read_bytes, read_header

SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
WAL_MAGIC = (0x377F0682, 0x377F0683)
COPY_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".bak", ".backup", ".old")


def read_or_none(p: Path) -> bytes | None:
    """A file's bytes, or None when it vanished (the agent removes -wal/-shm on close)."""
    return read_bytes(p)  # through a kept descriptor: closing one would drop SQLite's locks


def size_of(p: Path) -> int | None:
    try:
        return Path(p).stat().st_size
    except FileNotFoundError:
        return None


def sqlite_files(db: Path) -> list[Path]:
    """The database and whichever of its own side files exist."""
    db = Path(db)
    return [p for p in [db, *(Path(str(db) + s) for s in SIDE_SUFFIXES)] if p.exists()]


def copies_beside(db: Path) -> list[Path]:
    """Other files in the store's folder that may hold a copy: memory.db.bak, memory.db.*, *.db."""
    db = Path(db)
    own = {db.name, *(db.name + s for s in SIDE_SUFFIXES)}
    return [
        p
        for p in (sorted(db.parent.iterdir()) if db.parent.is_dir() else [])
        if p.name not in own
        and p.is_file()
        and (
            p.name.startswith((db.name + ".", db.stem + "-"))
            or p.suffix.lower() in COPY_SUFFIXES
            or _looks_like_sqlite(p)
        )
    ]


def _looks_like_sqlite(p: Path) -> bool:
    try:
        return read_header(p, 16) == b"SQLite format 3\x00"
    except OSError:
        return False


# -- WAL -----------------------------------------------------------------------


def wal_state(db: Path) -> dict[str, Any]:
    """Parse ``db-wal`` and ``db-shm`` from their bytes: ``frames`` with valid salts and
    checksums, ``committed`` up to the last commit frame, ``backfilled`` by the last
    checkpoint (from the -shm), ``pending`` what a checkpoint still owes."""
    wal, shm = Path(str(db) + "-wal"), Path(str(db) + "-shm")
    data = read_or_none(wal)
    out: dict[str, Any] = {
        "exists": data is not None,
        "size": len(data or b""),
        "page_size": 0,
        "frames": 0,
        "committed": 0,
        "backfilled": None,
        "pending": 0,
    }
    if data is None or out["size"] < 32:
        return out
    magic, _version, page_size, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    order = ">" if magic & 1 else "<"
    if magic not in WAL_MAGIC or page_size < 512 or (s := _checksum(data[:24], order, 0, 0)) != (c1, c2):
        out["invalid"] = True
        return out
    out["page_size"] = page_size
    offset, frame = 32, 24 + page_size
    while offset + frame <= len(data):
        pgno, commit, f1, f2, k1, k2 = struct.unpack(">6I", data[offset : offset + 24])
        if (f1, f2) != (salt1, salt2):
            break
        s = _checksum(
            data[offset + 24 : offset + frame], order, *_checksum(data[offset : offset + 8], order, *s)
        )
        if s != (k1, k2):
            break
        out["frames"] += 1
        if commit:
            out["committed"] = out["frames"]
        offset += frame
    head = (read_or_none(shm) or b"")[:136]
    if len(head) == 136:
        # wal-index header (native byte order): mxFrame at 16; nBackfill at 96.
        (mx_frame,) = struct.unpack("=I", head[16:20])
        (backfill,) = struct.unpack("=I", head[96:100])
        out["backfilled"] = min(backfill, out["committed"])
        out["max_frame"] = mx_frame
    out["pending"] = out["committed"] - (out["backfilled"] or 0)
    return out


def _checksum(chunk: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(chunk) // 4}I", chunk)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1
