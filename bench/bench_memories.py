"""Server time of the memories page on a large store.

Builds a project store with N memories (default 100,000) plus a user store,
then times the memories page through the app (Flask test client, no network)
with and without filters and search.  Prints the wall-clock p50/p95 and the
CPU-time p50 (``time.process_time``: less moved by other work on the machine)
per case and, for scale, the time of a bare SQLite count + page query measured
in the same run.  Goal (issue 2): p50 under 50 ms on a 2-core machine.

Each view filters, searches and sorts the files' snapshots (store/snapshot.py)
in Python; nothing is kept between views but the snapshots themselves.  The
"new term" cases search for a different term on every view (sparse: ~1 % of
rows; dense: ~70 %); "new, two words" searches two common words in a row.
The first view's line also gives its CPU time and the process's peak RSS
(the snapshots of both files).

    python bench/bench_memories.py [--memories 100000] [--runs 30] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard import contract, create_app  # noqa: E402
from dashboard.store.schema import create_fresh_store  # noqa: E402

WORDS = (
    "python uv pytest deploy docker redis postgres cache auth token api schema migrate "
    "logging review release branch linter format ruff mypy build wheel"
).split()
TYPES = ["note", "project_fact", "preference", "workflow", "decision", "constraint", "profile"]


def build(path: Path, n: int, scope: str, seed: int) -> None:
    rnd = random.Random(seed)
    conn = create_fresh_store(path)
    rows = []
    for i in range(n):
        words = rnd.sample(WORDS, 6)
        key = f"{words[0]} {words[1]} {i}"
        content = " ".join(rnd.choices(WORDS, k=25)) + f" see src/{words[2]}/mod{i % 97}.py"
        tags = [words[3], words[4]]
        kws = contract.extract_keywords(key, tags, content)
        ts = f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}"
        rows.append(
            (
                f"{i:08x}",
                scope,
                rnd.choice(TYPES),
                contract.normalize_key(key),
                key,
                content,
                json.dumps(tags),
                json.dumps(kws),
                rnd.choice(["explicit", "auto", "crystallized"]),
                "explicit_user",
                "normal",
                ts,
                ts,
                ts if i % 10 == 0 else None,
            )
        )
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO memories VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument(
        "--store",
        type=Path,
        help="build the stores in this folder once, and reuse them on later runs (same --memories)",
    )
    args = ap.parse_args()
    root = args.store or Path(tempfile.mkdtemp(prefix="bench-memories-"))
    project = root / "project"
    t0 = time.perf_counter()
    if (root / "user.db").exists():
        print(f"reusing the stores in {root}")
    else:
        build(project / ".agentao" / "memory.db", args.memories, "project", 1)
        build(root / "user.db", max(1, args.memories // 10), "user", 2)
        print(
            f"built {args.memories:,} project + {max(1, args.memories // 10):,} user memories "
            f"in {time.perf_counter() - t0:.1f} s"
        )
    client = create_app(
        {"PROJECT_DIR": project, "USER_DB": root / "user.db", "AUTH_TOKEN": False}
    ).test_client()
    n = len(WORDS)
    cases = {
        "no filter": "/memories",
        "json twin": "/memories.json",
        "scope=project": "/memories?scope=project",
        "type=workflow": "/memories?type=workflow",
        "tag=redis": "/memories?tag=redis",
        "search q=deploy": "/memories?q=deploy",
        "search q=mod42.py": "/memories?q=mod42.py",
        "deleted=1": "/memories?deleted=1",
        "page 1000": "/memories?page=1000",
        "sort=title asc": "/memories?sort=title&order=asc",
        "search q=deploy p.100": "/memories?q=deploy&page=100",
        "search q=deploy+type": "/memories?q=deploy&type=workflow",
        "search new term, few": lambda k: f"/memories?q=mod{k}.py",
        "search new term, many": lambda k: f"/memories?q={WORDS[k % n][: len(WORDS[k % n]) - k // n]}",
        "search new, two words": lambda k: f"/memories?q={WORDS[k % n]} {WORDS[(k + 1 + k // n) % n]}",
        "tag new each view": lambda k: f"/memories?tag={WORDS[k % n]}" + "&scope=project" * (k >= n),
    }
    t, c = time.perf_counter(), time.process_time()
    assert client.get("/memories").status_code == 200
    cold_ms, cold_cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
    cold_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # KiB on Linux
    conn = sqlite3.connect(project / ".agentao" / "memory.db")
    bare = []
    for _ in range(args.runs):
        t = time.perf_counter()
        conn.execute("SELECT COUNT(*) FROM memories WHERE deleted_at IS NULL").fetchone()
        conn.execute(
            "SELECT * FROM memories WHERE deleted_at IS NULL ORDER BY updated_at DESC LIMIT 50"
        ).fetchall()
        bare.append((time.perf_counter() - t) * 1000)
    print(f"{'case':<24}{'p50 ms':>9}{'p95 ms':>9}{'CPU p50':>9}{'x bare SQLite':>15}")
    print(f"{'bare SQLite count+page':<24}{statistics.median(bare):9.1f}{p(bare, 0.95):9.1f}{'':>9}{1:15.1f}")
    print(
        f"{'cold: first view':<24}{cold_ms:9.1f}{'':>9}{cold_cpu:9.1f}{cold_ms / statistics.median(bare):15.1f}"
        f"   (reads the snapshots once; peak RSS then {cold_rss} MiB)"
    )
    for name, url in cases.items():
        view = url if callable(url) else (lambda k, url=url: url)
        assert client.get(view(args.runs)).status_code == 200, name
        times, cpu = [], []
        for k in range(args.runs):
            t, c = time.perf_counter(), time.process_time()
            r = client.get(view(k))
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            assert r.status_code == 200
        med = statistics.median(times)
        print(
            f"{name:<24}{med:9.1f}{p(times, 0.95):9.1f}{statistics.median(cpu):9.1f}"
            f"{med / statistics.median(bare):15.1f}"
        )


if __name__ == "__main__":
    main()
