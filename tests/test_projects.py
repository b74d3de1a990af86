"""Several projects sharing one user store: switcher, list, --project/--scan, reach."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
from bs4 import BeautifulSoup

from dashboard import create_app
from dashboard.store.registry import scan_projects

ROOT = Path(__file__).resolve().parents[1]


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def make_project(root: Path, name: str, user_db: Path, facts: list[str]) -> Path:
    project = root / name
    mgr = MemoryManager(SQLiteMemoryStore.open(project / ".agentao" / "memory.db"),
                        SQLiteMemoryStore.open(user_db))
    for i, fact in enumerate(facts):
        mgr.upsert(SaveMemoryRequest(key=f"{name} fact {i}", value=fact, tags=["note"]))
    return project


def two_projects(tmp_path):
    user_db = tmp_path / "home" / ".agentao" / "memory.db"
    a = make_project(tmp_path / "work", "alpha", user_db, ["Alpha uses Go."])
    b = make_project(tmp_path / "work", "beta", user_db, ["Beta uses Rust.", "Beta ships weekly."])
    MemoryManager(SQLiteMemoryStore.open(a / ".agentao" / "memory.db"),
                  SQLiteMemoryStore.open(user_db)).upsert(
        SaveMemoryRequest(key="user_editor", value="Helix", tags=["user"]))
    app = create_app({"PROJECT_DIR": [a, b], "USER_DB": user_db, "TESTING": True,
                      "AUTH_TOKEN": False})
    return app, a, b


def test_switcher_changes_the_project_shown_and_keeps_the_user_store(tmp_path):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    page = soup(client.get("/memories"))
    assert [o.text for o in page.select("#project-switch option")] == ["alpha", "beta"]
    first = client.get("/memories.json").get_json()["items"]
    assert sorted(m["content"] for m in first) == ["Alpha uses Go.", "Helix"]
    r = client.post("/projects/select", data={"project": "1", "next": "/memories"},
                    headers={"Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 303 and r.headers["Location"].endswith("/memories")
    second = client.get("/memories.json").get_json()["items"]
    assert sorted(m["content"] for m in second) == ["Beta ships weekly.", "Beta uses Rust.", "Helix"]
    overview = client.get("/overview.json").get_json()["stores"]
    assert overview[0]["path"] == str(b / ".agentao" / "memory.db")


def test_projects_page_lists_every_project_with_counts(tmp_path):
    app, a, b = two_projects(tmp_path)
    data = app.test_client().get("/projects.json").get_json()
    assert [(p["name"], p["live"], p["current"]) for p in data["projects"]] == [
        ("alpha", 1, True), ("beta", 2, False)]
    assert "reach every project" in data["note"]


def test_user_memory_says_it_reaches_every_project(tmp_path):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    user = next(m for m in client.get("/memories.json?scope=user").get_json()["items"])
    assert client.get(f"/memories/user/{user['id']}.json").get_json()["reach"]["projects"] == ["alpha", "beta"]
    assert soup(client.get(f"/memories/user/{user['id']}")).select_one("#reach-projects")["data-projects"] == "2"


def test_bad_project_choice_is_400_and_offsite_next_is_ignored(tmp_path):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    same = {"Sec-Fetch-Site": "same-origin"}
    assert client.post("/projects/select", data={"project": "7"}, headers=same).status_code == 400
    r = client.post("/projects/select", data={"project": "1", "next": "//evil.example/"}, headers=same)
    assert r.status_code == 303 and "evil" not in r.headers["Location"]


def test_scan_finds_projects_and_skips_noise(tmp_path):
    user_db = tmp_path / "home" / ".agentao" / "memory.db"
    make_project(tmp_path / "src", "one", user_db, ["x"])
    make_project(tmp_path / "src" / "nested", "two", user_db, ["y"])
    make_project(tmp_path / "src" / "node_modules", "ignored", user_db, ["z"])
    assert sorted(p.name for p in scan_projects(tmp_path / "src")) == ["one", "two"]
    r = subprocess.run([sys.executable, "-m", "dashboard", "--scan", str(tmp_path / "empty-nowhere")],
                       cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "does not exist" in r.stderr
    (tmp_path / "bare").mkdir()
    r = subprocess.run([sys.executable, "-m", "dashboard", "--scan", str(tmp_path / "bare")],
                       cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "no .agentao/memory.db" in r.stderr
