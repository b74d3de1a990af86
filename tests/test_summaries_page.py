"""The session summaries page in plain words: counts with correct plurals, relative dates with
the exact stamp on hover, and the tail the agent starts a new session with."""

from __future__ import annotations

from bs4 import BeautifulSoup


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def words(element) -> str:
    return " ".join(element.get_text(" ").split())


def test_summaries_speak_plain_words_with_plurals_and_dates(client, seeded):
    page = soup(client.get("/summaries"))
    counts = words(page.select_one('[data-field="counts"]'))
    assert counts.startswith("2 summaries are kept. They come from 2 sessions.")
    assert "2 are sent with every new session" in counts
    card = page.select_one('[data-session="session-a"]')
    facts = words(card.select_one("p.muted"))
    assert facts.startswith("1 summary · 21 characters"), facts  # "Set up uv and pytest."
    stamp = card.select_one("details.summary summary time")
    # Saved moments ago: said relatively, the exact moment on hover.
    assert stamp["datetime"] and stamp["title"] and stamp["datetime"] not in stamp.get_text()
    assert any(w in stamp.get_text() for w in ("ago", "now", "second"))
    line = words(card.select_one("details.summary summary"))
    assert card.select_one("summary q.snippet").get_text() == "Set up uv and pytest."
    assert "summed up 10 messages" in line
    assert "sent to new sessions" in line
    # No stamp is printed raw, and no "1 summaries".
    text = words(page)
    assert "1 summaries" not in text and "T" + stamp["datetime"].split("T")[1] not in text


def test_no_summaries_says_what_will_fill_them(agent):
    page = soup(agent.app().test_client().get("/summaries"))
    assert "No session summaries yet" in page.select_one("[data-empty]").get_text()
