"""Journey 2 of #21, keyboard only: approve one suggestion, reject another, approve two in bulk.

At 1280×900 and 390×844, in real Chromium over stores written by agentao: every
decision button of the first card is on screen without scrolling; after each
decision its result is said in the pinned #status region, in view, and the
keyboard is on the next card's first button (no Tab back from the top of the
page).  What changed is checked afterwards in agentao's own review queue and
memories: exactly the suggestions decided, nothing else.
"""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import (
    DESKTOP,
    PHONE,
    Agent,
    Journey,
    close_agent,
    htmx_settled,
    in_viewport,
    read_db,
    screenshot,
    set_size,
    wait_for,
)

# Four suggestions per window size, each one of agentao's crystallizer rules.
TEXTS = {
    DESKTOP: [
        "I prefer dark mode in every editor.",
        "We decided to use uv for packaging.",
        "I prefer short commit messages.",
        "We must always run the linter first.",
    ],
    PHONE: [
        "I prefer pytest over unittest.",
        "We decided to ship on Fridays.",
        "I prefer light themes in terminals.",
        "We must always sign the release tags.",
    ],
}
DECISIONS = ("approve", "edit", "reject", "erase")


def agentao(server) -> Agent:
    return Agent(server.agent.project_dir.parent)


def active(driver):
    return driver.switch_to.active_element


def card_of(element) -> str | None:
    found = element.find_elements(By.XPATH, "ancestor-or-self::article[@data-item-id]")
    return found[0].get_attribute("data-item-id") if found else None


def decision_controls(card):
    return {
        "approve": card.find_element(By.CSS_SELECTOR, "button[data-action=approve]"),
        "edit": card.find_element(By.CSS_SELECTOR, "[data-edit-form] > summary"),
        "reject": card.find_element(By.CSS_SELECTOR, "button[data-action=reject]"),
        "erase": card.find_element(By.CSS_SELECTOR, "a[data-action=erase]"),
    }


def said(driver) -> str:
    """The words in the pinned #status region, once there are some, checked to be in view."""
    box = wait_for(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#status [data-said]"),
        "nothing was said in #status",
    )[0]
    assert in_viewport(driver, box), "the result is not in view"
    return box.text


def shift_tab_to(j: Journey, predicate, limit: int = 80):
    for _ in range(limit):
        el = active(j.driver)
        if predicate(el):
            return el
        j.key(el, Keys.SHIFT, Keys.TAB)
    raise AssertionError(f"{j.name}: nothing reached with Shift+Tab in {limit} presses")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_decide_suggestions_with_the_keyboard(browser, server, size):
    maker = agentao(server)
    try:
        fresh = {item.id for text in TEXTS[size] for item in maker.crystallize(text)}
    finally:
        close_agent(maker)
    assert len(fresh) == 4
    db = server.agent.project_db
    before = dict(read_db(db, "SELECT id, status FROM memory_review_queue"))
    set_size(browser, size)
    browser.get(server.url("/reviews"))
    wait_for(browser, htmx_settled, "htmx did not load")
    j = Journey(browser, "review: approve, reject, bulk-approve two")
    cards = [
        c.get_attribute("data-item-id")
        for c in browser.find_elements(By.CSS_SELECTOR, "#review-list article.review")
    ]
    first = browser.find_element(By.CSS_SELECTOR, f"#review-form article[data-item-id='{cards[0]}']")
    controls = decision_controls(first)
    hidden = [name for name in DECISIONS if not in_viewport(browser, controls[name])]
    assert not hidden, f"{hidden} of the first card need scrolling at {size}"
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0]
    heights = [b.size["height"] for b in controls.values()]
    assert min(heights) >= 44, f"decision buttons {heights} px tall: too small for a thumb"
    screenshot(browser, f"journey-review-{size[0]}", sizes=(size,), restore=False)

    # 1. Approve the first card.
    j.tab_to(lambda el: el.get_attribute("data-action") == "approve" and card_of(el) == cards[0])
    title = first.find_element(By.CSS_SELECTOR, "[data-field=title]").text
    j.key(active(browser), Keys.ENTER)
    wait_for(
        browser,
        lambda d: (
            d.find_element(By.CSS_SELECTOR, f"#review-form article[data-item-id='{cards[0]}']").get_attribute(
                "data-status"
            )
            == "approved"
        ),
        "the approved card was not replaced",
    )
    words = said(browser)
    assert words.startswith(f"Approved “{title}” — it "), words
    # The keyboard is on the next card's first button, the result said once, in one line.
    now = wait_for(
        browser,
        lambda d: active(d) if card_of(active(d)) == cards[1] else None,
        lambda: f"focus is on {active(browser).tag_name}, not the next card",
    )
    assert now.get_attribute("data-action") == "approve"

    # 2. Reject the next one.
    second_title = browser.find_element(
        By.CSS_SELECTOR, f"#review-form article[data-item-id='{cards[1]}'] [data-field=title]"
    ).text
    j.tab_to(lambda el: el.get_attribute("data-action") == "reject" and card_of(el) == cards[1])
    j.key(active(browser), Keys.ENTER)
    wait_for(
        browser,
        lambda d: (
            d.find_element(By.CSS_SELECTOR, f"#review-form article[data-item-id='{cards[1]}']").get_attribute(
                "data-status"
            )
            == "rejected"
        ),
        "the rejected card was not replaced",
    )
    assert said(browser) == f"Rejected “{second_title}” — it will not be saved."
    wait_for(browser, lambda d: card_of(active(d)) == cards[2], "focus did not move to the next card")

    # 3. Select the next two and approve them together.
    shift_tab_to(j, lambda el: el.get_attribute("name") == "ids" and card_of(el) == cards[2])
    j.key(active(browser), Keys.SPACE)
    j.tab_to(lambda el: el.get_attribute("name") == "ids" and card_of(el) == cards[3])
    j.key(active(browser), Keys.SPACE)
    bulk = shift_tab_to(j, lambda el: el.get_attribute("data-bulk") == "approve")
    assert in_viewport(browser, bulk)
    j.key(bulk, Keys.ENTER)
    wait_for(
        browser,
        lambda d: d.find_element(By.ID, "status").text == "Approved 2 suggestions.",
        lambda: "bulk result: " + browser.find_element(By.ID, "status").text,
    )
    said(browser)
    wait_for(
        browser,
        lambda d: active(d).get_attribute("data-action") == "approve",
        "after the bulk decision the keyboard is not on the first card's first button",
    )
    screenshot(browser, f"journey-review-{size[0]}-done", sizes=(size,), restore=False)
    record = j.done()
    assert record["clicks"] == 0  # keyboard only
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0]

    # What agentao itself sees: exactly these decided, the others untouched.
    check = agentao(server)
    try:
        after = {
            i.id: status
            for status in ("pending", "approved", "rejected")
            for i in check.manager.list_review_items(status)
        }
        memories = {m.content for m in check.manager.get_all_entries()}
    finally:
        close_agent(check)
    changed = {i: status for i, status in after.items() if before.get(i) != status}
    assert changed == {cards[0]: "approved", cards[1]: "rejected", cards[2]: "approved", cards[3]: "approved"}
    contents = dict(read_db(db, "SELECT id, content FROM memory_review_queue"))
    assert {contents[c] for c in (cards[0], cards[2], cards[3])} <= memories
    assert contents[cards[1]] not in memories
    set_size(browser, DESKTOP)
