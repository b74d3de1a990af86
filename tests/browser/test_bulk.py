"""Bulk actions in a real browser, on the demo: tick rows, review the dry run, apply (#22 item 7).

Two journeys, counted (``Journey``): at 1280×900 tag two ticked memories; at
390×844 soft-delete "all matching" the filter those two now match.  Each
ends with the result said in the pinned #status (in view), the list
refreshed, and the files changed as said (read read-only with sqlite3).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from .conftest import (
    DESKTOP,
    PHONE,
    Journey,
    htmx_settled,
    in_viewport,
    screenshot,
    serving,
    set_size,
    wait_for,
)

TAG = "checked"


@pytest.fixture(scope="module")
def demo(browser):
    with serving(browser) as server:
        yield server, server.project_db, server.user_db


def rows_on_disk(db: Path, ids) -> dict:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            r[0]: (json.loads(r[1]), r[2])
            for r in conn.execute(
                f"SELECT id, tags_json, deleted_at FROM memories WHERE id IN ({','.join('?' * len(ids))})",
                list(ids),
            )
        }
    finally:
        conn.close()


def said(driver) -> str:
    return driver.find_element(By.ID, "status").text


def review_and_apply(driver, j: Journey, expect: str):
    j.click(driver.find_element(By.CSS_SELECTOR, "[data-action=bulk-review]"))
    heading = wait_for(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#bulk-plan h2"), "no dry run appeared"
    )[0]
    wait_for(driver, htmx_settled)
    # The dry run is where the eye is, with keyboard focus on its heading.
    # (the focus scrolls it into view a moment after the swap settles)
    wait_for(
        driver,
        lambda d: in_viewport(d, heading) and d.switch_to.active_element == heading,
        "the dry run is not in view with focus on its heading",
    )
    assert driver.find_element(By.CSS_SELECTOR, "[data-field=bulk-effect] [data-block-effect]")
    j.click(driver.find_element(By.CSS_SELECTOR, "#bulk-apply [data-action=bulk-apply]"))
    wait_for(driver, lambda d: expect in said(d), lambda: f"#status says {said(driver)!r}")
    wait_for(driver, htmx_settled)
    assert in_viewport(driver, driver.find_element(By.CSS_SELECTOR, "#status [data-said]"))
    done = driver.find_element(By.CSS_SELECTOR, "[data-field=bulk-done]")
    assert driver.switch_to.active_element == done


def choose(driver, j: Journey, value: str):
    j.click(driver.find_element(By.ID, "bulk-action"))
    j.click(driver.find_element(By.CSS_SELECTOR, f"#bulk-action option[value='{value}']"))


def test_tag_two_ticked_memories_then_delete_all_matching_on_a_phone(browser, demo):
    server, project_db, _user_db = demo
    set_size(browser, DESKTOP)
    browser.get(server.url("/memories?scope=project"))
    wait_for(browser, htmx_settled)
    j = Journey(browser, "bulk: tag two memories")
    boxes = browser.find_elements(By.CSS_SELECTOR, "#memory-list input[name=ids][form=bulk]")
    picked = [b.get_attribute("value").split(":")[1] for b in boxes[:2]]
    for box in boxes[:2]:
        j.click(box)
    choose(browser, j, "tag")
    j.type(browser.find_element(By.ID, "bulk-tag"), TAG)
    review_and_apply(browser, j, f"Added the tag “{TAG}” to 2 memories.")
    record = j.done()
    assert record["clicks"] <= 6 and record["keys"] == len(TAG), record
    assert all(TAG in tags for tags, _gone in rows_on_disk(project_db, picked).values())
    screenshot(browser, "bulk-tagged", sizes=(DESKTOP,))

    set_size(browser, PHONE)
    browser.get(server.url(f"/memories?tag={TAG}"))
    wait_for(browser, htmx_settled)
    bar = browser.find_element(By.ID, "bulk")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert bar.size["width"] <= PHONE[0]
    j = Journey(browser, "bulk: soft delete all matching")
    j.click(browser.find_element(By.CSS_SELECTOR, "[data-field=bulk-all]"))
    choose(browser, j, "delete")
    review_and_apply(browser, j, "Soft-deleted 2 memories; agentao no longer uses them.")
    record = j.done()
    assert record["clicks"] <= 5 and record["keys"] == 0, record
    assert all(gone for _tags, gone in rows_on_disk(project_db, picked).values())
    assert browser.find_elements(By.CSS_SELECTOR, "#memory-list [data-empty]")  # the list, refreshed
    screenshot(browser, "bulk-deleted", sizes=(PHONE,))


BROKEN_WORDS = """
const broken = [];
for (const label of document.querySelectorAll('.bulk-bar label, .filters label')) {
  if (!label.offsetParent) continue;  // not shown at this width
  for (const text of label.childNodes) {
    if (text.nodeType !== Node.TEXT_NODE) continue;
    const words = /\\S+/g;
    let m;
    while ((m = words.exec(text.textContent))) {
      const range = document.createRange();
      range.setStart(text, m.index);
      range.setEnd(text, m.index + m[0].length);
      if (new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1) broken.push(m[0]);
    }
  }
}
return broken;
"""


def test_no_label_of_the_bulk_bar_or_filters_breaks_inside_a_word_on_a_phone(browser, demo):
    server, _project_db, _user_db = demo
    set_size(browser, PHONE)
    try:
        browser.get(server.url("/memories"))
        wait_for(browser, lambda d: d.find_elements(By.ID, "bulk-action"), "no bulk bar")
        screenshot(browser, "bulk-bar-labels", sizes=(PHONE,), restore=False)
        assert browser.execute_script(BROKEN_WORDS) == []
    finally:
        set_size(browser, DESKTOP)
