"""Browsing and filtering memories in a real browser: htmx swaps, pushed URLs, paging, keyboard."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .conftest import console_problems, htmx_settled, login, screenshot, wait_for


@pytest.fixture(scope="module")
def server(workspace, browser):
    login(browser, workspace)
    return workspace


def open_memories(browser, server, query=""):
    browser.get(server.url("/memories" + query))
    wait_for(browser, htmx_settled, "htmx did not load")
    # A full page load would wipe this; an htmx swap keeps it.
    browser.execute_script("window.__samePage = true")


def listed(browser) -> dict:
    section = browser.find_element(By.ID, "memory-list")
    rows = section.find_elements(By.CSS_SELECTOR, "tr.memory")
    return {
        "total": int(section.get_attribute("data-total")),
        "page": int(section.get_attribute("data-page")),
        "scopes": {r.get_attribute("data-scope") for r in rows},
        "keys": [r.get_attribute("data-key") for r in rows],
    }


def _narrowed_to(shown: dict, keys: list[str]) -> bool:
    # One read of the list (two could straddle a swap): exactly these rows, and a total to match.
    return shown["keys"] == keys and shown["total"] == len(keys)


def query_of(browser) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(browser.current_url).query).items()}


def still_same_page(browser) -> bool:
    return browser.execute_script("return window.__samePage === true")


def test_typing_in_search_swaps_the_list_and_pushes_the_url(browser, server):
    open_memories(browser, server)
    everything = listed(browser)["total"]
    assert everything >= 18
    box = browser.find_element(By.ID, "f-q")
    box.send_keys("Ne")
    time.sleep(0.4)  # past the debounce: a request for "Ne" may still be on its way
    box.send_keys("ovim")
    # On a slow machine the keys may come further apart than the debounce, so
    # "Neov", "Neovi" may each swap the list in before "Neovim" does: wait for the
    # last one, reading the list again whenever a swap replaced it meanwhile.
    wait_for(browser, lambda d: query_of(d).get("q") == "Neovim", "the URL was not pushed")
    wait_for(
        browser,
        lambda d: _narrowed_to(listed(d), ["editor"]),
        lambda: f"the list never narrowed to the match: {listed(browser)}",
    )
    assert still_same_page(browser), "the search reloaded the page instead of swapping #memory-list"
    screenshot(browser, "memories-search")

    # The pushed URL is a real page: loading it cold shows the same result.
    browser.get(browser.current_url)
    assert listed(browser)["keys"] == ["editor"]
    assert browser.find_element(By.ID, "f-q").get_attribute("value") == "Neovim"


def test_choosing_a_scope_filters_without_a_reload(browser, server):
    open_memories(browser, server)
    Select(browser.find_element(By.ID, "f-scope")).select_by_value("user")
    wait_for(browser, lambda d: query_of(d).get("scope") == "user", "scope not in the URL")
    wait_for(browser, lambda d: listed(d)["scopes"] == {"user"}, "other scopes still listed")
    assert still_same_page(browser)
    assert listed(browser)["total"] < 18


def test_paging_forward_and_back(browser, server):
    open_memories(browser, server, "?per_page=5&sort=key&order=asc")
    first = listed(browser)
    assert first["page"] == 1 and len(first["keys"]) == 5
    browser.find_element(By.CSS_SELECTOR, "#memory-list a[rel=next]").click()
    wait_for(browser, lambda d: listed(d)["page"] == 2, "the next page never came")
    second = listed(browser)
    assert len(second["keys"]) == 5 and not set(second["keys"]) & set(first["keys"])
    wait_for(browser, lambda d: query_of(d).get("page") == "2", "page 2 was not pushed to the URL")
    browser.find_element(By.CSS_SELECTOR, "#memory-list a[rel=prev]").click()
    wait_for(browser, lambda d: listed(d)["page"] == 1, "the previous page never came")
    assert listed(browser)["keys"] == first["keys"]


def test_a_row_opens_its_detail_page(browser, server):
    open_memories(browser, server, "?q=PostgreSQL")
    browser.find_element(By.CSS_SELECTOR, "#memory-list tr.memory a.says").click()
    detail = wait_for(browser, lambda d: d.find_elements(By.ID, "memory-detail"), "no detail page")[0]
    assert (
        detail.find_element(By.CSS_SELECTOR, "[data-field=content]").text
        == "PostgreSQL 16 in production, SQLite in tests."
    )
    kind = detail.find_element(By.CSS_SELECTOR, "[data-fact=type] .term")
    assert (kind.text, kind.get_attribute("data-code")) == ("project fact", "project_fact")
    screenshot(browser, "memory-detail")
    browser.back()
    wait_for(browser, lambda d: listed(d)["keys"] == ["database"], "back did not return to the list")


def test_keyboard_reaches_every_filter_and_then_the_results(browser, server):
    open_memories(browser, server)
    form_controls = browser.execute_script(
        "return [...document.querySelectorAll('#memory-filters input, #memory-filters select,"
        " #memory-filters button')].filter(e => e.type !== 'hidden')"
    )
    browser.find_element(By.ID, "f-q").click()
    visited = [browser.switch_to.active_element]
    # Past the filters come the list's own controls (the bulk toolbar, each row's checkbox),
    # then a result's link.
    for _ in range(len(form_controls) + 25):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        here = browser.switch_to.active_element
        visited.append(here)
        if browser.execute_script("return arguments[0].closest('#memory-list tr.memory a') !== null", here):
            break
    assert all(c in visited for c in form_controls), "a filter control is not reachable by Tab"
    result = visited[-1]
    assert result.tag_name == "a" and browser.execute_script(
        "return arguments[0].closest('#memory-list') !== null", result
    ), "Tab never reached the results"
    result.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_elements(By.ID, "memory-detail"), "Enter did not open it")


def test_the_console_check_sees_a_csp_refusal(browser, server):
    # The guard every test relies on is not blind: an inline script is refused and reported.
    open_memories(browser, server)
    browser.execute_script(
        "const s = document.createElement('script');"
        "s.textContent = 'window.__ran = 1'; document.body.appendChild(s);"
    )
    assert browser.execute_script("return window.__ran") is None
    problems = wait_for(browser, lambda d: console_problems(d), "no console report of the refusal")
    assert any("Content Security Policy" in p for p in problems), problems
