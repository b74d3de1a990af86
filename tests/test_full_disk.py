"""A write on a full disk, on a real small file system (issue 18, defect 8).

With 16 KiB or less left, SQLite cannot grow the ``-shm`` and reports a disk
I/O error, not SQLITE_FULL; it leaves an empty ``-wal`` and a short ``-shm``
behind, after which every read of the store failed until space was freed.
Each test mounts a tmpfs of 256 KiB (the tests run as root here and in CI),
puts a store written by agentao on it and fills the rest with a filler file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from agentao_world import Agent, BrowserClient, seed_corpus
from bs4 import BeautifulSoup

from dashboard import create_app
from dashboard.store import connection

JSON = {"Accept": "application/json"}
FULL = "The disk is full: nothing was changed, free space and try again"


def free_bytes(folder: Path) -> int:
    st = os.statvfs(folder)
    return st.f_bfree * st.f_frsize  # the tests run as root, who may use every block


@contextlib.contextmanager
def small_disk(size: str = "256k"):
    """A freshly mounted tmpfs of ``size``; unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip(
            "mounting a small tmpfs needs root; this run is not root, so the "
            "full-disk tests cannot build a real full disk here"
        )
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("mount(8) is not installed, so no small file system can be mounted")
    where = Path(tempfile.mkdtemp(prefix="full-disk-"))
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    if done.returncode:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}), so no real full disk")
    try:
        yield where
    finally:
        # The dashboard keeps a descriptor of each store it read (connection.read_header):
        # a lazy unmount lets the file system go once that is closed.
        if subprocess.run(["umount", str(where)], capture_output=True).returncode:
            subprocess.run(["umount", "-l", str(where)], check=True)
        where.rmdir()


def fill(folder: Path, leave: int) -> None:
    """Fill ``folder``'s file system until ``leave`` bytes or fewer are free."""
    with open(folder / "filler", "wb") as fh:
        while (room := free_bytes(folder)) > leave:
            fh.write(b"\0" * min(1 << 16, room - leave))
            fh.flush()
    assert free_bytes(folder) <= leave


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def beside(db: Path) -> set[str]:
    return {p.name for p in db.parent.iterdir()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A store written by agentao (both scopes, a review queue), to copy onto each small disk."""
    agent = seed_corpus(Agent(tmp_path_factory.mktemp("full-disk-source")))
    assert not Path(str(agent.project_db) + "-wal").exists()  # all of it is in the main file
    return agent.project_db


@pytest.fixture
def on_small_disk(built):
    with small_disk() as disk:
        project = disk / "project"
        (project / ".agentao").mkdir(parents=True)
        db = project / ".agentao" / "memory.db"
        shutil.copyfile(built, db)
        app = create_app({"PROJECT_DIR": project, "USER_DB": None, "TESTING": True, "AUTH_TOKEN": False})
        app.test_client_class = BrowserClient
        yield disk, db, app.test_client()


def forms_of(client, memory_id):
    page = BeautifulSoup(client.get(f"/memories/project/{memory_id}").get_data(as_text=True), "html.parser")
    return {
        f["id"]: {i["name"]: i.get("value", "") for i in f.select("input")}
        for f in page.select("#memory-actions form")
    }


def act(client, action: str, headers=None):
    """One write through the app, as a user makes it; returns the response."""
    if action == "approve":
        item = next(
            i for i in client.get("/reviews.json").get_json()["items"] if i["plan"]["store"] == "project"
        )
        return client.post(
            f"/reviews/{item['id']}/approve",
            headers=headers,
            data={"seen": item["plan"]["item_fingerprint"], "target": item["plan"]["target_fingerprint"]},
        )
    memory = client.get("/memories.json").get_json()["items"][0]
    forms = forms_of(client, memory["id"])
    if action == "edit":
        return client.post(
            f"/memories/project/{memory['id']}/edit",
            headers=headers,
            data=dict(forms["edit-form"], value="Written on a full disk."),
        )
    return client.post(f"/memories/project/{memory['id']}/delete", headers=headers, data=forms["delete-form"])


def message(response) -> str:
    data = response.get_json()
    return (data.get("outcomes") or [data])[0]["message"]


@pytest.mark.parametrize("action", ["edit", "delete", "approve"])
@pytest.mark.parametrize("leave", [0, 16 * 1024, 40 * 1024])
def test_a_write_on_a_full_disk_says_so_and_the_store_still_reads(on_small_disk, action, leave):
    disk, db, client = on_small_disk
    shown = client.get("/memories.json").get_json()
    reviews = client.get("/reviews.json").get_json()["counts"]
    files, before = beside(db), digest(db)
    fill(disk, leave)

    r = act(client, action, JSON)
    assert r.status_code == 503 and FULL in message(r), message(r)
    assert beside(db) == files, "the failed write left side files the store did not have"
    assert digest(db) == before
    # A read after the failed write still shows the store, unchanged.
    stores = client.get("/overview.json").get_json()["stores"]
    assert stores[0]["problem"] is None
    assert client.get("/memories.json").get_json()["items"] == shown["items"]
    assert client.get("/reviews.json").get_json()["counts"] == reviews
    # The page without JavaScript says the same.
    page = BeautifulSoup(act(client, action).get_data(as_text=True), "html.parser")
    assert FULL in page.get_text()
    assert beside(db) == files and digest(db) == before

    # Free space and try again, as the message says: it works.
    (disk / "filler").unlink()
    r = act(client, action, JSON)
    assert r.status_code == 200, message(r)
    assert (
        sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("PRAGMA integrity_check").fetchone()[0]
        == "ok"
    )


HOLD = """
import sys
from agentao.memory import SQLiteMemoryStore
store = SQLiteMemoryStore.open(sys.argv[1])
with store._connect() as conn:    # agentao in the middle of an operation on the store
    conn.execute("SELECT COUNT(*) FROM memories").fetchone()
    print("holding", flush=True)
    sys.stdin.read()
"""


def test_side_files_a_running_agent_uses_are_never_removed(built, tmp_path):
    # The write's "before" can miss side files an agent created just after it was
    # taken: what is in use must still be left alone.
    from dashboard.store import full_disk

    db = tmp_path / "memory.db"
    shutil.copyfile(built, db)
    none = {"-wal": None, "-shm": None, "-journal": None}
    agent = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout.readline().strip() == "holding"
        held = connection.side_files(db)
        assert held["-wal"] == 0 and held["-shm"], held  # an empty -wal: only the lock protects it
        full_disk.tidy_failed_write(db, none, held)
        assert connection.side_files(db) == held
    finally:
        agent.stdin.close()
        agent.wait(10)
    # The same for a connection of this very process (another thread's read).
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        reader.execute("SELECT COUNT(*) FROM memories").fetchone()
        held = connection.side_files(db)
        assert held["-wal"] == 0 and held["-shm"], held
        full_disk.tidy_failed_write(db, none, held)
        assert connection.side_files(db) == held
        assert reader.execute("SELECT COUNT(*) FROM memories").fetchone()[0] > 0
    finally:
        reader.close()
