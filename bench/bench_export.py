"""Export downloads and the overview pictures on a large store.

Builds a project store with N memories (default 10,000; 10% soft-deleted) and a
user store with N/10, then times through the app (Flask test client, no
network): each download format with and without include_invisible, and the
overview page with its composition and timeline pictures.  Prints the median
time, the response size and the throughput.

    python bench/bench_export.py [--memories 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memories import build  # noqa: E402

from dashboard import create_app  # noqa: E402


def timed(client, url: str, runs: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        r = client.get(url)
        size = len(r.data)
        times.append(time.perf_counter() - start)
        assert r.status_code == 200, (url, r.status_code)
    return statistics.median(times), size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-export-"))
    project = root / "project"
    (project / ".agentao").mkdir(parents=True)
    user_db = root / "home" / "memory.db"
    user_db.parent.mkdir(parents=True)
    build(project / ".agentao" / "memory.db", args.memories, "project", 1)
    build(user_db, max(1, args.memories // 10), "user", 2)
    app = create_app({"PROJECT_DIR": project, "USER_DB": user_db, "AUTH_TOKEN": False, "TESTING": True})
    client = app.test_client()
    client.environ_base["HTTP_SEC_FETCH_SITE"] = "same-origin"
    print(
        f"export bench: {args.memories} project + {max(1, args.memories // 10)} user memories, "
        f"median of {args.runs} runs"
    )
    for url in ("/overview", "/export"):
        seconds, size = timed(client, url, args.runs)
        print(f"  {url:<45} {seconds * 1000:8.1f} ms  {size / 1024:9.1f} KiB")
    for invisible in ("", "?include_invisible=1"):
        for fmt in ("json", "csv", "md"):
            url = f"/export/memories.{fmt}{invisible}"
            seconds, size = timed(client, url, args.runs)
            print(
                f"  {url:<45} {seconds * 1000:8.1f} ms  {size / 1024 / 1024:7.2f} MiB"
                f"  {size / 1024 / 1024 / seconds:6.1f} MiB/s"
            )


if __name__ == "__main__":
    main()
