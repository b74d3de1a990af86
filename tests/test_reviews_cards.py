"""The suggestion cards read for deciding (#31 item 4), on the demo's queue.

Every waiting card's approval pushes the same memory the person saved out of the
always-on block: that is said once above the list, not on each card.  A card leads
with the words being decided on and what approving does, then its buttons; its
memory links are named, never "view view"; a card that contradicts its evidence
does not highlight Approve; "Preview the edited approval" answers the same card.
"""

from __future__ import annotations

import pytest
from agentao_world import BrowserClient
from bs4 import BeautifulSoup

from dashboard import create_app
from dashboard.demo import build_demo

HTMX = {"HX-Request": "true"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    project_dir, user_db = build_demo(tmp_path_factory.mktemp("demo"))
    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    return app.test_client()


def _page(client, **headers):
    return BeautifulSoup(client.get("/reviews", headers=headers).get_data(as_text=True), "html.parser")


def test_a_warning_every_card_shares_is_said_once_above_the_list(client):
    page = _page(client)
    cards = page.select("#review-list article.review")
    assert len(cards) == 4
    [shared] = page.select("[data-shared-warning]")
    assert shared["data-shared-warning"] == "evicts_explicit"
    assert "“never push to main”" in shared.text and "every suggestion below" in shared.text
    assert shared.find_next("article") is cards[0]  # above the cards
    for card in cards:
        assert "never push to main" not in card.select_one(".review-head").text
        # … and each card still says where its memory goes.
        assert card.select("[data-consequence]"), card["data-item-id"]
    # The twin keeps every card's whole list.
    twin = client.get("/reviews.json").get_json()
    assert [line["code"] for line in twin["shared"]] == ["evicts_explicit"]
    items = twin["items"]
    assert all("evicts_explicit" in [c["code"] for c in i["consequences"]] for i in items)


def test_the_words_come_before_the_buttons_with_no_stray_bullet_or_repeated_link(client):
    page = _page(client)
    for card in page.select("#review-list article.review"):
        parts = [el["class"][0] for el in card.find_all(recursive=False)]
        assert parts == ["review-head", "decide", "review-body"]
        assert card.select_one(".review-head > *").name == "h2"
        assert card.select(".review-head ul, .review-head li") == []
        links = [a.text for a in card.select("a")]
        assert "view" not in links
        assert all(a != b for a, b in zip(links, links[1:])), links


def test_approve_is_not_highlighted_when_the_card_contradicts_its_evidence(client):
    page = _page(client)
    by_content = {c.select_one("h2").text: c for c in page.select("#review-list article.review")}
    emojis = by_content["use emojis in commit messages"]
    assert emojis.select_one("[data-consequence=contradicts_evidence]") is not None
    assert "primary" not in (emojis.select_one("button[data-action=approve]").get("class") or [])
    tabs = by_content["tabs over spaces"]
    assert "primary" in tabs.select_one("button[data-action=approve]")["class"]


def test_the_previewed_edit_is_the_same_card(client):
    page = _page(client)
    card = page.select_one("#review-list article.review")
    item = card["data-item-id"]
    answer = client.get(
        "/reviews/effect",
        query_string={"id": item, f"value-{item}": "tabs over spaces, always", f"key-{item}": "indent"},
        headers=HTMX,
    )
    edited = BeautifulSoup(answer.get_data(as_text=True), "html.parser").select_one("article")
    assert edited["id"] == card["id"]
    assert [el["class"][0] for el in edited.find_all(recursive=False)] == [
        "review-head",
        "decide",
        "review-body",
    ]
    assert edited.select_one("h2").text == "tabs over spaces"  # the suggestion, as proposed
    assert edited.select_one("[data-field=saved-key]").text == "indent"
    assert edited.select_one("button[data-action=approve-edited]") is not None


def _form(page) -> dict:
    """What the browser sends with a card's button: every field of the page's review form."""
    sent: dict = {}
    for field in page.select("#review-form input, #review-form textarea, #review-form select"):
        name = field.get("name")
        if not name or field.get("type") == "checkbox" and not field.has_attr("checked"):
            continue
        if field.name == "textarea":
            value = field.text
        elif field.name == "select":
            chosen = field.select_one("option[selected]") or field.select_one("option")
            value = chosen["value"] if chosen else ""
        else:
            value = field.get("value", "")
        sent.setdefault(name, []).append(value)
    return sent


def _words(head) -> list[str]:
    return [p.get_text(" ", strip=True) for p in head.select("[data-consequence]")]


def test_after_a_decision_every_card_left_says_what_a_reload_would(tmp_path):
    """Approving "tabs over spaces" pushes "never push to main" out of the block, so the line
    every card shared is no longer true, and approving the others now pushes out another
    memory: the answer redraws the shared lines and the words of every card still shown,
    exactly as a fresh page says them (without touching their buttons or typed edits)."""
    project_dir, user_db = build_demo(tmp_path)
    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    app.test_client_class = BrowserClient  # sends Sec-Fetch-Site: same-origin, as a browser does
    client = app.test_client()
    page = _page(client)
    first = page.select_one("#review-list article.review")
    assert first.select_one("h2").text == "tabs over spaces"
    answer = client.post(
        page.select_one(f"#approve-{first['data-item-id']}")["formaction"], data=_form(page), headers=HTMX
    )
    assert answer.status_code == 200
    said = BeautifulSoup(answer.get_data(as_text=True), "html.parser")
    fresh = _page(client)
    banner = said.select_one("#review-shared")
    assert banner["hx-swap-oob"] == "true"
    assert [p.get_text(" ", strip=True) for p in banner.select("[data-shared-warning]")] == [
        p.get_text(" ", strip=True) for p in fresh.select("#review-shared [data-shared-warning]")
    ]
    assert "never push to main" not in banner.text
    redrawn = {h["id"]: h for h in said.select(".review-head")}
    for card in fresh.select("#review-list article.review"):
        head = redrawn.get(f"review-head:{card['data-item-id']}")
        assert head is not None, f"{card.select_one('h2').text} was not redrawn"
        assert _words(head) == _words(card.select_one(".review-head")), card.select_one("h2").text
    # Only the next card comes whole (with the focus); the others send their words alone.
    whole = said.select("article.review.pending[hx-swap-oob]")
    assert len(whole) == 1 and len(redrawn) == len(fresh.select("#review-list article.review"))
