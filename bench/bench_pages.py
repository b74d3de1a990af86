"""Pages: every screen and its JSON twin, timed through the running server over HTTP.

The issue's figures (#20): at 1,000 and 10,000 memories every page's p50 under
50 ms, the first page after start under 1 s, peak RSS under 150 MiB; at
100,000 (``--stress``) the first page under 3 s, RSS under 400 MiB, every page
within its budget and the preview at most half of agentao's own time to build
the same two prompt blocks.  Measured in-process those figures mislead (no
HTTP, no JSON encoding, no server start), so this script starts the real
command line, ``python -m dashboard --project P --user-db U --port 0``, with
``PYTHONPATH=<tree>``: ``--tree DIR`` measures any source tree (a checkout of
an older commit gives the "before" figures).

The stores are made by agentao (``SQLiteMemoryStore.open`` creates the schema
and triggers), then filled with raw sqlite3 as bench/load.py does: memories in
both files (80 % project, 20 % user), several types, sources, confidences and
tags, 5 % soft-deleted, an event per memory, review items (pending and
decided) and session summaries.  The text is drawn from a real vocabulary of
about 2,000 English words (the most frequent words of the docstrings and
comments of Python's standard library, with their real frequencies) plus a
few CJK words and file paths, because short template texts make recall and
the near-duplicate join behave unlike real stores.

Per size: the first page after start (process start to the first /overview
answer, and that request's own time), then per URL the first answer and the
p50/p90 round trip over ``--repeat`` requests on one keep-alive connection
(loopback, so this is the server's time plus a local copy), the answer size,
and the server's peak RSS (VmHWM).  agentao's own time for the preview's two
blocks is measured in this process on the same files in the same run.

Bounded: every request has a wall-clock limit (``--limit``, default 120 s); a
page that exceeds it is reported as TIMEOUT and not asked again.

    python bench/bench_pages.py                      # 1,000 and 10,000 memories
    python bench/bench_pages.py --stress             # and 100,000
    python bench/bench_pages.py --tree /tmp/base     # another source tree
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import random
import re
import secrets
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TYPES = ["note"] * 4 + ["project_fact"] * 3 + ["workflow", "decision", "constraint"]
USER_TYPES = ["preference"] * 3 + ["profile", "note"]
SOURCES = ["explicit"] * 6 + ["auto"] * 3 + ["crystallized"]
CONFIDENCE = {"explicit": "explicit_user", "auto": "auto_summary", "crystallized": "inferred"}
TAGS = (
    "tooling infra database workflow testing release deploy logging security api "
    "frontend backend docs ci performance style"
).split()
CJK = ["部署", "数据库", "版本", "缓存", "测试", "日志", "中文回答", "配置", "服务", "超时"]
PATHS = [
    "src/app/main.py",
    "billing/service.py",
    "pyproject.toml",
    "uv.lock",
    "README.md",
    "deploy/k8s.yaml",
    "tests/test_api.py",
    "scripts/deploy.sh",
    "docs/index.md",
]
QUERY = "how do we configure the default timeout when the server returns an error"
SEARCH_WORD = "timeout"  # replaced by a mid-frequency vocabulary word at run time
GOALS = {"small": {"p50": 0.050, "first": 1.0, "rss": 150}, "stress": {"first": 3.0, "rss": 400}}


# -- the stores ---------------------------------------------------------------------------


def vocabulary(size: int = 2000) -> tuple[list[str], list[int]]:
    """The ``size`` most frequent words of the standard library's sources, with counts.

    Real words at their real frequencies (a Zipf curve with a long tail), the
    same on every run of one Python version.
    """
    counts: collections.Counter = collections.Counter()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py")):
        text = path.read_text("utf-8", "replace")
        counts.update(w.lower() for w in re.findall(r"(?<![\w.])[A-Za-z]{3,14}(?![\w(])", text))
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]
    return [w for w, _ in top], [n for _, n in top]


class Writer:
    """Text from the vocabulary: mostly words, some CJK, some file paths."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.words, self.weights = vocabulary()

    def text(self, n: int) -> str:
        rng, out = self.rng, []
        picks = rng.choices(self.words, self.weights, k=n)
        for w in picks:
            r = rng.random()
            out.append(rng.choice(CJK) if r < 0.03 else rng.choice(PATHS) if r < 0.06 else w)
        return " ".join(out)


