"""A hard purge's verification at the issue's size: reading the files alone, then the byte scan.

    .venv/bin/python bench/bench_verify.py                      # 100 MB, 22,795 texts, short ones too
    .venv/bin/python bench/bench_verify.py --mb 20 --texts 4000  # quick

The store is made by agentao (schema, WAL mode) and filled in bulk with memory rows; ``--texts``
of them are soft-deleted and purged the way the dashboard does (delete, VACUUM, checkpoint), so
the scan meets what every verification meets: the purged texts gone, the rows that stay as live
text.  ``--short`` of the purged rows (and as many kept ones) hold one short sentence, as agentao
memories often do ("prefers tabs over spaces"): those are what a per-text search pays for.
Printed, in one run (rounds alternated, best of each: the machine may be shared): the files read
alone (the floor) and the scan as the dashboard runs it, in MB/s of file bytes, with the ratio;
also MB per CPU-second (what a busy machine does not inflate) and the fixed cost of cutting the
texts into blocks.  The scan before the one-pass rewrite measured 1.0-1.6 MB/s here
(bench/results/verify-100mb*.txt).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentao.memory import SQLiteMemoryStore  # noqa: E402
from bench_purge import sentence, vocabulary  # noqa: E402

from dashboard.actions import diskscan, purge, sidefiles  # noqa: E402
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
        reads, scans, cpus, cuts = [], [], [], []
        for _ in range(args.rounds):  # alternated: the machine is shared
            reads.append(read_alone(paths))
            took, cpu, hits, steps = timed_scan(paths, texts, live, 3600)
            scans.append(took)
            cpus.append(cpu)
            started = time.process_time()
            diskscan.Needles(texts)
            cuts.append(time.process_time() - started)
        found = sum(h.found for h in hits.values())
        still = sum(h.still_stored for h in hits.values())
        moved = sum(1 for a, b in zip(steps, steps[1:]) if b > a)
        print(f"read alone:  {mb / min(reads):7.1f} MB/s  ({min(reads):.2f} s)")
        print(
            f"scan:        {mb / min(scans):7.1f} MB/s  ({min(scans):.2f} s)  = {min(reads) / min(scans):.3f}x "
            f"the read alone; {mb / min(cpus):.1f} MB per CPU-second ({min(cpus):.2f} CPU-s, of which "
            f"{min(cuts):.2f} cutting the texts into blocks: {mb / max(min(cpus) - min(cuts), 1e-9):.1f} MB per "
            f"CPU-second for the pass itself)"
        )
        print(
            f"             {found} texts found, {still} still held by rows that stay; progress moved "
            f"{moved} times to {steps[-1]:.0%}; load {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
