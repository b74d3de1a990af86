"""A hard purge while a real agentao process keeps working on the same file.

The agent runs in its own process and takes orders one line at a time (each
answer is the barrier: the test goes on only once the agent's write has
committed), so every round lands its writes exactly in the window under test:
after the dry run, inside the purge, or while the byte scan runs.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from agentao_world import integrity, wait_for_job

from dashboard.actions import purge
from dashboard.store import build_refs

JSON = {"Accept": "application/json"}
ROUNDS = 5
WORDS = (
    "staging host backup bucket deploy token mirror replica cron vault ledger "
    "invoice kiosk harbor signal quartz"
).split()

AGENT = textwrap.dedent("""
    import json, sqlite3, sys
    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from agentao.memory.models import SaveMemoryRequest
    m = MemoryManager(SQLiteMemoryStore.open(sys.argv[1]), SQLiteMemoryStore.open(sys.argv[2]))
    print("ready", flush=True)
    for line in sys.stdin:
        order, _, arg = line.rstrip("\\n").partition(" ")
        if order == "burst":      # what an agent does in a turn: review candidates, a save, a forget
            items = m.crystallize_user_messages([{"role": "user", "content":
                f"I prefer {arg} striped tables in reports. We must never deploy {arg} on Fridays."}])
            kept = m.upsert(SaveMemoryRequest(key=f"note {arg}", value=f"Kept note about {arg}."))
            gone = m.upsert(SaveMemoryRequest(key=f"old {arg}", value=f"Dropped note about {arg}."))
            m.delete(gone.id)
            out = {"reviews": [i.id for i in items], "live": [kept.id], "deleted": [gone.id]}
        elif order == "say":      # the user says it again: agentao folds it into the pending item
            out = [i.id for i in m.crystallize_user_messages([{"role": "user", "content": arg}])]
        elif order == "save":     # a memory holding exactly this text
            key, _, value = arg.partition("|")
            out = m.upsert(SaveMemoryRequest(key=key, value=value)).id
        elif order == "hold":     # a session that keeps the file open (it has read once)
            held = sqlite3.connect(sys.argv[1])
            out = held.execute("SELECT count(*) FROM memories").fetchone()[0]
        elif order == "forget":
            key, _, value = arg.partition("|")
            out = m.delete(m.upsert(SaveMemoryRequest(key=key, value=value)).id)
        else:
            break
        print(json.dumps(out), flush=True)
""")


class AgentProcess:
    """agentao's MemoryManager in a child process; ``do`` returns once its write committed."""

    def __init__(self, world):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", AGENT, str(world.project_db), str(world.user_db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def send(self, order: str) -> None:
        self.proc.stdin.write(order + "\n")
        self.proc.stdin.flush()

    def answer(self):
        line = self.proc.stdout.readline()
        assert line, "the agent process died"
        return json.loads(line)

    def do(self, order: str):
        self.send(order)
        return self.answer()

    def close(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=20) == 0


@pytest.fixture
def agent_process(seeded):
    proc = AgentProcess(seeded)
    try:
        yield proc
    finally:
        if proc.proc.poll() is None:
            proc.proc.kill()
        proc.proc.wait(timeout=20)


