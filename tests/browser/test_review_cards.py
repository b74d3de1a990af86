"""Suggestion cards read for deciding (#31 items 2 and 4), in real Chromium at 1280×900 and 390×844.

On the demo (English and Chinese): the warning every card shares is said once above
the list; each card leads with the words being decided on, before its buttons; no
stray bullet, no repeated link; the card that contradicts its evidence does not
highlight Approve; "Preview the edited approval" answers the same card.

On a store agentao wrote: approving a Chinese preference would replace another one
(agentao keeps only ``preference`` of both keys); the card's first line says so,
and approving under a key the person types keeps both, as agentao's ``save_memory``
of that key would.
"""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from .conftest import (
    DESKTOP,
    PHONE,
    Agent,
    close_agent,
    htmx_settled,
    in_viewport,
    screenshot,
    serving,
    set_size,
    wait_for,
)

SIZES = pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
SHARED_LABEL = {
    "en": "True of every suggestion below, if you approve it:",
    "zh": "下面每条建议被批准时都会如此：",
}


@pytest.fixture(scope="module", params=["en", "zh"])
def demo(request, browser):
    with serving(browser, extra=["--lang", "zh_Hans_CN"] if request.param == "zh" else []) as srv:
        srv.lang = request.param
        yield srv


def _open(browser, server, size):
    set_size(browser, size)
    browser.get(server.url("/reviews"))
    wait_for(browser, htmx_settled, "htmx did not load")
    return browser.find_elements(By.CSS_SELECTOR, "#review-list article.review")


def _top(el) -> float:
    return el.rect["y"]


@SIZES
def test_cards_lead_with_their_words_and_share_a_warning_once(browser, demo, size):
    cards = _open(browser, demo, size)
    assert len(cards) == 4
    [shared] = browser.find_elements(By.CSS_SELECTOR, "[data-shared-warning]")
    assert shared.text.startswith(SHARED_LABEL[demo.lang]), shared.text
    assert "never push to main" in shared.text and _top(shared) < _top(cards[0])
    for card in cards:
        words = card.find_element(By.CSS_SELECTOR, "h2").text
        assert words and "never push to main" not in card.find_element(By.CSS_SELECTOR, ".review-head").text
        first_button = card.find_element(By.CSS_SELECTOR, ".decide button")
        assert _top(card.find_element(By.CSS_SELECTOR, "h2")) < _top(first_button)
        # What the person reads: no bullet, no link said twice in a row.
        assert "•" not in card.text and "view view" not in card.text
        links = [a.text for a in card.find_elements(By.CSS_SELECTOR, "a") if a.is_displayed()]
        assert all(a != b for a, b in zip(links, links[1:])), links
    # Every decision of the first card is on screen without scrolling.
    first = cards[0]
    for sel in ("button[data-action=approve]", "[data-edit-form] > summary", "button[data-action=reject]"):
        assert in_viewport(browser, first.find_element(By.CSS_SELECTOR, sel)), sel
    by_words = {c.find_element(By.CSS_SELECTOR, "h2").text: c for c in cards}
    assert "用中文回答问题" in by_words  # the Chinese card's own words lead it
    # The card that contradicts its evidence does not highlight Approve; the others do.
    emojis = by_words["use emojis in commit messages"]
    assert emojis.find_elements(By.CSS_SELECTOR, "[data-consequence=contradicts_evidence]")

    def fill(card):
        button = card.find_element(By.CSS_SELECTOR, "button[data-action=approve]")
        return button.value_of_css_property("background-color")

    assert fill(emojis) != fill(by_words["tabs over spaces"])
    assert "primary" not in emojis.find_element(By.CSS_SELECTOR, "button[data-action=approve]").get_attribute(
        "class"
    )
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0]
    screenshot(browser, f"review-cards-{demo.lang}-{size[0]}", sizes=(size,), restore=False)


@SIZES
def test_the_previewed_edit_keeps_the_card(browser, demo, size):
    cards = _open(browser, demo, size)
    card = cards[0]
    card_id = card.get_attribute("id")
    words = card.find_element(By.CSS_SELECTOR, "h2").text
    card.find_element(By.CSS_SELECTOR, "[data-edit-form] > summary").click()
    value = card.find_element(By.CSS_SELECTOR, "textarea[name^=value-]")
    value.clear()
    value.send_keys("tabs, never spaces, in Makefiles")
    card.find_element(By.CSS_SELECTOR, "[data-action=preview-edits]").click()
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#{card_id} [data-action=approve-edited]"),
        "the previewed card did not come back",
    )
    wait_for(browser, htmx_settled, "htmx did not settle")
    card = browser.find_element(By.ID, card_id)
    # The same card, in the same place in the list, the same parts in the same order.
    assert card.find_element(By.XPATH, "..").get_attribute("id") == "review-form"
    parts = [el.get_attribute("class") for el in card.find_elements(By.XPATH, "./*")]
    assert parts == ["review-head", "decide", "review-body"]
    assert card.find_element(By.CSS_SELECTOR, "h2").text == words
    approve = card.find_element(By.CSS_SELECTOR, "[data-action=approve-edited]")
    assert _top(card.find_element(By.CSS_SELECTOR, "h2")) < _top(approve)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0]
    screenshot(browser, f"review-cards-edited-{demo.lang}-{size[0]}", sizes=(size,), restore=False)


