"""The overview answers "what does the agent know?" in sentences, each a link to its list,
with the file internals behind a "Storage details" disclosure (#21)."""

from __future__ import annotations

from agentao_world import Agent, file_digest
from bs4 import BeautifulSoup


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def sentence(page, code):
    return page.select_one(f'#answer [data-sentence="{code}"]')


def words(el) -> str:
    return " ".join(el.get_text(" ", strip=True).split()).replace(" ,", ",").replace(" .", ".")


def test_the_answer_comes_first_and_each_sentence_links_to_its_list(client, seeded):
    before = file_digest(seeded.project_db, seeded.user_db)
    page = soup(client.get("/overview"))
    main = page.select_one("main")
    # The answer is the first thing after the heading; the file internals come later.
    assert main.find(["section", "div"]) is page.select_one("#answer")
    knows = sentence(page, "knows")
    assert words(knows) == "The agent knows 6 things: 2 about you, 4 about this project."
    links = {a.text: a["href"] for a in knows.select("a")}
    assert client.get(links["2 about you"].replace("/memories", "/memories.json", 1)).get_json()["total"] == 2
    assert (
        client.get(links["4 about this project"].replace("/memories", "/memories.json", 1)).get_json()[
            "total"
        ]
        == 4
    )

    pending = sentence(page, "pending")
    assert words(pending) == "2 suggestions wait for you."
    reviews = client.get(pending.a["href"].replace("/reviews", "/reviews.json", 1)).get_json()
    assert len(reviews["items"]) == 2 and {i["status"] for i in reviews["items"]} == {"pending"}

    deleted = sentence(page, "deleted")  # one soft-deleted row: the singular
    assert words(deleted) == "1 deleted memory is invisible to the agent but still on disk."
    listed = client.get(deleted.a["href"].replace("/memories", "/memories.json", 1)).get_json()
    assert sum(1 for m in listed["items"] if m["deleted_at"]) == 1

    data = client.get("/overview.json").get_json()
    chars = data["stable_block_chars"]
    block = sentence(page, "block")
    assert words(block).startswith(f"{chars:,} of 2,000 characters of the always-on block are used.")
    assert block.select_one("meter")["value"] == str(chars)
    assert data["counts"]["knows"] == 6 and data["counts"]["pending"] == 2
    assert data["counts"]["deleted"] == 1 and data["counts"]["block"]["chars"] == chars
    assert {s["code"] for s in data["sentences"]} == {"knows", "pending", "risky", "deleted", "block"}
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_plurals_are_right_for_one(agent):
    agent.save("editor", "Uses Neovim with LazyVim.", ["profile"], scope="user")
    agent.crystallize("I prefer tabs over spaces.")
    page = soup(agent.app().test_client().get("/overview"))
    assert words(sentence(page, "knows")) == "The agent knows 1 thing: 1 about you, 0 about this project."
    assert words(sentence(page, "pending")) == "1 suggestion waits for you."
    assert sentence(page, "deleted") is None  # nothing deleted: no sentence about it
    assert "It puts 1 memory into every prompt" in words(sentence(page, "block"))


def test_risky_counts_the_rows_the_findings_scan_flags(agent):
    agent.save("contact", "Reach me at sam@example.org or +1 415 555 0132.", ["profile"], scope="user")
    agent.save("build", "Run make before pushing.", ["workflow"], scope="project")
    client = agent.app().test_client()
    page = soup(client.get("/overview"))
    # The first screen does not wait for the scan: the sentence asks for itself once shown.
    later = sentence(page, "risky")
    assert later.has_attr("data-later") and later["hx-trigger"] == "load"
    risky = soup(client.get(later["hx-get"], headers={"HX-Request": "true"})).select_one(
        '[data-sentence="risky"]'
    )
    findings = client.get("/findings.json").get_json()
    flagged = {
        (i["store"], i["row_id"])
        for i in findings["items"]
        if i["category"] in ("secret", "personal", "instruction")
    }
    assert len(flagged) == 1 and risky["data-count"] == "1"
    assert words(risky).startswith("1 entry looks risky")
    by = {a["data-category"]: a for a in risky.select(".by-category a")}
    assert set(by) == {"personal"} and by["personal"]["href"] == "/findings?category=personal"
    personal = findings["counts"]["category"]["personal"]
    assert by["personal"].text == f"Personal data: {personal}"
    # The breakdown counts findings, not entries: it says so, with their total, so "1 entry"
    # beside "Personal data: 2" reads right.
    found = "finding" if personal == 1 else "findings"
    assert words(risky.select_one(".by-category")).startswith(f"{personal} {found} in them:")
    # Only htmx gets the bare sentence; a browser sent to it gets the whole overview.
    r = client.get("/overview/risky")
    assert r.status_code == 303 and r.headers["Location"].endswith("/overview")


