"""How long the Checks screen takes: every check run through the preview engine.

Run:  .venv/bin/python bench/bench_checks.py [--memories 10000] [--checks 200] [--dir /tmp/bench_checks]

Builds bench_preview.py's store (agentao's schema, random memories in both scopes), writes a
checks file of ``--checks`` checks (its questions, in turn), then times ``GET /checks.json``:
the first answer after the rows were read, and the median of five more (nothing changed),
with no time budget (the page's own stops starting checks after 10 s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_preview import QUERIES, build  # noqa: E402

from dashboard import create_app  # noqa: E402
from dashboard.actions.checks import FORMAT, checks_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--checks", type=int, default=200)
    ap.add_argument("--dir", default="/tmp/bench_checks")
    args = ap.parse_args()
    folder = Path(args.dir)
    project, user = build(folder, args.memories)
    checks = [
        {
            "id": f"c-{n:04d}",
            "name": f"q{n}",
            "message": QUERIES[n % len(QUERIES)],
            "must_not_contain": ["hunter2"],
        }
        for n in range(args.checks)
    ]
    store = folder / "project" / ".agentao" / "memory.db"  # where agentao keeps it: a hard link
    store.parent.mkdir(parents=True, exist_ok=True)
    if not store.exists():
        store.hardlink_to(project)
    checks_path(store).write_text(json.dumps({"format": FORMAT, "checks": checks}))
    client = create_app(
        {
            "PROJECT_DIR": store.parent.parent,
            "USER_DB": user,
            "TESTING": True,
            "AUTH_TOKEN": False,
            "CHECKS_TIME_LIMIT_MS": None,
        }
    ).test_client()
    client.get("/memories.json")  # rows read once, as a warm server has them
    times = []
    for _ in range(6):
        t = time.perf_counter()
        r = client.get("/checks.json")
        times.append(time.perf_counter() - t)
        assert r.status_code == 200 and r.get_json()["total"] == args.checks + 1
    print(
        f"{args.memories} memories, {args.checks} checks: first {times[0] * 1000:.0f} ms, "
        f"then median {statistics.median(times[1:]) * 1000:.0f} ms "
        f"({statistics.median(times[1:]) / args.checks * 1000:.1f} ms a check)"
    )


if __name__ == "__main__":
    main()
