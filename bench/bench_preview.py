"""Preview engine vs agentao's own recall + render, on the same 10,000-memory files.

Run:  /work/venv/bin/python bench/bench_preview.py [--memories 10000] [--dir /tmp/bench_preview]

Both sides answer the same questions in one process: the ``<memory-stable>``
block (stable selection, tail, fit, render) and the ``<memory-context>``
block (recall with the shown entries excluded, render).  agentao's side is
exactly its prompt path: ``get_stable_entries``, ``get_cross_session_tail``,
``fit_stable_records``, ``render_stable_block``, ``recall_candidates``,
``render_dynamic_block``.

Cold = the first query after a change (one memory rewritten through agentao,
so both change counters' caches are invalidated).  Warm = further queries
with nothing changed.  For ours three figures are printed:

* engine      - ``preview()`` on rows already in memory;
* +counters   - read the two change counters, re-read the rows only when they
                moved (what a dashboard store keyed on the counter does);
* +rows       - read the counters and all rows from SQLite on every request.

Prints medians and ours/agentao ratios (the goal is <= 1.0).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "engine")]

from _rows import change_counter, read_memories, read_summaries  # noqa: E402
from agentao.memory import (  # noqa: E402
    MemoryGuard,
    MemoryManager,
    MemoryPromptRenderer,
    MemoryRetriever,
    SaveMemoryRequest,
    SQLiteMemoryStore,
)
from agentao.prompts.helpers import extract_context_hints  # noqa: E402

from dashboard.engine import EngineCache, preview  # noqa: E402

WORDS = (
    "redis cache deploy docker python typing pytest billing service timeout retry "
    "postgres index query migration schema release wheel ci pipeline lint format "
    "logging json structlog api endpoint version auth token session cookie queue "
    "worker celery kafka topic partition metrics grafana alert oncall runbook"
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
]
TYPES = ["note"] * 6 + ["project_fact"] * 3 + ["decision", "constraint", "workflow"]
QUERIES = [
    "redis cache timeout",
    "kalomi zisate and vopaqu",
    "how do we deploy the billing service",
    "数据库版本 配置",
    "pytest fixtures for the api",
    "kafka partition metrics",
    "release wheel ci",
    "src/app/main.py crashes on start",
    "部署 docker 服务",
    "the",
    "grafana alert runbook",
]
MESSAGES = ["I was editing billing/service.py and tests/test_api.py", "also check pyproject.toml"]


# A Zipf-like vocabulary: the named words are the common head, then 2,000
# made-up words, so a query matches some hundreds of rows rather than all.
_SYL = "ka lo mi ne ru sa te vo zi pa qu de fo gi hu".split()
VOCAB = WORDS + [a + b + c for a in _SYL for b in _SYL for c in _SYL][:2000]
WEIGHTS = [1 / (rank + 5) for rank in range(len(VOCAB))]


def _text(rng: random.Random, n: int) -> str:
    parts = []
    for _ in range(n):
        r = rng.random()
        parts.append(
            rng.choice(CJK) if r < 0.05 else rng.choice(PATHS) if r < 0.08 else rng.choices(VOCAB, WEIGHTS)[0]
        )
    return " ".join(parts)


def build(folder: Path, count: int) -> tuple[Path, Path]:
    """Write ``count`` memories (80% project, 20% user) in agentao's schema, once."""
    project, user = folder / "project.db", folder / "user.db"
    if project.exists() and user.exists():
        return project, user
    folder.mkdir(parents=True, exist_ok=True)
    guard, rng = MemoryGuard(), random.Random(7)
    start = datetime(2025, 1, 1)
    for path, scope, n in ((project, "project", count * 4 // 5), (user, "user", count // 5)):
        SQLiteMemoryStore.open(path)  # agentao creates the schema and triggers
        rows = []
        for i in range(n):
            title = f"{scope} {i} " + _text(rng, 3)
            content = _text(rng, rng.randint(8, 60))
            tags = rng.sample(WORDS, rng.randint(0, 4))
            stamp = (start + timedelta(minutes=37 * i)).strftime("%Y-%m-%dT%H:%M:%S")
            rows.append(
                (
                    uuid.uuid4().hex[:8],
                    scope,
                    "preference" if scope == "user" else rng.choice(TYPES),
                    guard.normalize_key(title),
                    title,
                    content,
                    json.dumps(tags),
                    json.dumps(guard.extract_keywords(title, tags, content)),
                    stamp,
                    stamp,
                )
            )
        with sqlite3.connect(path) as conn:
            conn.executemany(
                "INSERT INTO memories (id, scope, type, key_normalized, title, content, "
                "tags_json, keywords_json, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            conn.executemany(
                "INSERT INTO session_summaries (id, session_id, summary_text, created_at) VALUES (?,?,?,?)",
                [
                    (
                        uuid.uuid4().hex[:12],
                        f"s{i % 4}",
                        _text(rng, 80),
                        (start + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%S"),
                    )
                    for i in range(30 if scope == "project" else 0)
                ],
            )
    return project, user


class Ours:
    """The dashboard side: counters, rows re-read only when they move, the engine."""

    def __init__(self, project: Path, user: Path):
        self.project, self.user = project, user
        self.cache, self.version, self.rows = None, None, None

    def counters(self):
        return (change_counter(self.project), change_counter(self.user))

    def read(self):
        return (
            read_memories(self.project, "project"),
            read_memories(self.user, "user"),
            read_summaries(self.project),
        )

    def engine(self, query):
        p, u, s = self.rows
        if self.cache is None or self.cache.project is not p:  # one cache per rows read, as the server
            self.cache = EngineCache(p, u)
        return preview(
            p,
            u,
            s,
            query=query,
            messages=MESSAGES,
            session_id="s0",
            now=datetime.now(timezone.utc),
            cache=self.cache,
        )

    def with_counters(self, query):
        version = self.counters()
        if version != self.version:
            self.version, self.rows = version, self.read()
        return self.engine(query)

    def with_rows(self, query):
        self.version, self.rows = self.counters(), self.read()
        return self.engine(query)


def agentao_turn(mgr, retriever, renderer, query):
    """agentao's prompt path for one request: both blocks."""
    stable = mgr.get_stable_entries()
    tail = mgr.get_cross_session_tail()
    shown = renderer.fit_stable_records(stable, session_tail=tail)
    block = renderer.render_stable_block(shown, session_tail=tail)
    msgs = [{"role": "user", "content": m} for m in MESSAGES]
    cands = retriever.recall_candidates(
        query, context_hints=extract_context_hints(msgs), exclude_ids={r.id for r in shown}
    )
    return block, renderer.render_dynamic_block(cands)


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bench_preview"))
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    project, user = build(args.dir / str(args.memories), args.memories)
    mgr = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    mgr.archive_session("s0")
    retriever, renderer = MemoryRetriever(mgr), MemoryPromptRenderer()
    writer = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    sides = {"engine": Ours(project, user), "+counters": Ours(project, user), "+rows": Ours(project, user)}
    calls = {"engine": Ours.engine, "+counters": Ours.with_counters, "+rows": Ours.with_rows}

    # jieba's dictionary load (seconds) is paid once per process by whichever
    # side tokenizes CJK first; load it up front so neither side is charged.
    import jieba

    jieba.setLogLevel(30)
    jieba.initialize()
    # First ever query: empty caches on both sides.
    first = {"agentao": timed(agentao_turn, mgr, retriever, renderer, QUERIES[0])[0]}
    sides["engine"].version, sides["engine"].rows = sides["engine"].counters(), sides["engine"].read()
    for name, side in sides.items():
        first[name] = timed(calls[name], side, QUERIES[0])[0]

    cold = {k: [] for k in ("agentao", *sides)}
    warm = {k: [] for k in ("agentao", *sides)}
    table = []  # extra cost of building the full ranked table the page shows
    for r in range(args.rounds):
        writer.upsert(
            SaveMemoryRequest(key=f"bench change {r % 2}", value=_text(random.Random(r), 20), tags=["bench"])
        )
        sides["engine"].version, sides["engine"].rows = (
            sides["engine"].counters(),
            sides["engine"].read(),
        )  # engine-only: rows handed in, as if already read
        for q_index, query in enumerate(QUERIES):
            t, theirs = timed(agentao_turn, mgr, retriever, renderer, query)
            (cold if q_index == 0 else warm)["agentao"].append(t)
            for name, side in sides.items():
                t, ours = timed(calls[name], side, query)
                (cold if q_index == 0 else warm)[name].append(t)
                if name == "engine":
                    table.append(timed(lambda ours=ours: ours.candidates)[0])
            if ours.stable_block != theirs[0]:
                print("MISMATCH in stable block for", repr(query))
            if theirs[1] and ours.context_block != theirs[1]:
                print("context block differs (ties?) for", repr(query))

    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    print(
        f"{args.memories} memories, {args.rounds} rounds x {len(QUERIES)} queries, "
        f"CJK mode {sides['engine'].engine(QUERIES[0]).cjk_mode}"
    )
    print(f"{'':12}{'first ever':>12}{'cold':>12}{'warm':>12}{'cold ratio':>12}{'warm ratio':>12}")
    base_c, base_w = ms(cold["agentao"]), ms(warm["agentao"])
    for name in ("agentao", *sides):
        c, w = ms(cold[name]), ms(warm[name])
        print(
            f"{name:12}{first[name] * 1000:11.1f}ms{c:10.2f}ms{w:10.2f}ms{c / base_c:12.3f}{w / base_w:12.3f}"
        )
    print(
        f"ranked table, built on demand for the page: median {ms(table):.2f}ms extra "
        f"(max {max(table) * 1000:.2f}ms); first-ever figures are one shot each"
    )


if __name__ == "__main__":
    main()