def test_a_scan_that_ran_out_of_time_says_at_least(agent):
    for n in range(400):
        agent.save(f"contact {n}", f"Mail person {n} at p{n}@example.org.", ["people"], scope="project")
    client = agent.app(FINDINGS_TIME_LIMIT_MS=1).test_client()
    data = client.get("/overview.json").get_json()
    assert data["counts"]["risky_complete"] is False
    risky = next(s for s in data["sentences"] if s["code"] == "risky")
    assert risky["text"].startswith(f"At least {risky['count']} ") and risky["count"] < 400


def test_file_internals_sit_behind_storage_details(client):
    page = soup(client.get("/overview"))
    for card in page.select(".card.store"):
        details = card.select_one("details.storage")
        assert details.summary.text == "Storage details" and not details.has_attr("open")
        for field in ("path", "size", "journal_mode", "schema_version", "change_counter", "freelist_count"):
            assert details.select_one(f'[data-field="{field}"]') is not None, field
            assert card.select_one(f'[data-field="{field}"]').find_parent("details") is details
        # The scope/type/source table turns into cards on a phone: every cell is labelled.
        table = details.select_one("table.rows")
        assert table is not None
        assert all(td.get("data-label") or "lead" in td.get("class", []) for td in table.select("td"))
        # The plain counts stay in view.
        assert card.select_one('[data-field="live"]').find_parent("details") is None


def test_a_missing_project_store_is_explained_not_an_error(tmp_path):
    project = tmp_path / "fresh"
    project.mkdir()
    from dashboard import create_app

    client = create_app({"PROJECT_DIR": project, "USER_DB": None, "AUTH_TOKEN": False}).test_client()
    page = soup(client.get("/overview"))
    card = page.select_one('.card.store[data-store="project"]')
    assert card.select_one(".problem-box") is None and card.select_one('[role="alert"]') is None
    box = card.select_one('.empty-state[data-problem="missing"]')
    assert "agentao creates this file the first time it remembers something in this project" in box.text
    assert "remember that" in box.text and str(project / ".agentao" / "memory.db") in box.text
    assert words(sentence(page, "knows")) == "The agent knows nothing yet: no memory is saved."
    assert not (project / ".agentao").exists()  # and nothing was created


def test_an_empty_store_gets_a_next_step(tmp_path):
    agent = Agent(tmp_path)  # both files created by agentao, nothing saved yet
    page = soup(agent.app().test_client().get("/overview"))
    for kind in ("project", "user"):
        card = page.select_one(f'.card.store[data-store="{kind}"]')
        empty = card.select_one(f'.empty-state[data-empty="{kind}"]')
        assert empty is not None and "remember that" in empty.text
        assert card.select_one(".problem-box") is None


def test_a_damaged_store_is_still_an_error(seeded):
    seeded.project_db.write_bytes(b"this is not a database at all" * 100)
    page = soup(seeded.app().test_client().get("/overview"))
    card = page.select_one('.card.store[data-store="project"]')
    box = card.select_one('.problem-box[role="alert"]')
    assert box is not None and box["data-problem"] == "not_a_database"
    assert card.select_one(".empty-state") is None


def test_the_composition_picture_says_1_memory(agent):
    agent.save("editor", "Uses Neovim with LazyVim.", ["profile"], scope="user")
    agent.save("build", "Run make before pushing.", ["workflow"], scope="project")
    page = soup(agent.app().test_client().get("/overview"))
    chart = page.select_one('svg[data-chart="composition"]')
    titles = [t.text for t in chart.select("rect title")]
    assert "scope: about you 1 memory" in titles and not any("1 memories" in t for t in titles)
    assert "(total 2 memories)" in chart.select_one("desc").text


def test_the_timeline_is_counted_once_while_no_file_changes(seeded, monkeypatch):
    """The overview's timeline is SQLite's count, read again only when a file moves: a second
    view asks SQLite nothing, and a memory the agent saves since is in the next view's count."""
    from dashboard import facts

    readings = []
    real = facts.read_timeline
    monkeypatch.setattr(facts, "read_timeline", lambda refs: readings.append(1) or real(refs))
    client = seeded.app().test_client()
    created = lambda: sum(
        p["created"] for p in client.get("/overview.json").get_json()["timeline"]["periods"]
    )  # noqa: E731
    first = created()
    assert created() == first and len(readings) == 1
    seeded.save("new fact", "The staging database moved to port 5433.", ["infra"])
    assert created() == first + 1 and len(readings) == 2
