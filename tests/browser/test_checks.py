"""Memory checks (#33) in the browser, on the demo: preview → "Make a check of this" → save →
forget the memory for good → the Checks screen shows the check failing, and why; a passing
check reads green and a failing one red, and the form puts each label beside its field."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from .conftest import broken_words, finished_job, htmx_settled, read_db, serving, wait_for


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


def _badge_hue(row) -> str:
    """The colour a person sees on a result: "green", "red" or "neutral" (its background)."""
    r, g, b = (
        int(v)
        for v in row.find_element(By.CSS_SELECTOR, ".badge")
        .value_of_css_property("background-color")
        .split("(")[1]
        .split(")")[0]
        .split(",")[:3]
    )
    return "green" if g > r + 10 else "red" if r > g + 10 else "neutral"


def _labels_beside_fields(browser) -> list[str]:
    """Each of the form's labels that is not on its own field's row, or in another column."""
    return browser.execute_script("""
      const out = [], lefts = new Set();
      for (const label of document.querySelectorAll('#check-form label[for]')) {
        const field = document.getElementById(label.htmlFor).getBoundingClientRect();
        const r = label.getBoundingClientRect();
        lefts.add(Math.round(field.left));
        if (r.top < field.top - 2 || r.top > field.bottom) out.push(label.textContent);
      }
      if (lefts.size !== 1) out.push('fields in ' + lefts.size + ' columns');
      return out;""")


def test_preview_make_a_check_forget_then_it_fails(browser, demo):
    browser.get(demo.url("/preview?q=how+does+the+release+work"))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.find_element(By.ID, "make-check").click()
    recall = wait_for(browser, lambda d: d.find_elements(By.ID, "c-recall"), "no check form")[0]
    assert _labels_beside_fields(browser) == []
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
    assert _badge_hue(_row(browser, "release")) == "green"
    assert broken_words(browser) == []  # "passes", "Remove": whole words

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
    assert _badge_hue(row) == "red"
    assert key in row.text and "deleted" in row.text
    assert row.find_elements(By.CSS_SELECTOR, "details pre.diff")  # what changed since it passed
