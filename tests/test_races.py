"""Two-file actions and edits while another process writes: real processes, a barrier, many rounds.

Each test forks real processes (agentao's own MemoryManager, or a second
dashboard with its own app) and meets them at a ``multiprocessing.Barrier``
once per round, so both sides act in the same few milliseconds.  The other
side starts after a delay that changes from round to round, which sweeps it
across the dashboard's action.  Afterwards the files are read with plain
sqlite3 and checked for what a user would notice: a memory live in both
stores or in neither after a move, a memory live for a rejected review item,
an event written by the side that was told 409, an edit refused because the
agent saved some *other* memory.
"""

from __future__ import annotations

import multiprocessing as mp
import re
import sqlite3
import time
import traceback
from itertools import product
from pathlib import Path

import pytest
from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
from agentao_world import Agent
from bs4 import BeautifulSoup

from dashboard.actions import approval
from dashboard.store import build_refs, writes

FORK = mp.get_context("fork")
JSON = {"Accept": "application/json"}
WAIT = 30  # seconds any side waits at the barrier before the test fails instead of hanging


def _jitter(r: int) -> float:
    """The other side's delay in round ``r``: 0 to 5.5 ms in steps of 0.5 ms."""
    return (r * 5 % 12) * 0.0005


def _words(n: int) -> list[str]:
    # agentao keys review items on letters only, so numbered phrases would fold into one.
    return ["".join(p) for p in product("bcdfghjklm", repeat=2)][:n]


def _forms(client, store: str, memory_id: str, tail: str = "") -> dict:
    page = BeautifulSoup(
        client.get(f"/memories/{store}/{memory_id}{tail}").get_data(as_text=True), "html.parser"
    )
    return {
        f["id"]: {i["name"]: i.get("value", "") for i in f.select("input")}
        for f in page.select("#memory-actions form")
    }


def _live(db: Path, key: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT id FROM memories WHERE key_normalized = ? AND deleted_at IS NULL", (key,)
            )
        ]
    finally:
        conn.close()


def _events(db: Path, key: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT e.event_type FROM memory_events e JOIN memories m ON m.id = e.memory_id"
                " WHERE m.key_normalized = ? ORDER BY e.id",
                (key,),
            )
        ]
    finally:
        conn.close()


def _status(db: Path, item_id: str) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT status FROM memory_review_queue WHERE id = ?", (item_id,)).fetchone()[0]
    finally:
        conn.close()


_STARTED: list = []


@pytest.fixture(autouse=True)
def _no_leftover_process():
    # A test that fails mid-round leaves its other side waiting at the barrier: end it.
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.is_alive():
            proc.kill()
        proc.join(WAIT)


def _child(target, *args):
    """Run ``target(*args)`` in a forked process; the queue gets its answer or traceback."""
    results = FORK.Queue()

    def main():
        try:
            results.put(("ok", target(*args)))
        except BaseException:  # noqa: BLE001 - the parent reports it
            results.put(("error", traceback.format_exc()))

    proc = FORK.Process(target=main, daemon=True)
    proc.start()
    _STARTED.append(proc)
    return proc, results


def _join(proc, results):
    try:
        kind, value = results.get(timeout=WAIT)
    finally:
        proc.join(timeout=WAIT)
        if proc.is_alive():
            proc.kill()
    assert kind == "ok", value
    return value


# --------------------------------------------------------------------------- the other sides
def _agent_saves(project_db: Path, user_db: Path, barrier, rounds: int, burst: int, tag: str, settle=None):
    """agentao saving other memories into the project store, a burst per round."""
    manager = MemoryManager(SQLiteMemoryStore.open(project_db), SQLiteMemoryStore.open(user_db))
    saved = 0
    for r in range(rounds):
        barrier.wait(WAIT)
        if settle is not None:
            # One save between the page and the click (as while a person reads), then the
            # rest.  A decision is always in <memory-stable>: the block shown is now stale.
            manager.upsert(
                SaveMemoryRequest(
                    key=f"{tag} decision",
                    value=f"Decided in round {r}.",
                    tags=["agent"],
                    scope="project",
                    type="decision",
                )
            )
            saved += 1
            settle.wait(WAIT)
        time.sleep(_jitter(r))
        for k in range(burst):
            manager.upsert(
                SaveMemoryRequest(
                    key=f"{tag} {r} {k}", value=f"agent note {r}.{k}", tags=["agent"], scope="project"
                )
            )
            saved += 1
        barrier.wait(WAIT)  # the round is over: the next page is read from quiet files
    return saved


