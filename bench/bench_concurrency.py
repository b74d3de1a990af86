"""Concurrency: the dashboard's actions through the running server while a real agentao works.

Two phases, each bounded in time.  A separate process runs agentao 0.5.17's
MemoryManager over the same two files for the whole of each phase: it saves
memories (both scopes), crystallizes user messages into review items (a fixed
pool of phrases, so candidates fold and come back after a purge), and approves
and rejects pending items itself.  Every write it reports is logged.

Phase 1 (--seconds): the dashboard, started through its command line
(waitress on 127.0.0.1, port 0), is driven over HTTP by two client threads:
approve, reject, edit, move and soft-delete, each with the tokens the page
showed (the JSON twin for reviews, the hidden form fields of a memory's page),
plus a hard purge of the soft-deleted rows from its dry run.
Phase 2: a wipe, then "forget everything" (wipe + hard purge of every
category), with the agent still proposing and saving.

Prints: agent writes attempted / found, dashboard actions attempted / done /
refused by reason, split states found (must be 0: a seed memory live in both
stores; a rejected item whose memory is live; an approved item without one),
false residue verdicts (must be 0: "found on disk" for text a live row holds
again), and PRAGMA integrity_check of both files.

    python bench/bench_concurrency.py                 # 20 s + phase 2
    python bench/bench_concurrency.py --seconds 60
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import html
import http.client
import json
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import login, start_server  # noqa: E402  (bench/load.py: CLI start-up and token exchange)

WORDS = (
    "amber birch cedar delta ember fjord grove harbor island juniper kelp lagoon meadow "
    "nectar orchid prairie quartz river spruce tundra umber valley willow yarrow zephyr"
).split()
PHRASES = [f"We must never {a} the {b} files" for a in WORDS[:8] for b in WORDS[8:14]]

AGENT = textwrap.dedent("""
    import json, random, sys, time
    from pathlib import Path
    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from agentao.memory.models import SaveMemoryRequest
    project, user, stop, log, seed = (Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]),
                                      open(sys.argv[4], "a"), int(sys.argv[5]))
    phrases = json.loads(sys.argv[6])
    manager = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    rnd = random.Random(seed)
    def note(**row):
        log.write(json.dumps(row) + "\\n"); log.flush()
    print("ready", flush=True)
    i = 0
    while not stop.exists():
        i += 1
        roll = rnd.random()
        try:
            if roll < 0.4:
                scope = "user" if i % 3 == 0 else "project"
                rec = manager.upsert(SaveMemoryRequest(key=f"agent note {seed} {i}",
                                     value=f"written by the agent, round {seed} #{i}",
                                     tags=["agent"], scope=scope))
                note(op="save", key=rec.key_normalized, scope=rec.scope, id=rec.id)
            elif roll < 0.7:
                items = manager.crystallize_user_messages(
                    [{"role": "user", "content": rnd.choice(phrases) + "."}])
                note(op="propose", ids=[it.id for it in items])
            else:
                pending = manager.list_review_items("pending")
                if pending:
                    item = rnd.choice(pending)
                    if roll < 0.85:
                        rec = manager.approve_review_item(item.id)
                        note(op="approve", id=item.id, ok=rec is not None)
                    else:
                        note(op="reject", id=item.id, ok=bool(manager.reject_review_item(item.id)))
        except Exception as exc:
            note(op="error", error=f"{type(exc).__name__}: {exc}")
        time.sleep(0.01)
