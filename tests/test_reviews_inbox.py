"""The review inbox as a person reads it: what approving does in one line, what a decision
did in #status, where the keyboard goes next, the header's count.

Stores written by the real agentao 0.5.17 (candidates by its crystallizer); the
lines are checked against what the approval then really does.
"""

from __future__ import annotations

import time
from datetime import datetime

from agentao_world import Agent, agentao_blocks
from bs4 import BeautifulSoup

from dashboard.actions.warnings import ORDER
from dashboard.words import LABELS

HTMX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def listing(client):
    return {i["content"]: i for i in client.get("/reviews.json").get_json()["items"]}


def form_of(page):
    """Every field of the bulk form as the browser sends it (hidden fields, no box ticked)."""
    data = {}
    for i in page.select("#review-form input[type=hidden]"):
        data.setdefault(i["name"], []).append(i["value"])
    return data


def said(fragment) -> tuple[str, str]:
    box = fragment.select_one('[hx-swap-oob="innerHTML:#status"] [data-said]')
    return box.text, box["data-said"]


def queue(agent: Agent) -> Agent:
    agent.crystallize(
        "I prefer tabs over spaces.",
        "We decided to use uv for packaging.",
        "I prefer short commit messages.",
        "I use token=abcdefgh12345678 for the staging API.",
    )
    return agent


def test_every_warning_code_has_words():
    assert set(ORDER) <= set(LABELS["warning"])
    assert all(str(text) and str(why) for text, why in LABELS["warning"].values())


def test_first_line_says_where_the_memory_will_show(agent):
    queue(agent)
    client = agent.app().test_client()
    items = listing(client)
    page = soup(client.get("/reviews"))
    tabs = items["tabs over spaces"]
    # Plenty of room in the always-on block: it will be in it, and the predicted block says so.
    assert [c["code"] for c in tabs["consequences"]] == ["enters_prompt"]
    assert "tabs over spaces" in tabs["stable_effect"]["after"]
    card = page.select_one(f"#review-{tabs['id']}")
    first = card.select_one(".review-head [data-consequence]")
    assert first["data-consequence"] == "enters_prompt" and first.text.startswith("Will enter every prompt")
    # The candidate in words and what approving does, then the buttons, then where it came
    # from; the plan behind a disclosure.
    parts = [el["class"][0] for el in card.find_all(recursive=False)]
    assert parts[:3] == ["review-head", "decide", "review-body"]
    assert card.select_one(".review-head > *")["data-field"] == "content"
    assert card.select_one("h2").text == "tabs over spaces"
    assert [
        el.get("data-action") or el.name
        for el in card.select(".decide > [data-action], .decide > details > summary")
    ] == ["approve", "summary", "reject", "erase"]
    # The plan behind a disclosure, fetched when it is opened (a link to it without JavaScript).
    details = card.select_one("details[data-details]")
    assert details["hx-trigger"] == "toggle once" and card.select("[data-plan]") == []
    opened = soup(client.get(details.select_one("a[data-action=show-detail]")["href"], headers=HTMX))
    assert opened.select_one("[data-plan]")["data-action"] == "create"
    assert card.select_one("q[data-field=evidence]").text == "I prefer tabs over spaces."
    assert card.select_one(".meta .term[data-code=user]").text == "about you"
    # Words, not markup: the block's name is never sent as a tag.
    assert page.select("memory-stable") == []
    assert opened.select_one("[data-field=block-size]").text.startswith(
        "The always-on block for a new session: "
    )
    secret = items["token=abcdefgh12345678 for the staging API"]
    assert secret["consequences"] == [
        {"code": "refused", "text": "Would be refused: it contains a secret (agentao never saves one)."}
    ]


def test_no_room_in_the_block_says_recalled_and_the_status_agrees(agent):
    # An old memory under the candidate's key, then newer ones that fill the block: the
    # overwritten row keeps its created_at, so the fit (newest first) reaches it last, when
    # no room is left.  agentao's stamps are whole seconds: the fillers come a second later.
    agent.save("preference_tabs_over_spaces", "Spaces, sometimes.", scope="user", type="preference")
    saved = datetime.now().replace(microsecond=0)
    while datetime.now().replace(microsecond=0) == saved:
        time.sleep(0.02)
    for n in range(6):
        agent.save(f"zz note {n}", f"fact number {n}: " + "keep this always in mind " * 11, scope="user")
    agent.save("zz medium", "medium fact: " + "keep this " * 8, scope="user")
    agent.crystallize("I prefer tabs over spaces.")
    client = agent.app().test_client()
    [item] = listing(client).values()
    assert item["consequences"] == [
        {
            "code": "overwrites",
            "text": "Saved as “preference_tabs_over_spaces”, replacing “Spaces, sometimes.”; "
            "will be recalled when relevant.",
        }
    ]
    page = soup(client.get("/reviews"))
    first = page.select_one(f"#review-{item['id']} .review-head [data-consequence]")
    assert first["data-consequence"] == "overwrites" and "recalled when relevant" in first.text
    r = client.post(f"/reviews/{item['id']}/approve", data=form_of(page), headers=HTMX)
    assert said(soup(r)) == (f"Approved “{item['title']}” — it will be recalled when relevant.", "ok")
    # agentao agrees: saved, and not in the block a new session gets.
    assert [
        m.content
        for m in agent.manager.get_all_entries("user")
        if m.key_normalized == "preference_tabs_over_spaces"
    ] == ["tabs over spaces"]
    assert "tabs over spaces" not in agentao_blocks(agent, "anything")[0]


