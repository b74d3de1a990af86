"""Pages: every screen through the running server, against agentao's own prompt path.

For 1,000 and 10,000 memories (``--sizes``), stores made by agentao
(``SQLiteMemoryStore.open`` creates the schema and triggers, then rows are
filled with raw sqlite3 as bench/load.py does: both files, several types,
sources, confidences and tags, 5 % soft-deleted, events, review items and
session summaries; the text drawn from a real vocabulary — the most frequent
words of Python's standard library with their frequencies — plus CJK words
and file paths), this script starts the real command line,
``python -m dashboard --project P --user-db U --port 0`` (waitress, as a
person starts it; ``PYTHONPATH=<tree>``: ``--tree DIR`` measures any source
tree, so a checkout of an older commit gives the "before" figures).

Then, in rounds (one warm-up round, then ``--repeat``), each round asks for the
static stylesheet, every screen once (one keep-alive connection, loopback) and
runs agentao's prompt path for one message in this process (``agentao_turn``:
both blocks, as an agent turn builds them), so a busy machine slows every
side alike.  Printed per screen: the p50, its ratio to the static file (the
floor) and to agentao's prompt path over the same store, and the answer's
size.  Then the server's resident memory (VmRSS) after every screen, beside
an agentao process that opened the same store with the same tokenizer (jieba's
dictionary loaded on both sides when jieba can be imported) and built the
prompt once.  The issue's goals (#30): at 1,000 memories every screen's HTML
<= 100 KB and p50 <= 1.0x agentao; at 10,000 the preview <= 0.7x and every
other screen <= 0.1x; RSS <= 1.2x agentao's; at 100,000 every request (the
first, uncounted in the p50, included) within 5 s.  The POST of a 4,000-character
Chinese message is compared with agentao's path for that same message (run in
the same rounds), every other screen with the three-word one.

Bounded: every request has a wall-clock limit (``--limit``, default 120 s); a
screen that exceeds it is reported as TIMEOUT and not asked again.

    python bench/bench_pages.py                      # 1,000 and 10,000 memories
    python bench/bench_pages.py --sizes 1000         # 1,000 only
    python bench/bench_pages.py --tree /tmp/before   # another source tree
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


def client_over(root: Path, count: int):
    """A Flask test client over ``build``'s stores in ``root`` (built there first if missing), as a
    page of the dashboard asks (same-origin, no access token)."""
    import dashboard

    if not (root / "project").exists():
        build(root, count)
    app = dashboard.create_app(
        {
            "PROJECT_DIR": root / "project",
            "USER_DB": root / "home" / ".agentao" / "memory.db",
            "TESTING": True,
            "AUTH_TOKEN": False,
        }
    )
    client = app.test_client()
    client.environ_base["HTTP_SEC_FETCH_SITE"] = "same-origin"
    return client


# -- the server ---------------------------------------------------------------------------


def rss_mib(pid: int | str, field: str = "VmRSS") -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(field + r":\s+(\d+) kB", status).group(1)) / 1024


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
        return rss_mib(self.proc.pid, "VmHWM")

    def rss_mib(self) -> float:
        return rss_mib(self.proc.pid, "VmRSS")

    def get(self, url: str, limit: float, form: bytes | None = None) -> tuple[float, int | str, bytes]:
        """(seconds, status or 'TIMEOUT'/error name, body); never waits past ``limit``.
        With ``form`` (urlencoded) the request is a POST of it, as the page's form sends it.

        ``self.first_byte`` is set to the seconds until the answer's head arrived
        (for a streamed download, when the user sees it start)."""
        t = time.perf_counter()
        deadline = t + limit
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=limit)
            headers = {"Authorization": f"token {self.token}"}
            if form is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            self.conn.request("GET" if form is None else "POST", url, body=form, headers=headers)
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


# -- agentao's own process ------------------------------------------------------------------

AGENT = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from bench_pages import QUERY, agentao_turn, rss_mib
from agentao.memory import MemoryManager, MemoryPromptRenderer, MemoryRetriever, SQLiteMemoryStore
try:
    import jieba
    jieba.setLogLevel(30)
    jieba.initialize()
except ImportError:
    pass
mgr = MemoryManager(SQLiteMemoryStore.open(Path(sys.argv[1])), SQLiteMemoryStore.open(Path(sys.argv[2])))
agentao_turn(mgr, MemoryRetriever(mgr), MemoryPromptRenderer(), QUERY)
print(rss_mib("self"), rss_mib("self", "VmHWM"))  # noqa
"""


