"""The preview over a large store, from the first request (#30: every screen within 5 s at 100,000).

In process (``dashboard.create_app`` and Flask's test client) over bench_pages.py's stores: the
first request starts the background index and says "Still reading"; once the build is done, the
first exact answers (the 4,000-character Chinese message POSTed as the page, its htmx fragment and
its JSON twin; the three-word message; no message), two rounds.  Printed: seconds, status, size and
the load average after each (a loaded machine slows every line alike).

    python bench/bench_preview_first.py --count 100000 --keep /tmp/p100k
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import bench_pages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--keep", type=Path, help="build the stores here once and reuse them")
    args = ap.parse_args()

    root = (args.keep or Path(tempfile.mkdtemp())) / str(args.count)
    client = bench_pages.client_over(root, args.count)
    long, three = {"q": bench_pages.LONG_CHINESE}, {"q": bench_pages.THREE}
    asks = [
        ("POST 4,000 Chinese, page", "/preview", {"method": "POST", "data": long}),
        (
            "POST 4,000 Chinese, htmx",
            "/preview",
            {"method": "POST", "data": long, "headers": {"HX-Request": "true"}},
        ),
        ("POST 4,000 Chinese, twin", "/preview.json", {"method": "POST", "json": long}),
        ("GET three words", "/preview", {"query_string": three}),
        ("GET three words, twin", "/preview.json", {"query_string": three}),
        ("GET no message", "/preview", {}),
    ]

    def ask(name, path, kwargs):
        t = time.perf_counter()
        r = client.open(path, **kwargs)
        took = time.perf_counter() - t
        reading = "  still reading" if b"Still reading" in r.data or r.status_code == 503 else ""
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        print(f"{name:<26}{took:7.2f} s  {r.status_code}  {len(r.data) / 1024:7.1f} KB  load {load}{reading}")

    print(f"{args.count:,} memories in {root}")
    ask(*asks[0])
    started = time.perf_counter()
    for thread in threading.enumerate():
        if thread.name == "preview-index":
            thread.join()
    print(f"the background build finished {time.perf_counter() - started:.1f} s later")
    for _round in range(2):
        for name, path, kwargs in asks:
            ask(name, path, kwargs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
