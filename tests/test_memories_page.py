"""The memories list and a memory's page as a person reads them (#21): the answer first, words
for codes, findings on the rows, and a delete that says what happened and offers its undo.

The rows are written by agentao; "in every prompt" is checked against agentao's own stable
selection, and the delete and its undo against agentao's own listing and the file on disk.
"""

from __future__ import annotations

import sqlite3
from urllib.parse import parse_qs, urlparse

import pytest
from agentao.memory import MemoryPromptRenderer
from agentao_world import file_digest
from bs4 import BeautifulSoup

PHONE = "Call Dana at +1 415 555 0134 about the release."
HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def world(seeded):
    phone = seeded.save("release contact", PHONE, ["workflow"])
    return seeded, phone


def on_disk(agent, memory_id):
    conn = sqlite3.connect(f"file:{agent.project_db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT deleted_at FROM memories WHERE id = ?", (memory_id,)).fetchone()
    finally:
        conn.close()


def agentao_stable_ids(agent) -> set[str]:
    mgr = agent.manager
    shown = MemoryPromptRenderer().fit_stable_records(
        mgr.get_stable_entries(), session_tail=mgr.get_cross_session_tail()
    )
    return {r.id for r in shown}


def test_the_list_reads_at_a_glance(world):
    agent, phone = world
    client = agent.app().test_client()
    before = file_digest(agent.project_db, agent.user_db)
    page = soup(client.get("/memories?deleted=1"))
    rows = {r["data-memory-id"]: r for r in page.select("tr.memory")}
    assert (
        page.select_one("[data-field=summary]").get_text() == f"{len(rows)} memories, deleted ones included."
    )
    assert soup(client.get("/memories?q=Neovim")).select_one("[data-field=summary]").get_text() == "1 memory."

    # The lead cell leads with what the memory says, linked to its page, the key small and exact
    # beside it (a line may break only after its "_"); whom it is about in words.
    row = rows[phone.id]
    lead = row.select_one("td.lead")
    says = lead.select_one("a.says")
    assert says.get_text() == PHONE and says["href"] == f"/memories/project/{phone.id}"
    assert lead.select("a, code")[:2] == [says, lead.select_one("code.key")]
    assert lead.select_one("code.key").get_text() == "release_contact"
    assert str(lead.select_one("code.key bdi")) == "<bdi>release_<wbr/>contact</bdi>"
    assert row.select_one('[data-label="About"] .term[data-code=project]').get_text() == "this project"
    assert all(
        td.has_attr("data-label")
        for td in row.select("td")
        if not {"lead", "row-actions"} & set(td.get("class", []))
    )
    # Its own delete and "forget for good", beside it.
    tools = row.select_one("td.row-actions")
    form = tools.select_one("form")
    assert form["action"] == f"/memories/project/{phone.id}/delete" and form["hx-target"] == "closest tr"
    assert {i["name"]: i["value"] for i in form.select("input")}["shown_in"] == "list"
    assert tools.select_one("a[data-action=forget-for-good]")["href"] == f"/forget/memory/project/{phone.id}"

    # A phone number is a red "personal data" badge, linking to the findings of that row.
    badge = row.select_one("a.badge.flag[data-category=personal]")
    assert badge.get_text() == "personal data" and "phone" in badge["title"].lower()
    link = urlparse(badge["href"])
    assert link.path == "/findings" and parse_qs(link.query) == {
        "store": ["project"],
        "category": ["personal"],
        "row": [phone.id],
    }
    clean = next(r for i, r in rows.items() if "Neovim" in r.get_text())
    assert not clean.select("a.badge.flag")

    # "in every prompt" is exactly agentao's own always-on selection; a deleted row never is.
    marked = {i for i, r in rows.items() if r.has_attr("data-in-prompt")}
    assert marked == agentao_stable_ids(agent) and marked
    for i, r in rows.items():
        assert r.select_one("[data-badge]")["data-badge"] == (
            "deleted" if r["data-deleted"] == "1" else "in-prompt" if i in marked else "recall"
        )
    assert file_digest(agent.project_db, agent.user_db) == before, "browsing wrote to a file"


