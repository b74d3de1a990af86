"""Approve, reject, delete, edit and move through the dashboard vs. through agentao itself.

Each scenario builds a database with the real agentao package, copies the
files twice, applies the same decisions to one copy through the dashboard
and to the other through agentao's MemoryManager, and compares every row,
event and the change counter.  New memory ids and fresh timestamps are the
only things allowed to differ.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
from agentao_world import Agent

from dashboard.actions import approval, curation
from dashboard.contract import SaveRefused
from dashboard.store import StoreProblem, build_refs, lockstep, writes
from dashboard.store.writes import Expect, WriteConflict


class Copy:
    """One copy of an Agent's files; ``refs`` for the dashboard, ``manager()`` for agentao."""

    def __init__(self, agent: Agent, root: Path):
        self.project_dir = root / "project"
        self.project_db = self.project_dir / ".agentao" / "memory.db"
        self.user_db = root / "home" / ".agentao" / "memory.db" if agent.user_db else None
        for src, dst in ((agent.project_db, self.project_db), (agent.user_db, self.user_db)):
            if src is None:
                continue
            dst.parent.mkdir(parents=True)
            for suffix in ("", "-wal"):
                if Path(str(src) + suffix).exists():
                    shutil.copy(str(src) + suffix, str(dst) + suffix)
        self.refs = build_refs(self.project_dir, self.user_db)

    def manager(self) -> MemoryManager:
        return MemoryManager(
            SQLiteMemoryStore.open(self.project_db),
            SQLiteMemoryStore.open(self.user_db) if self.user_db else None,
        )


def dump(path: Path | None, original: dict | None = None) -> dict:
    """Rows, events, queue and counter of one file, with new ids and new stamps masked."""
    if path is None:
        return {}
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        mems = [dict(r) for r in conn.execute("SELECT rowid AS rn, * FROM memories ORDER BY rowid")]
        events = [dict(r) for r in conn.execute("SELECT * FROM memory_events ORDER BY id")]
        queue = [dict(r) for r in conn.execute("SELECT * FROM memory_review_queue ORDER BY id")]
        counter = conn.execute("SELECT value FROM schema_meta WHERE key='memories_change'").fetchone()[0]
    finally:
        conn.close()
    orig_rows = {r["id"]: r for r in (original or {}).get("_raw", [])}
    orig_queue = {r["id"]: r for r in (original or {}).get("_rawq", [])}
    names = {}
    for m in mems:
        if m["id"] not in orig_rows:
            names[m["id"]] = f"new:{m['scope']}:{m['key_normalized']}:{len(names)}"

    def stamp(value, old):
        # Both systems write with a frozen clock (see run_both), so a fresh stamp is exact.
        return "NEW" if value == LATER else value

    out_mems = []
    for m in mems:
        old = orig_rows.get(m["id"], {})
        row = dict(m, id=names.get(m["id"], m["id"]))
        row.pop("rn")
        for col in ("created_at", "updated_at", "deleted_at"):
            row[col] = stamp(m[col], old.get(col))
        out_mems.append(row)
    out_mems.sort(key=lambda r: (r["scope"], r["key_normalized"], r["id"]))
    out_events = [(names.get(e["memory_id"], e["memory_id"]), e["event_type"], e["detail"]) for e in events]
    out_queue = [
        dict(q, updated_at=stamp(q["updated_at"], orig_queue.get(q["id"], {}).get("updated_at")))
        for q in queue
    ]
    return {
        "memories": out_mems,
        "events": out_events,
        "queue": out_queue,
        "counter": counter,
        "_raw": mems,
        "_rawq": queue,
    }


def state(copy: Copy, original: dict) -> dict:
    return {
        k: {kk: vv for kk, vv in dump(getattr(copy, k), original[k]).items() if not kk.startswith("_")}
        for k in ("project_db", "user_db")
    }


def snapshot(agent: Agent) -> dict:
    return {"project_db": dump(agent.project_db), "user_db": dump(agent.user_db)}


def pending_ids(agent: Agent) -> list[str]:
    return [i.id for i in agent.manager.list_review_items()]


LATER = "2099-01-02T03:04:05"


