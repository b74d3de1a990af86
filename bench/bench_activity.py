"""The live pulse and the activity feed at 100,000 memories (and their ~110,000 events).

Builds a project store with N memories (bench_memories.build), a create event for each and an
update for every tenth, then times through the Flask test client:

* the pulse while nothing moved (a 204 from file stamps: no SQL),
* the pulse after one save by the real agentao (reads only the events after the token),
* the feed's first page, its 100th page, a date window, a title search, and "changed since".

    python bench/bench_activity.py [--memories 100000] [--runs 20]
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_memories import build  # noqa: E402

from dashboard import create_app  # noqa: E402


def add_events(db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO memory_events (memory_id, event_type, timestamp)"
        " SELECT id, 'create', created_at FROM memories ORDER BY created_at"
    )
    conn.execute(
        "INSERT INTO memory_events (memory_id, event_type, timestamp)"
        " SELECT id, 'update', updated_at FROM memories WHERE rowid % 10 = 0"
    )
    conn.execute("COMMIT")
    n = conn.execute("SELECT COUNT(*) FROM memory_events").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return n


def timed(fn, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out), max(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-activity-"))
    db = root / "project" / ".agentao" / "memory.db"
    build(db, args.memories, "project", 1)
    build(root / "user.db", max(1, args.memories // 10), "user", 2)
    events = add_events(db)
    print(f"{args.memories:,} project memories, {events:,} events")
    client = create_app(
        {"PROJECT_DIR": root / "project", "USER_DB": root / "user.db", "AUTH_TOKEN": False}
    ).test_client()
    html = client.get("/overview").get_data(as_text=True)
    url = re.search(r'id="pulse"[^>]*hx-get="([^"]+)"', html).group(1).replace("&amp;", "&")
    med, worst = timed(lambda: client.get(url, headers={"HX-Request": "true"}), args.runs)
    print(f"pulse, nothing moved (204):      median {med:6.1f} ms  max {worst:6.1f} ms")

    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from agentao.memory.models import SaveMemoryRequest

    manager = MemoryManager(SQLiteMemoryStore.open(db), None)
    moved = []
    for k in range(args.runs):
        manager.upsert(SaveMemoryRequest(key=f"bench note {k}", value="A new fact.", tags=["b"]))
        t = time.perf_counter()
        r = client.get(url, headers={"HX-Request": "true"})
        moved.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 200 and b"The agent just saved" in r.data, r.data[:300]
    print(
        f"pulse after one agentao save:     median {statistics.median(moved):6.1f} ms"
        f"  max {max(moved):6.1f} ms"
    )
    cases = {
        "feed page 1": "/activity",
        "feed page 100": "/activity?page=100",
        "feed one day": "/activity?from=2026-03-05&to=2026-03-05",
        "feed title holds": "/activity?q=redis",
        "changed since": "/activity?changed=2026-06-01",
        "feed json": "/activity.json",
    }
    print(
        "(unchanged: the files did not move since the last view; moved: one agentao save before"
        " each view, so the log and the 100,000-row snapshot are read again)"
    )
    for name, path in cases.items():
        assert client.get(path).status_code == 200
        med, worst = timed(lambda path=path: client.get(path), max(3, args.runs // 4))
        cold = []
        for k in range(3):
            manager.upsert(SaveMemoryRequest(key=f"bench {name} {k}", value="x", tags=["b"]))
            t = time.perf_counter()
            client.get(path)
            cold.append((time.perf_counter() - t) * 1000)
        print(
            f"{name + ':':20s} unchanged median {med:6.1f} ms  max {worst:6.1f} ms;"
            f"  moved median {statistics.median(cold):7.1f} ms"
        )


if __name__ == "__main__":
    main()
