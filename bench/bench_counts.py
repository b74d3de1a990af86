"""What saying every count as Babel groups it costs a page (words.said, words.count).

In process (``bench_pages.client_over``) over bench_pages.py's stores: nine screens (two in
Chinese), each asked in rounds with the grouping (``words.said``) and with plain ``%``
formatting in its place, the order alternated each round so a busy machine slows both alike.
Printed per screen: the median CPU time (``time.process_time``) each way and their ratio, then
the total and the load average.

    python bench/bench_counts.py --count 1000 --keep /tmp/b1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import bench_pages

PAGES = [
    "/overview",
    "/memories",
    "/reviews",
    "/findings",
    "/summaries",
    "/activity",
    "/preview?q=deploy+python+tests",
    "/overview?lang=zh_Hans_CN",
    "/memories?lang=zh_Hans_CN",
]
ZH = {"Accept-Language": "zh-CN"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--keep", type=Path, help="build the stores here once and reuse them")
    args = ap.parse_args()

    from dashboard import words

    root = (args.keep or Path(tempfile.mkdtemp())) / str(args.count)
    client = bench_pages.client_over(root, args.count)
    grouped = words.said

    def plain(text, variables, where=None):
        return text % variables if variables else text

    def ask(page):
        path, _, lang = page.partition("?lang=")
        return client.get(path, headers=ZH if lang else {})

    for page in PAGES:
        assert ask(page).status_code == 200, page
    taken: dict[str, dict[str, list[float]]] = {p: {"grouped": [], "plain": []} for p in PAGES}
    for n in range(args.rounds):
        ways = [("grouped", grouped), ("plain", plain)]
        for name, way in ways if n % 2 else ways[::-1]:
            words.said = way
            for page in PAGES:
                started = time.process_time()
                ask(page)
                taken[page][name].append(time.process_time() - started)
    words.said = grouped
    total = {"grouped": 0.0, "plain": 0.0}
    for page in PAGES:
        a, b = (statistics.median(taken[page][k]) for k in ("grouped", "plain"))
        total["grouped"] += a
        total["plain"] += b
        print(f"{page:34s} grouped {a * 1000:7.1f} ms  plain {b * 1000:7.1f} ms  {a / b:5.3f}x")
    a, b = total["grouped"], total["plain"]
    print(f"{'all':34s} grouped {a * 1000:7.1f} ms  plain {b * 1000:7.1f} ms  {a / b:5.3f}x")
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
