"""/reviews against agentao's prompt path, in one run, over bench_pages' stores.

Builds bench_pages' project + user stores (``--size`` memories, review items among
them), starts the real command line (waitress) and asks, in rounds (one warm-up,
then ``--repeat``), for the static stylesheet, ``/reviews`` (the first page: 15 cards)
and ``/reviews?page=2``, then runs agentao's prompt path for one message in this
process.  Prints each p50 and its ratio to agentao's (issue #30: <= 0.1x at
10,000, <= 1.0x at 1,000, HTML <= 100 KB), and the CPU time the server spent per
request (``/proc/<pid>/stat``) against the CPU time of agentao's prompt path: on a
loaded machine, where wall-clock ratios swing with the scheduler, the steadier figure.  ``--profile`` instead profiles warm
GET /reviews requests through the Flask test client (cProfile, by cumulative time).

    python bench/bench_reviews_page.py                     # 10,000 memories
    python bench/bench_reviews_page.py --size 1000
    python bench/bench_reviews_page.py --profile           # where the time goes
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pages import QUERY, THREE, Server, agentao_turn, build  # noqa: E402

URLS = ("/reviews", "/reviews?page=2")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _agentao(project: Path, user: Path):
    from agentao.memory import MemoryManager, MemoryPromptRenderer, MemoryRetriever, SQLiteMemoryStore

    mgr = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    try:  # jieba's dictionary load is paid once per process; not charged to either side
        import jieba

        jieba.setLogLevel(30)
        jieba.initialize()
    except ImportError:
        pass
    return mgr, MemoryRetriever(mgr), MemoryPromptRenderer()


def profile(project_dir: Path, user: Path, repeat: int) -> None:
    from dashboard import create_app

    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user, "AUTH_TOKEN": False, "TESTING": True})
    client = app.test_client()
    client.get("/reviews")  # templates compiled, the snapshot read and held
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeat):
        assert client.get("/reviews").status_code == 200
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(45)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--agentao-query", choices=["long", "three"], default="three")
    ap.add_argument("--dir", type=Path, help="where the stores go (kept; reused when there)")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-reviews-"))
    project_dir = root / "project"
    user = root / "home" / ".agentao" / "memory.db"
    if not user.exists():
        project_dir, user, _ids = build(root, args.size)
    project = project_dir / ".agentao" / "memory.db"
    if args.profile:
        profile(project_dir, user, args.repeat)
        return 0
    mgr, retriever, renderer = _agentao(project, user)
    query = QUERY if args.agentao_query == "long" else THREE
    root_tree = Path(__file__).resolve().parents[1]
    load = Path("/proc/loadavg").read_text().split()[:3]
    server = Server(root_tree, project_dir, user, root / "server.log")
    times: dict[str, list[float]] = {u: [] for u in URLS}
    cpu: dict[str, list[float]] = {u: [] for u in URLS}
    sizes: dict[str, int] = {}
    static, theirs, their_cpu = [], [], []
    try:
        for _round in range(args.repeat + 1):
            static.append(server.get("/static/app.css", 120)[0])
            for url in URLS:
                used = cpu_seconds(server.proc.pid)
                dt, status, body = server.get(url, 120)
                cpu[url].append(cpu_seconds(server.proc.pid) - used)
                assert status == 200, (url, status)
                times[url].append(dt)
                sizes[url] = len(body)
            t, used = time.perf_counter(), time.process_time()
            agentao_turn(mgr, retriever, renderer, query)
            theirs.append(time.perf_counter() - t)
            their_cpu.append(time.process_time() - used)
    finally:
        server.stop()
    floor, agent = statistics.median(static[1:]), statistics.median(theirs[1:])
    agent_cpu = statistics.fmean(their_cpu[1:])
    print(
        f"{args.size:,} memories; load average {' '.join(load)} -> "
        f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}; static p50 {floor * 1000:.1f} ms; "
        f"agentao's prompt path p50 {agent * 1000:.1f} ms, CPU {agent_cpu * 1000:.1f} ms a turn "
        f"(p50 of {args.repeat} after a warm-up)"
    )
    for url in URLS:
        p50, used = statistics.median(times[url][1:]), statistics.fmean(cpu[url][1:])
        print(
            f"{url:<20}{p50 * 1000:8.1f} ms {p50 / floor:8.1f}x static {p50 / agent:6.2f}x agentao "
            f"{sizes[url] / 1024:7.1f} KB   server CPU {used * 1000:6.1f} ms a request, "
            f"{used / agent_cpu:5.2f}x agentao's"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
