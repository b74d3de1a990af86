"""Two source trees side by side through the running server, requests interleaved.

On a shared machine the load moves between two runs of bench_pages.py by more
than a change saves; here both servers (``python -m dashboard``, as
bench_pages starts it) serve the same store made by agentao (bench_pages.build)
and each screen is asked of one then the other, alternating which goes first,
so both see the same load.  Printed per screen: each tree's p50 and their ratio.

    git archive <commit> | tar -x -C /tmp/before                       # the tree to compare with
    python bench/bench_ab.py --before /tmp/before --after .           # 1,000 memories
    python bench/bench_ab.py --before /tmp/before --after . --count 10000 --rounds 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_pages as bp  # noqa: E402

SCREENS = ["/overview", "/about", "/reviews", "/findings", "/activity", "/memories"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="source tree measured first")
    ap.add_argument("--after", type=Path, required=True, help="source tree measured against it")
    ap.add_argument("--count", type=int, default=1_000, help="memories in the store")
    ap.add_argument("--rounds", type=int, default=20, help="rounds after a warm-up one (p50 of these)")
    ap.add_argument("--screens", nargs="+", default=SCREENS)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    project, user, _ids = bp.build(folder, args.count)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    servers = {k: bp.Server(tree, project, user, folder / f"{k}.log") for k, tree in trees.items()}
    times: dict[tuple[str, str], list[float]] = {(k, s): [] for k in servers for s in args.screens}
    try:
        for r in range(args.rounds + 1):
            for screen in args.screens:
                order = list(servers.items())
                for k, server in order if r % 2 else reversed(order):
                    dt, status, _body = server.get(screen, 120)
                    if status != 200:
                        sys.exit(f"{k} answered {screen} with {status}; see {folder / (k + '.log')}")
                    if r:
                        times[(k, screen)].append(dt)
    finally:
        for server in servers.values():
            server.stop()
    print(f"bench_ab: {args.count:,} memories, p50 of {args.rounds} interleaved rounds")
    print(f"before {trees['before']}\nafter  {trees['after']}")
    for screen in args.screens:
        b, a = (statistics.median(times[(k, screen)]) for k in ("before", "after"))
        print(f"{screen:<14} before {b * 1000:7.1f} ms   after {a * 1000:7.1f} ms   after/before {a / b:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
