"""Several projects sharing one user store: switcher, list, --project/--scan, reach."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
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
    mgr = MemoryManager(
        SQLiteMemoryStore.open(project / ".agentao" / "memory.db"), SQLiteMemoryStore.open(user_db)
    )
    for i, fact in enumerate(facts):
        mgr.upsert(SaveMemoryRequest(key=f"{name} fact {i}", value=fact, tags=["note"]))
    return project


def two_projects(tmp_path):
    user_db = tmp_path / "home" / ".agentao" / "memory.db"
    a = make_project(tmp_path / "work", "alpha", user_db, ["Alpha uses Go."])
    b = make_project(tmp_path / "work", "beta", user_db, ["Beta uses Rust.", "Beta ships weekly."])
    MemoryManager(
        SQLiteMemoryStore.open(a / ".agentao" / "memory.db"), SQLiteMemoryStore.open(user_db)
    ).upsert(SaveMemoryRequest(key="user_editor", value="Helix", tags=["user"]))
    app = create_app({"PROJECT_DIR": [a, b], "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    return app, a, b


def test_switcher_changes_the_project_shown_and_keeps_the_user_store(tmp_path):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    page = soup(client.get("/memories"))
    assert [o.text for o in page.select("#project-switch option")] == ["alpha", "beta"]
    first = client.get("/memories.json").get_json()["items"]
    assert sorted(m["content"] for m in first) == ["Alpha uses Go.", "Helix"]
    r = client.post(
        "/projects/select",
        data={"project": "1", "next": "/memories"},
        headers={"Sec-Fetch-Site": "same-origin"},
    )
    assert r.status_code == 303 and r.headers["Location"].endswith("/memories")
    second = client.get("/memories.json").get_json()["items"]
    assert sorted(m["content"] for m in second) == ["Beta ships weekly.", "Beta uses Rust.", "Helix"]
    overview = client.get("/overview.json").get_json()["stores"]
    assert overview[0]["path"] == str(b / ".agentao" / "memory.db")


def test_projects_page_lists_every_project_with_counts(tmp_path):
    app, a, b = two_projects(tmp_path)
    data = app.test_client().get("/projects.json").get_json()
    assert [(p["name"], p["live"], p["current"]) for p in data["projects"]] == [
        ("alpha", 1, True),
        ("beta", 2, False),
    ]
    assert "reach every project" in data["note"]


def test_user_memory_says_it_reaches_every_project(tmp_path):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    user = next(m for m in client.get("/memories.json?scope=user").get_json()["items"])
    assert client.get(f"/memories/user/{user['id']}.json").get_json()["reach"]["projects"] == [
        "alpha",
        "beta",
    ]
    assert (
        soup(client.get(f"/memories/user/{user['id']}")).select_one("#reach-projects")["data-projects"] == "2"
    )


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
    r = subprocess.run(
        [sys.executable, "-m", "dashboard", "--scan", str(tmp_path / "empty-nowhere")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "does not exist" in r.stderr
    (tmp_path / "bare").mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "dashboard", "--scan", str(tmp_path / "bare")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "no .agentao/memory.db" in r.stderr


SAME = {"Sec-Fetch-Site": "same-origin"}
OFFSITE_NEXT = [
    "//evil.example/",
    "/\\evil.example/",
    "/\\\\evil.example",
    "\\\\evil.example",
    "/\t/evil.example/",
    "/\n/evil.example/",
    "\t//evil.example",
    "/%09/evil.example/",
    "/%5Cevil.example/",
    "https:evil.example",
    "https://evil.example/x",
    "http:/evil",
    "javascript:alert(1)",
    "//evil.example/%2F..",
    "/\u3000/evil.example",
    "/\uff0f/evil.example",
    "\u2215\u2215evil.example",
    "/\u202e/evil.example",
    " //evil.example",
    "/.//evil.example",
    "/memories\r\nLocation: //evil.example",
    "/%2F/evil.example",
    "/" * 3 + "evil.example",
]


def as_browser_reads(target: str) -> tuple[str, str]:
    """(host, path) a browser on http://localhost/ goes to for a Location of ``target``:
    WHATWG URL parsing drops tabs and newlines and reads a backslash as a slash."""
    from urllib.parse import urljoin, urlsplit

    cleaned = target.replace("\t", "").replace("\n", "").replace("\r", "").replace("\\", "/")
    parts = urlsplit(urljoin("http://localhost/memories", cleaned.strip()))
    return parts.netloc, parts.path


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
@pytest.mark.parametrize("nxt", OFFSITE_NEXT)
def test_switcher_never_sends_the_browser_off_the_dashboard(tmp_path, nxt, htmx):
    app, a, b = two_projects(tmp_path)
    headers = {**SAME, **({"HX-Request": "true"} if htmx else {})}
    r = app.test_client().post("/projects/select", data={"project": "1", "next": nxt}, headers=headers)
    target = r.headers["HX-Redirect"] if htmx else r.headers["Location"]
    assert r.status_code == (204 if htmx else 303)
    assert as_browser_reads(target) == ("localhost", "/overview"), target


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_switcher_returns_to_the_page_it_was_on(tmp_path, htmx):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    headers = {**SAME, **({"HX-Request": "true"} if htmx else {})}
    for page in ("/memories?q=uv&tag=note", "/reviews?status=approved", "/findings"):
        back = soup(client.get(page)).select_one("#project-switcher input[name=next]")["value"]
        assert back == page
        r = client.post("/projects/select", data={"project": "1", "next": back}, headers=headers)
        assert (r.headers["HX-Redirect"] if htmx else r.headers["Location"]) == page


@pytest.mark.parametrize(
    "path", ["/%5Cevil.example/x", "/%09/evil.example/x", "/%5C%5Cevil.example", "/%0A/evil.example"]
)
def test_a_404_at_a_hostile_path_offers_no_hostile_next(tmp_path, path):
    app, a, b = two_projects(tmp_path)
    client = app.test_client()
    r = client.get(path)
    assert r.status_code == 404
    back = soup(r).select_one("#project-switcher input[name=next]")["value"]
    assert back == "/overview"
    for headers in (SAME, {**SAME, "HX-Request": "true"}):
        answer = client.post("/projects/select", data={"project": "1", "next": back}, headers=headers)
        target = answer.headers.get("HX-Redirect") or answer.headers["Location"]
        assert as_browser_reads(target)[0] == "localhost"


def test_scan_leaves_out_a_store_that_links_outside_the_tree(tmp_path):
    user_db = tmp_path / "home" / ".agentao" / "memory.db"
    elsewhere = make_project(tmp_path / "elsewhere", "victim", user_db, ["Not part of the tree."])
    tree = tmp_path / "tree"
    make_project(tree, "real", user_db, ["In the tree."])
    (tree / "linked" / ".agentao").mkdir(parents=True)
    (tree / "linked" / ".agentao" / "memory.db").symlink_to(elsewhere / ".agentao" / "memory.db")
    (tree / "dangling" / ".agentao").mkdir(parents=True)
    (tree / "dangling" / ".agentao" / "memory.db").symlink_to(tmp_path / "nothing.db")
    inside = make_project(tree / "sub", "inner", user_db, ["Linked inside the tree."])
    (tree / "alias" / ".agentao").mkdir(parents=True)
    (tree / "alias" / ".agentao" / "memory.db").symlink_to(inside / ".agentao" / "memory.db")
    assert [p.name for p in scan_projects(tree)] == ["alias", "real", "inner"]
    refused: list = []
    assert [p.name for p in scan_projects(tree, refused=refused)] == ["alias", "real", "inner"]
    assert sorted(p.name for p, _why in refused) == ["dangling", "linked"]
    why = dict((p.name, w) for p, w in refused)
    assert "outside" in why["linked"] and "--project" in why["linked"] and "not a file" in why["dangling"]
    only_links = tmp_path / "links"
    (only_links / "p" / ".agentao").mkdir(parents=True)
    (only_links / "p" / ".agentao" / "memory.db").symlink_to(elsewhere / ".agentao" / "memory.db")
    r = subprocess.run(
        [sys.executable, "-m", "dashboard", "--scan", str(only_links)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "symbolic link" in r.stderr and "outside" in r.stderr


def test_a_linked_store_is_read_and_checked_at_its_target(tmp_path):
    import sqlite3

    user_db = tmp_path / "home" / ".agentao" / "memory.db"
    target = make_project(tmp_path / "real", "store", user_db, ["Kept at the target."])
    project = tmp_path / "work" / "linked"
    (project / ".agentao").mkdir(parents=True)
    (project / ".agentao" / "memory.db").symlink_to(target / ".agentao" / "memory.db")
    app = create_app({"PROJECT_DIR": project, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    client = app.test_client()
    real = target / ".agentao" / "memory.db"
    # An agent writing through the link: SQLite keeps the -wal beside the target.
    writer = sqlite3.connect(project / ".agentao" / "memory.db")
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE memories SET title = title")
        writer.commit()
        assert Path(str(real) + "-wal").exists()
        assert not Path(str(project / ".agentao" / "memory.db") + "-wal").exists()
        report = client.get("/forget/residue/project.json").get_json()
        assert report["path"] == str(real)
        assert str(real) + "-wal" in {f["path"] for f in report["files"]}
        assert report["wal"]["exists"]
        stores = client.get("/overview.json").get_json()["stores"]
        assert stores[0]["path"] == str(real)
    finally:
        writer.close()
    assert [m["content"] for m in client.get("/memories.json?scope=project").get_json()["items"]] == [
        "Kept at the target."
    ]
