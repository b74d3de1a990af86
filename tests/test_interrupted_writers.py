"""A writer killed mid-transaction and an agent that crashed: the dashboard shows committed rows
only, says what happened, and browsing still changes no byte of the user's files.

The writers are real processes killed with SIGKILL: a non-WAL writer (as older agentao versions
and other tools write) left a hot rollback journal, and an agentao process left a ``-wal`` of
committed, un-checkpointed saves with nobody holding the files.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

UNCOMMITTED = "UNCOMMITTED"

# Converts the file to DELETE mode (a tool that does not use WAL), changes every row and deletes
# two inside one transaction; a tiny page cache spills the changed pages into the file before
# COMMIT, as any transaction larger than the cache does.  Then it waits to be killed.
KILLED_WRITER = r"""
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=DELETE")
conn.execute("PRAGMA cache_size=2")
conn.execute("BEGIN")
conn.execute("UPDATE memories SET title = 'UNCOMMITTED ' || title, content = 'UNCOMMITTED ' || content")
conn.execute("DELETE FROM memories WHERE id IN (SELECT id FROM memories ORDER BY id LIMIT 2)")
print("ready", flush=True)
time.sleep(120)
"""

# agentao saves through its own API while the process still has the file open (its connection
# is mid-operation when the process dies), so the saves are committed in the -wal and never
# checkpointed; then the process is killed.
CRASHED_AGENT = r"""
import sqlite3, sys, time
from pathlib import Path
from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
db, tag = Path(sys.argv[1]), "".join(" " + word for word in sys.argv[2:])
held = sqlite3.connect(db)
held.execute("PRAGMA wal_autocheckpoint=0")
held.execute("SELECT COUNT(*) FROM memories").fetchone()
manager = MemoryManager(SQLiteMemoryStore.open(db), None)
for n in range(3):
    manager.upsert(SaveMemoryRequest(key=f"after crash{tag} {n}",
                                     value=f"Saved just before the crash{tag}, number {n}.",
                                     tags=["crash"], scope="project"))
print("ready", flush=True)
time.sleep(120)
"""


# agentao starts again in the project (opening the store repairs it) and saves, once ``go`` exists.
AGENT_RESTARTS = r"""
import sys, time
from pathlib import Path
from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
db, go, count, tag = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
while not go.exists():
    time.sleep(0.0005)
manager = MemoryManager(SQLiteMemoryStore.open(db), None)
for n in range(count):
    manager.upsert(SaveMemoryRequest(key=f"restart {tag} {n}", value=f"Saved after restart {tag}, number {n}.",
                                     tags=[], scope="project"))
"""


def run_and_kill(script: str, db: Path, *args: str) -> None:
    """Run ``script`` on ``db`` in a child process and SIGKILL it once it says it is ready."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(db), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()
        assert line.strip() == "ready", child.stderr.read()
    finally:
        child.kill()
        child.wait()


def file_state(*dbs: Path) -> dict:
    """Bytes (sha256) and mtime of each store and of its side files; None when absent."""
    out = {}
    for db in dbs:
        for suffix in ("", "-wal", "-shm", "-journal"):
            f = Path(str(db) + suffix)
            out[str(f)] = (
                (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) if f.exists() else None
            )
    return out


PAGES = [
    "/overview",
    "/overview.json",
    "/memories",
    "/memories.json?per_page=200",
    "/memories.json?deleted=1&per_page=200",
    "/memories?q=memory",
    "/summaries",
    "/summaries.json",
    "/reviews",
    "/reviews.json",
    "/preview?q=memory+uv",
    "/preview.json?q=memory+uv",
    "/export",
    "/export/memories.json",
    "/findings",
    "/findings.json",
    "/forget",
    "/forget/plan/project?cat=everything",
    "/projects",
]


def browse(client) -> str:
    """Every page, every twin and every listed memory's page: all that a user can look at."""
    texts = []
    for url in PAGES:
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:500])
        texts.append(r.get_data(as_text=True))
    for m in client.get("/memories.json?deleted=1&per_page=200").get_json()["items"]:
        for url in (f"/memories/{m['store']}/{m['id']}", f"/memories/{m['store']}/{m['id']}.json"):
            r = client.get(url)
            assert r.status_code == 200, url
            texts.append(r.get_data(as_text=True))
    return "\n".join(texts)


def rows(client) -> dict:
    return {
        m["id"]: (m["title"], m["content"])
        for m in client.get("/memories.json?deleted=1&per_page=200").get_json()["items"]
        if m["store"] == "project"
    }


def notice(client, store: str = "project"):
    st = next(s for s in client.get("/overview.json").get_json()["stores"] if s["store"] == store)
    return st["notice"]


