"""Broken, locked, foreign and full files: a clear sentence, never a traceback, never a write."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from agentao_world import file_digest, integrity
from bs4 import BeautifulSoup

from dashboard.store import StoreProblem, connection, writes

PAGES = ["/overview", "/overview.json", "/memories", "/memories.json", "/summaries", "/summaries.json"]


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def big(seeded):
    """The seeded stores plus enough rows that the memories table spans many pages."""
    for i in range(60):
        seeded.save(
            f"filler {i}", f"Filler memory number {i}. " + "lorem ipsum " * 40, ["filler"], scope="project"
        )
    assert not Path(str(seeded.project_db) + "-wal").exists()  # everything is in the main file
    return seeded


def visit_all(client) -> dict:
    """Every page and twin answers, without a traceback; returns the responses by URL."""
    out = {}
    for url in PAGES:
        r = client.get(url)
        text = r.get_data(as_text=True)
        assert r.status_code in (200, 503), (url, r.status_code)
        assert "Traceback" not in text and "sqlite3." not in text, url
        if url.endswith(".json"):
            r.get_json()
        out[url] = r
    return out


def project_problem(client) -> dict:
    stores = client.get("/overview.json").get_json()["stores"]
    return next(s for s in stores if s["store"] == "project")["problem"]


def corrupt_memories_root(db: Path) -> None:
    """Overwrite the memories table's root b-tree page; page 1 (the header) stays valid."""
    with sqlite3.connect(db) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='memories'").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        assert conn.execute("PRAGMA page_count").fetchone()[0] > 20 and root > 1
    conn.close()
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\x5a" * page_size)


def check_store_refused(agent, kind: str, words: str):
    before = file_digest(agent.project_db, agent.user_db)
    client = agent.app().test_client()
    pages = visit_all(client)
    problem = project_problem(client)
    assert problem["kind"] == kind and words in problem["message"]
    banner = soup(pages["/overview"]).select_one('#banners [data-store="project"]')
    assert banner["data-problem"] == kind and words in banner.text
    # The user store keeps working beside the broken one.
    assert {m["store"] for m in pages["/memories.json"].get_json()["items"]} == {"user"}
    assert file_digest(agent.project_db, agent.user_db) == before
    return client


def test_corrupt_page_behind_a_valid_header(big):
    project_id = big.manager.search("uv")[0].id
    corrupt_memories_root(big.project_db)
    with open(big.project_db, "rb") as fh:
        assert fh.read(16) == b"SQLite format 3\x00"
    client = check_store_refused(big, "corrupt", "damaged")
    r = client.get(f"/memories/project/{project_id}.json")
    assert r.status_code == 503 and "damaged" in r.get_json()["message"]
    r = client.get(f"/memories/project/{project_id}")
    assert r.status_code == 503 and "damaged" in soup(r).select_one(".error-message").text
    before = file_digest(big.project_db)
    with pytest.raises(StoreProblem) as err:
        writes.soft_delete(big.project_db, project_id)
    assert err.value.kind == "corrupt" and file_digest(big.project_db) == before


def test_not_a_database(seeded):
    seeded.project_db.write_bytes(b"these are my notes, not a database\n" * 200)
    check_store_refused(seeded, "not_a_database", "not an SQLite database")


