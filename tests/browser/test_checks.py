"""Memory checks (#33) in the browser, on the demo: preview → "Make a check of this" → save →
forget the memory for good → the Checks screen shows the check failing, and why."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from .conftest import finished_job, htmx_settled, read_db, serving, wait_for


@pytest.fixture
def demo(browser):
    with serving(browser) as server:
        yield server


def _row(browser, name):
    rows = [
        r
        for r in browser.find_elements(By.CSS_SELECTOR, "#checks tr[data-check]")
        if r.find_element(By.CSS_SELECTOR, "td.lead").text.startswith(name)
    ]
    assert rows, f"no check {name!r} on the Checks screen"
    return rows[0]


def test_preview_make_a_check_forget_then_it_fails(browser, demo):
    browser.get(demo.url("/preview?q=how+does+the+release+work"))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.find_element(By.ID, "make-check").click()
    recall = wait_for(browser, lambda d: d.find_elements(By.ID, "c-recall"), "no check form")[0]
    keys = [k for k in recall.get_attribute("value").splitlines() if k]
    assert keys, "the preview recalled nothing to check"
    key = keys[0]
    browser.find_element(By.ID, "c-name").send_keys("release")
    browser.find_element(By.CSS_SELECTOR, "#check-form button[type=submit]").click()
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#checks tr[data-check]"),
        lambda: browser.find_element(By.TAG_NAME, "main").text[:500],
    )
    assert _row(browser, "release").get_attribute("data-passed") == "1"

    memory_id, title = read_db(
        demo.project_db, "SELECT id, title FROM memories WHERE key_normalized = ? AND deleted_at IS NULL", key
    )[0]
    browser.get(demo.url(f"/forget/memory/project/{memory_id}"))
    wait_for(browser, htmx_settled)
    box = browser.find_element(By.ID, "forget-confirm")
    box.send_keys(browser.find_element(By.CSS_SELECTOR, "#purge-memory-form [data-field=phrase]").text)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=purge-memory]").click()
    finished_job(browser)

    browser.get(demo.url("/checks"))
    row = _row(browser, "release")
    assert row.get_attribute("data-passed") == "0"
    assert key in row.text and "deleted" in row.text
    assert row.find_elements(By.CSS_SELECTOR, "details pre.diff")  # what changed since it passed