def rows_now(db) -> dict:
    """Every row that can be purged, as (kind-ish table, id) -> whether it is soft-deleted."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = {
            ("memory", r[0]): r[1] is not None for r in conn.execute("SELECT id, deleted_at FROM memories")
        }
        out.update(
            {("review", r[0]): r[1] for r in conn.execute("SELECT id, status FROM memory_review_queue")}
        )
        out.update(
            {("event", str(r[0])): r[1] for r in conn.execute("SELECT id, memory_id FROM memory_events")}
        )
        out.update({("summary", r[0]): None for r in conn.execute("SELECT id FROM session_summaries")})
        return out
    finally:
        conn.close()


def table_of(kind: str) -> str:
    return "memory" if kind.startswith("memory") else kind


def test_purge_of_everything_finishes_while_the_agent_works(seeded, agent_process):
    """Dry run, then the agent adds review items, saves and forgets; then the purge, while the
    agent does it again.  Every round: exactly the confirmed rows go, the arrivals stay and
    are reported as kept."""
    client = seeded.app().test_client()
    for n in range(ROUNDS):
        tag = "".join(chr(97 + int(d)) for d in f"{n:03d}")  # letters: agentao keys drop digits
        plan = client.get("/forget/plan/project.json?cat=everything").get_json()
        confirmed = {(table_of(r["kind"]), r["id"]) for r in plan["rows"]}
        before = agent_process.do(f"burst {tag}a")  # after the dry run, before the click
        r = client.post(
            "/forget/purge/project",
            headers=JSON,
            data={"cat": "everything", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
        )
        assert r.status_code in (200, 202), r.get_json()
        agent_process.send(f"burst {tag}b")  # and while the purge runs
        job = wait_for_job(client, r.get_json()["url"])
        during = agent_process.answer()
        assert job["state"] == "done", job
        [result] = job["results"]
        assert result["status"] in ("verified erased", "pending, retry"), result["message"]
        left = rows_now(seeded.project_db)
        assert not confirmed & left.keys(), "a confirmed row survived the purge"
        erased = {(table_of(x["kind"]), x["id"]) for x in result["rows"]}
        assert erased == confirmed - {(table_of(s["kind"]), s["id"]) for s in result["skipped"]}
        assert result["skipped"] == []
        for burst in (before, during):  # nothing the agent wrote was erased
            for key in [("review", i) for i in burst["reviews"]] + [
                ("memory", i) for i in burst["live"] + burst["deleted"]
            ]:
                assert key in left, f"{key} written by the agent was erased"
        kept = {(table_of(x["kind"]), x["id"]) for x in result["kept"]}
        # What arrived before the click is reported as kept, by kind; nothing confirmed is.
        assert {("review", i) for i in before["reviews"]} | {("memory", before["deleted"][0])} <= kept
        assert not kept & confirmed
        assert result["kept_by_kind"]["review"] >= 2 and "kept" in result["message"]
    agent_process.close()
    assert integrity(seeded.project_db) == "ok"


def test_a_confirmed_row_the_agent_changed_refuses_the_purge(seeded, agent_process):
    """The user says the same thing again after the dry run: agentao folds it into the
    pending item the user confirmed.  That row is not what was seen: refuse, change nothing."""
    client = seeded.app().test_client()
    plan = client.get("/forget/plan/project.json?cat=review:pending").get_json()
    assert len(plan["rows"]) == 2
    before = rows_now(seeded.project_db)
    agent_process.do("say I prefer tabs over spaces.")
    r = client.post(
        "/forget/purge/project",
        headers=JSON,
        data={"cat": "review:pending", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
    )
    assert r.status_code == 409
    assert "1 of the rows you confirmed changed since the dry run (1 review)" in r.get_json()["message"]
    assert rows_now(seeded.project_db) == before
    again = client.get("/forget/plan/project.json?cat=review:pending").get_json()
    r = client.post(
        "/forget/purge/project",
        headers=JSON,
        data={"cat": "review:pending", "fingerprint": again["fingerprint"], "confirm": again["name"]},
    )
    assert r.status_code in (200, 202)
    assert wait_for_job(client, r.get_json()["url"])["results"][0]["deleted"] == {"review": 2}


def test_a_row_changed_inside_the_purge_window_stops_it_before_it_writes(seeded, agent_process):
    """The agent folds a new hit into a confirmed item after the page's check, just before
    the purge takes the write lock: the check inside the transaction refuses, every round."""
    ref = next(r for r in build_refs(seeded.project_dir, seeded.user_db) if r.kind == "project")
    for n in range(ROUNDS):
        tag = "".join(chr(97 + int(d)) for d in f"{n:03d}")
        phrase = f"I prefer {tag} indentation everywhere."
        agent_process.do(f"say {phrase}")
        dry_run = purge.plan(ref, ["review:pending"])
        before = rows_now(seeded.project_db)

        def fold_now(step, fraction=None, phrase=phrase):
            if step == "delete":  # the purge is about to take the write lock
                agent_process.do(f"say {phrase}")

        result = purge.purge(ref, dry_run, progress=fold_now)
        assert result.status == "changed", result.message
        assert "Nothing was erased" in result.message and "(1 review)" in result.message
        after = rows_now(seeded.project_db)
        assert after.keys() == before.keys() and result.deleted == {}
        fresh = purge.plan(ref, ["review:pending"])
        done = purge.purge(ref, fresh)
        assert done.verified and done.deleted == {"review": len(fresh)}


def test_text_the_agent_saves_again_during_the_scan_is_not_residue(seeded, agent_process):
    """After the purge deleted a memory, and while the scan reads the files, the agent saves
    the very same text again in a new memory.  That text is in the file as live data: the
    verdict says so, and never "still on disk"."""
    ref = next(r for r in build_refs(seeded.project_dir, seeded.user_db) if r.kind == "project")
    rng = random.Random(11)
    assert purge.purge(ref, purge.plan(ref, ["soft_deleted"])).verified  # the seed's old row
    # The agent keeps a session open on the file, so its WAL is not folded back into the
    # database each time a save closes its connection: the save lands in the WAL.
    agent_process.do("hold")
    if True:
        for n in range(ROUNDS):
            tag = "".join(chr(97 + int(d)) for d in f"{n:03d}")
            # Words of its own each round: a text sharing runs with the earlier rounds' live
            # copies would be partly "held by a live row" even before the fix.
            text = " ".join(rng.choice(WORDS) + str(rng.randint(10, 99)) for _ in range(24)) + "."
            agent_process.do(f"forget draft {tag}|{text}")
            dry_run = purge.plan(ref, ["soft_deleted"])
            assert [r.texts for r in dry_run] == [(text,)]
            saved = []

            def save_again(step, fraction=None, saved=saved, tag=tag, text=text):
                # The scan has read the database file; the agent saves before it reads the WAL.
                if step == "scan" and fraction and not saved:
                    saved.append(agent_process.do(f"save copy {tag}|{text}"))

            result = purge.purge(ref, dry_run, progress=save_again)
            assert saved, "the scan never reported progress"
            assert result.status != "found on disk", result.message
            [seen] = result.verification
            assert seen["saved_again"] and seen["still_stored"] and seen["files"] == {}
            assert "saved again by the agent during the purge" in result.message
            assert result.deleted == {"memory_deleted": 1}
            conn = sqlite3.connect(f"file:{seeded.project_db}?mode=ro", uri=True)
            assert conn.execute("SELECT content FROM memories WHERE id = ?", (saved[0],)).fetchone() == (
                text,
            )
            conn.close()
