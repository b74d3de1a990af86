"""About you: everything the stores hold about the person, each entry linked to its page,
bounded at any size (#21 journey 1)."""

from __future__ import annotations

from agentao_world import file_digest
from bs4 import BeautifulSoup


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_the_tab_is_there_and_lists_what_is_about_you(seeded):
    gone = seeded.save("nickname", "Call me Sam.", ["profile"], scope="user")
    seeded.manager.delete(gone.id)
    seeded.save("contact", "Call me on +1 415 555 0132.", ["people"], scope="project")
    before = file_digest(seeded.project_db, seeded.user_db)
    client = seeded.app().test_client()
    page = soup(client.get("/overview"))
    tab = page.select_one('nav.tabs a[data-tab="about"]')
    assert tab is not None and tab.text.strip() == "About you"

    about = soup(client.get(tab["href"]))
    user_rows = [m for m in client.get("/memories.json?scope=user").get_json()["items"]]
    listed = about.select("#about-memories tr.about-memory")
    assert {r["data-memory-id"] for r in listed} == {m["id"] for m in user_rows} and len(listed) == 2
    for row in listed:  # each links to its page, which shows that memory
        link = row.select_one("a")["href"]
        assert link.endswith(f"/memories/{row['data-store']}/{row['data-memory-id']}")
        assert client.get(link).status_code == 200
    assert "Uses Neovim with LazyVim." in about.select_one("#about-memories").text
    # Project facts are not about the person.
    assert "PostgreSQL" not in about.select_one("#about-memories").text
    # Deleted ones apart, said to be still on disk.
    [deleted] = about.select("#about-deleted tr.about-deleted")
    assert deleted["data-memory-id"] == gone.id and "Call me Sam." in deleted.text
    assert "still on disk" in about.select_one('[data-field="about-deleted"]').text
    # Personal data in any store, linked to the row.
    found = about.select("#about-findings tr.about-finding")
    assert any(f["data-store"] == "project" and f["data-table"] == "memories" for f in found)
    assert "415 555 0132" not in about.select_one("#about-findings").text  # masked
    # Their own words in the review queue's evidence, and the session summaries.
    evidence = about.select_one("#about-evidence").text
    assert "I prefer tabs over spaces" in evidence
    assert "Set up uv and pytest." in about.select_one("#about-summaries").text
    data = client.get("/about.json").get_json()
    assert data["memories"]["total"] == 2 and data["deleted"]["total"] == 1
    assert data["findings"]["personal"]["total"] >= 1 and data["summaries"]["total"] == 2
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_every_section_is_bounded_and_says_how_many_more(agent):
    from dashboard.store.about import LIMIT

    for n in range(LIMIT + 7):
        agent.save(f"fact {n:03d}", f"Personal fact number {n}.", ["profile"], scope="user")
    client = agent.app().test_client()
    page = soup(client.get("/about"))
    assert len(page.select("#about-memories tr.about-memory")) == LIMIT
    more = page.select_one("#about-memories p.more")
    assert more["data-more"] == "7" and more.a.text == "and 7 more"
    assert more.a["href"] == "/memories?scope=user"
    data = client.get("/about.json").get_json()
    assert data["memories"] | {"items": None} == {
        "total": LIMIT + 7,
        "shown": LIMIT,
        "more": 7,
        "items": None,
    }


def test_forget_button_only_when_the_scoped_forget_exists(seeded):
    app = seeded.app()
    assert (
        soup(app.test_client().get("/about")).select_one("#forget-about") is None
        or "forget.about" in app.view_functions
    )
    other = seeded.app()
    if "forget.about" not in other.view_functions:
        other.add_url_rule("/forget/about", "forget.about", lambda: "")
    button = soup(other.test_client().get("/about")).select_one("a#forget-about")
    assert button.text == "Forget what is about me…" and button["href"] == "/forget/about"
    assert other.test_client().get("/about.json").get_json()["forget_about"] == "/forget/about"


def test_nothing_yet_is_said_so(agent):
    page = soup(agent.app().test_client().get("/about"))
    assert "Nothing yet" in page.select_one("#about-memories").text
    assert (
        page.select_one('[data-field="about-memories"]').text.strip()
        == "The agent remembers 0 things about you, in every project."
    )


def test_about_you_reuses_the_held_scan_until_a_file_moves(seeded, monkeypatch):
    """Personal data and secrets depend on the files alone: About you shows the scan held for
    the files as they are however old it is (the findings list, whose staleness findings move
    with the clock, scans again), and scans again once the agent writes."""
    import dashboard.views.findings as findings_view

    scans = []
    real = findings_view.scan
    monkeypatch.setattr(findings_view, "scan", lambda *a, **k: scans.append(1) or real(*a, **k))
    monkeypatch.setattr(findings_view, "REUSE_S", 0)  # every held page scan has expired
    client = seeded.app().test_client()
    personal = lambda: client.get("/about.json").get_json()["findings"]["personal"]["total"]  # noqa: E731
    first = personal()
    assert personal() == first and len(scans) == 1
    client.get("/findings.json")
    assert len(scans) == 2  # the list scans again: what ages moves with the clock
    assert personal() == first and len(scans) == 2
    seeded.save("billing contact", "Send the invoices to dana.reyes@northwind-mail.com.", ["billing"])
    assert personal() == first + 1 and len(scans) == 3


def test_places_holding_personal_data_count_each_place_once(seeded):
    """A memory with a phone number and an ID number is one place, not two: the sentence counts
    the rows the list below it links to, as the overview counts risky entries."""
    seeded.save("user_phone", "My phone is 138 1234 5678, ID 11010519491231002X.", ["profile"], scope="user")
    seeded.save("contact", "Call me on +1 415 555 0132.", ["people"], scope="project")
    about = soup(seeded.app().test_client().get("/about"))
    rows = about.select("#about-findings tr.about-finding")
    places = {(r["data-store"], r["data-table"], r["data-row-id"]) for r in rows}
    assert len(rows) > len(places)  # one memory holds two findings
    said = about.select_one('[data-field="about-findings"]')
    assert int(said["data-count"]) == len(places)
    assert said.text.strip().startswith(f"{len(places)} places hold")
