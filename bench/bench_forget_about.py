"""The dry run of "forget what is about me", timed: the page and its twin at N memories.

The stores come from ``bench_pages.build`` (agentao's schema, raw sqlite3 rows: 80 % project,
20 % user, 5 % soft-deleted, reviews and summaries).  The dry run reads who the person is from
their own memories, every project row's text once, and masks each listed sentence; it prints
the time of each answer (median of ``--repeat``, the findings scan reused after the first) and
the twin's size.

    python bench/bench_forget_about.py                       # 1,000 and 10,000 memories
    python bench/bench_forget_about.py --tree /path/to/other/checkout   # the same, another tree
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", type=Path, default=HERE.parent, help="source tree to run (default: this repo)")
    args = ap.parse_args()
    sys.path[:0] = [str(args.tree), str(HERE)]
    from bench_pages import build

    from dashboard import create_app

    for count in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-forget-about-") as tmp:
            project, user, _ids = build(Path(tmp), count)
            app = create_app({"PROJECT_DIR": project, "USER_DB": user, "AUTH_TOKEN": False, "TESTING": True})
            app.config["FINDINGS_TIME_LIMIT_MS"] = 600_000  # one whole scan, then reused
            client = app.test_client()
            client.environ_base["HTTP_SEC_FETCH_SITE"] = "same-origin"
            client.get("/forget/about.json")
            for url in ("/forget/about.json", "/forget/about"):
                times, size = [], 0
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    r = client.get(url)
                    times.append(time.perf_counter() - t0)
                    size = len(r.data)
                    assert r.status_code == 200, r.status_code
                print(
                    f"{count:>7} memories  {url:<20} {statistics.median(times) * 1000:8.0f} ms  {size:>10,} bytes"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