def _dashboard_edits(agent: Agent, barrier, ids: list[str]):
    """A second dashboard process editing memory ``ids[r]`` in round ``r``."""
    client = agent.app().test_client()
    answers = []
    for r, memory_id in enumerate(ids):
        form = _forms(client, "project", memory_id)["edit-form"]
        barrier.wait(WAIT)
        time.sleep(_jitter(r))
        answers.append(
            client.post(
                f"/memories/project/{memory_id}/edit",
                headers=JSON,
                data=dict(form, value=f"Edited by the other dashboard {r}.", tags="", type=""),
            ).status_code
        )
        barrier.wait(WAIT)
    return answers


def _agent_rejects(project_db: Path, user_db: Path, barrier, rounds: list[list[str]]):
    """agentao's own ``reject_review_item`` on each round's items (last first)."""
    manager = MemoryManager(SQLiteMemoryStore.open(project_db), SQLiteMemoryStore.open(user_db))
    claimed = {}
    for r, ids in enumerate(rounds):
        barrier.wait(WAIT)
        time.sleep(_jitter(r))
        for item_id in reversed(ids):
            claimed[item_id] = manager.reject_review_item(item_id)
        barrier.wait(WAIT)
    return claimed


def _dashboard_decides(agent: Agent, barrier, rounds: list[list[str]], tokens: dict, action: str):
    """A second dashboard process bulk-approving or bulk-rejecting each round's items."""
    client = agent.app().test_client()
    answers = {}
    for r, ids in enumerate(rounds):
        data = {
            "ids": list(reversed(ids)),
            **{f"seen-{i}": tokens[i][0] for i in ids},
            **{f"target-{i}": tokens[i][1] for i in ids},
        }
        barrier.wait(WAIT)
        time.sleep(_jitter(r))
        body = client.post(f"/reviews/{action}", headers=JSON, json=data).get_json()
        answers.update({o["id"]: o["outcome"] for o in body["outcomes"]})
        barrier.wait(WAIT)
    return answers


# --------------------------------------------------------------------------- moves
def _movable(agent: Agent, n: int) -> list:
    return [
        agent.save(f"move me {w}", f"Fact {w} that moves between the stores.", ["moving"]) for w in _words(n)
    ]


def _split_states(agent: Agent, memories) -> list[str]:
    """Keys that are live in both stores, or in neither."""
    out = []
    for m in memories:
        where = len(_live(agent.project_db, m.key_normalized)) + len(_live(agent.user_db, m.key_normalized))
        if where != 1:
            out.append(f"{m.key_normalized}: live in {where} stores")
    return out


def test_moves_while_agentao_saves_to_the_source_store_leave_no_split(agent):
    rounds = 24
    memories = _movable(agent, rounds)
    client = agent.app().test_client()
    barrier = FORK.Barrier(2)
    proc = _child(_agent_saves, agent.project_db, agent.user_db, barrier, rounds, 6, "agent")
    answers = []
    for memory in memories:
        form = _forms(client, "project", memory.id)["move-form"]
        barrier.wait(WAIT)
        answers.append(client.post(f"/memories/project/{memory.id}/move", headers=JSON, data=form).get_json())
        barrier.wait(WAIT)
    saved = _join(*proc)
    assert saved == rounds * 6
    assert _split_states(agent, memories) == []
    # The agent saved only *other* memories: no move had a reason to be refused.
    refused = [a["message"] for a in answers if a["status"] != 200]
    assert refused == [], refused
    assert all(_live(agent.user_db, m.key_normalized) for m in memories)


def test_move_against_an_edit_in_another_dashboard_leaves_no_split(agent):
    rounds = 20
    memories = _movable(agent, rounds)
    client = agent.app().test_client()
    barrier = FORK.Barrier(2)
    proc = _child(_dashboard_edits, agent, barrier, [m.id for m in memories])
    moves = []
    for memory in memories:
        form = _forms(client, "project", memory.id)["move-form"]
        barrier.wait(WAIT)
        moves.append(client.post(f"/memories/project/{memory.id}/move", headers=JSON, data=form).status_code)
        barrier.wait(WAIT)
    edits = _join(*proc)
    assert _split_states(agent, memories) == []
    for memory, moved, edited in zip(memories, moves, edits):
        # One of the two goes first; the other finds the row gone or changed and writes nothing.
        assert sorted((moved, edited)) == [200, 409], (moved, edited)
        [where] = [db for db in (agent.project_db, agent.user_db) if _live(db, memory.key_normalized)]
        assert (where == agent.user_db) == (moved == 200)