def build(folder: Path, count: int, seed: int = 7) -> tuple[Path, Path, list[str]]:
    """Project and user stores with ``count`` memories in all; returns (project dir, user db, ids)."""
    from agentao.memory import MemoryGuard, SQLiteMemoryStore

    project_dir = folder / "project"
    project, user = project_dir / ".agentao" / "memory.db", folder / "home" / ".agentao" / "memory.db"
    guard, w = MemoryGuard(), Writer(seed)
    rng, start = w.rng, datetime(2025, 1, 1)
    ids: list[str] = []
    taken: set[str] = set()
    for path, scope, n in ((project, "project", count * 4 // 5), (user, "user", count - count * 4 // 5)):
        path.parent.mkdir(parents=True, exist_ok=True)
        SQLiteMemoryStore.open(path)  # agentao creates the schema and triggers
        rows, events, reviews = [], [], []
        for i in range(n):
            title = w.text(rng.randint(3, 8))
            content = w.text(rng.randint(8, 60))
            tags = rng.sample(TAGS, rng.randint(0, 3))
            source = rng.choice(SOURCES)
            created = start + timedelta(minutes=23 * i + rng.randint(0, 20))
            updated = created + timedelta(days=rng.choice([0, 0, 0, 1, 5, 30]))
            deleted = (updated + timedelta(days=1)).isoformat() if rng.random() < 0.05 else None
            key = guard.normalize_key(f"{title} {i}")  # unique per scope, as agentao requires
            mid = uuid.UUID(int=rng.getrandbits(128)).hex[:8]
            while mid in taken:  # agentao's 8 hex digits collide now and then at 10,000+
                mid = uuid.UUID(int=rng.getrandbits(128)).hex[:8]
            taken.add(mid)
            rows.append(
                (
                    mid,
                    scope,
                    rng.choice(USER_TYPES if scope == "user" else TYPES),
                    key,
                    title,
                    content,
                    json.dumps(tags),
                    json.dumps(guard.extract_keywords(title, tags, content)),
                    source,
                    CONFIDENCE[source],
                    "normal",
                    created.isoformat(),
                    updated.isoformat(),
                    deleted,
                )
            )
            events.append((mid, "create", created.isoformat(), None))
            if deleted is None and len(ids) < 200:
                ids.append(f"{scope}/{mid}")
        for i in range(max(3, n // 50)):
            stamp = (start + timedelta(hours=7 * i)).isoformat()
            reviews.append(
                (
                    uuid.UUID(int=rng.getrandbits(128)).hex[:12],
                    scope,
                    rng.choice(USER_TYPES if scope == "user" else TYPES),
                    f"review_{i}_{scope}",
                    w.text(4),
                    w.text(rng.randint(3, 12)),
                    json.dumps(rng.sample(TAGS, 1)),
                    w.text(20),
                    f"s{i % 9}",
                    rng.randint(1, 4),
                    rng.choice(["pending"] * 3 + ["approved", "rejected"]),
                    stamp,
                    stamp,
                )
            )
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO memories (id, scope, type, key_normalized, title, content, "
            "tags_json, keywords_json, source, confidence, sensitivity, created_at, "
            "updated_at, deleted_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        conn.executemany(
            "INSERT INTO memory_events (memory_id, event_type, timestamp, detail) VALUES (?,?,?,?)", events
        )
        conn.executemany(
            "INSERT INTO memory_review_queue (id, scope, type, key_normalized, title, "
            "content, tags_json, evidence, source_session, occurrences, status, "
            "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            reviews,
        )
        if scope == "project":
            conn.executemany(
                "INSERT INTO session_summaries (id, session_id, summary_text, "
                "tokens_before, messages_summarized, created_at) VALUES (?,?,?,?,?,?)",
                [
                    (
                        uuid.UUID(int=rng.getrandbits(128)).hex[:12],
                        f"s{i % 6}",
                        w.text(80),
                        4000 + 10 * i,
                        12,
                        (start + timedelta(days=i)).isoformat(),
                    )
                    for i in range(40)
                ],
            )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    return project_dir, user, ids


# -- the server ---------------------------------------------------------------------------


class Server:
    """The dashboard's command line on port 0, from ``tree``, with a token of ours."""

    def __init__(
        self,
        tree: Path,
        project: Path,
        user: Path,
        log: Path,
        launch: tuple[str, ...] = ("-m", "dashboard"),
        env: dict | None = None,
    ):
        self.token = secrets.token_urlsafe(32)
        env = {**os.environ, "PYTHONPATH": str(tree), "AGENTAO_DASHBOARD_TOKEN": self.token, **(env or {})}
        self.started = time.perf_counter()
        # The token goes in the environment, which is what --token defaults to (not in ps).
        errors = open(log, "w")  # noqa: SIM115 (the server writes it while it runs)
        self.proc = subprocess.Popen(
            [sys.executable, *launch, "--project", str(project), "--user-db", str(user), "--port", "0"],
            cwd=tree,
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        self.port = None
        deadline = time.time() + 60
        while time.time() < deadline and self.port is None:
            line = self.proc.stdout.readline()
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
            elif not line and self.proc.poll() is not None:
                break
        if self.port is None:
            self.stop()
            sys.exit(f"the server did not start; see {log}")
        self.conn = None
        self.first_byte = float("nan")

    def rss_peak_mib(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024

    def get(self, url: str, limit: float) -> tuple[float, int | str, bytes]:
        """(seconds, status or 'TIMEOUT'/error name, body); never waits past ``limit``.

        ``self.first_byte`` is set to the seconds until the answer's head arrived
        (for a streamed download, when the user sees it start)."""
        t = time.perf_counter()
        deadline = t + limit
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=limit)
            self.conn.request("GET", url, headers={"Authorization": f"token {self.token}"})
            self.conn.sock.settimeout(max(0.01, deadline - time.perf_counter()))
            r = self.conn.getresponse()
            self.first_byte = time.perf_counter() - t
            chunks = []
            while True:
                if self.conn.sock is not None:  # None once a closing answer is read
                    self.conn.sock.settimeout(max(0.01, deadline - time.perf_counter()))
                chunk = r.read(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if time.perf_counter() > deadline:
                    raise TimeoutError
            return time.perf_counter() - t, r.status, b"".join(chunks)
        except TimeoutError:
            self.close()
            return time.perf_counter() - t, "TIMEOUT", b""
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return time.perf_counter() - t, type(exc).__name__, b""

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def stop(self):
        self.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- agentao's own time --------------------------------------------------------------------


def agentao_turn(mgr, retriever, renderer, query):
    """agentao's prompt path for one request: both blocks (as bench/bench_preview.py)."""
    from agentao.prompts.helpers import extract_context_hints

    stable = mgr.get_stable_entries()
    tail = mgr.get_cross_session_tail()
    shown = renderer.fit_stable_records(stable, session_tail=tail)
    block = renderer.render_stable_block(shown, session_tail=tail)
    cands = retriever.recall_candidates(
        query, context_hints=extract_context_hints([]), exclude_ids={r.id for r in shown}
    )
    return block, renderer.render_dynamic_block(cands)


def agentao_times(project: Path, user: Path, repeat: int) -> tuple[list[float], tuple[str, str]]:
    from agentao.memory import MemoryManager, MemoryPromptRenderer, MemoryRetriever, SQLiteMemoryStore

    mgr = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    retriever, renderer = MemoryRetriever(mgr), MemoryPromptRenderer()
    try:  # jieba's dictionary load is paid once per process; not charged to either side
        import jieba

        jieba.setLogLevel(30)
        jieba.initialize()
    except ImportError:
        pass
    blocks = agentao_turn(mgr, retriever, renderer, QUERY)  # warm-up, as the server's first
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        blocks = agentao_turn(mgr, retriever, renderer, QUERY)
        times.append(time.perf_counter() - t)
    return times, blocks


# -- one size -------------------------------------------------------------------------------


def pages(ids: list[str], word: str) -> list[str]:
    from urllib.parse import quote

    detail = f"/memories/{ids[len(ids) // 2]}"
    q = quote(QUERY)
    out = []
    for page in [
        "/overview",
        "/about",
        "/memories",
        f"/memories?q={word}",
        "/memories?tag=deploy",
        detail,
        "/summaries",
        "/reviews",
        f"/preview?q={q}",
        "/findings",
        "/forget",
        "/projects",
    ]:
        path, _, query = page.partition("?")
        out += [page, path + ".json" + ("?" + query if query else "")]
    return out + ["/export/memories.json", "/export/memories.csv"]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def run_size(args, count: int, root: Path) -> dict:
    from agentao.memory import MemoryGuard  # noqa: F401  (import cost outside the timings)

    folder = root / f"{count}"
    t = time.perf_counter()
    project_dir, user, ids = build(folder, count)
    built = time.perf_counter() - t
    words, _ = vocabulary()
    word = words[len(words) // 20]  # a common-but-not-stopword word of the real vocabulary
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    server = Server(args.tree, project_dir, user, folder / "server.log")
    repeat = args.repeat if count < 100_000 else args.stress_repeat
    try:
        first_req, status, _ = server.get("/overview", args.limit)
        first_total = time.perf_counter() - server.started
        rss_first = server.rss_peak_mib()
        results = {}
        for url in pages(ids, word):
            times, sizes, statuses, heads = [], [], [], []
            for _ in range(repeat):
                dt, st, body = server.get(url, args.limit)
                times.append(dt)
                heads.append(server.first_byte)
                sizes.append(len(body))
                statuses.append(st)
                if st == "TIMEOUT":
                    break
            results[url] = {
                "first": times[0],
                "rest": times[1:] or times,
                "size": sizes[-1],
                "head": heads[1:] or heads,
                "status": collections.Counter(statuses),
            }
        preview_json = server.get(f"/preview.json?q={QUERY.replace(' ', '+')}", args.limit)[2]
        rss = server.rss_peak_mib()
    finally:
        server.stop()
    theirs, blocks = agentao_times(project_dir.joinpath(".agentao", "memory.db"), user, repeat)
    same = None
    try:
        ours = json.loads(preview_json)
        same = (ours["stable_block"], ours["context_block"]) == blocks
    except (ValueError, KeyError):
        pass
    return {
        "count": count,
        "built": built,
        "first_total": first_total,
        "first_req": first_req,
        "first_status": status,
        "rss_first": rss_first,
        "rss": rss,
        "pages": results,
        "agentao": theirs,
        "blocks_same": same,
        "word": word,
        "load": (load_before, Path("/proc/loadavg").read_text().split()[:3]),
    }


def report(r: dict, limit: float, budget: float) -> None:
    count, stress = r["count"], r["count"] >= 100_000
    goal = GOALS["stress" if stress else "small"]
    mark = lambda ok: "ok" if ok else "MISS"  # noqa: E731
    print(
        f"\n== {count:,} memories (project {count * 4 // 5:,} + user {count - count * 4 // 5:,}; "
        f"built in {r['built']:.1f} s; load average {' '.join(r['load'][0])} -> "
        f"{' '.join(r['load'][1])})"
    )
    print(
        f"first page after start: {r['first_total']:.2f} s from process start "
        f"(the request itself {r['first_req']:.2f} s, status {r['first_status']})"
        f"   goal < {goal['first']:.0f} s: {mark(r['first_total'] < goal['first'])}"
    )
    print(
        f"peak RSS (VmHWM): {r['rss']:.0f} MiB ({r['rss_first']:.0f} MiB after the first page)"
        f"   goal < {goal['rss']} MiB: {mark(r['rss'] < goal['rss'])}"
    )
    print(
        f"{'page':<44}{'first ms':>9}{'p50 ms':>9}{'p90 ms':>9}{'size KiB':>10}{'head p50':>9}  status  goal"
    )
    for url, p in r["pages"].items():
        p50, p90 = pct(p["rest"], 0.5), pct(p["rest"], 0.9)
        statuses = ",".join(f"{s}" + (f"x{n}" if n > 1 else "") for s, n in p["status"].items())
        timed_out = "TIMEOUT" in p["status"]
        if stress:
            ok = not timed_out and max(p["first"], p90) < budget
            verdict = f"< {budget:g} s: {mark(ok)}"
        else:
            verdict = f"p50 < 50 ms: {mark(not timed_out and p50 < goal['p50'])}"
        shown = url if len(url) <= 43 else url[:40] + "..."
        print(
            f"{shown:<44}{p['first'] * 1000:9.0f}{p50 * 1000:9.0f}{p90 * 1000:9.0f}"
            f"{p['size'] / 1024:10.0f}{pct(p['head'], 0.5) * 1000:9.0f}  {statuses:<7} {verdict}"
        )
    preview = next(p for u, p in r["pages"].items() if u.startswith("/preview.json"))
    ours, theirs = pct(preview["rest"], 0.5), statistics.median(r["agentao"])
    print(
        f"preview twin p50 {ours * 1000:.0f} ms vs agentao's own two blocks "
        f"{theirs * 1000:.0f} ms (median of {len(r['agentao'])}): ratio {ours / theirs:.2f}"
        + (f"   goal <= 0.5: {mark(ours / theirs <= 0.5)}" if stress else "")
        + f"; blocks equal to agentao's: {r['blocks_same']}"
    )
    print(
        f"(search word {r['word']!r}; per-request limit {limit:g} s; times are round trips on "
        f"loopback, one keep-alive connection; 'head' = until the answer's status and headers "
        f"arrived, when a streamed download starts)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT, help="source tree to run (default: this repo)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    ap.add_argument("--stress", action="store_true", help="add 100,000 memories")
    ap.add_argument("--repeat", type=int, default=9, help="requests per page (1k, 10k)")
    ap.add_argument("--stress-repeat", type=int, default=3, help="requests per page at 100k")
    ap.add_argument("--limit", type=float, default=120, help="wall-clock limit per request, s")
    ap.add_argument(
        "--budget", type=float, default=5.0, help="stress budget per page, s (first answer and p90)"
    )
    ap.add_argument("--label", default="", help="what the tree is (e.g. 'before, ed2e297')")
    ap.add_argument("--dir", type=Path, help="where the stores go (default: a temp folder)")
    args = ap.parse_args()
    args.tree = args.tree.resolve()
    if not (args.tree / "dashboard" / "__main__.py").exists():
        sys.exit(f"{args.tree} has no dashboard/__main__.py")
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-pages-"))
    sizes = args.sizes + ([100_000] if args.stress else [])
    commit = (
        subprocess.run(
            ["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "not a git tree"
    )
    commit = args.label or commit
    print(
        f"bench_pages: tree {args.tree} ({commit}); {os.cpu_count()} cores; "
        f"python {sys.version.split()[0]}; {datetime.now():%Y-%m-%d %H:%M}; stores in {root}"
    )
    for count in sizes:
        report(run_size(args, count, root), args.limit, args.budget)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