def test_a_memorys_page_answers_first(world):
    agent, phone = world
    client = agent.app().test_client()
    stable = agentao_stable_ids(agent)
    for m in agent.manager.get_all_entries():
        page = soup(client.get(f"/memories/{m.scope if m.scope == 'user' else 'project'}/{m.id}"))
        answer = page.select_one("#reach .answer").get_text()
        assert answer == ("In every prompt" if m.id in stable else "Recalled when relevant"), m.title
    page = soup(client.get(f"/memories/project/{phone.id}"))
    # The facts in words; the raw fields folded behind "Details".
    assert page.select_one("[data-fact=source] .term").get_text() == "saved on request"
    assert page.select_one("[data-fact=created] time")["datetime"] == phone.created_at
    raw = page.select_one("details#raw-fields")
    assert raw.select_one("summary").get_text() == "Details"
    for field in ("id", "key_normalized", "sensitivity", "keywords", "fingerprint"):
        assert raw.select_one(f"[data-field={field}]") is not None, field
    assert raw.select_one("[data-field=sensitivity]").get_text() == "normal"
    # ... and the finding is said beside it, with its way to the findings page.
    flag = page.select_one("#memory-flags a.badge[data-category=personal]")
    assert flag is not None and "row=" + phone.id in flag["href"]

    gone = soup(client.get("/memories/project/" + _deleted_id(agent)))
    assert (
        gone.select_one("#reach .answer").get_text()
        == "Deleted: the agent no longer sees it, but its text is still on disk"
    )


def _deleted_id(agent):
    conn = sqlite3.connect(f"file:{agent.project_db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id FROM memories WHERE deleted_at IS NOT NULL").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize(
    "field, focused",
    [
        ("content", "edit-value"),
        ("tags", "edit-tags"),
        ("title", "edit-value"),
        ("nonsense", None),
        (None, None),
    ],
)
def test_a_fix_link_lands_on_the_field_it_names(world, field, focused):
    agent, phone = world
    query = f"?field={field}" if field else ""
    page = soup(agent.app().test_client().get(f"/memories/project/{phone.id}{query}"))
    assert page.select_one("#edit #edit-form") is not None
    assert [e.get("id") for e in page.select("[autofocus]")] == ([focused] if focused else [])


def _form(form) -> tuple[str, dict]:
    return form["action"], {i["name"]: i.get("value", "") for i in form.select("input[type=hidden]")}


def test_delete_says_what_happened_and_undo_brings_it_back_without_javascript(world):
    agent, phone = world
    client = agent.app().test_client()
    action, fields = _form(soup(client.get(f"/memories/project/{phone.id}")).select_one("#delete-form"))
    r = client.post(action, data=fields)
    assert r.status_code == 303
    assert r.headers["Location"] == f"/memories/project/{phone.id}"  # a clean address to share
    assert on_disk(agent, phone.id)[0] is not None
    assert phone.id not in {m.id for m in agent.manager.get_all_entries()}

    page = soup(client.get(r.headers["Location"]))
    said = page.select_one("#status [data-said]").get_text()
    assert said == (
        "Deleted 'release contact'. The agent no longer sees it; its text stays on disk "
        "until you forget it for good."
    )
    undo = page.select_one("#status form.said-undo")
    assert undo.select_one("button").get_text() == "Undo" and undo.select_one("button").has_attr("autofocus")
    # Said once: a reload (or the address opened elsewhere) does not repeat it.
    assert soup(client.get(r.headers["Location"])).select_one("#status").get_text().strip() == ""
    action, fields = _form(undo)
    r = client.post(action, data=fields)
    assert r.status_code == 303 and r.headers["Location"] == f"/memories/project/{phone.id}"
    assert on_disk(agent, phone.id) == (None,)
    assert phone.id in {m.id for m in agent.manager.get_all_entries()}
    page = soup(client.get(r.headers["Location"]))
    assert (
        page.select_one("#status [data-said]").get_text()
        == "Restored 'release contact'. The agent sees it again."
    )
    assert page.select_one("#status form") is None


def test_delete_and_undo_through_htmx_swap_the_page_in_place(world):
    agent, phone = world
    client = agent.app().test_client()
    action, fields = _form(soup(client.get(f"/memories/project/{phone.id}")).select_one("#delete-form"))
    r = client.post(action, data=fields, headers=HX)
    assert r.status_code == 200 and "HX-Redirect" not in r.headers
    answer = soup(r)
    assert answer.find("html") is None
    assert answer.select_one("#memory-page #reach")["data-reach"] == "soft_deleted"
    assert answer.select_one("#memory-page #restore-form") is not None
    status = answer.select_one('[hx-swap-oob="innerHTML:#status"]')
    assert status.select_one("[data-said]").get_text().startswith("Deleted 'release contact'.")
    # Focus goes to the Undo, the one autofocus of the answer.
    assert [e.get("data-action") for e in answer.select("[autofocus]")] == ["restore"]
    assert phone.id not in {m.id for m in agent.manager.get_all_entries()}

    undo = status.select_one("form.said-undo")
    assert undo["hx-target"] == "#memory-page"
    action, fields = _form(undo)
    r = client.post(action, data=fields, headers=HX)
    answer = soup(r)
    assert answer.select_one("#memory-page #reach")["data-reach"] != "soft_deleted"
    assert [e.get("id") for e in answer.select("[autofocus]")] == ["reach"]
    assert (
        answer.select_one("[hx-swap-oob] [data-said]").get_text()
        == "Restored 'release contact'. The agent sees it again."
    )
    assert phone.id in {m.id for m in agent.manager.get_all_entries()}
    # A second undo of the same delete is refused inside the page, and changes nothing.
    again = soup(client.post(action, data=fields, headers=HX))
    assert again.select_one("#memory-page #memory-actions [data-outcome=conflict]") is not None
    assert on_disk(agent, phone.id) == (None,)


