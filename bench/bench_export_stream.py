"""Export of the largest store agentao allows, through the running server (#19 item 3).

50,000 memories of 4,000 characters (raw SQL into agentao's schema: the
largest content agentao accepts), downloaded as CSV and JSON from the real
command line.  Per download: the time to the first byte, the total time, the
size, whether the file is complete (parsed back, one row per memory), and,
while it runs, the round trips of another client asking ``/overview.json``
every 0.2 s (a download that holds the GIL shows up there).  Then the server's
peak RSS.  Before the export was streamed this was 150 s for the CSV.

    python bench/bench_export_stream.py [--rows 50000] [--chars 4000] [--tree DIR]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pages import ROOT, Server, Writer, pct  # noqa: E402


def build(folder: Path, n: int, chars: int) -> tuple[Path, Path]:
    from agentao.memory import MemoryGuard, SQLiteMemoryStore

    project = folder / "project" / ".agentao" / "memory.db"
    user = folder / "home" / ".agentao" / "memory.db"
    guard, w = MemoryGuard(), Writer(3)
    texts = []
    for _ in range(200):
        t = ""
        while len(t) < chars:
            t += w.text(40) + " "
        texts.append(t[:chars])
    for path, rows in ((project, n), (user, 10)):
        path.parent.mkdir(parents=True, exist_ok=True)
        SQLiteMemoryStore.open(path)
        data = []
        for i in range(rows):
            title = f"{w.text(4)} {i}"
            content = f"{i} " + texts[i % len(texts)][: chars - len(str(i)) - 1]
            stamp = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00"
            data.append(
                (
                    f"{i:08x}",
                    "project" if path == project else "user",
                    "note",
                    guard.normalize_key(title),
                    title,
                    content,
                    json.dumps(["big"]),
                    json.dumps(guard.extract_keywords(title, ["big"], content[:200])),
                    stamp,
                    stamp,
                )
            )
        with sqlite3.connect(path) as conn:
            conn.executemany(
                "INSERT INTO memories (id, scope, type, key_normalized, title, "
                "content, tags_json, keywords_json, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                data,
            )
        sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    return project.parent.parent, user


def download(server: Server, url: str, limit: float) -> dict:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=limit)
    t = time.perf_counter()
    conn.request("GET", url, headers={"Authorization": f"token {server.token}"})
    r = conn.getresponse()
    first = None
    chunks = []
    while time.perf_counter() - t < limit:
        chunk = r.read(1 << 16)
        if first is None:
            first = time.perf_counter() - t
        if not chunk:
            break
        chunks.append(chunk)
    total = time.perf_counter() - t
    conn.close()
    body = b"".join(chunks)
    return {"status": r.status, "first": first, "total": total, "body": body, "cut": total >= limit}


def count_records(fmt: str, body: bytes) -> tuple[int, str]:
    text = body.decode("utf-8", "replace")
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline="")))
        notes = [r["content"] for r in rows if r["section"] in ("incomplete", "unreadable_store")]
        return sum(r["section"] == "memory" for r in rows), "; ".join(notes)
    doc = json.loads(text)
    return (sum(len(g["memories"]) for g in doc["groups"]), "; ".join(doc.get("incomplete", [])))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--chars", type=int, default=4_000)
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--label", default="")
    ap.add_argument("--limit", type=float, default=300, help="wall-clock limit per download, s")
    ap.add_argument("--dir", type=Path)
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-export-stream-"))
    t = time.perf_counter()
    project, user = (
        build(root, args.rows, args.chars)
        if not (root / "project").exists()
        else (root / "project", root / "home" / ".agentao" / "memory.db")
    )
    print(
        f"export stream: tree {args.tree} {args.label}; {args.rows:,} project memories of "
        f"{args.chars:,} characters (+10 user), built in {time.perf_counter() - t:.0f} s; "
        f"load {Path('/proc/loadavg').read_text().split()[:3]}"
    )
    server = Server(args.tree.resolve(), project, user, root / "server.log")
    try:
        server.get("/overview", args.limit)
        print(
            f"  after the first page: peak RSS {server.rss_peak_mib():.0f} MiB (the server's own "
            "copy of the stores, if the tree has one)"
        )
        for fmt in ("csv", "json"):
            other, done = [], threading.Event()

            def poke(done=done, other=other):
                s = Server.__new__(Server)
                s.port, s.token, s.conn = server.port, server.token, None
                while not done.is_set():
                    other.append(s.get("/overview.json", 60)[0])
                    time.sleep(0.2)
                s.close()

            poker = threading.Thread(target=poke)
            poker.start()
            got = download(server, f"/export/memories.{fmt}", args.limit)
            done.set()
            poker.join()
            n, notes = count_records(fmt, got["body"]) if not got["cut"] else (0, "")
            print(
                f"  /export/memories.{fmt:<5} status {got['status']}  first byte "
                f"{got['first']:.2f} s  total {got['total']:.1f} s  "
                f"{len(got['body']) / 2**20:.0f} MiB  memories {n:,}/{args.rows + 10:,}"
                + ("  CUT BY THE LIMIT" if got["cut"] else "")
                + (f"  notes: {notes}" if notes else "")
            )
            print(
                f"      meanwhile /overview.json x{len(other)}: p50 {pct(other, 0.5) * 1000:.0f} ms"
                f"  max {max(other, default=0) * 1000:.0f} ms; peak RSS now "
                f"{server.rss_peak_mib():.0f} MiB"
            )
        print(f"  server peak RSS (VmHWM) {server.rss_peak_mib():.0f} MiB")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
