"""The review page sends what a closed card shows (#30): the words decided on, the first
line of what approving does, the buttons; each card's Details (its fields, the plan,
before/after, every warning in full, the block effect) come from /reviews/detail when
opened.  A long queue is paged so that a page stays small whatever the store's size."""

from __future__ import annotations

from bs4 import BeautifulSoup

from dashboard.views.reviews.cards import PER_PAGE

HTMX = {"HX-Request": "true"}
WORDS = (
    "amber bronze cobalt denim ebony fuchsia garnet hazel indigo jade khaki lilac mauve navy ochre".split()
)


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_a_long_queue_sends_closed_cards_a_page_at_a_time(agent):
    agent.crystallize(*[f"I prefer {w} themes for {v} files in editors." for w in WORDS for v in WORDS[:3]])
    client = agent.app().test_client()
    r = client.get("/reviews")
    page = soup(r)
    cards = page.select("#review-list article.review")
    # The bytes a person waits for: a closed card is a few KB, a page well under 100 KB.
    assert len(r.get_data()) < 100_000
    assert max(len(str(card).encode()) for card in cards) < 6_000
    total = client.get("/reviews.json?per_page=200").get_json()["total"]
    assert total > 2 * PER_PAGE
    assert len(cards) == PER_PAGE and page.select_one("nav.pager a[rel=next]")
    # Nothing folded is sent: no plan, no before/after, no block effect, no warning in full.
    assert page.select("[data-plan], [data-diff], [data-block-effect], [data-warning-detail]") == []
    for card in cards:
        assert card.select_one("[data-consequence]") and card.select_one("button[data-action=reject]")
        details = card.select_one("details[data-details]")
        link = details.select_one("a[data-action=show-detail]")["href"]
        assert details["hx-get"] == link == f"/reviews/detail?id={card['data-item-id']}"
    # Opened, a card's Details are its fields and the plan approving executes.
    first = cards[0]["data-item-id"]
    opened = soup(client.get(f"/reviews/detail?id={first}", headers=HTMX))
    assert opened.find("html") is None
    assert opened.select_one("[data-field=id]").text == first
    assert opened.select_one("[data-plan]")["data-action"] == "create"
    assert opened.select_one("[data-plan] [data-block-effect]")
    # Without JavaScript the link is the card's own page, its Details open, its buttons there.
    whole = soup(client.get(f"/reviews/detail?id={first}"))
    assert whole.select_one(f"#review-{first} details[data-details][open] [data-plan]")
    assert whole.select_one(f"#review-form #review-{first} button[data-action=approve]")
    assert client.get("/reviews/detail.json", query_string={"id": first}).get_json()["item"]["id"] == first
    assert client.get("/reviews/detail?id=nope").status_code == 404