@pytest.mark.parametrize(
    "page,rows", [("/memories", "#memory-list tr.memory"), ("/about", "#about-memories tr")]
)
def test_delete_and_undo_from_a_list_row_swap_that_row(world, page, rows):
    """#31 item 7: each row of the memories list and of About you deletes its memory where it is
    listed (the memory page's own soft delete), and its Undo takes the Delete button's place."""
    agent, _phone = world
    mine = agent.save("user phone", "My phone is +1 415 555 0177.", ["profile"], scope="user")
    client = agent.app().test_client()

    def row_of(html):
        return next(r for r in html.select(rows) if r.get("data-memory-id") == mine.id)

    row = row_of(soup(client.get(page)))
    action, fields = _form(row.select_one("td.row-actions form"))
    r = client.post(action, data=fields, headers=HX)
    assert r.status_code == 200 and "HX-Redirect" not in r.headers
    answer = soup(r)
    swapped = answer.select_one("tr")
    assert swapped["data-memory-id"] == mine.id and swapped["data-deleted"] == "1"
    assert swapped.select_one("a.says").get_text() == "My phone is +1 415 555 0177."
    # Its Undo says which memory to a screen reader ("Undo user_phone"), "Undo" on screen.
    assert [(e.get("data-action"), e.get_text()) for e in answer.select("[autofocus]")] == [
        ("restore", "Undo user_phone")
    ]
    assert answer.select_one("[autofocus] .visually-hidden").get_text() == " user_phone"
    said = answer.select_one('[hx-swap-oob="innerHTML:#status"] [data-said]').get_text()
    assert said.startswith("Deleted 'user phone'. The agent no longer sees it")
    assert mine.id not in {m.id for m in agent.manager.get_all_entries()}

    action, fields = _form(swapped.select_one("td.row-actions form"))
    answer = soup(client.post(action, data=fields, headers=HX))
    back = answer.select_one("tr")
    assert back["data-deleted"] == "0" and back.select_one("[data-action=delete]").has_attr("autofocus")
    assert "Restored 'user phone'." in answer.select_one("[hx-swap-oob] [data-said]").get_text()
    assert mine.id in {m.id for m in agent.manager.get_all_entries()}
    # The same Undo again: refused, the row left as it is, the reason in the status line.
    r = client.post(action, data=fields, headers=HX)
    assert r.status_code == 409 and r.headers["HX-Reswap"] == "none"
    assert soup(r).select_one("[hx-swap-oob] [data-said=bad]") is not None
    assert agent.manager.get_all_entries() and mine.id in {m.id for m in agent.manager.get_all_entries()}
    # Without JavaScript the delete lands on the memory's page, with its Undo.
    action, fields = _form(row_of(soup(client.get(page))).select_one("td.row-actions form"))
    r = client.post(action, data=fields)
    assert r.status_code == 303 and r.headers["Location"] == f"/memories/user/{mine.id}"
    assert soup(client.get(r.headers["Location"])).select_one("#status form.said-undo") is not None


def test_the_status_line_cannot_be_claimed_by_a_link(world):
    agent, phone = world
    client = agent.app().test_client()
    # What an action did travels in the session this dashboard signs, never in the
    # address: no query brings words (or a claimed delete) into the status line.
    live, gone = f"/memories/project/{phone.id}", "/memories/project/" + _deleted_id(agent)
    for url in (live + "?done=deleted", live + "?done=restored&said=Hacked", gone + "?done=deleted"):
        assert soup(client.get(url)).select_one("#status").get_text().strip() == "", url
    # Nor is one memory's result said on another memory's page.
    action, fields = _form(soup(client.get(live)).select_one("#delete-form"))
    client.post(action, data=fields)
    assert soup(client.get(gone)).select_one("#status").get_text().strip() == ""
    assert soup(client.get(live)).select_one("#status").get_text().strip() == ""