""")


# --------------------------------------------------------------------------- set-up
def build(root: Path, memories: int) -> tuple[Path, Path, Path]:
    """agentao creates both files and writes the seed memories and the first candidates."""
    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from agentao.memory.models import SaveMemoryRequest

    project = root / "project"
    project_db, user_db = project / ".agentao" / "memory.db", root / "home" / ".agentao" / "memory.db"
    manager = MemoryManager(SQLiteMemoryStore.open(project_db), SQLiteMemoryStore.open(user_db))
    rnd = random.Random(1)
    for i in range(memories):
        a, b = rnd.sample(WORDS, 2)
        manager.upsert(
            SaveMemoryRequest(
                key=f"seed {a} {b} {i}",
                value=f"the {a} {b} fact #{i}",
                tags=[a],
                scope="user" if i % 4 == 0 else "project",
            )
        )
    manager.crystallize_user_messages([{"role": "user", "content": p + "."} for p in PHRASES[:20]])
    manager.close()
    return project, project_db, user_db


class Client:
    """One keep-alive HTTP connection with the session cookie; answers (status, body)."""

    def __init__(self, port: int, cookie: str):
        self.port, self.cookie = port, cookie
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, url: str, form: dict | None = None, accept="application/json"):
        headers = {"Cookie": self.cookie, "Accept": accept, "Sec-Fetch-Site": "same-origin"}
        body = None
        if form is not None:
            body = urlencode(form, doseq=True)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in (1, 2):
            try:
                self.conn.request(method, url, body=body, headers=headers)
                r = self.conn.getresponse()
                return r.status, r.read().decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt == 2:
                    raise

    def json(self, url: str):
        status, body = self.call("GET", url)
        return json.loads(body) if status == 200 else None


def reason(status: int, body: str) -> str:
    """A refusal's reason, short: the outcome kind or the message's first words."""
    try:
        data = json.loads(body)
    except ValueError:
        return f"{status} (not JSON)"
    outs = data.get("outcomes") or [data]
    o = next((o for o in outs if not o.get("ok", False)), outs[0])
    kind = o.get("kind") or o.get("outcome") or o.get("error") or ""
    text = o.get("message") or o.get("detail") or ""
    text = re.sub(r"\b[0-9a-f]{8,12}\b", "<id>", " ".join(str(text).split()[:9]))
    return f"{status} {kind}: {text}"


def hidden_fields(page: str, form_id: str) -> dict:
    """The hidden inputs of one form on a memory's page, as a browser would send them."""
    m = re.search(r'<form id="%s".*?</form>' % form_id, page, re.S)
    if not m:
        return {}
    return {
        html.unescape(k): html.unescape(v)
        for k, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', m.group(0))
    }


# --------------------------------------------------------------------------- dashboard actions
def act(c: Client, rnd: random.Random, tally: collections.Counter, refused: collections.Counter):
    kind = rnd.choice(["approve", "approve", "reject", "edit", "move", "delete", "purge"])
    if kind in ("approve", "reject"):
        data = c.json("/reviews.json") or {}
        items = data.get("items") or []
        if not items:
            return
        item = rnd.choice(items)
        plan = item.get("plan") or {}
        form = {"seen": plan.get("item_fingerprint", ""), "target": plan.get("target_fingerprint", "")}
        status, body = c.call("POST", f"/reviews/{item['id']}/{kind}", form)
    elif kind == "purge":
        plan = c.json("/forget/plan/project.json?cat=soft_deleted")
        if not plan or not plan.get("rows"):
            return
        status, body = c.call(
            "POST",
            "/forget/purge/project",
            {
                "cat": "soft_deleted",
                "confirm": plan["name"],
                **{k: v for k, v in plan.items() if k in ("fingerprint", "confirmed")},
            },
        )
        status, body = wait_job(c, status, body)
    else:
        data = c.json("/memories.json?q=seed&per_page=100&page=%d" % rnd.randint(1, 3)) or {}
        rows = [m for m in data.get("items") or [] if m["key_normalized"].startswith("seed")]
        if not rows:
            return
        m = rnd.choice(rows)
        status, page = c.call("GET", f"/memories/{m['store']}/{m['id']}", accept="text/html")
        form = hidden_fields(page, f"{kind}-form")
        if status != 200 or not form:
            return
        if kind == "edit":
            form.update(value=f"{m['content']} (edited)", tags=", ".join(m["tags"]), type=m["type"])
        status, body = c.call("POST", f"/memories/{m['store']}/{m['id']}/{kind}", form)
    tally[kind, "attempted"] += 1
    if status in (200, 202):
        tally[kind, "done"] += 1
    else:
        refused[kind, reason(status, body)] += 1


