"""Resident memory screen by screen: which screen costs the server what (issue #30).

bench/bench_pages.py's walk (its stores, its screens, its ``Server``: the real command line
over a store built by agentao) with the server's VmRSS read after every screen, for one or
more source trees started one after the other over the same store, ``--runs`` times each
(alternated, so a busy machine weighs on every tree alike).  Printed per tree: RSS after
start-up, then after each screen of the first round (and what it added), then after the
last round, beside an agentao process over the same store and tokenizer (bench_pages'
``agentao_rss``) and the ratio, as bench_pages prints it.

    python bench/bench_rss.py                                 # this tree, 1,000 memories
    python bench/bench_rss.py --tree /tmp/before --tree .     # before and after, alternated
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_pages import Server, agentao_rss, build, screens, vocabulary  # noqa: E402


def walk(tree: Path, project: Path, user: Path, ids: list[str], word: str, rounds: int, log: Path):
    """(RSS after start-up, [(screen, RSS after it)] of round one, RSS after the last round)."""
    server = Server(tree, project, user, log)
    try:
        time.sleep(1.0)  # the start-up read of the stores (cli.warm_up) is done by then
        start, first = server.rss_mib(), []
        for n in range(rounds):
            for label, url, form in screens(ids, word):
                _dt, status, _body = server.get(url, 120, form)
                if status != 200:
                    sys.exit(f"{tree}: {label} answered {status}")
                if n == 0:
                    first.append((label, server.rss_mib()))
        return start, first, server.rss_mib()
    finally:
        server.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, action="append", help="source tree (repeat; default this repo)")
    ap.add_argument("--count", type=int, default=1_000, help="memories in the store")
    ap.add_argument("--rounds", type=int, default=6, help="walks per server (bench_pages: 1 + --repeat 5)")
    ap.add_argument("--runs", type=int, default=2, help="servers started per tree, alternated")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.tree or [Path(__file__).resolve().parents[1]]]
    folder = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    project, user, ids = build(folder, args.count)
    words, _ = vocabulary()
    word = words[len(words) // 20]  # as bench_pages
    load = Path("/proc/loadavg").read_text().split()[:3]
    results: dict[Path, list] = {t: [] for t in trees}
    for _run in range(args.runs):
        for tree in trees:
            results[tree].append(walk(tree, project, user, ids, word, args.rounds, folder / "server.log"))
    agent, _peak = agentao_rss(project / ".agentao" / "memory.db", user)
    print(
        f"bench_rss: {args.count:,} memories, {args.rounds} walks of every screen per server, "
        f"{args.runs} servers per tree (alternated); load average {' '.join(load)} -> "
        f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}"
    )
    for tree, runs in results.items():
        print(f"\n== {tree}: RSS MiB after each screen of the first walk (median of {len(runs)} servers)")
        start = statistics.median(r[0] for r in runs)
        print(f"{'start-up':<46}{start:8.1f}")
        before = start
        for i, (label, _rss) in enumerate(runs[0][1]):
            now = statistics.median(r[1][i][1] for r in runs)
            shown = label if len(label) <= 45 else label[:42] + "..."
            print(f"{shown:<46}{now:8.1f}{now - before:+8.1f}")
            before = now
        last = statistics.median(r[2] for r in runs)
        print(
            f"after {args.rounds} walks: {last:.1f} MiB (each server: {', '.join(f'{r[2]:.1f}' for r in runs)}); "
            f"an agentao process over the same store and tokenizer {agent:.1f} MiB: {last / agent:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