def _dashboard_moves(agent: Agent, barrier, store: str, ids: list[str]):
    """A second dashboard process moving memory ``ids[r]`` out of ``store`` in round ``r``."""
    client = agent.app().test_client()
    answers = []
    for memory_id in ids:
        form = _forms(client, store, memory_id)["move-form"]
        barrier.wait(WAIT)
        answers.append(client.post(f"/memories/{store}/{memory_id}/move", headers=JSON, data=form).get_json())
        barrier.wait(WAIT)
    return answers


def test_moves_both_ways_in_two_dashboards_do_not_deadlock(agent):
    # Each move locks both files.  Taken in the move's own order (target, then
    # source) the two would each hold one lock and wait for the other.
    rounds = 10
    down = _movable(agent, rounds)
    up = [
        agent.save(f"move up {w}", f"Preference {w} kept for every project.", ["moving"], scope="user")
        for w in _words(rounds)
    ]
    client = agent.app().test_client()
    barrier = FORK.Barrier(2)
    proc = _child(_dashboard_moves, agent, barrier, "user", [m.id for m in up])
    ours = []
    for memory in down:
        form = _forms(client, "project", memory.id)["move-form"]
        barrier.wait(WAIT)
        ours.append(client.post(f"/memories/project/{memory.id}/move", headers=JSON, data=form).get_json())
        barrier.wait(WAIT)
    theirs = _join(*proc)
    assert [a["message"] for a in ours + theirs if a["status"] != 200] == []
    assert _split_states(agent, down + up) == []  # a deadlock ends in a 'locked' answer above


# --------------------------------------------------------------------------- approvals
def _queue(agent: Agent, n: int) -> list[list[str]]:
    """n rounds of two pending items: one that lands in the user store, one in the project store."""
    words = _words(n)
    agent.crystallize(*[f"I prefer {w} tabs. We must never {w} deploy." for w in words])
    items = {i.key_normalized: i.id for i in agent.manager.list_review_items()}
    return [[items[f"preference_{w}_tabs"], items[f"constraint_never_{w}_deploy"]] for w in words]


def _tokens(agent: Agent, rounds) -> dict:
    refs = build_refs(agent.project_dir, agent.user_db)
    out = {}
    for item_id in (i for ids in rounds for i in ids):
        plan = approval.plan_approval(refs, writes.review_item(agent.project_db, item_id))
        out[item_id] = (plan.item_fingerprint, plan.target_fingerprint)
    return out


def _memory_key(item_id: str, agent: Agent) -> tuple[str, Path]:
    item = writes.review_item(agent.project_db, item_id)
    return item.key_normalized, agent.user_db if item.scope == "user" else agent.project_db


def _bulk_approve(agent: Agent, barrier, rounds, tokens) -> dict:
    client = agent.app().test_client()
    answers = {}
    for ids in rounds:
        data = {
            "ids": ids,
            **{f"seen-{i}": tokens[i][0] for i in ids},
            **{f"target-{i}": tokens[i][1] for i in ids},
        }
        barrier.wait(WAIT)
        body = client.post("/reviews/approve", headers=JSON, json=data).get_json()
        answers.update({o["id"]: o["outcome"] for o in body["outcomes"]})
        barrier.wait(WAIT)
    return answers


def test_bulk_approve_against_agentaos_reject_leaves_no_memory_for_a_rejected_item(agent):
    rounds = _queue(agent, 20)
    tokens = _tokens(agent, rounds)
    barrier = FORK.Barrier(2)
    proc = _child(_agent_rejects, agent.project_db, agent.user_db, barrier, rounds)
    ours = _bulk_approve(agent, barrier, rounds, tokens)
    theirs = _join(*proc)
    wrong, agentaos_own = [], []
    for item_id in ours:
        key, db = _memory_key(item_id, agent)
        status, live = _status(agent.project_db, item_id), _live(db, key)
        if ours[item_id] == "overridden":
            # agentao read "pending", waited for our lock, and set "rejected" after our
            # commit without looking again (its reject is a read and an unconditional
            # UPDATE in two transactions).  Read back after the write, the answer says so (tests/test_two_file_actions.py checks its words and fix).
            agentaos_own.append(item_id)
            if (status, len(live), _events(db, key)) != ("rejected", 1, ["create"]):
                wrong.append(f"{item_id} overridden: {status}, {len(live)} live")
        elif ours[item_id] != "approved":
            # Told "no longer pending": it must have written nothing at all.
            if live or _events(db, key):
                wrong.append(f"{item_id} {ours[item_id]} but {key} is live, status {status}")
        elif status != "approved" or len(live) != 1:
            wrong.append(f"{item_id} approved but status {status}, {len(live)} live")
    assert wrong == []
    assert all(theirs[i] for i in agentaos_own)
    print(
        f"{len(agentaos_own)} of {len(ours)} items approved by us, then overwritten by "
        "agentao's reject_review_item (agentao checks and updates in two transactions)"
    )