def wait_job(c: Client, status: int, body: str, limit: float = 120):
    """Follow a forget job until it finishes; answers the final (status, body)."""
    try:
        job = json.loads(body)
    except ValueError:
        return status, body
    deadline = time.time() + limit
    while job.get("state") == "running" and time.time() < deadline:
        time.sleep(0.1)
        status, body = c.call("GET", job["url"] + ".json")
        job = json.loads(body)
    return status, body


# --------------------------------------------------------------------------- checks
def read_rows(db: Path, sql: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def splits(project_db: Path, user_db: Path) -> list[str]:
    from dashboard.contract import normalize_key

    found = []
    live = {
        db: collections.Counter(
            r["key_normalized"]
            for r in read_rows(db, "SELECT key_normalized FROM memories WHERE deleted_at IS NULL")
        )
        for db in (project_db, user_db)
    }
    for key in set(live[project_db]) & set(live[user_db]):
        if key.startswith("seed"):
            found.append(f"seed memory '{key}' live in both stores")
    live_all = live[project_db] + live[user_db]
    items = read_rows(project_db, "SELECT key_normalized, status FROM memory_review_queue")
    approved = {normalize_key(r["key_normalized"]) for r in items if r["status"] == "approved"}
    for r in items:
        key = normalize_key(r["key_normalized"])
        if r["status"] == "rejected" and key in live_all and key not in approved:
            found.append(f"rejected item '{key}' has a live memory")
        if r["status"] == "approved" and key not in live_all:
            found.append(f"approved item '{key}' has no live memory")
    return found


def agent_writes(log: Path, project_db: Path, user_db: Path) -> tuple[int, int]:
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    saves = [e for e in entries if e["op"] == "save"]
    live = {
        (r["scope"], r["key_normalized"])
        for db in (project_db, user_db)
        for r in read_rows(db, "SELECT scope, key_normalized FROM memories WHERE deleted_at IS NULL")
    }
    status = {
        r["id"]: r["status"] for r in read_rows(project_db, "SELECT id, status FROM memory_review_queue")
    }
    decided = [e for e in entries if e["op"] in ("approve", "reject") and e.get("ok")]
    found = sum((e["scope"], e["key"]) in live for e in saves)
    found += sum(status.get(e["id"]) == ("approved" if e["op"] == "approve" else "rejected") for e in decided)
    return len(saves) + len(decided), found


def live_text_hashes(*dbs: Path) -> set[str]:
    """sha256 of every text a live row or review item holds now (as the purge report hashes)."""
    out = set()
    for db in dbs:
        for r in read_rows(db, "SELECT title, content FROM memories WHERE deleted_at IS NULL"):
            out |= {hashlib.sha256(t.encode()).hexdigest() for t in r if t}
        for r in read_rows(db, "SELECT key_normalized, title, content, evidence FROM memory_review_queue"):
            out |= {hashlib.sha256(t.encode()).hexdigest() for t in r if t}
    return out


def false_residue(results: list[dict], live: set[str]) -> int:
    return sum(
        1
        for res in results
        if res.get("status") == "found on disk"
        and all(v["sha256"] in live for v in res.get("verification", []) if v.get("files"))
    )


# --------------------------------------------------------------------------- run
def start_agent(project_db, user_db, stop, log, seed):
    stop.unlink(missing_ok=True)
    agent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            AGENT,
            str(project_db),
            str(user_db),
            str(stop),
            str(log),
            str(seed),
            json.dumps(PHRASES),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert agent.stdout.readline().strip() == "ready"
    return agent


def stop_agent(agent, stop):
    stop.touch()
    agent.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20, help="length of phase 1 (default 20)")
    ap.add_argument("--memories", type=int, default=300, help="seed memories (default 300)")
    ap.add_argument("--clients", type=int, default=2, help="dashboard client threads (default 2)")
    args = ap.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench-concurrency-"))
    project, project_db, user_db = build(root, args.memories)
    server, port, token = start_server(project, user_db, threads=4)
    stop, log = root / "stop", root / "agent.jsonl"
    tally, refused = collections.Counter(), collections.Counter()
    try:
        cookie = login(port, token)
        agent = start_agent(project_db, user_db, stop, log, 1)
        deadline = time.time() + args.seconds

        def drive(seed):
            c, rnd = Client(port, cookie), random.Random(seed)
            while time.time() < deadline:
                act(c, rnd, tally, refused)

        threads = [threading.Thread(target=drive, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop_agent(agent, stop)
        if server.poll() is not None:
            sys.exit(f"the dashboard exited ({server.returncode}) during phase 1; see {root}/server.log")
        attempted, found = agent_writes(log, project_db, user_db)
        split = splits(project_db, user_db)
        for db, name in ((project_db, "project"), (user_db, "user")):  # kept for a look at a split
            with sqlite3.connect(root / f"after-phase-1-{name}.db") as copy:
                sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True).backup(copy)

        # Phase 2: wipe, then forget everything, while the agent proposes and saves.
        agent = start_agent(project_db, user_db, stop, log, 2)
        c = Client(port, cookie)
        time.sleep(1)
        forget_results = []
        for kind, url, form in (
            ("wipe", "/forget/wipe", {"confirm": "yes"}),
            (
                "forget everything",
                "/forget/everything",
                {"confirm": (c.json("/forget.json") or {}).get("everything_phrase", "")},
            ),
        ):
            tally[kind, "attempted"] += 1
            status, body = wait_job(c, *c.call("POST", url, form))
            job = json.loads(body) if body.startswith("{") else {}
            ok = status in (200, 202) and job.get("state") == "done" and not job.get("error")
            tally[kind, "done" if ok else "refused"] += 1
            if not ok:
                refused[kind, reason(status, body)] += 1
            forget_results += job.get("results") or []
            if kind == "forget everything":
                verdict = job.get("verdict")
        time.sleep(0.5)
        stop_agent(agent, stop)
        falses = false_residue(forget_results, live_text_hashes(project_db, user_db))
        checks = {
            db.name + f" ({db.parent.parent.name})": read_rows(db, "PRAGMA integrity_check")[0][0]
            for db in (project_db, user_db)
        }
    finally:
        server.terminate()
        server.wait(timeout=30)

    print(
        f"phase 1: {args.seconds:.0f} s, {args.memories} seed memories, {args.clients} dashboard clients, "
        "one agentao process"
    )
    print(f"agent writes attempted / found: {attempted} / {found}")
    print("dashboard actions attempted / done / refused:")
    for kind in sorted({k for k, _ in tally}):
        n = tally[kind, "attempted"]
        print(f"  {kind:18} {n:5} / {tally[kind, 'done']:5} / {n - tally[kind, 'done']:5}")
        for (k, why), count in sorted(refused.items()):
            if k == kind:
                print(f"      {count:4} × {why}")
    print(f"split states found: {len(split)} (must be 0)")
    for s in split[:10]:
        print("  ", s)
    if split:
        print(f"   (the files as phase 1 left them: {root}/after-phase-1-*.db)")
    print(f"forget everything verdict with the agent working: {verdict}")
    print(f"false residue verdicts: {falses} (must be 0)")
    print("integrity_check:", ", ".join(f"{k} {v}" for k, v in checks.items()))
    return 0 if not split and not falses and attempted == found else 1


if __name__ == "__main__":
    sys.exit(main())