def run_both(agent: Agent, tmp_path: Path, dashboard_step, agentao_step):
    """Apply the same decisions to two copies; return both outcomes and states.

    Both clocks are frozen at LATER, so every stamp written now is exactly
    LATER on both sides and the comparison needs no tolerance.
    """
    original = snapshot(agent)
    ours, theirs = Copy(agent, tmp_path / "ours"), Copy(agent, tmp_path / "theirs")
    with mock.patch.object(writes, "now", lambda: LATER):
        out_ours = dashboard_step(ours)
    with (
        mock.patch("agentao.memory.manager._now", lambda: LATER),
        mock.patch("agentao.memory.storage._now_iso", lambda: LATER),
    ):
        out_theirs = agentao_step(theirs, theirs.manager())
    return out_ours, out_theirs, state(ours, original), state(theirs, original)


def decide(ids_and_actions):
    """The same list of (id, 'approve'|'reject') through both systems; outcomes as text."""

    def ours(copy):
        results = []
        for item_id, action in ids_and_actions:
            try:
                if action == "approve":
                    _plan, saved = approval.approve(copy.refs, item_id)
                    results.append(("ok", saved.event))
                else:
                    approval.reject(copy.refs, item_id)
                    results.append(("ok", None))
            except SaveRefused as refused:
                results.append(("refused", str(refused)))
            except WriteConflict as conflict:
                results.append((conflict.kind, None))
        return results

    def theirs(copy, manager):
        results = []
        for item_id, action in ids_and_actions:
            try:
                if action == "approve":
                    before = manager.get_all_entries()
                    record = manager.approve_review_item(item_id)
                    if record is None:
                        results.append(("not_pending", None))
                    else:
                        existed = any(e.id == record.id for e in before)
                        results.append(("ok", "update" if existed else "create"))
                else:
                    ok = manager.reject_review_item(item_id)
                    results.append(("ok", None) if ok else ("not_pending", None))
            except ValueError as refused:  # SensitiveMemoryError is a ValueError
                results.append(("refused", str(refused)))
        return results

    return ours, theirs


def assert_same(agent, tmp_path, decisions):
    ours, theirs = decide(decisions)
    out_ours, out_theirs, st_ours, st_theirs = run_both(agent, tmp_path, ours, theirs)
    assert out_ours == out_theirs
    assert st_ours == st_theirs
    return out_ours, st_ours


# --------------------------------------------------------------------------- review items
def test_user_and_project_items_approved_like_agentao(agent, tmp_path):
    agent.crystallize("I prefer tabs over spaces. We must never push to main.")
    ids = pending_ids(agent)
    out, st = assert_same(agent, tmp_path, [(i, "approve") for i in ids])
    assert out == [("ok", "create"), ("ok", "create")]
    assert {m["scope"] for m in st["user_db"]["memories"]} == {"user"}
    assert all(q["status"] == "approved" for q in st["project_db"]["queue"])


def test_reject_and_decide_twice_like_agentao(agent, tmp_path):
    agent.crystallize("I prefer tabs over spaces.", "We decided to use uv for packaging.")
    a, b = pending_ids(agent)
    out, _ = assert_same(
        agent,
        tmp_path,
        [
            (a, "reject"),
            (a, "reject"),
            (a, "approve"),
            (b, "approve"),
            (b, "approve"),
            ("nosuchitem0", "approve"),
        ],
    )
    assert out[1] == ("not_pending", None) and out[2] == ("not_pending", None)


def test_cjk_keys_collapse_and_fold_onto_one_memory(agent, tmp_path):
    agent.crystallize("我喜欢用中文回答问题", "我偏好简洁的代码风格")
    ids = pending_ids(agent)
    out, st = assert_same(agent, tmp_path, [(i, "approve") for i in ids])
    assert out == [("ok", "create"), ("ok", "update")]
    [memory] = st["user_db"]["memories"]
    assert memory["key_normalized"] == "preference"
    assert memory["source"] == "crystallized" and memory["confidence"] == "auto_summary"


def test_secret_content_is_refused_and_stays_pending(agent, tmp_path):
    agent.crystallize("I use token=abcdefgh12345678 for the staging API.")
    [item] = pending_ids(agent)
    out, st = assert_same(agent, tmp_path, [(item, "approve")])
    assert out == [("refused", "Refused to save: content appears to contain sensitive credentials")]
    assert st["project_db"]["queue"][0]["status"] == "pending"


def test_too_long_content_is_refused(agent, tmp_path):
    agent.crystallize("We must never push to main.")
    [item] = pending_ids(agent)
    with sqlite3.connect(agent.project_db) as conn:  # hand-edited row: crystallizer caps at 80
        conn.execute("UPDATE memory_review_queue SET content = ? WHERE id = ?", ("x" * 4001, item))
    out, _ = assert_same(agent, tmp_path, [(item, "approve")])
    assert out == [("refused", "Memory content exceeds max length (4001 > 4000)")]


