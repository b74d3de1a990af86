"""Forgetting for real, against files written by agentao: wipe, purge, on-disk proof, robustness."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import agentao.memory.storage as agentao_storage
import pytest
from agentao_world import Agent, file_digest, integrity

from dashboard.actions import diskscan, purge, sidefiles
from dashboard.store import build_refs
from dashboard.store import purge as purge_sql

FROZEN = "2026-01-02T03:04:05"
# 4,000 CJK characters: 12,000 bytes of UTF-8, three pages' worth of overflow chain.
LONG = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(4000))
VERSIONS = [
    f"Version {n} of the travel plan: flight QX{n}{n}7 to Reykjavik, seat {n}4C, "
    f"hotel booking reference HB-{n * 1234:06d}, returning on day {n + 10}."
    for n in range(4)
]


def refs(agent: Agent):
    return build_refs(agent.project_dir, agent.user_db)


def ref_of(agent: Agent, kind: str):
    return next(r for r in refs(agent) if r.kind == kind)


def dump(path: Path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}
    finally:
        conn.close()


def files_of(db: Path) -> list[Path]:
    return sidefiles.sqlite_files(db) + sidefiles.copies_beside(db)


def naive_hits(paths, texts) -> list[tuple[str, int]]:
    """An independent check: whole string, or any 32-byte window at stride 8, anywhere."""
    found = []
    for p in paths:
        data = Path(p).read_bytes()
        for n, text in enumerate(texts):
            raw = text.encode()
            windows = [raw[k : k + 32] for k in range(0, max(1, len(raw) - 31), 8)]
            if raw in data or any(w in data for w in windows):
                found.append((str(p), n))
    return found


@pytest.fixture
def rich(seeded) -> Agent:
    """The seeded corpus plus a 12 KB memory and one updated three times."""
    seeded.save("user_biography", LONG, ["user"])
    for text in VERSIONS:
        seeded.save("travel plan", text, ["travel"])
    return seeded


def test_wipe_leaves_files_as_agentao_wipe_all(rich, tmp_path, monkeypatch):
    twin_root = tmp_path / "twin"
    shutil.copytree(rich.project_dir, twin_root / "project")
    shutil.copytree(rich.user_db.parent.parent, twin_root / "home")
    monkeypatch.setattr(agentao_storage, "_now_iso", lambda: FROZEN)
    theirs = Agent(twin_root).manager.wipe_all()
    ours = purge.wipe(refs(rich), now=FROZEN)
    assert (ours.memories_cleared, ours.summaries_cleared, ours.ok) == (
        theirs.memories_cleared,
        theirs.summaries_cleared,
        theirs.ok,
    )
    assert ours.memories_cleared == 8 and ours.summaries_cleared == 2
    assert dump(rich.project_db) == dump(twin_root / "project/.agentao/memory.db")
    assert dump(rich.user_db) == dump(twin_root / "home/.agentao/memory.db")


def test_residue_report_counts_and_changes_no_byte(rich):
    purge.wipe(refs(rich))
    shutil.copy(rich.project_db, str(rich.project_db) + ".bak")
    before = file_digest(rich.project_db, rich.user_db)
    project = purge.residue_report(ref_of(rich, "project"))
    user = purge.residue_report(ref_of(rich, "user"))
    assert file_digest(rich.project_db, rich.user_db) == before
    assert project["soft_deleted"]["count"] == 6 and user["soft_deleted"]["count"] == 3
    assert user["soft_deleted"]["bytes"] > len(LONG.encode())
    assert project["reviews"]["pending"]["count"] == 2
    assert all(r["evidence"] for r in project["reviews"]["pending"]["items"])
    assert project["summaries"]["count"] == 0
    assert project["events_of_forgotten"]["rows"] >= 1
    assert [Path(c["path"]).name for c in project["copies"]] == ["memory.db.bak"]
    assert "wear levelling" in project["unreachable"]


def test_wal_frames_parsed_from_bytes(rich):
    conn = sqlite3.connect(rich.project_db)
    try:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("UPDATE memories SET tags_json = tags_json")
        conn.commit()
        state = sidefiles.wal_state(rich.project_db)
        assert state["exists"] and state["committed"] > 0
        assert state["pending"] == state["committed"] == state["frames"]
        busy, log, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        state = sidefiles.wal_state(rich.project_db)
        assert (state["frames"], state["backfilled"], state["pending"]) == (log, done, log - done)
    finally:
        conn.close()


def test_purge_everything_erases_every_version_and_scan_agrees(rich):
    purge.wipe(refs(rich))
    user, project = ref_of(rich, "user"), ref_of(rich, "project")
    rows = purge.plan(user, purge.ALL_CATEGORIES)
    control, _ = diskscan.scan(files_of(rich.user_db), [LONG])
    assert control[diskscan.sha256_text(LONG)].found  # the scan sees it before
    for ref in (user, project):
        result = purge.purge(ref, purge.plan(ref, purge.ALL_CATEGORIES))
        assert result.status == "verified erased", result.message
        assert not any(v["files"] for v in result.verification)
        assert result.texts == () and not any(r.texts for r in result.plan)  # not kept
        assert all(row["sha256"] for row in result.to_dict()["rows"] if row["kind"] != "event")
    assert any(r.texts[0] == LONG for r in rows)
    assert naive_hits(files_of(rich.user_db) + files_of(rich.project_db), [LONG, *VERSIONS]) == []
    assert integrity(rich.user_db) == "ok" and integrity(rich.project_db) == "ok"


def test_hits_in_a_copy_are_named_but_own_files_verified(rich):
    purge.wipe(refs(rich))
    copy = Path(str(rich.project_db) + ".bak")
    shutil.copy(rich.project_db, copy)
    result = purge.purge(ref_of(rich, "project"), purge.plan(ref_of(rich, "project"), ["soft_deleted"]))
    assert result.status == "verified erased"
    assert result.copies_with_hits == [str(copy)] and str(copy) in result.message


def test_busy_checkpoint_is_pending_then_retry_verifies(rich):
    purge.wipe(refs(rich))
    ref = ref_of(rich, "project")
    reader = sqlite3.connect(rich.project_db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchone()  # holds a read snapshot
    try:
        first = purge.purge(ref, purge.plan(ref, ["soft_deleted"]))
        assert first.status == "pending, retry" and first.status != "verified erased"
    finally:
        reader.close()
    again = purge.purge(ref, first.plan, verify_texts=first.texts)
    assert again.status == "verified erased"
    assert naive_hits(files_of(rich.project_db), VERSIONS) == []


def test_writer_lock_gives_clear_message_and_changes_nothing(rich):
    purge.wipe(refs(rich))
    ref = ref_of(rich, "project")
    before = dump(rich.project_db)
    writer = sqlite3.connect(rich.project_db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        result = purge.purge(ref, purge.plan(ref, purge.ALL_CATEGORIES))
    finally:
        writer.close()
    assert result.status == "locked" and "Nothing was changed" in result.message
    assert "locked" in result.message and result.deleted == {}
    assert dump(rich.project_db) == before


def test_interrupted_purge_finishes_on_rerun(rich, monkeypatch):
    purge.wipe(refs(rich))
    ref = ref_of(rich, "project")
    rows = purge.plan(ref, ["soft_deleted", "events"])

    def crash(conn):
        raise sqlite3.OperationalError("disk I/O error (simulated crash before VACUUM)")

    monkeypatch.setattr(purge_sql, "_vacuum", crash)
    first = purge.purge(ref, rows)
    assert first.status == "interrupted, retry" and "again" in first.message
    assert purge.plan(ref, ["soft_deleted"]) == []  # the DELETE had committed
    monkeypatch.undo()
    again = purge.purge(ref, purge.plan(ref, ["soft_deleted"]), verify_texts=first.texts)
    assert again.status == "verified erased" and len(again.verification) == len(first.texts)
    assert naive_hits(files_of(rich.project_db), VERSIONS) == []


def test_agentao_uses_the_file_normally_after_a_purge(rich):
    purge.wipe(refs(rich))
    for ref in refs(rich):
        purge.purge(ref, purge.plan(ref, purge.ALL_CATEGORIES))
    after = Agent(rich.project_dir.parent)
    after.save("editor", "Helix now.", ["profile"])
    after.save("build", "make all", ["tooling"])
    assert {m.title for m in after.manager.get_all_entries()} == {"editor", "build"}
    assert integrity(rich.project_db) == "ok" and integrity(rich.user_db) == "ok"


def test_single_memory_purge_and_review_purge(rich):
    ref = ref_of(rich, "project")
    travel = next(m for m in rich.manager.get_all_entries() if m.title == "travel plan")
    result = purge.forget_memory(ref, travel.id)
    assert result.status == "verified erased"
    assert result.deleted["memory"] == 1 and result.deleted["event"] == 4
    assert naive_hits(files_of(rich.project_db), VERSIONS) == []
    assert "travel plan" not in {m.title for m in rich.manager.get_all_entries()}
    items = rich.manager.list_review_items()
    gone = purge.purge_review_items(ref, [items[0].id])
    assert gone.status == "verified erased" and gone.deleted == {"review": 1}
    assert [i.id for i in rich.manager.list_review_items()] == [items[1].id]
    # Both items quote the same message, so the evidence lives on in the other one;
    # the erased item's own title must be gone.
    assert naive_hits(files_of(rich.project_db), [items[0].title]) == []


WRITER = textwrap.dedent("""
    import os, sys, time
    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from agentao.memory.models import SaveMemoryRequest
    project, user, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    m = MemoryManager(SQLiteMemoryStore.open(project), SQLiteMemoryStore.open(user))
    i = 0
    while not os.path.exists(stop):  # until the test has run its purges, on any machine
        m.upsert(SaveMemoryRequest(key=f"loop key {i}", value=f"loop value {i} kept", tags=["loop"]))
        i += 1
        if i == 1:
            print("ready", flush=True)
        time.sleep(0.005)
    print(i, flush=True)
