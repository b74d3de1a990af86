"""Size and time of the preview's JSON twin as the store grows (issue 20: 8.8 MB at 10,000).

Run:  /work/main/.venv/bin/python bench/bench_twin_size.py [--memories 1000 10000] [--dir /tmp/bench_twin]

Builds each store with bench_preview.build (agentao's schema and keywords), asks
/preview.json through the app in-process (the Flask test client: no socket, so the
time is the app's own) for the bench's queries, and prints per size the median
answer size and time, and the largest answer.  The twin pages its candidates
(100 a page) and only counts never-recalled rows, so the size should stay flat.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_preview import MESSAGES, QUERIES, build  # noqa: E402

from dashboard import create_app  # noqa: E402


def measure(folder: Path, count: int) -> tuple[float, float, int]:
    project_db, user_db = build(folder / str(count), count)
    project = folder / str(count) / "proj"
    (project / ".agentao").mkdir(parents=True, exist_ok=True)
    link = project / ".agentao" / "memory.db"
    if not link.exists():
        link.symlink_to(project_db)
    client = create_app(
        {"PROJECT_DIR": project, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False, "READ_ONLY": True}
    ).test_client()
    client.get("/preview.json?q=warm")  # the first read of the rows is not the twin's cost
    sizes, times = [], []
    for q in QUERIES:
        start = time.perf_counter()
        r = client.get("/preview.json", query_string={"q": q, "messages": "\n".join(MESSAGES)})
        times.append(time.perf_counter() - start)
        assert r.status_code == 200, r.get_data()[:200]
        sizes.append(len(r.get_data()))
    return statistics.median(sizes), statistics.median(times), max(sizes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bench_twin"))
    args = ap.parse_args()
    for n in args.memories:
        size, seconds, largest = measure(args.dir, n)
        print(
            f"{n:>7} memories: twin median {size / 1000:.0f} kB (largest {largest / 1000:.0f} kB), "
            f"median {seconds * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