def test_collision_with_live_memory_updates_it(agent, tmp_path):
    agent.save("preference_tabs_over_spaces", "Spaces, four of them.", ["style"], scope="user")
    agent.save("constraint_never_push_to_main", "Push freely.", ["git"])
    agent.crystallize("I prefer tabs over spaces. We must never push to main.")
    ids = pending_ids(agent)
    out, st = assert_same(agent, tmp_path, [(i, "approve") for i in ids])
    assert out == [("ok", "update"), ("ok", "update")]
    assert [e[1] for e in st["user_db"]["events"]] == ["create", "update"]


def test_same_phrase_proposed_again_after_approval(agent, tmp_path):
    agent.crystallize("I prefer tabs over spaces.")
    agent.manager.approve_review_item(pending_ids(agent)[0])
    agent.crystallize("I prefer tabs over spaces.")
    out, _ = assert_same(agent, tmp_path, [(pending_ids(agent)[0], "approve")])
    assert out == [("ok", "update")]


def test_no_user_store_downgrades_to_project(tmp_path):
    agent = Agent(tmp_path / "orig", with_user_store=False)
    agent.crystallize("I prefer tabs over spaces. 我喜欢用中文回答问题")
    out, st = assert_same(agent, tmp_path, [(i, "approve") for i in pending_ids(agent)])
    assert {m["scope"] for m in st["project_db"]["memories"]} == {"project"}


# --------------------------------------------------------------------------- crash and retry
def _dies_before_second_commit(action, *args) -> None:
    """Run ``action(*args)`` in a forked process that is killed between its two commits.

    The first file's transaction commits; the process then exits (``os._exit``,
    no clean-up, no rollback) while the second file's transaction is open, as
    a power cut or a kill -9 would leave it.
    """

    def main():
        real, committed = lockstep.write, []

        @contextmanager
        def dying(path, **kw):
            with real(path, **kw) as conn:
                yield conn
                if committed:
                    os._exit(9)
                committed.append(path)

        lockstep.write = dying
        action(*args)
        os._exit(0)

    proc = multiprocessing.get_context("fork").Process(target=main)
    proc.start()
    proc.join(30)
    assert proc.exitcode == 9


def _second_commit_fails(monkeypatch) -> None:
    """The second file's commit fails (as on a full disk) after the first committed."""
    real, committed = lockstep.write, []

    @contextmanager
    def failing(path, **kw):
        with real(path, **kw) as conn:
            yield conn
            if committed:
                raise StoreProblem("disk_full", f"There is no room left to write {path}.")
            committed.append(path)

    monkeypatch.setattr(lockstep, "write", failing)


def test_crash_between_the_two_files_is_finished_by_the_next_write(agent, tmp_path, monkeypatch):
    agent.crystallize("I prefer tabs over spaces.")
    [item] = pending_ids(agent)
    refs = build_refs(agent.project_dir, agent.user_db)
    plan = approval.plan_approval(refs, writes.review_item(agent.project_db, item))
    tokens = (plan.item_fingerprint, plan.target_fingerprint)
    _dies_before_second_commit(approval.approve, refs, item, *tokens)
    # The memory's file committed first; the item's transaction died with the process.
    assert agent.manager.list_review_items()[0].status == "pending"
    assert len(agent.manager.get_all_entries("user")) == 1
    # The next write finishes the recorded approval first, so the retry finds it done.
    with pytest.raises(WriteConflict, match="no longer pending .it is approved"):
        approval.approve(refs, item, *tokens)
    [memory] = agent.manager.get_all_entries("user")
    assert memory.key_normalized == "preference_tabs_over_spaces"
    assert agent.manager.list_review_items("approved")[0].id == item
    # A failed second commit says what was written, never "nothing was changed".
    agent.crystallize("I prefer short answers.")
    [item] = pending_ids(agent)
    plan = approval.plan_approval(refs, writes.review_item(agent.project_db, item))
    _second_commit_fails(monkeypatch)
    with pytest.raises(StoreProblem) as refused:
        approval.approve(refs, item, plan.item_fingerprint, plan.target_fingerprint)
    assert "nothing was changed" not in str(refused.value).lower()
    monkeypatch.undo()
    with pytest.raises(WriteConflict, match="no longer pending .it is approved"):
        approval.approve(refs, item, plan.item_fingerprint, plan.target_fingerprint)
    assert len(agent.manager.get_all_entries("user")) == 2 and pending_ids(agent) == []