def test_truncated_file(big):
    size = big.project_db.stat().st_size
    with open(big.project_db, "r+b") as fh:
        fh.truncate(size // 3)
    check_store_refused(big, "corrupt", "damaged")


def test_truncated_inside_the_header(seeded):
    with open(seeded.project_db, "r+b") as fh:
        fh.truncate(60)
    check_store_refused(seeded, "corrupt", "damaged")


def test_read_only_folder_switches_to_read_only_mode(seeded, monkeypatch):
    # CI runs as root, and chmod does not stop root, so the permission check is
    # simulated where the dashboard asks it: os.access in the store layer.
    if os.geteuid() != 0:
        os.chmod(seeded.project_db.parent, 0o555)
    monkeypatch.setattr(connection.os, "access", lambda p, mode: mode != os.W_OK and os.path.exists(p))
    try:
        before = file_digest(seeded.project_db, seeded.user_db)
        client = seeded.app().test_client()
        pages = visit_all(client)
        banners = soup(pages["/overview"]).select("#banners [data-readonly]")
        assert {b["data-store"] for b in banners} == {"project", "user"}
        assert "not writable" in banners[0].text
        assert pages["/memories.json"].get_json()["total"] == 6  # still fully readable
        memory_id = pages["/memories.json"].get_json()["items"][0]["id"]
        with pytest.raises(StoreProblem) as err:
            writes.soft_delete(seeded.project_db, memory_id)
        assert err.value.kind == "read_only" and "nothing was changed" in str(err.value)
        assert file_digest(seeded.project_db, seeded.user_db) == before
    finally:
        os.chmod(seeded.project_db.parent, 0o755)


@pytest.fixture
def write_waits(monkeypatch):
    """How long each write connection opened from now on waits for a held lock (SQLite's
    busy timeout, in seconds): a write waits out agentao's brief ones, then answers."""
    waits, real = [], sqlite3.connect

    def connect(database, *args, **kwargs):
        if "mode=rw" in str(database):
            waits.append(kwargs.get("timeout"))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(connection.sqlite3, "connect", connect)
    return waits


def test_writer_holding_begin_immediate(seeded, write_waits):
    memory_id = seeded.manager.search("uv")[0].id
    holder = sqlite3.connect(seeded.project_db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE memories SET content = 'uncommitted' WHERE id = ?", (memory_id,))
    try:
        client = seeded.app().test_client()
        visit_all(client)  # reads go on while the agent writes
        data = client.get(f"/memories/project/{memory_id}.json").get_json()
        assert data["memory"]["content"] == "This project uses uv; see pyproject.toml."
        with pytest.raises(StoreProblem) as err:
            writes.soft_delete(seeded.project_db, memory_id)
        assert err.value.kind == "locked"
        assert "locked by another process" in str(err.value) and "try again" in str(err.value)
        assert write_waits == [connection.BUSY_TIMEOUT_S]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # Once the writer is gone the same write goes through.
    assert writes.soft_delete(seeded.project_db, memory_id)
    assert seeded.manager.search("uv") == []


@pytest.mark.parametrize("change", ["newer_version", "missing_version"])
def test_newer_schema_is_read_only_with_a_banner(seeded, change):
    with sqlite3.connect(seeded.project_db) as conn:
        if change == "newer_version":
            conn.execute("UPDATE schema_meta SET value = '4' WHERE key = 'version'")
        else:
            conn.execute("DELETE FROM schema_meta WHERE key = 'version'")
    conn.close()
    before = file_digest(seeded.project_db, seeded.user_db)
    client = seeded.app().test_client()
    pages = visit_all(client)
    banner = soup(pages["/overview"]).select_one('#banners [data-store="project"]')
    assert banner.has_attr("data-readonly") and "Schema version" in banner.text
    assert pages["/memories.json"].get_json()["total"] == 6
    memory_id = seeded.manager.search("uv")[0].id
    with pytest.raises(StoreProblem) as err:
        writes.soft_delete(seeded.project_db, memory_id)
    assert err.value.kind == "schema" and "nothing was changed" in str(err.value)
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_missing_tables_are_shown_as_a_problem_and_never_written(seeded):
    with sqlite3.connect(seeded.project_db) as conn:
        conn.execute("DROP TABLE memory_review_queue")
    conn.close()
    client = check_store_refused(seeded, "missing_tables", "memory_review_queue")
    with pytest.raises(StoreProblem) as err, connection.write(seeded.project_db) as conn:
        conn.execute("UPDATE memories SET title = 'x'")
    assert err.value.kind == "missing_tables"
    assert client.get("/summaries").status_code == 200


def test_an_empty_memory_db_is_shown_as_what_agentao_will_make_of_it(seeded):
    """agentao opens a zero-byte memory.db as an empty store (it creates its tables in it):
    the dashboard says so instead of 'not an agentao memory store', and writes nothing."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(seeded.project_db) + suffix).unlink(missing_ok=True)
    seeded.project_db.write_bytes(b"")
    before = file_digest(seeded.project_db, seeded.user_db)
    client = seeded.app().test_client()
    pages = visit_all(client)
    problem = project_problem(client)
    assert "not an agentao memory store" not in problem["message"]
    assert "agentao opens it as an empty store" in problem["message"]
    assert "opens it as an empty store" in soup(pages["/overview"]).get_text()
    assert file_digest(seeded.project_db, seeded.user_db) == before
    # What agentao does with it, in a process of its own: an empty store, its tables made.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from agentao.memory import SQLiteMemoryStore;"
            " assert SQLiteMemoryStore.open(sys.argv[1]).list_memories() == []",
            str(seeded.project_db),
        ],
        check=True,
        timeout=60,
    )
    assert seeded.project_db.stat().st_size > 0


def test_disk_full_during_a_write_changes_nothing(big):
    # SQLite's max_page_count makes SQLITE_FULL arrive in the middle of a transaction
    # on any file system; tests/test_full_disk.py fills a real one.
    count_before = sqlite3.connect(big.project_db).execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    with pytest.raises(StoreProblem) as err, connection.write(big.project_db) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        conn.execute("UPDATE memories SET title = 'half-written' WHERE rowid % 2 = 0")
        for i in range(200):
            conn.execute(
                "INSERT INTO memories (id, scope, key_normalized, title, content, "
                "created_at, updated_at) VALUES (?, 'project', ?, 't', ?, 'x', 'x')",
                (f"f{i:07x}", f"full_{i}", "x" * 3000),
            )
    assert err.value.kind == "disk_full"
    assert "The disk is full: nothing was changed, free space and try again" in str(err.value)
    assert integrity(big.project_db, read_only=True) == "ok"
    conn = sqlite3.connect(big.project_db)
    assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == count_before
    assert conn.execute("SELECT COUNT(*) FROM memories WHERE title = 'half-written'").fetchone()[0] == 0
    conn.close()
    client = big.app().test_client()
    assert client.get("/overview.json").status_code == 200
    assert project_problem(client) is None


def test_write_endpoint_reports_a_held_lock_and_changes_nothing(seeded, write_waits):
    client = seeded.app().test_client()
    item = client.get("/reviews.json").get_json()["items"][0]
    holder = sqlite3.connect(seeded.project_db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        r = client.post(
            f"/reviews/{item['id']}/reject",
            data={"seen": item["plan"]["item_fingerprint"]},
            headers={"Accept": "application/json"},
        )
        assert r.status_code == 409, r.get_data(as_text=True)
        message = r.get_json()["outcomes"][0]["message"]
        assert "locked by another process" in message and "try again" in message
        assert write_waits and set(write_waits) == {connection.BUSY_TIMEOUT_S}
        page = client.post(f"/reviews/{item['id']}/reject", data={"seen": item["plan"]["item_fingerprint"]})
        assert "locked by another process" in page.get_data(as_text=True)
        assert "Traceback" not in page.get_data(as_text=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert client.get("/reviews.json").get_json()["counts"]["pending"] == 2
