"""Journey 6 (#21): "Fix a flagged secret and see the re-check say fixed", on the demo.

From the findings list: the secret's fix link, which lands on the memory's edit
form with the value focused; the value edited so the key is gone; Save; back to
the findings, where the finding is listed as fixed; its re-check says "fixed" in
view.  On disk the live row no longer holds the key (read-only sqlite), and the
clicks and keys it took are recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import (
    DESKTOP,
    PHONE,
    Journey,
    Server,
    htmx_settled,
    in_viewport,
    read_db,
    screenshot,
    serving,
    wait_for,
)

NEW_VALUE = "Staging deploys read the key from the team vault; run scripts/deploy.sh staging."
MAX_CLICKS = 4  # fix link, Save, the Findings tab, Re-check


def demo_db(server: Server) -> Path:
    return server.project_db


def css(driver, selector):
    return driver.find_element(By.CSS_SELECTOR, selector)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_fix_a_flagged_secret(browser, size):
    with serving(browser, size=size) as server:
        db = demo_db(server)
        secret_row = (
            "SELECT content FROM memories WHERE key_normalized = 'staging_deploy' AND deleted_at IS NULL"
        )
        [(before,)] = read_db(db, secret_row)
        assert "DEPLOY_API_KEY=sk_demo_" in before
        browser.get(server.url("/findings"))
        # The list fits the window: no sideways scroll, no cell squeezed under 60 px.
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        assert (
            browser.execute_script(
                "return [...document.querySelectorAll('#finding-list td')].filter(td =>"
                " td.getBoundingClientRect().width < 60).length"
            )
            == 0
        )
        j = Journey(browser, "6 fix a flagged secret")

        # Every element is read (or clicked) inside a wait that finds it again: the header's
        # counts are redrawn by each htmx answer, and a click on a replaced element did not land.
        secret = 'tr.finding[data-category="secret"]'
        assert wait_for(browser, lambda d: (css(d, secret).get_attribute("data-field"),))[0] == "content"
        wait_for(browser, lambda d: j.click(css(d, f'{secret} a[data-action="edit"]')) or True)

        # The edit form, its value field focused, in view.
        field = wait_for(
            browser,
            lambda d: d.switch_to.active_element.tag_name == "textarea" and d.switch_to.active_element,
            lambda: f"the value is not focused: {browser.current_url}",
        )
        assert browser.current_url.endswith("?field=content")
        assert field.find_elements(By.XPATH, "ancestor::*[@id='edit']"), "not in the edit form"
        assert in_viewport(browser, field)
        screenshot(browser, f"journey6-edit-{size[0]}", sizes=(size,), restore=False)

        j.key(field, Keys.CONTROL, "a")
        j.type(field, NEW_VALUE)
        save = '#edit button[data-action="edit"], #edit-form button[data-action="edit"]'
        wait_for(browser, lambda d: j.click(css(d, save)) or True)
        wait_for(
            browser,
            lambda d: "DEPLOY_API_KEY" not in read_db(db, secret_row)[0][0],
            lambda: "the edit was not saved: " + css(browser, "#status").text,
        )

        # The save answers by leaving for the memory's page (HX-Redirect): the tab is clicked
        # once that page is in, saying the edit is done.  Waiting for htmx to be idle is not
        # enough: the edit form's page is idle too while the browser loads the new one, and
        # that load, landing after the click, would undo it.
        wait_for(
            browser,
            lambda d: (
                "field=content" not in d.current_url
                and d.find_elements(By.CSS_SELECTOR, "#memory-actions [data-field=done]")
                and htmx_settled(d)
            ),
            lambda: f"the memory's page did not come: {browser.current_url}",
        )
        wait_for(browser, lambda d: j.click(css(d, 'header a[data-tab="findings"]')) or True)
        fixed = wait_for(
            browser,
            lambda d: [
                e.text
                for e in d.find_elements(
                    By.CSS_SELECTOR, '#findings-fixed li[data-fixed][data-rule^="secret."]'
                )
            ],
            lambda: "no fixed finding listed: " + css(browser, "main").text[:600],
        )[0]
        assert "Fixed" in fixed
        # The files moved: the Findings badge is a stand-in that fetches the fresh scan's count
        # and redraws the header.  Click once the page is still, so that no late swap moves
        # or replaces the link under the click.
        wait_for(
            browser,
            lambda d: htmx_settled(d) and not d.find_elements(By.CSS_SELECTOR, "[data-later]"),
            "the findings page never settled",
        )
        check = '#findings-fixed li[data-fixed][data-rule^="secret."] a[data-action="check"]'
        wait_for(browser, lambda d: j.click(css(d, check)) or True)

        shown = '#finding-check[data-verdict="fixed"] [data-field="verdict"]'
        verdict = wait_for(
            browser,
            lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, shown)],
            lambda: (
                f"the re-check does not say fixed at {browser.current_url}: "
                + css(browser, "main").text[:600]
            ),
        )[0]
        assert verdict.startswith("Fixed")
        assert wait_for(browser, lambda d: (in_viewport(d, css(d, shown)),))[0]
        screenshot(browser, f"journey6-fixed-{size[0]}", sizes=(size,), restore=False)
        # On disk: the live row holds the new value, the key is gone from it.
        [(after,)] = read_db(db, secret_row)
        assert after == NEW_VALUE and "sk_demo_" not in after

        record = j.done()
        assert record["clicks"] <= MAX_CLICKS, record
        assert record["keys"] == 2 + len(NEW_VALUE), record
