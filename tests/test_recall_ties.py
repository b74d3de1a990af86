"""Equal scores at the recall cut, and the stable block's same-second order, against the real agentao.

agentao scores its candidates out of a Python set of ids and sorts them stably by score, so equal
scores come out in hash-set order, which changes from one agentao process to the next (string hash
randomisation, contract §10.4 and §17 item 2).  The preview and the saved checks must not pass off
one of those orders as the answer.  The stable block has no set: it must match byte for byte.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest import mock

import pytest
from agentao_world import Agent, agentao_blocks
from bs4 import BeautifulSoup
from jsonschema import Draft202012Validator

ASOF = "2031-01-01T00:00:00"
QUERY = "deploy target staging"
SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"
SEEDS = range(6)  # PYTHONHASHSEED values; with these ids each picks differently (asserted below)

# agentao's own recall in a fresh process: its stable entries, then recall_candidates and the
# rendered <memory-context>, with the clock pinned; prints the ids whose facts are in the block.
AGENTAO_RECALL = """
import json, sys
from datetime import datetime, timezone
import agentao.memory.retriever as retriever
from agentao.memory import MemoryManager, MemoryPromptRenderer, MemoryRetriever, SQLiteMemoryStore

project, user, query = sys.argv[1:4]
mgr = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
renderer = MemoryPromptRenderer()
shown = renderer.fit_stable_records(mgr.get_stable_entries(), session_tail=mgr.get_cross_session_tail())


class Pinned(retriever.datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2031, 1, 1, tzinfo=timezone.utc).astimezone(tz)


retriever.datetime = Pinned
cands = MemoryRetriever(mgr).recall_candidates(query, exclude_ids={m.id for m in shown})
block = renderer.render_dynamic_block(cands)
print(json.dumps([c.memory_id for c in cands if "\\ntitle: " + c.title + "\\n" in block]))
"""


@contextmanager
def same_second(stamp: str, ids):
    """agentao's save clock stopped at ``stamp``; new ids taken from ``ids`` (reproducible)."""
    with (
        mock.patch("agentao.memory.manager._now", return_value=stamp),
        mock.patch("agentao.memory.storage._now_iso", return_value=stamp),
        mock.patch("uuid.uuid4", side_effect=lambda: uuid.UUID(int=next(ids) << 96)),
    ):
        yield


@pytest.fixture
def tied(agent) -> Agent:
    """10 project and 10 user memories saying the same, saved within one second."""
    with same_second("2030-06-01T10:00:00", iter(range(1, 1000))):
        for n in range(10):
            agent.save(f"deploy note {n:02d}", "Deploy target is staging.", ["deploy"], type="note")
            agent.save(
                f"user deploy {n:02d}", "Deploy target is staging.", ["deploy"], scope="user", type="note"
            )
    return agent


