"""Live activity in a real browser while a real agentao process writes.

The agent is a separate Python process (agentao 0.5.17's MemoryManager, tests/agentao_world.py)
writing the files the server reads, as an agent session beside the dashboard would.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from selenium.webdriver.common.by import By

from .conftest import (
    DESKTOP,
    PHONE,
    REPO,
    htmx_settled,
    in_viewport,
    screenshot,
    set_size,
    wait_for,
)

NOTICE = "#status [data-said=live]"


@pytest.fixture(scope="module")
def live(server):
    """A seeded dashboard that a separate agentao process writes to."""
    return server


def agent_process(server, code: str) -> float:
    """Run ``code`` (with ``a``, an agentao MemoryManager wrapper) in a new agentao process;
    the moment it finished writing."""
    root = server.agent.project_dir.parent
    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, 'tests');"
        "from agentao_world import Agent; a = Agent(Path(sys.argv[1]));"
        f"{code}; a.project_store.close(); a.user_store.close()"
    )
    subprocess.run([sys.executable, "-c", script, str(root)], cwd=REPO, check=True, timeout=60)
    return time.monotonic()


def open_activity(browser, server):
    browser.get(server.url("/activity"))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.execute_script("window.__samePage = true")  # a full reload would wipe it


def feed_titles(browser) -> list[str]:
    return [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#activity-feed td.lead a")]


def test_the_notice_comes_within_two_seconds_and_typed_text_stays(browser, live):
    open_activity(browser, live)
    browser.find_element(By.CSS_SELECTOR, "#activity-feed details.activity-forms summary").click()
    field = browser.find_element(By.CSS_SELECTOR, "#activity-feed input[name=q]")
    field.send_keys("half-typed filter")  # typed, never sent
    wrote = agent_process(
        live, 'a.save("deploy target", "Deploys go to fly.io.", ["infra"], scope="project")'
    )
    notice = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, NOTICE), "no notice")[0]
    waited = time.monotonic() - wrote
    assert notice.text == "The agent just saved 'deploy target'."
    assert waited < 2.6, waited  # one 2 s poll, and the round trip
    assert in_viewport(browser, notice)
    # The feed holds a half-typed field: it is not refreshed under the person's hands.
    offer = wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#activity-feed [data-live-offer]"),
        "no 'Show the change' button",
    )[0]
    assert offer.text == "Show the change"
    assert field.get_attribute("value") == "half-typed filter"
    assert browser.switch_to.active_element == field
    assert "deploy target" not in feed_titles(browser)
    offer.click()  # the person asks for it
    wait_for(browser, lambda d: "deploy target" in feed_titles(d), "the feed did not refresh")
    assert browser.execute_script("return window.__samePage") is True
    screenshot(browser, "activity-live-notice", sizes=(DESKTOP, PHONE))


def test_an_untouched_feed_refreshes_itself_in_place(browser, live):
    open_activity(browser, live)
    browser.execute_script("window.scrollTo(0, 200)")
    agent_process(
        live,
        'a.manager.delete(a.manager.project_store.get_memory_by_scope_key("project", "deploy_target").id)',
    )
    # Read each text inside the wait: a swap may replace the element between finding and reading.
    said = wait_for(
        browser, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, NOTICE)], "no notice"
    )
    assert said[0] == "The agent just deleted 'deploy target'."

    # The notice comes before the feed's swap, and the feed already lists older deletions:
    # wait until its newest deletion is this one.
    def newest_deletion(d):
        rows = d.find_elements(By.CSS_SELECTOR, "#activity-feed tbody tr[data-kind=soft_delete]")
        texts = [e.text for e in rows[:1]]
        return texts if texts and "deploy target" in texts[0] else []

    first = wait_for(browser, newest_deletion, "feed not refreshed")[0]
    assert "the agent" in first
    assert browser.execute_script("return window.__samePage") is True  # swapped, not reloaded
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-live-offer]")


def test_a_hidden_tab_does_not_poll_and_asks_at_once_when_shown(browser, live):
    open_activity(browser, live)
    count = (
        "return performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('/activity/pulse')).length"
    )
    wait_for(browser, lambda d: d.execute_script(count) >= 1, "the page does not poll")
    browser.execute_script(
        "Object.defineProperty(document, 'visibilityState',"
        " {configurable: true, get: () => 'hidden'});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    before = browser.execute_script(count)
    time.sleep(4.5)  # two polls' worth
    assert browser.execute_script(count) == before
    browser.execute_script(
        "Object.defineProperty(document, 'visibilityState',"
        " {configurable: true, get: () => 'visible'});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    wait_for(browser, lambda d: d.execute_script(count) > before, "no poll once shown", timeout=1.0)


def test_the_activity_page_on_a_phone(browser, live):
    set_size(browser, PHONE)
    try:
        open_activity(browser, live)
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= PHONE[0], width
        cards = browser.find_elements(By.CSS_SELECTOR, "#activity-feed tbody tr")
        assert cards and all(in_viewport(browser, c) or c.location["y"] > 0 for c in cards[:3])
        assert cards[0].find_element(By.CSS_SELECTOR, "td.lead").size["width"] >= 60
    finally:
        set_size(browser, DESKTOP)


def test_the_memories_list_and_the_suggestions_refresh_when_the_agent_writes(browser, live):
    browser.get(live.url("/memories?per_page=100"))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.execute_script("window.__samePage = true")
    agent_process(live, 'a.save("cache backend", "Redis 7 behind the API.", ["infra"], scope="project")')
    wait_for(
        browser,
        lambda d: any(
            "cache_backend" in r.get_attribute("data-memory-id") or "Redis 7 behind the API." in r.text
            for r in d.find_elements(By.CSS_SELECTOR, "#memory-list tr.memory")
        ),
        "the list did not show the new memory",
    )
    assert browser.find_element(By.CSS_SELECTOR, NOTICE).text == "The agent just saved 'cache backend'."
    assert browser.execute_script("return window.__samePage") is True
    browser.get(live.url("/reviews"))
    wait_for(browser, htmx_settled, "htmx did not load")
    before = len(browser.find_elements(By.CSS_SELECTOR, "#review-list [data-status=pending]"))
    agent_process(live, 'a.crystallize("We decided to deploy on Fridays only.")')
    wait_for(
        browser,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#review-list [data-status=pending]")) > before,
        "the suggestions did not refresh",
    )
    assert "The agent just suggested" in browser.find_element(By.CSS_SELECTOR, NOTICE).text


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_journey_what_did_the_agent_just_do(browser, live, size):
    """From any page, one click shows what the agent did last, and who did it."""
    from .conftest import Journey

    set_size(browser, size)
    try:
        browser.get(live.url("/overview"))
        wait_for(browser, htmx_settled, "htmx did not load")
        j = Journey(browser, "what the agent just did")
        j.click(browser.find_element(By.CSS_SELECTOR, "nav.tabs a[data-tab=activity]"))
        newest = wait_for(
            browser,
            lambda d: d.find_elements(By.CSS_SELECTOR, "#activity-feed tbody tr"),
            "no activity listed",
        )[0]
        assert newest.get_attribute("data-actor") in {"agent", "approval", "review", "dashboard"}
        assert newest.find_element(By.CSS_SELECTOR, "td.lead .term").text  # "saved", "deleted", …
        browser.execute_script("window.scrollTo(0, 0)")
        assert in_viewport(browser, newest)
        record = j.done()
        assert record["clicks"] == 1 and record["keys"] == 0
    finally:
        set_size(browser, DESKTOP)
