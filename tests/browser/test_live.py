"""Live activity in a real browser while a real agentao process writes.

The agent is a separate Python process (agentao 0.5.17's MemoryManager, tests/agentao_world.py)
writing the files the server reads, as an agent session beside the dashboard would.
"""

from __future__ import annotations

import subprocess
import sys

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

# Counts the pulse's requests in the page itself (htmx's own events), so that a bound on
# "how soon" is a number of polls, not a wall-clock time a busy machine could stretch:
# ``sent`` the requests sent, ``quiet`` those sent while the page showed no live notice,
# ``held`` those the hidden tab cancelled, ``why`` what triggered each one sent.
COUNT_POLLS = """
if (!window.__polls) {
  window.__polls = {sent: 0, quiet: 0, held: 0, why: []};
  const mine = e => e.target && e.target.id === 'pulse';
  document.addEventListener('htmx:beforeRequest', e => {
    if (mine(e) && document.visibilityState === 'hidden') window.__polls.held++;
  });
  document.addEventListener('htmx:beforeSend', e => {
    if (!mine(e)) return;
    const p = window.__polls, cause = e.detail.requestConfig.triggeringEvent;
    p.sent++;
    if (!document.querySelector('#status [data-said=live]')) p.quiet++;
    p.why.push(cause ? cause.type : 'every');
  });
}
"""
POLLS = "return window.__polls"


@pytest.fixture(scope="module")
def live(server):
    """A seeded dashboard that a separate agentao process writes to."""
    return server


def agent_process(server, code: str) -> None:
    """Run ``code`` (with ``a``, an agentao MemoryManager wrapper) in a new agentao process."""
    root = server.agent.project_dir.parent
    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, 'tests');"
        "from agentao_world import Agent; a = Agent(Path(sys.argv[1]));"
        f"{code}; a.project_store.close(); a.user_store.close()"
    )
    subprocess.run([sys.executable, "-c", script, str(root)], cwd=REPO, check=True, timeout=120)


def open_activity(browser, server):
    browser.get(server.url("/activity"))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.execute_script("window.__samePage = true")  # a full reload would wipe it
    browser.execute_script(COUNT_POLLS)


def feed_titles(browser) -> list[str]:
    return [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#activity-feed td.lead a")]


def test_the_notice_comes_within_two_seconds_and_typed_text_stays(browser, live):
    open_activity(browser, live)
    browser.find_element(By.CSS_SELECTOR, "#activity-feed details.activity-forms summary").click()
    field = browser.find_element(By.CSS_SELECTOR, "#activity-feed input[name=q]")
    field.send_keys("half-typed filter")  # typed, never sent
    # The page asks every 2 s ...
    assert "every 2s" in browser.find_element(By.CSS_SELECTOR, "#pulse").get_attribute("hx-trigger")
    agent_process(live, 'a.save("deploy target", "Deploys go to fly.io.", ["infra"], scope="project")')
    before = browser.execute_script(POLLS)["sent"]  # the agent has written: every poll sent from now sees it
    # Each element is read inside a wait: a later poll may replace it between finding and reading.
    said = wait_for(
        browser, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, NOTICE)], "no notice"
    )
    assert said[0] == "The agent just saved 'deploy target'."
    # ... and the first poll sent after the write brings the notice (one sent earlier may too):
    # within one 2 s poll, counted in polls so a busy machine cannot stretch it.
    assert browser.execute_script(POLLS)["quiet"] <= before + 1, browser.execute_script(POLLS)
    assert wait_for(browser, lambda d: (in_viewport(d, d.find_element(By.CSS_SELECTOR, NOTICE)),))[0]
    # The feed holds a half-typed field: it is not refreshed under the person's hands.
    offer = "#activity-feed [data-live-offer]"
    texts = wait_for(
        browser,
        lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, offer)],
        "no 'Show the change' button",
    )
    assert texts[0] == "Show the change"
    assert field.get_attribute("value") == "half-typed filter"
    assert browser.switch_to.active_element == field
    assert "deploy target" not in feed_titles(browser)
    # The person asks for it (a click on a replaced button did not land: found and clicked again).
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, offer).click() or True)
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
    # Hidden: the page's 2 s timer still fires, and each of its requests is cancelled.  Waited
    # for by count (two timer turns), not for a time a busy machine could stretch.
    hidden_at = browser.execute_script(
        "Object.defineProperty(document, 'visibilityState',"
        " {configurable: true, get: () => 'hidden'});"
        "document.dispatchEvent(new Event('visibilitychange'));"
        "return [window.__polls.sent, performance.now()]"
    )
    wait_for(browser, lambda d: d.execute_script(POLLS)["held"] >= 2, "the hidden page's timer never fired")
    assert browser.execute_script(POLLS)["sent"] == hidden_at[0]  # no request sent while hidden
    started = browser.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('/activity/pulse') && e.startTime > arguments[0]).length",
        hidden_at[1],
    )
    assert started == 0  # nor any on the network
    # Shown again: it asks at once (its request comes from being shown, not from the timer).
    wait_for(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#pulse.htmx-request"))
    shown_at = browser.execute_script(
        "Object.defineProperty(document, 'visibilityState',"
        " {configurable: true, get: () => 'visible'});"
        "document.dispatchEvent(new Event('visibilitychange'));"
        "return performance.now()"
    )
    wait_for(browser, lambda d: d.execute_script(POLLS)["sent"] > hidden_at[0], "no poll once shown")
    assert browser.execute_script(POLLS)["why"][hidden_at[0]] == "live-now"
    wait_for(
        browser,
        lambda d: d.execute_script(
            "return performance.getEntriesByType('resource')"
            ".some(e => e.name.includes('/activity/pulse') && e.startTime >= arguments[0])",
            shown_at,
        ),
        "the poll sent once shown never reached the server",
    )


def test_the_activity_page_on_a_phone(browser, live):
    set_size(browser, PHONE)
    try:
        open_activity(browser, live)
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= PHONE[0], width

        def cards(d):
            found = d.find_elements(By.CSS_SELECTOR, "#activity-feed tbody tr")
            return (
                [in_viewport(d, c) or c.location["y"] > 0 for c in found[:3]],
                found[0].find_element(By.CSS_SELECTOR, "td.lead").size["width"] if found else 0,
            )

        placed, lead = wait_for(browser, cards)  # read inside a wait: a poll may swap the feed
        assert placed and all(placed)
        assert lead >= 60
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
    said = wait_for(
        browser, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, NOTICE)], "no notice"
    )
    assert said == ["The agent just saved 'cache backend'."]
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
    said = wait_for(
        browser, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, NOTICE)], "no notice"
    )
    assert "The agent just suggested" in said[0]


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
        newest = "#activity-feed tbody tr"

        def read(d):  # inside a wait: a poll may swap the feed between finding and reading
            row = d.find_elements(By.CSS_SELECTOR, newest)[:1]
            return [
                (r.get_attribute("data-actor"), r.find_element(By.CSS_SELECTOR, "td.lead .term").text)
                for r in row
            ]

        actor, term = wait_for(browser, read, "no activity listed")[0]
        assert actor in {"agent", "approval", "review", "dashboard"}
        assert term  # "saved", "deleted", …
        browser.execute_script("window.scrollTo(0, 0)")
        assert wait_for(browser, lambda d: (in_viewport(d, d.find_element(By.CSS_SELECTOR, newest)),))[0]
        record = j.done()
        assert record["clicks"] == 1 and record["keys"] == 0
    finally:
        set_size(browser, DESKTOP)
