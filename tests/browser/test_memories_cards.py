"""The memories list and a memory's page in a real browser at 1280×900 and 390×844 (#21):
cards on a phone with nothing cut off, and a delete whose result and Undo are where the eye
and the keyboard already are."""

from __future__ import annotations

import pytest
from agentao_world import Agent
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import (
    DESKTOP,
    PHONE,
    Journey,
    close_agent,
    htmx_settled,
    in_viewport,
    read_db,
    screenshot,
    seed,
    serving,
    set_size,
    wait_for,
)

# Every visible cell of the list: its width, and how far the page scrolls sideways.
MEASURE = """
const cells = [...document.querySelectorAll('#memory-list td')].filter(c => c.offsetParent !== null);
return {scroll: document.documentElement.scrollWidth - window.innerWidth,
        narrowest: Math.min(...cells.map(c => c.getBoundingClientRect().width)),
        cells: cells.length,
        cards: getComputedStyle(document.querySelector('#memory-list tr.memory')).display};
"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_list_fits_the_screen_as_rows_or_cards(browser, demo, size):
    set_size(browser, size)
    browser.get(demo.url("/memories"))
    wait_for(browser, htmx_settled, "htmx did not load")
    shown = browser.execute_script(MEASURE)
    assert shown["cells"] >= 5 * 10, shown
    assert shown["scroll"] <= 0, f"the list scrolls sideways at {size}: {shown}"
    assert shown["narrowest"] >= 60, f"a cell narrower than 60 px at {size}: {shown}"
    assert shown["cards"] == ("block" if size == PHONE else "table-row"), shown
    lead = browser.find_element(By.CSS_SELECTOR, "#memory-list tr.memory td.lead a.says")
    assert lead.is_displayed() and lead.text
    # On a phone the filters fold behind one disclosure; the search stays in view.
    # (checkVisibility: Selenium's is_displayed calls anything in a closed <details> hidden,
    # whatever the CSS shows.)
    seen = "return arguments[0].checkVisibility() && arguments[0].getBoundingClientRect().width > 0"
    assert browser.execute_script(seen, browser.find_element(By.ID, "f-q"))
    assert browser.execute_script(seen, browser.find_element(By.ID, "f-scope")) == (size == DESKTOP)
    screenshot(browser, f"memories-list-{size[0]}", sizes=(size,), restore=False)
    browser.find_element(By.CSS_SELECTOR, "#memory-list tr.memory a.says").click()
    answer = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#reach .answer"), "no page")[0]
    assert in_viewport(browser, answer), "the answer is not the first thing in view"
    assert browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth") <= 0
    screenshot(browser, f"memory-page-{size[0]}", sizes=(size,), restore=False)


@pytest.fixture(scope="module")
def own(browser, tmp_path_factory):
    """A server of its own over an agentao corpus: this module deletes and restores."""
    agent = seed(Agent(tmp_path_factory.mktemp("cards")))
    agent.save("release contact", "Call Dana at +1 415 555 0134 about the release.", ["workflow"])
    agent.save("x" * 120, "y" * 600, ["z" * 150])  # one long word everywhere a row has text
    with serving(browser, agent) as server:
        yield server


def agentao_ids(agent) -> set[str]:
    mine = Agent(agent.project_dir.parent)
    try:
        return {m.id for m in mine.manager.get_all_entries()}
    finally:
        close_agent(mine)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_delete_then_undo_from_the_row(browser, own, size):
    db = own.agent.project_db
    [(memory_id,)] = read_db(db, "SELECT id FROM memories WHERE title = 'release contact'")
    set_size(browser, size)
    browser.get(own.url("/memories?q=Dana"))
    wait_for(browser, htmx_settled, "htmx did not load")
    j = Journey(browser, "delete a memory and undo it")
    row = browser.find_element(By.CSS_SELECTOR, f'tr.memory[data-memory-id="{memory_id}"]')
    assert row.find_element(By.CSS_SELECTOR, "a.badge[data-category=personal]").text == "personal data"
    j.click(row.find_element(By.CSS_SELECTOR, "a.says"))
    delete = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#delete-form button"), "no page")[
        0
    ]
    browser.execute_script("window.__samePage = true")
    j.click(delete)
    status = wait_for(
        browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#status [data-said]"), "the delete said nothing"
    )[0]
    assert status.text.startswith("Deleted 'release contact'. The agent no longer sees it")
    assert in_viewport(browser, browser.find_element(By.ID, "status")), "the result is out of view"
    assert browser.execute_script("return window.__samePage === true"), "htmx did not swap in place"
    assert read_db(db, "SELECT deleted_at IS NOT NULL FROM memories WHERE id = ?", memory_id) == [(1,)]
    assert memory_id not in agentao_ids(own.agent)
    assert browser.find_element(By.CSS_SELECTOR, "#reach").get_attribute("data-reach") == "soft_deleted"
    # Keyboard focus is on the Undo: Enter alone brings the memory back.
    undo = browser.switch_to.active_element
    assert undo.get_attribute("data-action") == "restore" and undo.text == "Undo"
    j.key(undo, Keys.ENTER)
    wait_for(
        browser,
        lambda d: "Restored 'release contact'" in d.find_element(By.ID, "status").text,
        "the undo said nothing",
    )
    assert in_viewport(browser, browser.find_element(By.ID, "status"))
    assert read_db(db, "SELECT deleted_at FROM memories WHERE id = ?", memory_id) == [(None,)]
    assert memory_id in agentao_ids(own.agent)
    wait_for(
        browser,
        lambda d: d.switch_to.active_element.get_attribute("id") == "reach",
        "focus was lost after the undo",
    )
    assert browser.find_element(By.ID, "reach").get_attribute("data-reach") != "soft_deleted"
    record = j.done()
    assert (record["clicks"], record["keys"]) == (2, 1), record


def test_one_long_word_never_widens_the_phone_page(browser, own):
    set_size(browser, PHONE)
    [(memory_id,)] = read_db(own.agent.project_db, "SELECT id FROM memories WHERE title LIKE 'xxxx%'")
    sideways = "return document.documentElement.scrollWidth - window.innerWidth"
    for path in ("/memories?q=yyyy", f"/memories/project/{memory_id}"):
        browser.get(own.url(path))
        wait_for(browser, htmx_settled, "htmx did not load")
        assert browser.execute_script(sideways) <= 0, path
