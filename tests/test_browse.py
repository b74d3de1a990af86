"""Browsing: overview, memories, detail, summaries — as a person and as a script sees them."""

from __future__ import annotations

import pytest
from agentao_world import file_digest
from bs4 import BeautifulSoup

HTMX = {"HX-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_overview_counts_both_stores(client, seeded):
    page = soup(client.get("/overview"))
    project = page.select_one('[data-store="project"]')
    user = page.select_one('[data-store="user"]')
    assert project.select_one('[data-field="live"]').text == "4"
    assert project.select_one('[data-field="deleted"]').text == "1"
    assert project.select_one('[data-field="pending_reviews"]').text == "2"
    assert user.select_one('[data-field="live"]').text == "2"
    assert project.select_one('[data-field="journal_mode"]').text == "wal"
    data = client.get("/overview.json").get_json()
    by_key = {s["store"]: s for s in data["stores"]}
    assert by_key["project"]["summaries"] == 2 and by_key["project"]["sessions"] == 2
    assert by_key["user"]["live"] == 2 and by_key["project"]["schema_version"] == "3"


def test_overview_fragment_and_boosted(client):
    fragment = soup(client.get("/overview", headers=HTMX))
    assert fragment.find("html") is None and fragment.select_one("#store-cards")
    boosted = soup(client.get("/overview", headers=BOOSTED))
    assert boosted.find("html") is not None
    assert "HX-Request" in client.get("/overview").headers["Vary"]


def test_memories_merges_stores_and_hides_soft_deleted(client):
    page = soup(client.get("/memories"))
    rows = page.select("tr.memory")
    assert len(rows) == 6
    assert {r["data-store"] for r in rows} == {"project", "user"}
    assert page.select_one("#memory-list")["data-total"] == "6"
    with_deleted = soup(client.get("/memories?deleted=1"))
    assert len(with_deleted.select('tr.memory[data-deleted="1"]')) == 1


@pytest.mark.parametrize(
    "query,expected",
    [
        ("scope=user", 2),
        ("type=workflow", 1),
        ("tag=TOOLING", 1),
        ("q=pyproject", 1),
        ("q=deploy", 1),
        ("source=crystallized", 0),
        ("q=%25", 6),
        ("tag=legacy&deleted=1", 1),
    ],
)
def test_memory_filters(client, query, expected):
    data = client.get(f"/memories.json?{query}").get_json()
    assert data["total"] == expected
    fragment = soup(client.get(f"/memories?{query}", headers=HTMX))
    assert fragment.find("html") is None
    assert len(fragment.select("tr.memory")) == expected


def test_search_matches_agentao_search(seeded, client):
    for q in ["uv", "post", "py", "de", "_", "neovim", "部署"]:
        ours = {m["id"] for m in client.get(f"/memories.json?q={q}").get_json()["items"]}
        theirs = {m.id for m in seeded.manager.search(q)}
        assert ours == theirs, q


def test_pagination_in_sql(client):
    first = client.get("/memories.json?per_page=4&sort=key&order=asc").get_json()
    second = client.get("/memories.json?per_page=4&sort=key&order=asc&page=2").get_json()
    keys = [m["key_normalized"] for m in first["items"] + second["items"]]
    assert first["pages"] == 2 and len(keys) == 6 and keys == sorted(keys)


@pytest.mark.parametrize(
    "query",
    ["scope=global", "sort=evil", "order=up", "page=0", "per_page=100000", "deleted=yes", "q=" + "x" * 201],
)
def test_bad_filter_is_400_with_reason(client, query):
    r = client.get(f"/memories?{query}")
    assert r.status_code == 400
    assert soup(r).select_one(".error-message").text.strip()
    assert client.get(f"/memories.json?{query}").get_json()["status"] == 400


def test_detail_shows_history_and_reach(seeded, client):
    gone = next(m for m in client.get("/memories.json?deleted=1").get_json()["items"] if m["deleted_at"])
    page = soup(client.get(f"/memories/project/{gone['id']}"))
    assert page.select_one("#reach")["data-reach"] == "soft_deleted"
    assert [e["data-event"] for e in page.select("#events tr[data-event]")] == ["create", "soft_delete"]
    user = next(m for m in client.get("/memories.json?scope=user").get_json()["items"])
    data = client.get(f"/memories/user/{user['id']}.json").get_json()
    assert data["reach"]["code"] == "stable" and data["memory"]["store"] == "user"


@pytest.mark.parametrize(
    "url",
    [
        "/memories/project/nope1234",
        "/memories/other/abcd1234",
        "/memories/project/..%2F..%2Fetc",
        "/memories/project/a'b",
    ],
)
def test_unknown_or_malformed_id_is_404(client, url):
    assert client.get(url).status_code == 404


def test_summaries_mark_the_tail(client):
    page = soup(client.get("/summaries"))
    sessions = page.select("[data-session]")
    assert {s["data-session"] for s in sessions} == {"session-a", "session-b"}
    assert len(page.select('[data-in-tail="1"]')) == 2
    assert len(client.get("/summaries.json").get_json()["tail_ids"]) == 2


def test_browsing_never_writes(seeded):
    before = file_digest(seeded.project_db, seeded.user_db)
    client = seeded.app().test_client()
    for url in [
        "/overview",
        "/overview.json",
        "/memories",
        "/memories.json?q=uv&deleted=1",
        "/summaries",
        "/summaries.json",
    ]:
        assert client.get(url).status_code == 200
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_missing_stores_show_where_agentao_would_put_them(tmp_path):
    from dashboard import create_app

    project = tmp_path / "empty-project"
    project.mkdir()
    app = create_app(
        {"PROJECT_DIR": project, "USER_DB": tmp_path / "nohome" / "memory.db", "AUTH_TOKEN": False}
    )
    page = soup(app.test_client().get("/overview"))
    boxes = page.select('[data-problem="missing"]')
    assert len(boxes) == 2
    assert str(project / ".agentao" / "memory.db") in boxes[0].text
    assert not (project / ".agentao").exists() and not (tmp_path / "nohome").exists()
    assert app.test_client().get("/memories").status_code == 200


def test_corrupt_store_does_not_break_the_other(seeded, tmp_path):
    seeded.user_db.write_bytes(b"this is not a database at all" * 100)
    client = seeded.app().test_client()
    page = soup(client.get("/overview"))
    assert page.select_one('[data-store="user"] [data-problem="not_a_database"]')
    assert page.select_one('[data-store="project"] [data-field="live"]').text == "4"
    assert client.get("/memories.json").get_json()["total"] == 4


def test_newer_schema_is_read_only_with_banner(seeded):
    import sqlite3

    conn = sqlite3.connect(seeded.user_db)
    conn.execute("UPDATE schema_meta SET value='4' WHERE key='version'")
    conn.commit()
    conn.close()
    page = soup(seeded.app().test_client().get("/memories"))
    assert page.select_one('[data-store="user"][data-readonly]')
    assert len(page.select("tr.memory")) == 6


def test_list_follows_the_agents_writes(seeded):
    """The list is served from an in-memory copy; it must never show stale rows."""
    import sqlite3

    client = seeded.app().test_client()
    assert client.get("/memories.json").get_json()["total"] == 6
    fresh = seeded.save("cache layer", "Redis 7 caches sessions.", ["infra"])
    seeded.save("Package Manager", "This project uses pdm now.", ["tooling"])
    data = client.get("/memories.json?q=pdm").get_json()
    assert [m["key_normalized"] for m in data["items"]] == ["package_manager"]
    assert client.get("/memories.json?q=uv;").get_json()["total"] == 0
    assert client.get("/memories.json?tag=INFRA").get_json()["total"] == 2
    seeded.manager.delete(fresh.id)
    assert client.get("/memories.json").get_json()["total"] == 6
    conn = sqlite3.connect(seeded.project_db)  # a hard delete, as a purge does
    conn.execute("DELETE FROM memories WHERE id = ?", (fresh.id,))
    conn.commit()
    conn.close()
    assert client.get("/memories.json?deleted=1").get_json()["total"] == 7
    ids = {m["id"] for m in client.get("/memories.json?deleted=1").get_json()["items"]}
    assert fresh.id not in ids
    seeded.manager.clear()  # agentao's clear writes no events: the copy must notice anyway
    assert client.get("/memories.json").get_json()["total"] == 0
    again = seeded.save("after the clear", "A new fact.", ["infra"])
    assert [m["id"] for m in client.get("/memories.json").get_json()["items"]] == [again.id]


@pytest.mark.parametrize("q", ["%", "u_", "a%b", "PyProject", "ü", "\u212a", "部"])
def test_wildcard_and_unicode_search_matches_agentao(seeded, q):
    seeded.save("Ümlaut note", "Kelvin \u212a and café", ["Tag-Ü"])
    client = seeded.app().test_client()
    ours = {m["id"] for m in client.get("/memories.json", query_string={"q": q}).get_json()["items"]}
    assert ours == {m.id for m in seeded.manager.search(q)}


@pytest.mark.parametrize("q", ["5", "nu", "[", "a", "x"])
def test_search_on_rows_with_non_string_json_matches_agentao(seeded, q):
    import sqlite3

    row = seeded.save("odd tags", "plain text", ["x"])
    conn = sqlite3.connect(seeded.project_db)
    conn.execute("""UPDATE memories SET tags_json = '[5, null, ["a"], true]' WHERE id = ?""", (row.id,))
    conn.commit()
    conn.close()
    client = seeded.app().test_client()
    ours = {m["id"] for m in client.get("/memories.json", query_string={"q": q}).get_json()["items"]}
    assert ours == {m.id for m in seeded.manager.search(q)}


def test_detail_reach_matches_agentaos_stable_fit(agent):
    """Which rows the 2000-character budget keeps out of <memory-stable>, as agentao decides."""
    from agentao.memory import MemoryPromptRenderer

    for i in range(10):
        agent.save(f"user_pref_{i}", f"preference number {i} " + "detail " * 45, ["user"])
    for i in range(5):
        agent.save(f"note {i}", f"incidental note {i}", ["misc"])
    stable = agent.manager.get_stable_entries()
    shown = {
        r.id
        for r in MemoryPromptRenderer().fit_stable_records(stable, agent.manager.get_cross_session_tail())
    }
    selected = {r.id for r in stable}
    client = agent.app().test_client()
    codes = {}
    for m in client.get("/memories.json?per_page=200").get_json()["items"]:
        codes[m["id"]] = client.get(f"/memories/{m['store']}/{m['id']}.json").get_json()["reach"]["code"]
    assert {i for i, c in codes.items() if c == "stable"} == shown
    assert {i for i, c in codes.items() if c == "stable_evicted"} == selected - shown
    assert {i for i, c in codes.items() if c == "recall"} == set(codes) - selected
    assert selected - shown, "the corpus should overflow the stable budget"


def test_overview_reports_agentaos_stable_block_size(seeded):
    from agentao.memory import MemoryPromptRenderer

    mgr = seeded.manager
    mgr._session_id = "a-brand-new-session"
    renderer = MemoryPromptRenderer()
    tail = mgr.get_cross_session_tail()
    block = renderer.render_stable_block(renderer.fit_stable_records(mgr.get_stable_entries(), tail), tail)
    client = seeded.app().test_client()
    assert client.get("/overview.json").get_json()["stable_block_chars"] == len(block) > 0
    page = soup(client.get("/overview"))
    assert page.select_one('[data-field="stable_block_chars"]').text == f"{len(block):,}"


def test_detail_links_to_single_memory_forget(client):
    m = client.get("/memories.json").get_json()["items"][0]
    link = soup(client.get(f"/memories/{m['store']}/{m['id']}")).select_one("#forget-link a")
    assert client.get(link["href"]).status_code == 200


def test_filter_choices_are_the_live_rows_values_and_follow_agent_writes(seeded):
    client = seeded.app().test_client()

    def options(field):
        page = soup(client.get("/memories"))
        return [o["value"] for o in page.select(f"#f-{field} option") if o["value"]]

    def live(column):
        return sorted({getattr(m, column) for m in seeded.manager.get_all_entries()})

    assert options("type") == live("type") and options("source") == live("source")
    assert options("confidence") == live("confidence")
    absent = next(
        t for t in ("decision", "constraint", "workflow", "profile", "preference") if t not in live("type")
    )
    row = seeded.save("release checklist", "Tag, build, publish.", ["ops"], type=absent)
    assert options("type") == live("type") and absent in options("type")
    seeded.manager.delete(row.id)  # the only row of that type: its choice goes
    assert options("type") == live("type") and absent not in options("type")
