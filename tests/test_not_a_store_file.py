"""Something at a store's path that is not a file: said as such, never as "no store yet", and
every action on it is refused with the reason before anything is written."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest
from agentao_world import file_digest
from bs4 import BeautifulSoup


def _folder(db: Path):
    db.mkdir()
    (db / "notes.txt").write_text("somebody's folder")


def _dangling_link(db: Path):
    db.symlink_to(db.parent / "no such folder" / "gone.db")


def _socket(db: Path):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(db))
    return sock


def _fifo(db: Path):
    os.mkfifo(db)


def _parent_is_a_file(db: Path):
    shutil.rmtree(db.parent)
    db.parent.write_text("a file where the .agentao folder should be")


OBSTACLES = {
    "folder": (_folder, "is a folder"),
    "dangling link": (_dangling_link, "is a symbolic link to"),
    "socket": (_socket, "is a socket"),
    "named pipe": (_fifo, "is a named pipe"),
    "parent is a file": (_parent_is_a_file, "is a file, not a folder"),
}


def replace_store(db: Path, kind: str):
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    make, words = OBSTACLES[kind]
    return make(db), words


def status_of(client, key: str) -> dict:
    return next(s for s in client.get("/overview.json").get_json()["stores"] if s["store"] == key)


@pytest.mark.parametrize("store", ["project", "user"])
@pytest.mark.parametrize("kind", list(OBSTACLES))
def test_not_a_file_is_shown_as_such_and_every_action_is_refused(seeded, store, kind):
    blocked = seeded.project_db if store == "project" else seeded.user_db
    other = seeded.user_db if store == "project" else seeded.project_db
    holder, words = replace_store(blocked, kind)
    try:
        before = file_digest(other)
        client = seeded.app().test_client()

        problem = status_of(client, store)["problem"]
        assert problem["kind"] == "not_a_file" and words in problem["message"]
        page = BeautifulSoup(client.get("/overview").get_data(as_text=True), "html.parser")
        card = page.select_one(f'.card.store[data-store="{store}"]')
        assert card.select_one('[data-problem="not_a_file"]') is not None
        assert "No store yet" not in card.text and words in card.text
        banner = page.select_one(f'#banners [data-store="{store}"]')
        assert banner["data-problem"] == "not_a_file" and words in banner.text
        # The other store keeps working beside it.
        assert status_of(client, "user" if store == "project" else "project")["problem"] is None

        for url, form in [
            ("/forget/wipe", {"confirm": "yes"}),
            ("/forget/everything", {"confirm": "forget everything"}),
            (f"/forget/purge/{store}", {"cat": "everything", "confirm": "x"}),
        ]:
            r = client.post(url, data=form, headers={"Accept": "application/json"})
            assert r.status_code == 403, (url, r.status_code, r.get_data(as_text=True)[:300])
            message = r.get_json()["message"]
            assert words in message and "cannot be changed" in message, url
        assert file_digest(other) == before  # the wipe did not half-run on the other store
        if store == "project":
            r = client.get("/reviews.json")
            assert r.status_code == 503 and words in r.get_json()["message"]
    finally:
        if holder is not None:
            holder.close()


@pytest.mark.parametrize("there", ["nothing", "a link into a folder"])
def test_nothing_there_is_still_no_store_yet(tmp_path, there):
    """A link whose folder exists is where SQLite (so agentao) creates the store: no store yet."""
    from dashboard import create_app

    project = tmp_path / "fresh"
    (project / ".agentao").mkdir(parents=True)
    if there == "a link into a folder":
        (project / ".agentao" / "memory.db").symlink_to(tmp_path / "elsewhere.db")
    client = create_app({"PROJECT_DIR": project, "USER_DB": None, "AUTH_TOKEN": False}).test_client()
    assert status_of(client, "project")["problem"]["kind"] == "missing"
    page = BeautifulSoup(client.get("/overview").get_data(as_text=True), "html.parser")
    assert "No store yet" in page.select_one('.card.store[data-store="project"]').text
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["fresh", ".agentao"] + (["memory.db"] if there != "nothing" else [])
    )  # nothing made


def test_a_move_or_approval_towards_a_folder_names_the_folder(agent):
    """The move offer and the approval card say what is at the other store's path."""
    memory = agent.save("editor", "Use vim for quick edits.", scope="project")
    agent.crystallize("I prefer dark themes in every editor.")
    replace_store(agent.user_db, "folder")
    client = agent.app().test_client()
    page = BeautifulSoup(client.get(f"/memories/project/{memory.id}").data, "html.parser")
    offer = page.select_one('[data-field="move-plan"], #move-form, [data-field="move-problem"]')
    assert offer is not None and "is a folder" in page.get_text(), page.get_text()[:400]
    assert "does not exist yet" not in page.get_text()
    items = client.get("/reviews.json").get_json()["items"]
    user_items = [i for i in items if i["plan"]["store"] == "user"]
    assert user_items and all("is a folder" in i["plan"]["blocked"] for i in user_items)