@pytest.fixture
def copies(tmp_path, monkeypatch) -> Path:
    """The temporary folder the dashboard's private copies go to, watched by the test
    (a copy holds the user's text: it must not outlive the state that needed it)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def busy(seeded):
    """The seeded stores with 60 more project memories, enough to span many pages."""
    for i in range(60):
        seeded.save(
            f"note {i}", f"Committed note number {i}. " + "lorem ipsum " * 30, ["note"], scope="project"
        )
    return seeded


def test_hot_journal_shows_the_committed_store_with_a_notice_and_writes_nothing(busy, copies):
    committed = rows(busy.app().test_client())
    live = {m.id for m in busy.manager.project_store.list_memories()}
    assert len(committed) == 65 and len(live) == 64  # one of the seeded rows is soft-deleted
    watching = busy.app().test_client()
    assert rows(watching) == committed  # a dashboard already open when the writer dies
    run_and_kill(KILLED_WRITER, busy.project_db)
    journal = Path(str(busy.project_db) + "-journal")
    assert journal.stat().st_size > 0 and not Path(str(busy.project_db) + "-wal").exists()
    assert UNCOMMITTED.encode() in busy.project_db.read_bytes()  # the file holds the torn change
    before = file_state(busy.project_db, busy.user_db)

    for client in (watching, busy.app().test_client()):
        assert rows(client) == committed
        seen = browse(client)
        assert UNCOMMITTED not in seen
        said = notice(client)
        assert said["kind"] == "interrupted_write"
        assert "interrupted while writing" in said["message"]
        assert "roll it back the next time it opens" in said["message"]
        banner = BeautifulSoup(client.get("/memories").get_data(as_text=True), "html.parser").select_one(
            '#banners [data-store="project"][data-notice]'
        )
        assert banner is not None and "interrupted while writing" in banner.text
        assert notice(client, "user") is None
    assert file_state(busy.project_db, busy.user_db) == before  # no byte, no mtime moved

    # agentao opens the project: SQLite rolls the journal back; the notice goes, the rows stay.
    assert {m.id for m in busy.manager.project_store.list_memories()} == live
    assert not journal.exists()
    assert notice(watching) is None and rows(watching) == committed
    assert list(copies.glob("*/memory.db*")) == []  # the private copy (the user's text) is gone with it


def test_hot_journal_too_big_to_copy_is_not_shown_and_says_why(busy, monkeypatch):
    run_and_kill(KILLED_WRITER, busy.project_db)
    before = file_state(busy.project_db, busy.user_db)
    monkeypatch.setattr("dashboard.store.copies.COPY_BUDGET_BYTES", 64 * 1024)
    client = busy.app().test_client()
    st = next(s for s in client.get("/overview.json").get_json()["stores"] if s["store"] == "project")
    assert st["problem"]["kind"] == "needs_recovery"
    assert "interrupted while writing" in st["problem"]["message"]
    assert "roll it back the next time it opens" in st["problem"]["message"]
    listed = client.get("/memories.json?per_page=200").get_json()
    assert {m["store"] for m in listed["items"]} == {"user"}
    assert UNCOMMITTED not in client.get("/memories").get_data(as_text=True)
    assert file_state(busy.project_db, busy.user_db) == before


@pytest.mark.parametrize("shm", ["left", "removed"])
def test_browsing_after_an_agent_crash_changes_no_byte_and_shows_its_saves(seeded, shm, copies):
    run_and_kill(CRASHED_AGENT, seeded.project_db)
    wal, side = Path(str(seeded.project_db) + "-wal"), Path(str(seeded.project_db) + "-shm")
    assert wal.stat().st_size > 0
    assert b"Saved just before the crash" not in seeded.project_db.read_bytes()  # only in the -wal
    if shm == "removed":
        side.unlink()
    before = file_state(seeded.project_db, seeded.user_db)

    client = seeded.app().test_client()
    seen = browse(client)
    assert file_state(seeded.project_db, seeded.user_db) == before  # -shm neither made nor rewritten
    contents = {c for _, c in rows(client).values()}
    assert {f"Saved just before the crash, number {n}." for n in range(3)} <= contents
    assert "Saved just before the crash" in seen
    assert notice(client) is None  # committed saves, shown as they are: nothing to warn about
    assert file_state(seeded.project_db, seeded.user_db) == before

    # agentao opens the project again and folds the -wal in: the same rows, read in place.
    seeded.save("after restart", "agentao runs again.", scope="project")
    assert not wal.exists()
    assert {f"Saved just before the crash, number {n}." for n in range(3)} <= {
        c for _, c in rows(client).values()
    }
    assert list(copies.glob("*/memory.db*")) == []


@pytest.mark.parametrize("left_by", ["killed writer", "crashed agent"])
def test_reads_stay_true_while_agentao_repairs_the_files(busy, left_by, copies, tmp_path):
    """agentao starts again while the dashboard reads in a loop: every answer shows the committed
    rows (never the killed writer's, never a committed row missing), through the switch from the
    private copy to the repaired files.  Three rounds, each synchronised on a file barrier."""
    client = busy.app().test_client()
    during = 0
    for round_ in range(3):
        if left_by == "killed writer":
            committed = rows(client)
            run_and_kill(KILLED_WRITER, busy.project_db)
        else:
            run_and_kill(CRASHED_AGENT, busy.project_db, f"round {round_}")
            committed = rows(client)
            assert f"Saved just before the crash round {round_}, number 2." in {
                c for _, c in committed.values()
            }
        assert rows(client) == committed
        assert (notice(client) is not None) == (left_by == "killed writer")
        go = tmp_path / f"go-{round_}"
        agent = subprocess.Popen(
            [sys.executable, "-c", AGENT_RESTARTS, str(busy.project_db), str(go), "15", str(round_)],
            stderr=subprocess.PIPE,
            text=True,
        )
        go.touch()
        while agent.poll() is None:
            r = client.get("/memories.json?deleted=1&per_page=200")
            assert r.status_code == 200 and r.get_json()["problems"] == []
            seen = {
                m["id"]: (m["title"], m["content"]) for m in r.get_json()["items"] if m["store"] == "project"
            }
            assert UNCOMMITTED not in repr(seen)
            assert {k: seen.get(k) for k in committed} == committed
            during += 1
        assert agent.wait() == 0, agent.stderr.read()
        assert notice(client) is None
        assert len(rows(client)) == len(committed) + 15
        # A read overlapping agentao's last close leaves its -wal un-folded (read from a copy);
        # the next agentao open folds it in, and the copy goes.
        busy.save(f"closing {round_}", "One more save folds any -wal in.", scope="project")
        assert len(rows(client)) == len(committed) + 16
        assert list(copies.glob("*/memory.db*")) == []
    assert during >= 3  # the dashboard did read while agentao repaired and saved


# A dashboard process that reads the store (making its private copy) and is then killed.
KILLED_DASHBOARD = r"""
import sys, time
from dashboard.store import connection
connection.read(sys.argv[1], lambda conn: conn.execute("SELECT COUNT(*) FROM memories").fetchone())
print("ready", flush=True)
time.sleep(120)
"""


def test_a_copy_left_by_a_killed_dashboard_is_removed_by_the_next(busy, copies, monkeypatch):
    """A copy holds the user's text; a dashboard killed by a signal cannot remove its own."""
    run_and_kill(KILLED_WRITER, busy.project_db)
    monkeypatch.setenv("TMPDIR", str(copies))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    run_and_kill(KILLED_DASHBOARD, busy.project_db)
    assert len(list(copies.glob("*/memory.db*"))) == 1  # the killed one's copy, left behind
    client = busy.app().test_client()
    assert rows(client) and notice(client)["kind"] == "interrupted_write"
    assert len(list(copies.glob("*/memory.db*"))) == 1  # only this process's own copy now
    busy.save("reopened", "agentao opens the project again.", scope="project")
    assert notice(client) is None
    assert list(copies.glob("*/memory.db*")) == []


def test_a_live_agent_holding_its_wal_is_read_directly(seeded):
    """No copy while agentao holds the file: its -wal is current and the notice would be false."""
    held = sqlite3.connect(seeded.project_db)
    try:
        held.execute("SELECT COUNT(*) FROM memories").fetchone()
        seeded.save("while held", "Saved while another connection holds the file.", scope="project")
        assert Path(str(seeded.project_db) + "-wal").exists()
        client = seeded.app().test_client()
        assert notice(client) is None
        assert "Saved while another connection holds the file." in {c for _, c in rows(client).values()}
    finally:
        held.close()


# agentao saves one memory each time ``go-N`` appears and says so with ``done-N``, while another
# of its connections keeps the file open (so the -wal stays and each save is read live).
AGENT_SAVES_ON_CUE = r"""
import sqlite3, sys, time
from pathlib import Path
from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
db, folder, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
held = sqlite3.connect(db)
held.execute("SELECT COUNT(*) FROM memories").fetchone()
manager = MemoryManager(SQLiteMemoryStore.open(db), None)
for n in range(rounds):
    while not (folder / f"go-{n}").exists():
        time.sleep(0.0005)
    manager.upsert(SaveMemoryRequest(key=f"cue {n}", value=f"Saved on cue {n}.", tags=[], scope="project"))
    (folder / f"done-{n}").touch()
"""


def test_a_save_read_while_it_commits_is_shown_once_it_is_done(busy, tmp_path):
    """A read that starts while agentao's save is between writing its -wal and publishing the
    commit sees the rows before it; once the save is done, the next read shows it (the files'
    sizes and times do not move when the commit is published, so the held rows must not be
    kept past it).  Many rounds, each read in a loop while the save runs."""
    client = busy.app().test_client()
    before = len(rows(client))
    rounds = 40
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT_SAVES_ON_CUE, str(busy.project_db), str(tmp_path), str(rounds)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for n in range(rounds):
            (tmp_path / f"go-{n}").touch()
            while not (tmp_path / f"done-{n}").exists():
                assert agent.poll() is None, agent.stderr.read()
                client.get("/memories.json?deleted=1&per_page=200")
            assert len(rows(client)) == before + n + 1, f"round {n}"
    finally:
        agent.kill()
        agent.wait()