""")


def test_agentao_writing_during_purges_loses_nothing(rich, tmp_path):
    purge.wipe(refs(rich))
    stop = tmp_path / "stop"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(rich.project_db), str(rich.user_db), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        ref, statuses = ref_of(rich, "project"), []
        for _ in range(3):  # each purge runs whole while agentao writes, however long it takes
            statuses.append(purge.purge(ref, purge.plan(ref, purge.ALL_CATEGORIES)).status)
            assert proc.poll() is None, "agentao stopped writing"
    finally:
        stop.touch()
    n = int(proc.stdout.readline())
    assert proc.wait(timeout=60) == 0
    assert set(statuses) <= {"verified erased", "pending, retry"}
    conn = sqlite3.connect(rich.project_db)
    try:
        saved = dict(
            conn.execute(
                "SELECT title, content FROM memories WHERE deleted_at IS NULL AND title LIKE 'loop key %'"
            )
        )
    finally:
        conn.close()
    assert saved == {f"loop key {i}": f"loop value {i} kept" for i in range(n)}
    assert integrity(rich.project_db) == "ok"
    final = purge.purge(ref, [], verify_texts=VERSIONS)
    assert final.status == "verified erased"


def test_wipe_with_user_store_locked_reports_like_agentao(rich):
    writer = sqlite3.connect(rich.user_db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        result = purge.wipe(refs(rich))
    finally:
        writer.close()
    assert result.not_cleared == ("memories",) and result.memories_cleared == 0
    assert result.summaries_cleared == 2 and not result.ok
    by_store = {t["store"]: t for t in result.targets if t["target"] == "memories"}
    assert by_store["project"]["cleared"] == 5 and "locked" in by_store["user"]["error"]


def test_soft_forget_matches_agentao_delete(rich, tmp_path, monkeypatch):
    twin_root = tmp_path / "twin"
    shutil.copytree(rich.project_dir, twin_root / "project")
    shutil.copytree(rich.user_db.parent.parent, twin_root / "home")
    monkeypatch.setattr(agentao_storage, "_now_iso", lambda: FROZEN)
    editor = next(m for m in rich.manager.get_all_entries() if m.title == "editor")
    assert Agent(twin_root).manager.delete(editor.id)
    assert purge.soft_forget(ref_of(rich, "user"), editor.id, now=FROZEN)
    assert not purge.soft_forget(ref_of(rich, "user"), editor.id, now=FROZEN)  # already gone
    assert dump(rich.user_db) == dump(twin_root / "home/.agentao/memory.db")


def test_residue_with_live_wal_leaves_database_and_wal_bytes(rich):
    agent_conn = sqlite3.connect(rich.project_db)  # the agent, mid-session, WAL not checkpointed
    try:
        agent_conn.execute("PRAGMA wal_autocheckpoint = 0")
        agent_conn.execute("UPDATE memories SET tags_json = tags_json")
        agent_conn.commit()
        before = file_digest(rich.project_db)
        report = purge.residue_report(ref_of(rich, "project"))
        after = file_digest(rich.project_db)
    finally:
        agent_conn.close()
    assert report["wal"]["pending"] == report["wal"]["committed"] > 0
    # SQLite's reader takes a read mark in -shm (an index, no content); nothing else moves.
    assert {k: v for k, v in after.items() if not k.endswith("-shm")} == {
        k: v for k, v in before.items() if not k.endswith("-shm")
    }


def test_a_purge_skips_rows_gone_since_the_dry_run_and_says_which(rich):
    ref = ref_of(rich, "project")
    plan = purge.plan(ref, purge.ALL_CATEGORIES)
    kinds = {r.kind for r in plan}
    assert {"memory_deleted", "review", "event"} <= kinds
    # Another tab erases one review item after this dry run was shown.
    first_review = next(r for r in plan if r.kind == "review")
    assert purge.purge_review_items(ref, [first_review.id]).status == "verified erased"
    result = purge.purge(ref, plan)
    assert result.status == "verified erased"
    assert result.skipped == [{"kind": "review", "id": first_review.id}]
    expected = {k: sum(r.kind == k for r in plan) for k in kinds}
    expected["review"] -= 1
    assert result.deleted == {k: n for k, n in expected.items() if n}
    con = sqlite3.connect(rich.project_db)
    assert con.execute("SELECT COUNT(*) FROM memories WHERE deleted_at IS NOT NULL").fetchone() == (0,)
    assert con.execute("SELECT COUNT(*) FROM memory_review_queue").fetchone() == (0,)
    con.close()
