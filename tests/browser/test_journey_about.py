"""Journey 1 (#21): "What does the agent know about me?" — from the start URL to the
About-you list in at most 2 clicks, on the demo, at 1280×900 and 390×844."""

from __future__ import annotations

import pytest

from .conftest import (
    DESKTOP,
    PHONE,
    Journey,
    Server,
    in_viewport,
    login,
    read_db,
    screenshot,
    set_size,
    wait_for,
)


@pytest.fixture(scope="module")
def demo():
    server = Server([], None, extra=["--demo"])
    assert server.demo_root, server.output
    server.root = server.demo_root
    yield server
    server.stop()
    assert not server.root.exists()  # the demo leaves nothing behind once stopped


def _about_you(db) -> tuple[int, str]:
    """What the user store holds about the person, read from the file: live count, and the
    newest-changed memory's text (the About list's first row)."""
    [(n,)] = read_db(db, "SELECT COUNT(*) FROM memories WHERE scope = 'user' AND deleted_at IS NULL")
    [(text,)] = read_db(
        db,
        "SELECT content FROM memories WHERE scope = 'user' AND deleted_at IS NULL"
        " ORDER BY updated_at DESC, id LIMIT 1",
    )
    return n, text


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_what_does_the_agent_know_about_me(browser, demo, size):
    user_db = demo.root / "home" / ".agentao" / "memory.db"
    count, newest = _about_you(user_db)
    assert count > 0
    login(browser, demo)  # the start URL: the login link lands on the overview
    set_size(browser, size)
    browser.get(demo.url("/overview"))
    j = Journey(browser, "what does the agent know about me")
    answer = browser.find_element("css selector", "#answer")
    assert in_viewport(browser, browser.find_element("css selector", '#answer [data-sentence="knows"]'))
    assert f"{count} about you" in answer.text
    # The risky sentence arrives once the findings scan answers, in place.
    risky = wait_for(
        browser,
        lambda d: d.find_elements("css selector", '#answer [data-sentence="risky"][data-count]'),
        "the risky count never came",
    )[0]
    assert "risky" in risky.text and not risky.get_attribute("data-later")
    screenshot(browser, f"journey-about-overview-{size[0]}", sizes=(size,), restore=False)

    tab = browser.find_element("css selector", 'nav.tabs a[data-tab="about"]')
    assert in_viewport(browser, tab)
    j.click(tab)
    wait_for(
        browser, lambda d: d.find_elements("css selector", "#about-memories"), "the About page did not open"
    )
    said = browser.find_element("css selector", '[data-field="about-memories"]')
    assert in_viewport(browser, said)
    assert said.text == f"The agent remembers {count} things about you, in every project."
    first = browser.find_element("css selector", "#about-memories tr.about-memory")
    assert newest in first.text
    assert first.location["y"] < browser.execute_script("return window.innerHeight") + 200, (
        "the first memory about you starts well below the first screen"
    )
    rows = browser.find_elements("css selector", "#about-memories tr.about-memory")
    assert len(rows) == min(count, 50)
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), (
        "horizontal scroll"
    )
    record = j.done()
    assert record["clicks"] <= 2 and record["keys"] == 0
    screenshot(browser, f"journey-about-{size[0]}", sizes=(size,), restore=False)
    set_size(browser, DESKTOP)