def test_a_decision_hands_the_keyboard_to_the_next_card(agent):
    queue(agent)
    client = agent.app().test_client()
    page = soup(client.get("/reviews"))
    cards = [a["data-item-id"] for a in page.select("#review-list article.review")]
    r = client.post(f"/reviews/{cards[0]}/reject", data=form_of(page), headers=HTMX)
    frag = soup(r)
    done = frag.select_one(f"#review-{cards[0]}")
    assert done["data-status"] == "rejected" and not done.has_attr("autofocus")
    assert done.select("button") == []  # one line, nothing left to click
    title = page.select_one(f"#review-{cards[0]} [data-field=title]").text
    assert said(frag) == (f"Rejected “{title}” — it will not be saved.", "ok")
    nxt = frag.select_one(f"article[data-item-id='{cards[1]}']")
    assert nxt["hx-swap-oob"] == "true" and nxt["id"] == f"review-{cards[1]}"
    focused = frag.select("[autofocus]")
    assert len(focused) == 1 and focused[0]["data-action"] in ("approve", "reject")
    assert focused[0].find_parent("article")["data-item-id"] == cards[1]
    # The last one waiting: the focus stays on the line that says what happened.
    for item_id in cards[1:-1]:
        client.post(f"/reviews/{item_id}/reject", data=form_of(soup(client.get("/reviews"))))
    page = soup(client.get("/reviews"))
    frag = soup(client.post(f"/reviews/{cards[-1]}/reject", data=form_of(page), headers=HTMX))
    assert frag.select_one(f"#review-{cards[-1]}").has_attr("autofocus")
    assert frag.select("article[hx-swap-oob]") == []


def test_bulk_results_are_counted_in_words(agent):
    queue(agent)
    client = agent.app().test_client()
    by = listing(client)
    two = [by["tabs over spaces"]["id"], by["use uv for packaging"]["id"]]
    page = soup(client.get("/reviews"))
    frag = soup(client.post("/reviews/approve", data=dict(form_of(page), ids=two), headers=HTMX))
    assert said(frag) == ("Approved 2 suggestions.", "ok")
    assert frag.select_one("#review-list [autofocus]")["data-action"] in ("approve", "reject")
    page = soup(client.get("/reviews"))
    secret = by["token=abcdefgh12345678 for the staging API"]["id"]
    mixed = [by["short commit messages"]["id"], secret]
    frag = soup(client.post("/reviews/approve", data=dict(form_of(page), ids=mixed), headers=HTMX))
    assert said(frag) == ("Approved 1 suggestion. 1 could not be decided: the reason is on the page.", "warn")
    # Without JavaScript: the redirect's page says it, counted.
    r = client.post("/reviews/reject", data=dict(form_of(soup(client.get("/reviews"))), ids=[secret]))
    page = soup(client.get(r.headers["Location"]))
    assert page.select_one("#status [data-said]").text == "Rejected 1 suggestion."


def test_tabs_and_header_count_in_words(agent):
    queue(agent)
    client = agent.app().test_client()
    page = soup(client.get("/reviews"))
    assert [a.text for a in page.select("#review-tabs a")] == ["Waiting (4)", "Approved (0)", "Rejected (0)"]
    assert page.select_one("h1").text == "Suggestions to review"
    badge = soup(client.get("/memories")).select_one("header.top a[data-tab=reviews] .count")
    assert badge.text == "4" and badge["title"] == "4 suggestions wait for you"
    item_id = page.select_one("#review-list article.review")["data-item-id"]
    frag = soup(client.post(f"/reviews/{item_id}/reject", data=form_of(page), headers=HTMX))
    oob = frag.select_one('[hx-swap-oob="innerHTML:#tabs a[data-tab=reviews]"]')
    assert oob.text.split() == ["Suggestions", "3"]
    for i in listing(client).values():
        if i["status"] == "pending":
            client.post(f"/reviews/{i['id']}/reject", data=form_of(soup(client.get("/reviews"))))
    assert soup(client.get("/memories")).select_one("header.top a[data-tab=reviews] .count") is None
    assert soup(client.get("/reviews")).select_one("[data-empty]").text == "No suggestions wait for you."


def test_a_card_named_like_a_page_region_never_takes_the_swap(agent):
    """Item ``list`` would be ``#review-list``: sent out of band it would replace the queue."""
    import sqlite3

    agent.crystallize("I prefer tabs over spaces.", "I prefer short commit messages.")
    with sqlite3.connect(agent.project_db) as conn:
        first = conn.execute("SELECT id FROM memory_review_queue ORDER BY created_at LIMIT 1").fetchone()[0]
        conn.execute("UPDATE memory_review_queue SET id = 'list' WHERE id = ?", (first,))
    client = agent.app().test_client()
    page = soup(client.get("/reviews"))
    cards = [a["data-item-id"] for a in page.select("#review-list article.review")]
    other = next(c for c in cards if c != "list")
    frag = soup(client.post(f"/reviews/{other}/reject", data=form_of(page), headers=HTMX))
    assert frag.select("[hx-swap-oob=true]#review-list, article[hx-swap-oob]") == []
    assert frag.select_one(f"#review-{other}").has_attr("autofocus")  # the focus stays in the line
    assert said(frag)[0].startswith("Rejected “")
