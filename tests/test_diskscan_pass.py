"""The byte scan of a hard purge as a pass over the files: many short texts looked for at once
(across the places where the file is read in pieces), every form a text takes on disk, progress
that moves with the bytes read, and memory that stays bounded however many texts there are."""

from __future__ import annotations

import random
import shutil
import sqlite3
import tracemalloc

import pytest
from test_diskscan import filler, scan_bytes, words

from dashboard.actions import diskscan, sidefiles

pytestmark = pytest.mark.usefixtures("scan_loop")  # every case, compiled and with numpy


def short_texts(rng: random.Random, n: int, tiny: bool = False) -> list[str]:
    # Distinct, and too short for a key between two anchors: the multi-pattern pass finds them.
    if tiny:
        return [f"pin {k:05d}" for k in rng.sample(range(100_000), n)]
    return [f"pin {k:05d} for the {words(rng, 2)}" for k in rng.sample(range(100_000), n)]


def test_many_short_texts_are_found_across_read_boundaries(tmp_path):
    rng = random.Random(41)
    short, tiny = short_texts(rng, 80), short_texts(rng, 80, tiny=True)
    texts = short + tiny
    # The short ones are looked up by 8-byte words (every 8 or 16 bytes), the tiny ones
    # ("pin 01234") by 4-byte words every 4 bytes.
    needles = diskscan.Needles(texts)
    assert {(g.stride, g.size) for g in needles.grams} == {(16, 16), (8, 8), (4, 4)}
    data = bytearray(filler(rng, 4 * diskscan.PIECE))
    present = short[:40] + tiny[:40]
    # Three short and three tiny texts straddle the places where the file is read in two.
    spots = iter([*(e * diskscan.PIECE - 13 for e in (1, 2, 3)), *range(10_000, 4 * diskscan.PIECE, 13_000)])
    straddle = short[:3] + tiny[:3]
    for text in straddle + [t for t in present if t not in straddle]:
        at = next(spots)
        data[at : at + len(text.encode())] = text.encode()
    found = scan_bytes(tmp_path, bytes(data), texts)
    assert [t for t in present if not (found[t] and found[t]["whole"])] == []
    assert [t for t in texts if t not in present and found[t]] == []


