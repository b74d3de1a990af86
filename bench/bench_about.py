"""The overview's answer and the About-you page stay bounded: timed at 100,000 memories.

Both pages read counts and at most ``store.about.LIMIT`` rows per section, and
the findings scan behind "risky" is the shared, time-bounded one; so their
answer size must not grow with the store, and their time stays near the
scan's budget.  The stores come from ``bench_pages.build`` (agentao's schema,
raw sqlite3 rows: 80 % project, 20 % user, 5 % soft-deleted, reviews and
summaries), served by the real command line.

    python bench/bench_about.py                  # 100,000 memories
    python bench/bench_about.py --sizes 1000 100000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pages import ROOT, Server, build  # noqa: E402

URLS = ["/overview", "/overview/risky", "/overview.json", "/about", "/about.json"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--limit", type=float, default=120)
    ap.add_argument("--tree", type=Path, default=ROOT, help="source tree to run (default: this repo)")
    args = ap.parse_args()
    for count in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-about-") as tmp:
            root = Path(tmp)
            project, user, _ids = build(root, count)
            server = Server(args.tree, project, user, root / "server.log")
            try:
                print(f"{count:,} memories")
                for url in URLS:
                    first, status, body = server.get(url, args.limit)
                    times = [server.get(url, args.limit)[0] for _ in range(args.repeat)]
                    print(
                        f"  {url:16} status {status}  first {first * 1000:7.0f} ms  "
                        f"p50 {statistics.median(times) * 1000:7.0f} ms  {len(body):8,} bytes"
                    )
                print(f"  peak RSS {server.rss_peak_mib():.0f} MiB")
            finally:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
