"""The dry run of "forget what is about me", timed: the page and its twin at N memories.

The stores come from ``bench_pages.build`` (agentao's schema, raw sqlite3 rows: 80 % project,
20 % user, 5 % soft-deleted, reviews and summaries).  The dry run reads who the person is from
their own memories, every project row's text once, and masks each listed sentence; it prints
the time of each answer (median of ``--repeat``, the findings scan reused after the first) and
the twin's size.

    python bench/bench_forget_about.py                       # 1,000 and 10,000 memories
    python bench/bench_forget_about.py --tree /path/to/other/checkout   # the same, another tree

``--first BEFORE_TREE`` measures instead what #30 asks of the first request: the real server
(``bench_pages.Server``) started on a ``--root`` store (built there once, then reused), asked for
the page the moment it listens (its warm-up still reading the stores), then ``--repeat`` times
for the page and its twin; the server's CPU time per request (``/proc/<pid>/stat``: a busy
machine stretches the wall clock, not that), the wall time, the sizes and whether the dry run
was whole.  Starts alternate between BEFORE_TREE and ``--tree``, ``--rounds`` each, and the
ratios of their medians are printed (after / before).

    python bench/bench_forget_about.py --first /tmp/before --root /tmp/about-100k --sizes 100000
"""

from __future__ import annotations

import argparse
import os
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
    ap.add_argument("--first", type=Path, help="a source tree to compare the first request with")
    ap.add_argument("--root", type=Path, help="where the --first store is built (kept, reused)")
    ap.add_argument("--rounds", type=int, default=3, help="server starts per tree (--first)")
    args = ap.parse_args()
    if args.first is not None:
        return first(args)
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first(args) -> int:
    sys.path[:0] = [str(HERE)]
    from bench_pages import Server, build

    count, root = args.sizes[-1], args.root or Path(tempfile.mkdtemp(prefix="bench-forget-about-"))
    if not (root / "project").exists():
        build(root, count)
    project, user = root / "project", root / "home" / ".agentao" / "memory.db"
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(
        f"{count:,} memories in {root}; load average {load}; 2 cores shared: CPU is the figure, wall beside it"
    )
    trees = {"before": args.first.resolve(), "after": args.tree.resolve()}
    seen: dict[str, dict[str, list[float]]] = {name: {} for name in trees}

    def note(name: str, what: str, value: float) -> None:
        seen[name].setdefault(what, []).append(value)

    for n in range(args.rounds):
        for name, tree in trees.items():
            server = Server(tree, project, user, Path(tempfile.gettempdir()) / "bench-forget-about.log")
            try:
                pid = server.proc.pid
                c0 = cpu_seconds(pid)
                wall, status, body = server.get("/forget/about", 120)
                note(name, "first cpu", cpu_seconds(pid) - c0)
                note(name, "first wall", wall)
                whole = b'data-field="cut"' not in body
                print(
                    f"  {name:<6} start {n + 1}: first /forget/about {wall * 1000:6.0f} ms wall, server CPU"
                    f" {(cpu_seconds(pid) - c0) * 1000:5.0f} ms (its warm-up included), {status},"
                    f" {len(body):,} bytes, {'whole' if whole else 'cut short: it says so'}"
                )
                for url in ("/forget/about", "/forget/about.json"):
                    for _ in range(args.repeat):
                        c0 = cpu_seconds(pid)
                        wall, status, body = server.get(url, 120)
                        note(name, f"{url} cpu", cpu_seconds(pid) - c0)
                        note(name, f"{url} wall", wall)
                        note(name, f"{url} bytes", len(body))
            finally:
                server.stop()
    print(
        f"medians of {args.rounds} starts (then {args.repeat} requests each):  before    after   after/before"
    )
    for what in seen["before"]:
        b, a = statistics.median(seen["before"][what]), statistics.median(seen["after"][what])
        unit, k = ("bytes", 1) if what.endswith("bytes") else ("ms", 1000)
        print(f"  {what:<28} {b * k:>10,.0f} {a * k:>10,.0f} {unit:<5}  {a / b if b else float('nan'):6.2f}x")
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
