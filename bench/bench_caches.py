"""Caches: each process-wide cache's pages, timed through the running server with and without it.

For 1,000 and 10,000 memories (stores made as bench/bench_pages.py makes them),
a server is started with every cache (``none`` switched off), one with each
cache switched off alone (bench/without.py, which edits no source), and one
with all of them off, side by side: each request goes to every server in turn,
so a busy machine slows every variant alike.  Per server: the p50 of
``--repeat`` requests per page (one keep-alive connection, after one warm-up
request), the static stylesheet
as the floor, and agentao's own prompt path for one message over the same
store (both blocks, as bench_pages.agentao_turn), measured in this process in
the same run.  Printed per page: p50 in ms and its ratio to agentao's prompt
path, against the budgets of the performance issue: at 1,000 memories every
screen <= 1.0x agentao; at 10,000 every screen <= 0.1x, the preview <= 0.7x.

    python bench/bench_caches.py                        # 1,000 and 10,000
    python bench/bench_caches.py --sizes 1000 --switch none snapshot
    python bench/bench_caches.py --switch none gates --pages /findings /overview
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pages import QUERY, ROOT, Server, agentao_times, build, vocabulary  # noqa: E402
from without import CACHES  # noqa: E402

BUDGET = {1_000: (1.0, 1.0), 10_000: (0.1, 0.7)}  # (every screen, the preview) x agentao


def urls(ids: list[str], word: str) -> list[str]:
    q = quote(QUERY)
    return [
        "/overview",
        "/memories",
        f"/memories?q={word}",
        f"/memories?q=%25{word[:3]}%25_",
        f"/memories/{ids[len(ids) // 2]}",
        "/summaries",
        "/reviews",
        f"/preview?q={q}",
        f"/preview.json?q={q}",
        "/preview",
        "/findings",
        "/findings.json?rescan=1",
        "/activity",
        "/activity?changed=2025-03-01",
        "/forget/residue/project",
        "/about",
    ]


def run(
    tree: Path,
    project: Path,
    user: Path,
    folder: Path,
    switches: list[str],
    pages: list[str],
    repeat: int,
    limit: float,
    other: Path | None = None,
) -> dict:
    """One server per switch, all at once; each request goes to every server in turn, so
    a busy machine slows every variant alike.  switch -> url -> (p50 s, last status)."""
    servers = {}
    try:
        for switch in switches:
            servers[switch] = Server(
                other if switch == "other" else tree,
                project,
                user,
                folder / f"{switch}.log",
                launch=(str(ROOT / "bench" / "without.py"), "none" if switch == "other" else switch, "--"),
            )
        out: dict = {switch: {} for switch in switches}
        for url in ["/static/app.css", *pages]:
            times: dict = {switch: [] for switch in switches}
            status: dict = {}
            for server in servers.values():
                server.get(url, limit)  # warm-up: the first request after a change pays for it
            for _ in range(repeat):
                for switch, server in servers.items():
                    dt, status[switch], body = server.get(url, limit)
                    times[switch].append(dt)
                    if b'"complete": false' in body or b'"complete":false' in body:
                        status[switch] = "partial"  # a bounded scan that ran out of time
            for switch in switches:
                out[switch][url] = (statistics.median(times[switch]), status[switch])
        return out
    finally:
        for server in servers.values():
            server.stop()


def agentao_search(project: Path, user: Path, queries: list[str], repeat: int) -> dict:
    from agentao.memory import MemoryManager, SQLiteMemoryStore

    mgr = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    out = {}
    for q in queries:
        times = []
        for _ in range(repeat + 1):
            t = time.perf_counter()
            mgr.search(q)
            times.append(time.perf_counter() - t)
        out[q] = statistics.median(times[1:])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    ap.add_argument(
        "--switch",
        nargs="+",
        default=["none", *CACHES, "all"],
        help="caches to switch off, one run each ('a,b' switches off two at once)",
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--other",
        type=Path,
        help="another source tree, run beside the others as "
        "'other' with every cache on (e.g. a checkout from before a change)",
    )
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--pages", nargs="+", help="only the pages whose address starts with one of these")
    args = ap.parse_args()
    args.tree = args.tree.resolve()
    root = Path(tempfile.mkdtemp(prefix="bench-caches-"))
    commit = subprocess.run(
        ["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"bench_caches: tree {args.tree} ({commit}); python {sys.version.split()[0]}; "
        f"{datetime.now():%Y-%m-%d %H:%M}; load {Path('/proc/loadavg').read_text().split()[:3]}"
    )
    words, _ = vocabulary()
    word = words[len(words) // 20]
    for count in args.sizes:
        folder = root / str(count)
        project, user, ids = build(folder, count)
        pages = [u for u in urls(ids, word) if not args.pages or u.startswith(tuple(args.pages))]
        db = project / ".agentao" / "memory.db"
        before = agentao_times(db, user, args.repeat)[0]
        searched = agentao_search(
            project / ".agentao" / "memory.db", user, [word, f"%{word[:3]}%_"], args.repeat
        )
        every, preview = BUDGET.get(count, (0.1, 0.7))
        t = time.perf_counter()
        switches = args.switch + (["other"] if args.other else [])
        runs = run(args.tree, project, user, folder, switches, pages, args.repeat, args.limit, args.other)
        print(f"  [{count}: {time.perf_counter() - t:.0f} s]", file=sys.stderr, flush=True)
        after = agentao_times(db, user, args.repeat)[0]  # again: the machine's load drifts
        theirs = statistics.median(before + after)
        print(
            f"\n== {count:,} memories; agentao's prompt path for one message: {theirs * 1000:.1f} ms "
            f"(median of {statistics.median(before) * 1000:.0f} ms before the pages and "
            f"{statistics.median(after) * 1000:.0f} ms after); "
            f"budget {every:g}x (screens), {preview:g}x (preview)"
        )
        print(f"{'p50 ms (x agentao) without ->':<34}" + "".join(f"{s[:11]:>13}" for s in runs))
        for url in ["/static/app.css", *pages]:
            limit = preview if url.startswith("/preview") else every
            cells = []
            for found in runs.values():
                dt, status = found[url]
                ratio = dt / theirs
                mark = "" if url.startswith("/static") or ratio <= limit else "!"
                cells.append(
                    f"{dt * 1000:7.1f}" + (f"({ratio:.2f}{mark})" if status == 200 else f"[{status}]")
                )
            shown = url if len(url) <= 33 else url[:30] + "..."
            print(f"{shown:<34}" + "".join(f"{c:>13}" for c in cells))
        print(
            "agentao's own /memory search (SQL LIKE on the files: what /memories?q= costs "
            "without store/search.py and store/like.py): "
            + ", ".join(f"{q!r} {dt * 1000:.1f} ms ({dt / theirs:.2f}x)" for q, dt in searched.items())
        )
        print("('!': over the budget; 'none': every cache on; a name: that cache off; 'all': all off)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