def test_approve_against_a_reject_in_another_dashboard_never_splits(agent):
    rounds = _queue(agent, 20)
    tokens = _tokens(agent, rounds)
    barrier = FORK.Barrier(2)
    proc = _child(_dashboard_decides, agent, barrier, rounds, tokens, "reject")
    ours = _bulk_approve(agent, barrier, rounds, tokens)
    theirs = _join(*proc)
    for item_id in ours:
        key, db = _memory_key(item_id, agent)
        status, live, events = _status(agent.project_db, item_id), _live(db, key), _events(db, key)
        assert sorted((ours[item_id], theirs[item_id])) in (
            ["approved", "not_pending"],
            ["not_pending", "rejected"],
        ), item_id
        if status == "rejected":
            assert (ours[item_id], live, events) == ("not_pending", [], []), key
        else:
            assert (ours[item_id], len(live), events) == ("approved", 1, ["create"]), key


def test_two_dashboards_approving_the_same_items_write_one_event_each(agent):
    rounds = _queue(agent, 20)
    tokens = _tokens(agent, rounds)
    barrier = FORK.Barrier(2)
    proc = _child(_dashboard_decides, agent, barrier, rounds, tokens, "approve")
    ours = _bulk_approve(agent, barrier, rounds, tokens)
    theirs = _join(*proc)
    for item_id in ours:
        key, db = _memory_key(item_id, agent)
        assert sorted((ours[item_id], theirs[item_id])) == ["approved", "not_pending"], item_id
        # The side told 409 wrote nothing: one row, one "create" event, no extra "update".
        assert (len(_live(db, key)), _events(db, key)) == (1, ["create"]), key
        assert _status(agent.project_db, item_id) == "approved"


# --------------------------------------------------------------------------- edits and deletes
def test_edits_and_soft_deletes_succeed_while_agentao_saves_other_rows(agent):
    rounds = 12
    edited = [agent.save(f"edit me {w}", f"Original {w}.", ["mine"]) for w in _words(rounds)]
    deleted = [agent.save(f"delete me {w}", f"Doomed {w}.", ["mine"]) for w in _words(rounds)]
    client = agent.app().test_client()
    barrier, settle = FORK.Barrier(2), FORK.Barrier(2)
    proc = _child(_agent_saves, agent.project_db, agent.user_db, barrier, 2 * rounds, 4, "agent", settle)
    answers, stale = [], 0
    for r in range(2 * rounds):
        memory = (edited if r % 2 == 0 else deleted)[r // 2]
        if r % 2 == 0:  # the edit's effect, as "Show the effect on the prompt" shows it
            edit = dict(value=f"Edited {r}.", tags="mine", type="")
            form = _forms(client, "project", memory.id, f"/effect?value=Edited+{r}.&tags=mine")
            url, data = f"/memories/project/{memory.id}/edit", dict(form["edit-form"], **edit)
        else:
            form = _forms(client, "project", memory.id)
            url, data = f"/memories/project/{memory.id}/delete", form["delete-form"]
        barrier.wait(WAIT)
        settle.wait(WAIT)  # the agent has saved another memory since the page was shown
        r_ = client.post(url, data=data)
        answers.append(
            (
                memory.key_normalized,
                r_.status_code,
                re.sub(r"\s+", " ", BeautifulSoup(r_.get_data(as_text=True), "html.parser").get_text())[:200],
            )
        )
        if r_.status_code == 303:
            done = BeautifulSoup(
                client.get(r_.headers["Location"]).get_data(as_text=True), "html.parser"
            ).select_one('[data-field="done"]')
            stale += done is not None and done.has_attr("data-effect-stale")
        barrier.wait(WAIT)
    _join(*proc)
    assert [a for a in answers if a[1] != 303] == []
    for m in edited:
        [row] = _live(agent.project_db, m.key_normalized)
        assert agent.manager.get_entry(row).content.startswith("Edited ")
    assert all(_live(agent.project_db, m.key_normalized) == [] for m in deleted)
    # Every effect shown was computed before the agent's decision: each answer says so.
    assert stale == 2 * rounds