def test_crash_during_move_is_finished_by_the_next_write(seeded):
    refs = build_refs(seeded.project_dir, seeded.user_db)
    memory = next(m for m in seeded.manager.get_all_entries("project") if m.key_normalized == "database")
    move_plan = curation.plan_move(refs, curation.live_memory(refs, "project", memory.id))
    expect = Expect(updated_at=memory.updated_at)
    _dies_before_second_commit(
        curation.move, refs, "project", memory.id, expect, move_plan.target_fingerprint
    )
    # The target committed first: both are live, nothing is lost.
    assert [m.key_normalized for m in seeded.manager.get_all_entries("user")].count("database") == 1
    assert "database" in [m.key_normalized for m in seeded.manager.get_all_entries("project")]
    # The retry's write finishes the recorded move first: the original is gone, once.
    with pytest.raises(WriteConflict, match="no longer live"):
        curation.move(refs, "project", memory.id, expect, move_plan.target_fingerprint)
    assert [m.key_normalized for m in seeded.manager.get_all_entries("user")].count("database") == 1
    assert "database" not in [m.key_normalized for m in seeded.manager.get_all_entries("project")]


# --------------------------------------------------------------------------- curation
def _find(copy_or_agent, key):
    mgr = copy_or_agent.manager if isinstance(copy_or_agent, Agent) else copy_or_agent
    return next(m for m in mgr.get_all_entries() if m.key_normalized == key)


@pytest.mark.parametrize("key", ["user_language", "package_manager", "database"])
def test_soft_delete_like_agentao(seeded, tmp_path, key):
    memory = _find(seeded, key)
    store = "user" if memory.scope == "user" else "project"

    def ours(copy):
        return curation.delete(copy.refs, store, memory.id, Expect())

    def theirs(copy, manager):
        return manager.delete(memory.id)

    out_ours, out_theirs, st_ours, st_theirs = run_both(seeded, tmp_path, ours, theirs)
    assert out_ours is out_theirs is True and st_ours == st_theirs


@pytest.mark.parametrize(
    "key,value,tags,type_",
    [
        ("package_manager", "uv, and uv.lock is committed.", ["tooling", "Python"], "decision"),
        ("user_language", "Answer in French.", ["user", "语言"], "profile"),
        ("database", "PostgreSQL 17.", [], "project_fact"),
        ("_", "Value saved under a CJK-only title.", ["运维"], "note"),
    ],
)
def test_edit_like_agentao(seeded, tmp_path, key, value, tags, type_):
    memory = (
        _find(seeded, key)
        if key != "_"
        else next(m for m in seeded.manager.get_all_entries() if m.title.startswith("部署"))
    )
    store = "user" if memory.scope == "user" else "project"

    def ours(copy):
        return curation.edit(copy.refs, store, memory.id, value, tags, type_, Expect()).event

    def theirs(copy, manager):
        manager.upsert(
            SaveMemoryRequest(
                key=curation.resave_key(memory), value=value, tags=tags, scope=memory.scope, type=type_
            )
        )
        return "update"

    out_ours, out_theirs, st_ours, st_theirs = run_both(seeded, tmp_path, ours, theirs)
    assert out_ours == out_theirs == "update" and st_ours == st_theirs


def test_edit_refused_with_agentaos_reason(seeded):
    refs = build_refs(seeded.project_dir, seeded.user_db)
    memory = _find(seeded, "database")
    with pytest.raises(SaveRefused, match="sensitive credentials"):
        curation.edit(refs, "project", memory.id, "password = hunter2hunter2", [], None, Expect())


@pytest.mark.parametrize("key", ["database", "editor"])
def test_move_like_agentao(seeded, tmp_path, key):
    memory = _find(seeded, key)
    store = "user" if memory.scope == "user" else "project"
    to = "project" if store == "user" else "user"

    def ours(copy):
        plan = curation.plan_move(copy.refs, curation.live_memory(copy.refs, store, memory.id))
        return curation.move(copy.refs, store, memory.id, Expect(), plan.target_fingerprint).event

    def theirs(copy, manager):
        manager.upsert(
            SaveMemoryRequest(
                key=memory.title,
                value=memory.content,
                tags=memory.tags,
                scope=to,
                type=memory.type,
                source=memory.source,
            )
        )
        manager.delete(memory.id)
        return "create"

    out_ours, out_theirs, st_ours, st_theirs = run_both(seeded, tmp_path, ours, theirs)
    assert out_ours == out_theirs and st_ours == st_theirs