def agentao_rss(project: Path, user: Path) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MiB of a fresh agentao process that built one prompt over the store."""
    out = subprocess.run(
        [sys.executable, "-c", AGENT, str(project), str(user), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


# -- one size -------------------------------------------------------------------------------

THREE = "default timeout error"  # a three-word message, words of the store's vocabulary
LONG_CHINESE = ("请问部署服务的时候数据库缓存的超时配置是多少，日志在哪里？" * 150)[:4000]


def screens(ids: list[str], word: str) -> list[tuple[str, str, bytes | None]]:
    """(label, URL, POSTed form or None): every screen a person opens, and the preview's twin."""
    from urllib.parse import quote, urlencode

    three = quote(THREE)
    gets = [
        "/overview",
        "/about",
        "/memories",
        f"/memories?q={word}",
        "/memories?tag=deploy",
        f"/memories/{ids[len(ids) // 2]}",
        "/summaries",
        "/reviews",
        "/preview",
        f"/preview?q={three}",
        f"/preview.json?q={three}",
        "/findings",
        "/activity",
        "/conversations",
        "/checks",
        "/forget",
        "/forget/residue/project",
        "/forget/plan/project?cat=soft_deleted",
        "/forget/about",
        "/projects",
        "/export",
    ]
    out = [(url, url, None) for url in gets]
    form = urlencode({"q": LONG_CHINESE}).encode()
    return out + [("POST /preview (4,000 Chinese characters)", "/preview", form)]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def run_size(args, count: int, root: Path) -> dict:
    from agentao.memory import MemoryManager, MemoryPromptRenderer, MemoryRetriever, SQLiteMemoryStore

    folder = root / f"{count}"
    project_dir, user, ids = build(folder, count)
    project = project_dir / ".agentao" / "memory.db"
    words, _ = vocabulary()
    word = words[len(words) // 20]  # a common-but-not-stopword word of the real vocabulary
    mgr = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    retriever, renderer = MemoryRetriever(mgr), MemoryPromptRenderer()
    try:  # jieba's dictionary load is paid once per process; not charged to either side
        import jieba

        jieba.setLogLevel(30)
        jieba.initialize()
    except ImportError:
        pass
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    server = Server(args.tree, project_dir, user, folder / "server.log")
    todo = screens(ids, word)
    times: dict[str, list[float]] = {label: [] for label, _, _ in todo}
    sizes, statuses = {}, {}
    static, theirs, theirs_same = [], [], []
    try:
        for _round in range(args.repeat + 1):  # round 0 warms every side up, uncounted
            dt, _, _ = server.get("/static/app.css", args.limit)
            static.append(dt)
            for label, url, form in todo:
                if statuses.get(label) == "TIMEOUT":
                    continue
                dt, status, body = server.get(url, args.limit, form)
                times[label].append(dt)
                sizes[label], statuses[label] = len(body), status
            t = time.perf_counter()
            agentao_turn(
                mgr,
                retriever,
                renderer,
                QUERY if args.agentao_query == "long" else THREE,
            )
            theirs.append(time.perf_counter() - t)
            t = time.perf_counter()  # the POSTed message itself: the like-for-like figure
            agentao_turn(mgr, retriever, renderer, LONG_CHINESE)
            theirs_same.append(time.perf_counter() - t)
        rss = server.rss_mib()
    finally:
        server.stop()
    return {
        "count": count,
        "static": static[1:],
        "agentao": theirs[1:],
        "agentao_same": theirs_same[1:],
        "times": {label: t[1:] or t for label, t in times.items()},
        "first": {label: t[0] for label, t in times.items() if t},
        "slowest": {label: max(t) for label, t in times.items() if t},
        "sizes": sizes,
        "statuses": statuses,
        "rss": rss,
        "agentao_rss": agentao_rss(project, user),
        "word": word,
        "load": (load_before, Path("/proc/loadavg").read_text().split()[:3]),
    }


def report(r: dict, label: str) -> None:
    count = r["count"]
    floor, theirs = statistics.median(r["static"]), statistics.median(r["agentao"])
    small = count < 10_000
    print(
        f"\n== {count:,} memories ({label}); load average {' '.join(r['load'][0])} -> "
        f"{' '.join(r['load'][1])}; static stylesheet p50 {floor * 1000:.1f} ms; agentao's prompt "
        f"path for one message p50 {theirs * 1000:.1f} ms"
    )
    same = statistics.median(r["agentao_same"])
    print(f"agentao's prompt path for the POSTed 4,000-character message p50 {same * 1000:.1f} ms")
    huge = count >= 100_000  # the goal there: every request answers within 5 s, the first one too
    print(
        f"{'screen':<46}{'p50 ms':>8}{'first ms':>9}{'x static':>10}{'x agentao':>11}{'HTML KB':>9}"
        "  status  goal"
    )
    for screen, times in r["times"].items():
        p50 = statistics.median(times)
        post = screen.startswith("POST /preview")  # against agentao's path for the same message
        base = same if post else theirs
        preview = post or screen.startswith(("/preview?", "/preview.json"))
        bound = 1.0 if small else (0.7 if preview else 0.1)
        size = r["sizes"].get(screen, 0) / 1024
        html = small and ".json" not in screen  # a twin keeps its contents (the preview's pages them)
        answered = r["statuses"].get(screen) == 200
        if huge:
            ok = answered and r["slowest"][screen] <= 5.0
            goal = "every request <= 5 s" + (": ok" if ok else ": MISS")
        else:
            ok = answered and p50 / base <= bound and (not html or size <= 100)
            goal = f"<= {bound:g}x" + (", <= 100 KB" if html else "") + (": ok" if ok else ": MISS")
        shown = screen if len(screen) <= 45 else screen[:42] + "..."
        print(
            f"{shown:<46}{p50 * 1000:8.1f}{r['first'][screen] * 1000:9.1f}{p50 / floor:10.1f}"
            f"{p50 / base:11.2f}{size:9.1f}  {r['statuses'].get(screen)!s:<7} {goal}"
        )
    posted = [t for screen, t in r["times"].items() if screen.startswith("POST /preview")]
    if posted:  # the same POST against the three-word path, for the record
        print(
            f"(POST /preview against agentao's three-word path: {statistics.median(posted[0]) / theirs:.2f}x)"
        )
    mine, (agent, agent_peak) = r["rss"], r["agentao_rss"]
    print(
        f"server RSS after every screen {mine:.0f} MiB; an agentao process over the same store and "
        f"tokenizer {agent:.0f} MiB (peak {agent_peak:.0f}): {mine / agent:.2f}x   "
        + ("(no goal at this size)" if huge else "goal <= 1.2x: " + ("ok" if mine / agent <= 1.2 else "MISS"))
    )
    print(
        f"(p50 of {len(r['static'])} rounds after a warm-up round, whose time is 'first'; the POST is "
        f"compared with agentao's path for the same message, every other screen with the three-word one; "
        f"/memories?q= searches {r['word']!r}; /export is the download page, not the download)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT, help="source tree to run (default: this repo)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    ap.add_argument("--repeat", type=int, default=10, help="rounds per size (p50 of these)")
    ap.add_argument("--limit", type=float, default=120, help="wall-clock limit per request, s")
    ap.add_argument(
        "--agentao-query",
        choices=["long", "three"],
        default="three",
        help="agentao's message for the GET screens: the preview's three-word one or the long QUERY "
        "(as bench_caches); the POST is always against the same 4,000-character message",
    )
    ap.add_argument("--label", default="", help="what the tree is (e.g. 'before, 098eb56')")
    ap.add_argument("--dir", type=Path, help="where the stores go (default: a temp folder)")
    args = ap.parse_args()
    args.tree = args.tree.resolve()
    if not (args.tree / "dashboard" / "__main__.py").exists():
        sys.exit(f"{args.tree} has no dashboard/__main__.py")
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-pages-"))
    commit = (
        subprocess.run(
            ["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "not a git tree"
    )
    label = args.label or commit
    print(
        f"bench_pages: tree {args.tree} ({label}); {os.cpu_count()} cores; "
        f"python {sys.version.split()[0]}; {datetime.now():%Y-%m-%d %H:%M}; stores in {root}"
    )
    for count in args.sizes:
        report(run_size(args, count, root), label)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