def agentao_picks(agent: Agent, seeds) -> dict[int, list[str]]:
    """The ids agentao recalls for QUERY in a fresh process per PYTHONHASHSEED (run side by side)."""
    runs = {
        seed: subprocess.Popen(
            [sys.executable, "-c", AGENTAO_RECALL, str(agent.project_db), str(agent.user_db), QUERY],
            env={
                "PYTHONHASHSEED": str(seed),
                "PATH": "/usr/bin:/bin",
                "HOME": str(agent.user_db.parent.parent),
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in seeds
    }
    out = {}
    for seed, run in runs.items():
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr
        out[seed] = json.loads(stdout.strip().splitlines()[-1])
    return out


def test_agentao_picks_among_equal_scores_differently_and_the_preview_says_so(tied):
    client = tied.app().test_client()
    data = client.get("/preview.json", query_string={"q": QUERY, "asof": ASOF}).get_json()
    Draft202012Validator(json.loads((SCHEMAS / "preview.schema.json").read_text())).validate(data)
    recalled = {c["id"] for c in data["candidates"] if c["mark"] == "in_block"}
    maybe = {c["id"] for c in data["candidates"] if c["tie_varies"] and c["mark"] != "in_block"}
    assert recalled and maybe

    picks = agentao_picks(tied, SEEDS)
    assert len({frozenset(p) for p in picks.values()}) > 1, picks  # the seeds really hit the tie
    for seed, pick in picks.items():
        assert set(pick) <= recalled | maybe, (seed, pick)
    # Every one marked can be agentao's pick, and each recalled here is marked as may be left out.
    assert set().union(*picks.values()) <= recalled | maybe
    assert all(c["tie_varies"] for c in data["candidates"] if c["id"] in recalled)

    # The twin and the page say the pick (and the order) varies, first where the eye is.
    assert data["recall_varies"] == {"pick": True, "order": True}
    said = next(t for t in data["text"] if "no fixed order" in t)
    assert said.startswith(f"{len(maybe)} more memories have the same score as the last one recalled")
    page = BeautifulSoup(
        client.get("/preview", query_string={"q": QUERY, "asof": ASOF}).get_data(as_text=True), "html.parser"
    )
    note = page.select_one(
        '#answer [data-answer="recalled"] + [data-answer="ties"], #answer [data-answer="ties"]'
    )
    assert note is not None and note.get_text(" ", strip=True) == said
    assert note.has_attr("hx-disable")  # it can quote memory text: htmx never reads it
    lead = page.select_one("#answer .answer-lead")
    assert lead.find_next_sibling() is note  # right under "Recalled for this message"
    marked = {tr["data-memory-id"] for tr in page.select("table.recall tr[data-tie-varies]")}
    assert marked == recalled | maybe
    for tr in page.select("table.recall tr[data-tie-varies]"):
        words = tr.select_one(".tie-varies").get_text()
        assert words == (
            "may be left out instead (equal scores)"
            if tr["data-mark"] == "in_block"
            else "may be recalled instead (equal scores)"
        )
    assert page.select_one('[data-varies="pick"]') is not None
    assert "equal scores are ordered newest first" not in page.get_text()
    # Not recalled here: said to be a tie, not "below the cut".
    for li in page.select('#answer [data-answer="not-recalled"] li'):
        if li["data-memory-id"] in maybe:
            assert "may be recalled instead" in li.get_text() and "below the cut" not in li.get_text()


def test_no_tie_no_word_of_one(agent):
    for n in range(8):  # a second apart: every score differs
        with same_second(f"2030-06-01T10:00:{n:02d}", iter(range(100 * n + 1, 100 * n + 50))):
            agent.save(f"deploy note {n:02d}", "Deploy target is staging.", ["deploy"], type="note")
    data = agent.app().test_client().get("/preview.json", query_string={"q": QUERY, "asof": ASOF}).get_json()
    assert data["recall_varies"] == {"pick": False, "order": False}
    assert not any(c["tie_varies"] for c in data["candidates"])
    assert not any("no fixed order" in t for t in data["text"])
    assert (
        data["context_block"]
        == agentao_blocks(agent, QUERY, now=datetime(2031, 1, 1, tzinfo=timezone.utc))[1]
    )


def _post(client, **check):
    r = client.post("/checks", json=check, headers={"Accept": "application/json"})
    assert r.status_code == 201, r.get_data(as_text=True)
    return r.get_json()["check"]


def test_a_check_on_a_memory_tied_at_the_cut_neither_passes_nor_fails(tied, capsys):
    client = tied.app().test_client()
    data = client.get("/preview.json", query_string={"q": QUERY, "asof": ASOF}).get_json()
    by_mark = {}
    for c in data["candidates"]:
        by_mark.setdefault((c["mark"], c["tie_varies"]), []).append(c["title"])
    inside, outside = by_mark[("in_block", True)][0], by_mark[("cut_top5", True)][0]
    always_on = data["stable_entries"][0]["title"]  # in <memory-stable>: no tie there
    _post(client, name="in, tied", message=QUERY, must_recall=[inside])
    _post(client, name="out, tied", message=QUERY, must_not_recall=[outside])
    _post(client, name="certain", message=QUERY, must_recall=[always_on])
    _post(client, name="text in, tied", message=QUERY, must_not_contain=[inside])
    _post(client, name="text out, tied", message=QUERY, must_not_contain=[outside])
    _post(client, name="certain fail", message=QUERY, must_recall=[inside], must_not_recall=[always_on])

    got = client.get("/checks.json").get_json()
    Draft202012Validator(json.loads((SCHEMAS / "checks.schema.json").read_text())).validate(got)
    results = {c["name"]: c for c in got["checks"]}
    for name, code, memory in (
        ("in, tied", "tie_may_be_left_out", inside),
        ("out, tied", "tie_may_be_recalled", outside),
        ("text in, tied", "tie_may_be_left_out", inside),
        ("text out, tied", "tie_may_be_recalled", outside),
    ):
        r = results[name]
        assert (r["passed"], r["tie"]) == (False, True), r
        assert [(x["code"], x["memory"]) for x in r["reasons"]] == [(code, memory.replace(" ", "_"))]
        assert "no fixed order" in r["why"][0]
    assert (results["certain"]["passed"], results["certain"]["tie"]) == (True, False)
    assert (results["certain fail"]["passed"], results["certain fail"]["tie"]) == (False, False)
    assert (got["failed"], got["tied"]) == (1, 4)

    page = BeautifulSoup(client.get("/checks").get_data(as_text=True), "html.parser")
    tie_rows = page.select("#checks tr[data-tie]")
    assert len(tie_rows) == 4 and all("depends on a tie" in tr.get_text() for tr in tie_rows)
    assert "4 depend on a tie at the recall cut" in page.select_one("#checks-summary").get_text()
    # A tie is neither a pass nor a fail to keep in the checks file.
    saved = json.loads((tied.project_dir / ".agentao" / "memory-checks.json").read_text())["checks"]
    assert [c.get("last_result") for c in saved] == [None, None, "pass", None, None, "fail"]
    # The command proves nothing on a tie either: it says so and exits 1.
    from dashboard.cli import main

    args = ["check", "--project", str(tied.project_dir), "--user-db", str(tied.user_db)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert sum(line.startswith("TIE ") for line in out.splitlines()) == 4
    assert "Depending on a tie at the recall cut (neither pass nor fail): 4." in out


# ---------------------------------------------------------------------------
# The stable block: no set, so the same second must order exactly as agentao's SQLite walk
# ---------------------------------------------------------------------------
TYPES = ("note", "project_fact", "decision", "workflow", "note", "project_fact")


def _world(agent: Agent, rng: random.Random) -> None:
    """Batches saved within one second each, keys in random order, both scopes; some deleted, then
    saved again under the same key (a new row), some updated in a later second."""
    ids = iter(range(1, 100_000))
    keys = [f"k{n:02d} {rng.choice(['alpha', 'beta', 'gamma'])}" for n in range(30)]
    live: list[tuple[str, str]] = []
    start = datetime(2030, 6, 1, 10)
    for batch in range(6):
        stamp = (start + timedelta(seconds=batch)).strftime("%Y-%m-%dT%H:%M:%S")
        with same_second(stamp, ids):
            for key in rng.sample(keys, rng.randint(4, 9)):
                scope = rng.choice(["project", "user"])
                text = f"{key} v{batch}"  # short: many facts fit the 2,000 characters
                agent.save(key, text, ["x"], scope=scope, type=rng.choice(TYPES))
                live.append((key, scope))
            for key, scope in rng.sample(live, min(len(live), 2)):
                store = agent.manager.user_store if scope == "user" else agent.manager.project_store
                found = store.get_memory_by_scope_key(scope, key.replace(" ", "_"))
                if found is not None and rng.random() < 0.5:
                    agent.manager.delete(found.id)
                    if rng.random() < 0.7:  # saved again: a new row beside the deleted one
                        agent.save(key, f"{key} again", ["x"], scope=scope, type=rng.choice(TYPES))
    # The last second: five project notes, so the three most recent incidental places are tied.
    with same_second((start + timedelta(seconds=9)).strftime("%Y-%m-%dT%H:%M:%S"), ids):
        for n in rng.sample(range(5), 5):
            agent.save(f"late {n} note", f"late {n}", ["x"], scope="project", type="note")


@pytest.mark.parametrize("seed", range(6))
def test_the_stable_block_orders_the_same_second_as_agentao(tmp_path, seed):
    agent = Agent(tmp_path)
    _world(agent, random.Random(seed))
    theirs, _ = agentao_blocks(agent, "anything", now=datetime(2031, 1, 1, tzinfo=timezone.utc))
    client = agent.app().test_client()
    data = client.get("/preview.json", query_string={"q": "anything", "asof": ASOF}).get_json()
    assert data["stable_block"] == theirs
    page = BeautifulSoup(
        client.get("/preview", query_string={"q": "anything", "asof": ASOF}).get_data(as_text=True),
        "html.parser",
    )
    assert page.select_one("pre#stable-block").get_text() == theirs
    # The stable selection itself (before the budget), ties at the 3 recent incidental places too.
    picked = [m.id for m in agent.manager.get_stable_entries()]
    late = [m for m in agent.manager.get_all_entries() if m.key_normalized.startswith("late_")]
    assert len(late) == 5 and sum(m.id in picked for m in late) == 3  # the cut falls in the tie
    assert data["stable_entries_total"] == len(picked)
    assert {e["id"] for e in data["stable_entries"]} == set(picked)
