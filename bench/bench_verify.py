"""A hard purge's verification at the issue's size: reading the files alone, then the byte scan.

    .venv/bin/python bench/bench_verify.py                      # 100 MB, 22,795 texts, short ones too
    .venv/bin/python bench/bench_verify.py --mb 20 --texts 4000  # quick
    .venv/bin/python bench/bench_verify.py --pieces 262144,1048576 --ahocorasick  # round 4
    .venv/bin/python bench/bench_verify.py --threads 1,2                           # round 5
    .venv/bin/python bench/bench_verify.py --kernel c,numpy --threads 1,2          # round 8

The store is made by agentao (schema, WAL mode) and filled in bulk with memory rows; ``--texts``
of them are soft-deleted and purged the way the dashboard does (delete, VACUUM, checkpoint), so
the scan meets what every verification meets: the purged texts gone, the rows that stay as live
text.  ``--short`` of the purged rows (and as many kept ones) hold one short sentence, as agentao
memories often do ("prefers tabs over spaces"): those are what a per-text search pays for.
Printed, in one run (rounds alternated, best of each: the machine may be shared): the files read
alone (the floor) and the scan as the dashboard runs it, in MB/s of file bytes, with the ratio;
also MB per CPU-second (what a busy machine does not inflate) and the fixed cost of cutting the
texts into blocks.  ``--pieces`` alternates the scan at several read sizes (bytes a piece);
``--threads`` alternates the parts of a piece searched at once (1: one core, as before round 5),
forced whatever the load (the dashboard takes one a free core, up to ``diskscan.THREADS``); the
last line says whether a second core was free (two threads sorting: CPU-seconds per wall second).
``--kernel c,numpy`` alternates the place-by-place loop compiled at install (dashboard_scan_kernel)
and numpy's form of it (the fallback when there was no compiler); the cutting is timed for each.
``--ahocorasick`` also times ahocorasick-rs (``pip install ahocorasick-rs``; not a dependency)
building an automaton of the scan's own blocks and one overlapping pass over the first 30 MB:
the library's time alone, nothing done with what it finds; ``--hyperscan`` the same with
hyperscan's literal matcher (``pip install hyperscan``; not a dependency either).  The scan
before the one-pass rewrite measured 1.0-1.6 MB/s here (bench/results/verify-100mb*.txt).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentao.memory import SQLiteMemoryStore  # noqa: E402
from bench_purge import sentence, vocabulary  # noqa: E402

from dashboard.actions import diskscan, grams, purge, sidefiles  # noqa: E402
from dashboard.store import StoreRef, connection  # noqa: E402
from dashboard.store import purge as sql  # noqa: E402
from dashboard.store.descriptors import KeptReader  # noqa: E402


def content(rng: random.Random, vocab: list[str], short: bool) -> str:
    if short:
        return " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 6)))
    return " ".join(sentence(rng, vocab) for _ in range(rng.randint(2, 30)))[:4000]


def build(db: Path, mb: int, texts: int, short: float, rng: random.Random) -> None:
    SQLiteMemoryStore.open(db)  # agentao creates the schema and WAL mode
    vocab = vocabulary(rng)
    conn = sqlite3.connect(db)
    rows, kept_bytes, n, gone = [], 0, 0, 0
    while kept_bytes < mb * 1024 * 1024 or gone < texts:
        n += 1
        # Purged rows first in the file's order, then kept rows, mixed after that.
        delete = gone < texts and (kept_bytes >= mb * 1024 * 1024 or n % 3 == 0)
        text = content(rng, vocab, rng.random() < short)
        gone += delete
        if not delete:
            kept_bytes += int(len(text) * 1.4) + 100  # row, index and page overhead
        rows.append(
            (
                f"{n:08x}",
                "project",
                "note",
                f"key_{n}",
                f"key {n}",
                text,
                '["bench"]',
                "[]",
                "2025-01-01T00:00:00",
                "2025-01-01T00:00:00",
                "2026-01-01T00:00:00" if delete else None,
            )
        )
    conn.executemany(
        "INSERT INTO memories (id, scope, type, key_normalized, title, content, tags_json,"
        " keywords_json, created_at, updated_at, deleted_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.commit()
    conn.close()


def read_alone(paths) -> float:
    started = time.perf_counter()
    for p in paths:
        with KeptReader(p) as fh:
            while fh.read(diskscan.PIECE):
                pass
    return time.perf_counter() - started


class Late(Exception):
    pass


def timed_scan(paths, texts, live, limit: float):
    """(seconds, CPU seconds, hits) of one scan; seconds None when stopped at ``limit``."""

    def stop(*_):
        raise Late

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    started, cpu = time.perf_counter(), time.process_time()
    steps = []
    try:
        hits, _ = diskscan.scan(paths, texts, ignore=live, progress=lambda d, t: steps.append(d / t))
    except Late:
        return None, time.process_time() - cpu, None, steps
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return time.perf_counter() - started, time.process_time() - cpu, hits, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the purged file, about")
    parser.add_argument("--texts", type=int, default=22795, help="rows purged: texts to look for")
    parser.add_argument("--short", type=float, default=0.3, help="share of rows holding one short sentence")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pieces", help="read sizes to alternate, bytes, comma-separated")
    parser.add_argument("--threads", help="parts of a piece searched at once to alternate, comma-separated")
    parser.add_argument("--kernel", default="c", help="c (compiled), numpy or both to alternate: c,numpy")
    parser.add_argument("--ahocorasick", action="store_true", help="also time ahocorasick-rs on the blocks")
    parser.add_argument("--hyperscan", action="store_true", help="also time hyperscan on the blocks")
    args = parser.parse_args()
    rng = random.Random(7)
    connection.READ_TIME_LIMIT_S = 600  # setup reads 78 MB of rows: a crowded machine takes over 5 s
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "memory.db"
        build(db, args.mb, args.texts, args.short, rng)
        ref = StoreRef("project", "project", db, "bench")
        outcome = sql.erase(ref, purge.plan(ref, ["soft_deleted"]))
        texts = [t for r in outcome.erased for t in r.texts if t]
        live = sql.remaining_text(ref)
        paths = sidefiles.sqlite_files(db)
        mb = sum(p.stat().st_size for p in paths) / 1e6
        short = sum(len(t.encode()) <= 64 for t in texts)
        print(
            f"files: {mb:.1f} MB ({', '.join(p.name for p in paths)}); {len(texts)} purged texts "
            f"to look for ({short} of 64 bytes or less); load {os.getloadavg()[0]:.1f}"
        )
        sizes = [int(p) for p in args.pieces.split(",")] if args.pieces else [diskscan.PIECE]
        chosen = diskscan.parts_at_once  # the dashboard's: one part a free core
        parts = [int(t) for t in args.threads.split(",")] if args.threads else [0]
        compiled = grams.kernel
        kernels = args.kernel.split(",")
        if "c" in kernels and compiled is None:
            sys.exit(
                "--kernel c: dashboard_scan_kernel is not built (pip install -e . with gcc and Python's headers)"
            )
        runs = [(size, threads, kernel) for kernel in kernels for size in sizes for threads in parts]
        reads, scans, cpus, cuts = {}, {}, {}, {}
        for _ in range(args.rounds):  # alternated: the machine is shared
            for run in runs:
                diskscan.PIECE, threads, kernel = run
                diskscan.parts_at_once = partial(int, threads) if threads else chosen
                grams.kernel = compiled if kernel == "c" else None
                reads.setdefault(run, []).append(read_alone(paths))
                took, cpu, hits, steps = timed_scan(paths, texts, live, 3600)
                scans.setdefault(run, []).append(took)
                cpus.setdefault(run, []).append(cpu)
            for kernel in kernels:
                grams.kernel = compiled if kernel == "c" else None
                started, wall = time.process_time(), time.perf_counter()
                diskscan.Needles(texts)
                cuts.setdefault(kernel, []).append(
                    (time.process_time() - started, time.perf_counter() - wall)
                )
        found = sum(h.found for h in hits.values())
        still = sum(h.still_stored for h in hits.values())
        moved = sum(1 for a, b in zip(steps, steps[1:]) if b > a)
        for run in runs:
            read, scan, cpu = min(reads[run]), min(scans[run]), min(cpus[run])
            cut = min(cuts[run[2]])[0]
            print(f"read alone:  {mb / read:7.1f} MB/s  ({read:.2f} s), {run[0]} bytes a piece")
            print(
                f"scan, {run[2]}, {run[1] or 'by load'} at once: {mb / scan:7.1f} MB/s  ({scan:.2f} s)  = {read / scan:.3f}x the read alone; "
                f"{mb / cpu:.1f} MB per CPU-second ({cpu:.2f} CPU-s, of which {cut:.2f} cutting the texts "
                f"into blocks: {mb / max(cpu - cut, 1e-9):.1f} MB per CPU-second for the pass itself); "
                f"{cpus[run][scans[run].index(scan)] / scan:.2f} CPU-s a second"
            )
        for kernel in kernels:
            cut, cut_wall = min(cuts[kernel])
            print(
                f"cutting the texts, {kernel}: {cut:.2f} CPU-s in {cut_wall:.2f} s ({cut / cut_wall:.2f} CPU-s a second)"
            )
        print(
            f"             {found} texts found, {still} still held by rows that stay; progress moved "
            f"{moved} times to {steps[-1]:.0%}; load {os.getloadavg()[0]:.1f}"
        )
        print(second_core())
        if args.ahocorasick:
            ahocorasick_pass(paths[0], texts)
        if args.hyperscan:
            hyperscan_pass(paths[0], texts)


def ahocorasick_pass(path: Path, texts, mb: int = 30) -> None:
    """ahocorasick-rs over the scan's own blocks: building, its RSS, one overlapping pass."""
    import ahocorasick_rs

    needles = diskscan.Needles(texts)
    patterns = list(dict.fromkeys(bytes(row[:n]) for row, n in zip(needles.bytes, needles.length)))
    with open(path, "rb") as fh:
        data = fh.read(mb * 1_000_000)
    for kind in (None, ahocorasick_rs.Implementation.ContiguousNFA):
        rss = resident()
        started = time.process_time()
        automaton = ahocorasick_rs.BytesAhoCorasick(patterns, implementation=kind)
        built = time.process_time()
        grown = resident() - rss
        found, step = 0, 1 << 22
        for at in range(0, len(data), step):  # overlapping by the longest block less one byte
            window = memoryview(data)[at : at + step + diskscan.BLOCK - 1]
            found += len(automaton.find_matches_as_indexes(window, overlapping=True))
        took = time.process_time() - built
        print(
            f"ahocorasick-rs ({'its own choice' if kind is None else 'contiguous NFA'}): {len(patterns)} "
            f"blocks, built in {built - started:.2f} CPU-s, {grown / 1e6:.0f} MB more RSS; a pass over the "
            f"first {len(data) / 1e6:.0f} MB: {len(data) / 1e6 / took:.1f} MB per CPU-second ({found} "
            f"matches); load {os.getloadavg()[0]:.1f}"
        )
        del automaton