@SIZES
def test_opening_the_details_loads_what_approving_writes(browser, demo, size):
    """The page sends closed cards (#30); a card's Details are fetched when opened, once."""
    cards = _open(browser, demo, size)
    card = cards[0]
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-plan], [data-block-effect]")
    summary = card.find_element(By.CSS_SELECTOR, "details[data-details] > summary")
    summary.click()
    wait_for(
        browser,
        lambda d: card.find_elements(By.CSS_SELECTOR, "details[data-details][open] [data-plan]"),
        "opening the details did not load them",
    )
    wait_for(browser, htmx_settled, "htmx did not settle")
    assert card.find_element(By.CSS_SELECTOR, "[data-plan] [data-block-effect]").is_displayed()
    assert card.find_element(By.CSS_SELECTOR, "[data-field=id]").text == card.get_attribute("data-item-id")
    assert not card.find_elements(By.CSS_SELECTOR, "[data-detail-slot]")
    summary.click()  # closed and opened again: shown again, not fetched twice
    summary.click()
    wait_for(browser, htmx_settled, "htmx did not settle")
    assert len(card.find_elements(By.CSS_SELECTOR, "[data-detail]")) == 1
    assert card.find_element(By.CSS_SELECTOR, "[data-plan]").is_displayed()
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0]


# --------------------------------------------------------------------------- item 2: a key of one's own
COMMENTS, ANSWERS, COMMITS = (
    "以后我喜欢用中文写注释。",
    "以后我喜欢用中文回答问题。",
    "以后我喜欢用中文写提交信息。",
)


@pytest.fixture(scope="module")
def chinese(tmp_path_factory, browser):
    agent = Agent(tmp_path_factory.mktemp("chinese-keys"))
    [first] = agent.crystallize(COMMENTS)
    agent.manager.approve_review_item(first.id)  # now the memory under ``preference``
    agent.crystallize(ANSWERS)
    agent.crystallize(COMMITS)
    with serving(browser, agent) as srv:
        yield srv


@pytest.mark.parametrize(
    "size, words, key",
    [(DESKTOP, "用中文回答问题", "answer_language"), (PHONE, "用中文写提交信息", "commit_language")],
)
def test_a_chinese_suggestion_says_what_it_replaces_and_takes_another_key(browser, chinese, size, words, key):
    cards = _open(browser, chinese, size)
    [card] = [c for c in cards if c.find_element(By.CSS_SELECTOR, "h2").text == words]
    card_id = card.get_attribute("id")
    first = card.find_element(By.CSS_SELECTOR, "[data-consequence]")
    assert first.get_attribute("data-consequence") == "overwrites"
    assert first.text.startswith("Saved as “preference”, replacing “用中文写注释”"), first.text
    assert in_viewport(browser, first)
    card.find_element(By.CSS_SELECTOR, "[data-edit-form] > summary").click()
    field = card.find_element(By.CSS_SELECTOR, "input[name^=key-]")
    assert field.get_attribute("value") == f"preference_{words}"  # the key it was suggested under
    field.clear()
    field.send_keys(key)
    card.find_element(By.CSS_SELECTOR, "[data-action=preview-edits]").click()
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#{card_id} [data-action=approve-edited]"),
        "the previewed card did not come back",
    )
    wait_for(browser, htmx_settled, "htmx did not settle")
    card = browser.find_element(By.ID, card_id)
    assert card.find_element(By.CSS_SELECTOR, "[data-field=saved-key]").text == key
    lines = [
        p.get_attribute("data-consequence") for p in card.find_elements(By.CSS_SELECTOR, "[data-consequence]")
    ]
    assert "overwrites" not in lines, lines
    screenshot(browser, f"review-cards-key-{size[0]}", sizes=(size,), restore=False)
    card.find_element(By.CSS_SELECTOR, "[data-action=approve-edited]").click()
    wait_for(
        browser,
        lambda d: d.find_element(By.ID, card_id).get_attribute("data-status") == "approved",
        "the card was not approved",
    )
    check = Agent(chinese.agent.project_dir.parent)
    try:
        rows = {m.key_normalized: m.content for m in check.manager.get_all_entries("user")}
    finally:
        close_agent(check)
    assert rows["preference"] == "用中文写注释" and rows[key] == words  # both kept