def test_every_form_a_text_takes_on_disk_is_found(tmp_path):
    """UTF-8 whole in a cell, in pieces over overflow pages, in the WAL, in a rollback journal,
    in a copy beside the database, in pieces in a copy; long texts and short ones."""
    rng = random.Random(43)
    db = tmp_path / "memory.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE t (x TEXT)")
    long_db, short_db = words(rng, 2500), "pin 4242 for the db"  # 2500 words: overflow pages
    long_copy, short_copy = words(rng, 300), "pin 7272 for the copy"
    cjk = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(3000))  # 9 KB of 3-byte characters
    conn.executemany(
        "INSERT INTO t VALUES (?)", [(long_db,), (short_db,), (long_copy,), (short_copy,), (cjk,)]
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(db, tmp_path / "memory.db.bak")
    conn.execute("DELETE FROM t WHERE x IN (?, ?)", (long_copy, short_copy))
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    long_wal, short_wal = words(rng, 300), "pin 9191 for the wal"
    conn.executemany("INSERT INTO t VALUES (?)", [(long_wal,), (short_wal,)])  # stays in the -wal
    # A rollback journal left by a crash holds page images: raw bytes of the old pages.
    long_journal, short_journal = words(rng, 300), "pin 3131 for the journal"
    (tmp_path / "memory.db-journal").write_bytes(
        filler(rng, 5000) + long_journal.encode() + filler(rng, 3000) + short_journal.encode()
    )
    # A copy cut as pages cut a long text: 4,092 bytes a page after a 4-byte pointer.
    long_pages = words(rng, 3000)
    raw = long_pages.encode()
    (tmp_path / "memory-old.sqlite").write_bytes(
        b"".join(b"\x00\x00\x00\x07" + raw[k : k + 4092] + filler(rng, 300) for k in range(0, len(raw), 4092))
    )
    paths = sidefiles.sqlite_files(db) + sidefiles.copies_beside(db)
    texts = [
        long_db,
        short_db,
        long_copy,
        short_copy,
        long_wal,
        short_wal,
        long_journal,
        short_journal,
        long_pages,
        cjk,
        words(rng, 300),
        "pin 0000 for nobody",
    ]
    hits, _ = diskscan.scan(paths, texts)
    conn.close()
    where = {
        t: {p.rsplit("/", 1)[-1]: f["whole"] for p, f in hits[diskscan.sha256_text(t)].files.items()}
        for t in texts
    }
    # Whole in a cell (short) or over overflow pages (long: found, in pieces); the WAL may
    # hold a copy of the page a cell sits on, rewritten by the later insert.
    assert {"memory.db": True, "memory.db.bak": True}.items() <= where[short_db].items()
    assert {"memory.db", "memory.db.bak"} <= set(where[long_db])
    assert {"memory.db", "memory.db.bak"} <= set(where[cjk])
    assert where[long_copy] == where[short_copy] == {"memory.db.bak": True}
    assert where[long_wal] == where[short_wal] == {"memory.db-wal": True}
    assert where[long_journal] == where[short_journal] == {"memory.db-journal": True}
    assert where[long_pages] == {"memory-old.sqlite": False}
    assert where[texts[-2]] == where[texts[-1]] == {}


def test_progress_moves_with_the_bytes_read_up_to_the_end(tmp_path):
    rng = random.Random(47)
    paths = []
    for name in ("memory.db", "memory.db-wal"):
        paths.append(tmp_path / name)
        paths[-1].write_bytes(filler(rng, 3 * diskscan.PIECE + 123))
    texts = [words(rng, 300) for _ in range(20)] + short_texts(rng, 40)
    seen = []
    diskscan.scan(paths, texts, progress=lambda done, total: seen.append((done, total)))
    total = seen[-1][1]
    assert seen[-1] == (total, total)
    assert all(t == total for _, t in seen) and all(0 <= d <= total for d, _ in seen)
    dones = [d for d, _ in seen]
    assert dones == sorted(dones)
    # It moves while the first file is read, not only when a file is done.
    assert len(set(dones)) >= 6 and min(d for d in dones if d) < total // 4


def test_tens_of_thousands_of_texts_stay_within_a_memory_bound(tmp_path):
    rng = random.Random(53)
    texts = (
        short_texts(rng, 20_000)
        + short_texts(rng, 10_000, tiny=True)
        + [words(rng, 200) for _ in range(2000)]
    )
    data = bytearray(filler(rng, 1 << 21))  # 2 MB, whatever the size of a piece
    for text in texts[::997]:
        at = rng.randrange(len(data) - 2000)
        data[at : at + len(text.encode())] = text.encode()
    path = tmp_path / "memory.db"
    path.write_bytes(bytes(data))
    size_of_texts = sum(len(t.encode()) for t in texts)
    tracemalloc.start()
    try:
        hits, _ = diskscan.scan([path], texts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(hits[diskscan.sha256_text(t)].found for t in texts[::997] if t.encode() in data)
    # Per text, a few hundred bytes of index (blocks, their grams), and a few pieces of the file.
    assert peak < 1500 * len(texts) + 4 * size_of_texts + 16 * diskscan.PIECE, peak


def test_a_large_file_is_read_in_pieces_not_whole(tmp_path):
    rng = random.Random(59)
    texts = [words(rng, 300) for _ in range(10)] + short_texts(rng, 100)
    path = tmp_path / "memory.db"
    block = filler(rng, diskscan.PIECE)
    with open(path, "wb") as fh:
        for _ in range(16):
            fh.write(block)
    tracemalloc.start()
    try:
        diskscan.scan([path], texts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * diskscan.PIECE, peak  # half the file: read whole, the arrays alone are five times it


def test_texts_of_every_length_are_found_to_the_last_byte_of_a_file_or_the_rows(tmp_path):
    """A text is looked for by words at offsets a stride divides, and by the word after its
    gram: one ending on a file's (or the rows' text's) very last byte, at any offset, of any
    length from one byte to past a block, is found whole all the same."""
    rng = random.Random(67)
    lengths = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15, 16, 22, 23, 24, 30, 31, 32, 33, 47, 300]
    texts = [f"Q{i:02d}Z{words(rng, 60).replace(' ', 'Q')}"[:n] for i, n in enumerate(lengths)]
    texts += ["é", "日本", "\U0001f600!", "Zürich 日本語"]  # UTF-8 of 2, 6, 5 and 16 bytes
    fill = filler(rng, 2000)
    paths = []
    for i, text in enumerate(texts):
        for offset in range(16):  # every place of the text's start against the 16-byte stride
            paths.append(tmp_path / f"{i}-{offset}.db")
            paths[-1].write_bytes(fill[: 1000 + offset] + text.encode())
    hits, _ = diskscan.scan(paths, texts)
    missed = [
        (text, p.name)
        for i, text in enumerate(texts)
        for p in paths[16 * i : 16 * i + 16]
        if not hits[diskscan.sha256_text(text)].files.get(str(p), {}).get("whole")
    ]
    assert missed == []
    for offset in range(16):  # the rows' text ends with each text in turn: still stored, not residue
        for text in texts:
            path = tmp_path / "memory.db"
            path.write_bytes(fill[:300] + text.encode() + fill[:50])
            rows = fill[500 : 1000 + offset] + text.encode()
            hits, _ = diskscan.scan([path], [text], ignore=rows)
            assert hits[diskscan.sha256_text(text)].still_stored, (text, offset)