def hyperscan_pass(path: Path, texts, mb: int = 30) -> None:
    """hyperscan's literal matcher over the scan's own blocks, streamed: compiling, one pass."""
    import hyperscan

    needles = diskscan.Needles(texts)
    patterns = list(dict.fromkeys(bytes(row[:n]) for row, n in zip(needles.bytes, needles.length)))
    with open(path, "rb") as fh:
        data = fh.read(mb * 1_000_000)
    rss = resident()
    started = time.process_time()
    database = hyperscan.Database(mode=hyperscan.HS_MODE_STREAM)
    database.compile(expressions=patterns, ids=list(range(len(patterns))), literal=True)
    built = time.process_time()
    grown = resident() - rss
    found = []

    def seen(*match) -> None:  # held here: the binding keeps no reference to its handler
        found.append(match[0])

    with database.stream(match_event_handler=seen) as stream:
        for at in range(0, len(data), 1 << 22):
            stream.scan(data[at : at + (1 << 22)])
    took = time.process_time() - built
    print(
        f"hyperscan (literal, streamed): {len(patterns)} blocks, compiled in {built - started:.2f} CPU-s, "
        f"{grown / 1e6:.0f} MB more RSS; a pass over the first {len(data) / 1e6:.0f} MB: "
        f"{len(data) / 1e6 / took:.1f} MB per CPU-second ({len(found)} matches); load {os.getloadavg()[0]:.1f}"
    )


def second_core() -> str:
    """Whether this process gets a second core now: two threads sorting (numpy lets go of the
    interpreter while it sorts), CPU-seconds per wall second; near 1.0 means one core only."""
    import threading

    import numpy as np

    arrays = [np.random.default_rng(i).integers(0, 1 << 60, 4_000_000) for i in range(2)]
    threads = [threading.Thread(target=lambda a=a: [np.sort(a) for _ in range(4)]) for a in arrays]
    started, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ratio = (time.process_time() - cpu) / (time.perf_counter() - started)
    return f"second core: two threads sorting ran {ratio:.2f} CPU-s a second; load {os.getloadavg()[0]:.1f}"


def resident() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


if __name__ == "__main__":
    main()
