"""Journey 3 (#21): "Why did the agent bring up X?" — type the message, press Preview, read
the answer in words without scrolling, at 1280×900 and 390×844.

The server shows a project written by the real agentao; what the page says is recalled is
checked against what agentao itself puts in ``<memory-context>`` for that message (its own
stable fit, recall and renderer), so the words on screen are the agent's truth.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from agentao.memory import MemoryPromptRenderer, MemoryRetriever
from selenium.webdriver.common.by import By

from .conftest import (
    DESKTOP,
    PHONE,
    Agent,
    Journey,
    htmx_settled,
    in_viewport,
    screenshot,
    seed_corpus,
    serving,
    set_size,
    wait_for,
)

MESSAGE = "which port does service 03 use"


def agentao_recalls(agent: Agent, query: str) -> set[str]:
    """Ids of the memories agentao puts in <memory-context> for ``query`` in a new session."""
    mgr, renderer = agent.manager, MemoryPromptRenderer()
    tail = mgr.get_cross_session_tail()
    shown = renderer.fit_stable_records(mgr.get_stable_entries(), session_tail=tail)
    found = MemoryRetriever(mgr).recall_candidates(query, exclude_ids={r.id for r in shown})
    kept = renderer.render_dynamic_block(found).count("<fact ")
    return {c.memory_id for c in found[:kept]}


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    # Four "service NN" notes: at most 5 match the message, so agentao's arbitrary order
    # among equal scores cannot change which of them it recalls.
    agent = seed_corpus(Agent(tmp_path_factory.mktemp("journey-preview")), services=4)
    recalled = agentao_recalls(agent, MESSAGE)
    with serving(browser, agent) as srv:
        srv.recalled = recalled
        yield srv


NARROW_CELLS = """
return [...document.querySelectorAll('#preview-result td, #preview-result tbody th')]
  .filter(e => e.checkVisibility() && e.getBoundingClientRect().width < 60)
  .map(e => e.textContent.trim().slice(0, 30));
"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_why_did_the_agent_bring_it_up(browser, server, size):
    assert server.recalled, "agentao recalls something for the message"
    set_size(browser, size)
    browser.get(server.url("/preview"))
    wait_for(browser, htmx_settled, "htmx did not load")
    j = Journey(browser, "3 why did the agent bring up X")
    box = browser.switch_to.active_element
    assert box.get_attribute("id") == "p-q", "the message box does not have the focus"
    j.type(box, MESSAGE)
    j.click(browser.find_element(By.CSS_SELECTOR, "#preview-form button[name=go]"))
    wait_for(
        browser,
        lambda d: (
            parse_qs(urlparse(d.current_url).query).get("go") == ["1"]
            and parse_qs(urlparse(d.current_url).query).get("q") == [MESSAGE]
        ),
        lambda: f"Preview did not ask for the message: {browser.current_url}",
    )
    wait_for(browser, htmx_settled)
    wait_for(
        browser,
        lambda d: d.switch_to.active_element.get_attribute("id") == "answer-title",
        "the answer did not take the focus after Preview",
    )

    # The answer, in words, naming what was recalled, with nothing scrolled.
    assert browser.execute_script("return window.scrollY") == 0
    lead = browser.find_element(By.CSS_SELECTOR, '#answer [data-answer="recalled"] .answer-lead')
    assert lead.text.startswith("Recalled for this message:"), lead.text
    items = browser.find_elements(By.CSS_SELECTOR, '#answer [data-answer="recalled"] li[data-memory-id]')
    first = items[0].find_element(By.CSS_SELECTOR, "a")
    assert first.text == "service 03"
    for element in (browser.find_element(By.ID, "answer-title"), lead, first):
        assert in_viewport(browser, element), f"not in view at {size}: {element.text!r}"
    because = items[0].find_element(By.CSS_SELECTOR, "ul.reasons").text
    assert "words of its title are in your message" in because
    # What the page says is recalled is what agentao recalls.
    assert {li.get_attribute("data-memory-id") for li in items} == server.recalled

    # Nothing wider than the screen; on a phone the ranking is cards with real cells.
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= size[0] + 2, width
    assert browser.execute_script(NARROW_CELLS) == []
    screenshot(browser, f"journey-preview-{size[0]}", sizes=[size], restore=False)
    record = j.done()
    assert record["clicks"] == 1 and record["keys"] == len(MESSAGE), record


@pytest.mark.parametrize(
    "path",
    [
        "/summaries",
        "/export",
        "/export?include_invisible=1",
        f"/preview?q={MESSAGE.replace(' ', '+')}&hide=x",
    ],
)
def test_summaries_export_and_preview_fit_a_phone(browser, server, path):
    """No sideways scroll at 390 px and no cell narrower than 60 px (lists are cards there)."""
    set_size(browser, PHONE)
    browser.get(server.url(path))
    wait_for(browser, htmx_settled)
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= PHONE[0] + 2, (path, width)
    narrow = browser.execute_script(NARROW_CELLS.replace("#preview-result ", "main "))
    assert narrow == [], (path, narrow)
    screenshot(browser, "phone" + path.split("?")[0].replace("/", "-"), sizes=[PHONE, DESKTOP], restore=False)
    set_size(browser, DESKTOP)


def test_the_folded_ranked_rows_come_in_place(browser, server):
    """The page sends the first rows of the ranking; "Show the next" fetches more into the
    table, in place (the message stays, the address too)."""
    set_size(browser, DESKTOP)
    browser.get(server.url(f"/preview?q={MESSAGE.replace(' ', '+')}&ranked=1"))
    wait_for(browser, htmx_settled, "htmx did not load")
    assert len(browser.find_elements(By.CSS_SELECTOR, "tr.candidate")) == 1
    address = browser.current_url
    more = browser.find_element(By.CSS_SELECTOR, "button[data-ranked-next]")
    wanted = int(more.get_attribute("value"))
    assert wanted > 1
    more.click()
    wait_for(
        browser,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr.candidate")) == wanted,
        lambda: f"the next rows did not come: {len(browser.find_elements(By.CSS_SELECTOR, 'tr.candidate'))}",
    )
    wait_for(browser, htmx_settled)
    assert browser.current_url == address
    assert browser.find_element(By.ID, "p-q").get_attribute("value") == MESSAGE
