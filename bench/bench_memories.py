"""Server time of the memories page on a large store.

Builds a project store with N memories (default 100,000) plus a user store,
then times the memories page through the app (Flask test client, no network)
with and without filters and search.  Prints the p50/p95 per case and, for
scale, the time of a bare SQLite count + page query measured in the same run.
Goal (issue 2): p50 under 50 ms on a 2-core machine.

    python bench/bench_memories.py [--memories 100000] [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard import contract, create_app  # noqa: E402
from dashboard.store.schema import create_fresh_store  # noqa: E402

WORDS = ("python uv pytest deploy docker redis postgres cache auth token api schema migrate "
         "logging review release branch linter format ruff mypy build wheel").split()
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
        rows.append((f"{i:08x}", scope, rnd.choice(TYPES), contract.normalize_key(key), key,
                     content, json.dumps(tags), json.dumps(kws),
                     rnd.choice(["explicit", "auto", "crystallized"]), "explicit_user", "normal",
                     ts, ts, ts if i % 10 == 0 else None))
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
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-memories-"))
    project = root / "project"
    t0 = time.perf_counter()
    build(project / ".agentao" / "memory.db", args.memories, "project", 1)
    build(root / "user.db", max(1, args.memories // 10), "user", 2)
    print(f"built {args.memories:,} project + {max(1, args.memories // 10):,} user memories "
          f"in {time.perf_counter() - t0:.1f} s")
    client = create_app({"PROJECT_DIR": project, "USER_DB": root / "user.db",
                         "AUTH_TOKEN": False}).test_client()
    cases = {
        "no filter": "/memories", "json twin": "/memories.json",
        "scope=project": "/memories?scope=project", "type=workflow": "/memories?type=workflow",
        "tag=redis": "/memories?tag=redis", "search q=deploy": "/memories?q=deploy",
        "search q=mod42.py": "/memories?q=mod42.py", "deleted=1": "/memories?deleted=1",
        "page 1000": "/memories?page=1000", "sort=title asc": "/memories?sort=title&order=asc",
    }
    t = time.perf_counter()
    assert client.get("/memories").status_code == 200
    cold_ms = (time.perf_counter() - t) * 1000
    conn = sqlite3.connect(project / ".agentao" / "memory.db")
    bare = []
    for _ in range(args.runs):
        t = time.perf_counter()
        conn.execute("SELECT COUNT(*) FROM memories WHERE deleted_at IS NULL").fetchone()
        conn.execute("SELECT * FROM memories WHERE deleted_at IS NULL ORDER BY updated_at DESC"
                     " LIMIT 50").fetchall()
        bare.append((time.perf_counter() - t) * 1000)
    print(f"{'case':<22}{'p50 ms':>9}{'p95 ms':>9}{'x bare SQLite':>15}")
    print(f"{'bare SQLite count+page':<22}{statistics.median(bare):9.1f}{p(bare, .95):9.1f}{1:15.1f}")
    print(f"{'cold: first view':<22}{cold_ms:9.1f}{'':>9}{cold_ms / statistics.median(bare):15.1f}"
          "   (builds the in-memory copy once)")
    for name, url in cases.items():
        assert client.get(url).status_code == 200, url
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            r = client.get(url)
            times.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200
        med = statistics.median(times)
        print(f"{name:<22}{med:9.1f}{p(times, .95):9.1f}{med / statistics.median(bare):15.1f}")


if __name__ == "__main__":
    main()