# --------------------------------------------------------------------------- conflicts
def test_agent_rewriting_the_row_after_render_is_a_conflict(seeded):
    refs = build_refs(seeded.project_dir, seeded.user_db)
    memory = curation.live_memory(refs, "project", _find(seeded, "database").id)
    seen = Expect(updated_at=memory.updated_at, row=writes.fingerprint(memory))
    target = curation.plan_move(refs, memory).target_fingerprint
    # The agent saves this very key again within the same second: only the fingerprint moves.
    with mock.patch("agentao.memory.storage._now_iso", lambda: memory.updated_at):
        seeded.save("database", "PostgreSQL 17 now.", ["infra"], type="project_fact")
    assert _find(seeded, "database").updated_at == memory.updated_at
    before = snapshot(seeded)
    for attempt in (
        lambda: curation.edit(refs, "project", memory.id, "new", [], None, seen),
        lambda: curation.delete(refs, "project", memory.id, seen),
        lambda: curation.move(refs, "project", memory.id, seen, target),
    ):
        with pytest.raises(WriteConflict) as exc:
            attempt()
        assert exc.value.kind == "changed" and "changed since you looked" in str(exc.value)
    assert snapshot(seeded) == before


def test_agent_saving_other_rows_is_no_conflict(seeded):
    refs = build_refs(seeded.project_dir, seeded.user_db)
    memory, doomed = (
        curation.live_memory(refs, "project", _find(seeded, k).id) for k in ("database", "release_process")
    )
    seen = lambda m: Expect(updated_at=m.updated_at, row=writes.fingerprint(m))  # noqa: E731
    seeded.save("unrelated", "The agent wrote something meanwhile.")  # the counter moves
    assert (
        curation.edit(refs, "project", memory.id, "PostgreSQL 17.", [], None, seen(memory)).event == "update"
    )
    assert curation.delete(refs, "project", doomed.id, seen(doomed))
    assert _find(seeded, "database").content == "PostgreSQL 17."
    assert "release_process" not in [m.key_normalized for m in seeded.manager.get_all_entries()]


def test_item_folded_after_render_is_a_conflict(agent):
    agent.crystallize("I prefer tabs over spaces.")
    refs = build_refs(agent.project_dir, agent.user_db)
    [item] = pending_ids(agent)
    plan = approval.plan_approval(refs, writes.review_item(agent.project_db, item))
    agent.crystallize("I prefer tabs over spaces.")  # occurrences 2: the item changed
    with pytest.raises(WriteConflict, match="changed since you looked"):
        approval.approve(refs, item, plan.item_fingerprint, plan.target_fingerprint)
    assert agent.manager.get_all_entries() == []


def test_target_memory_changed_after_render_is_a_conflict(agent):
    agent.crystallize("I prefer tabs over spaces.")
    refs = build_refs(agent.project_dir, agent.user_db)
    [item] = pending_ids(agent)
    plan = approval.plan_approval(refs, writes.review_item(agent.project_db, item))
    assert plan.existing is None
    agent.save("preference_tabs_over_spaces", "Spaces after all.", scope="user")
    with pytest.raises(WriteConflict):
        approval.approve(refs, item, plan.item_fingerprint, plan.target_fingerprint)
    assert agent.manager.list_review_items()[0].status == "pending"


def test_a_new_memory_never_takes_an_id_already_in_the_file(agent, tmp_path, monkeypatch):
    # agentao draws 8 hex digits and fails on a collision; the dashboard draws again.
    agent.crystallize("I prefer short answers.")
    copy = Copy(agent, tmp_path / "copy")
    item = copy.manager().list_review_items()[0]
    target = approval.plan_approval(copy.refs, item).save.store
    taken = copy.manager().upsert(
        SaveMemoryRequest(
            key="editor", value="Helix, not vim.", scope="user" if target == "user" else "project"
        )
    )
    copy.manager().delete(taken.id)  # soft-deleted rows keep their id
    draws = iter([taken.id + "0" * 24, "ab12cd34" + "0" * 24])
    monkeypatch.setattr(writes.uuid, "uuid4", lambda: mock.Mock(hex=next(draws)))
    _plan, saved = approval.approve(copy.refs, item.id)
    db = copy.user_db if target == "user" else copy.project_db
    ids = [r[0] for r in sqlite3.connect(db).execute("SELECT id FROM memories")]
    assert saved.memory_id == "ab12cd34" and sorted(ids) == sorted([taken.id, "ab12cd34"])
