"""With JavaScript switched off in the browser, every form still works (post/redirect/get).

The server runs with its access token, as a real user's does; so these also
check that no redirect after a change lands on a URL the token guard refuses.
"""

from __future__ import annotations

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from .conftest import Agent, fresh_candidate, read_db, second_project, seed, serving, wait_for


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    main = seed(Agent(tmp_path_factory.mktemp("nojs")))
    other = second_project(tmp_path_factory.mktemp("nojs-other"))
    with serving(browser, main, others=[other]) as srv:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
        yield srv
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})


def follow(browser, element) -> None:
    """Click something that loads a new page, and wait until the new page is there.

    (Without JavaScript every click that matters is a full navigation, and WebDriver
    does not always wait for one that starts from a form submission.)
    """
    old = browser.find_element(By.TAG_NAME, "html")
    element.click()
    wait_for(browser, lambda d: _gone(old), "the click did not load a new page")
    wait_for(browser, lambda d: d.execute_script("return document.readyState") == "complete")


def _gone(element) -> bool:
    # Mid-navigation chromedriver may answer "Node with given id does not belong
    # to the document" instead of a stale-element error: both mean the old page left.
    try:
        return EC.staleness_of(element)(None)
    except WebDriverException:
        return True


def heading(browser) -> str:
    return browser.find_element(By.TAG_NAME, "h1").text


def test_htmx_is_really_off(browser, server):
    browser.get(server.url("/memories"))
    assert browser.execute_script("return typeof window.htmx") == "undefined"


def test_filter_form_submits_as_a_get(browser, server):
    browser.get(server.url("/memories"))
    browser.find_element(By.ID, "f-q").send_keys("Neovim")
    Select(browser.find_element(By.ID, "f-scope")).select_by_value("")
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#memory-filters button[type=submit]"))
    assert "q=Neovim" in browser.current_url
    keys = [
        r.get_attribute("data-key") for r in browser.find_elements(By.CSS_SELECTOR, "#memory-list tr.memory")
    ]
    assert keys == ["editor"]


def test_approve_posts_and_lands_back_on_the_queue(browser, server):
    db = server.agent.project_db
    browser.get(server.url("/reviews"))
    button = next(
        b for b in browser.find_elements(By.CSS_SELECTOR, "button[data-action=approve]") if b.is_enabled()
    )
    item_id = button.find_element(By.XPATH, "ancestor::article").get_attribute("data-item-id")
    title = browser.find_element(By.CSS_SELECTOR, f"#review-{item_id} [data-field=title]").text
    follow(browser, button)
    assert heading(browser) == "Suggestions to review", browser.page_source[:300]
    # The result in words at the top, and the keyboard on the next card's first decision.
    said = browser.find_element(By.CSS_SELECTOR, "#status [data-said]").text
    assert said.startswith(f"Approved “{title}” — it "), said
    focused = browser.switch_to.active_element
    assert focused.get_attribute("data-action") == "approve", focused.get_attribute("outerHTML")[:200]
    assert read_db(db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id) == [("approved",)]
    # The address says nothing about it, and a reload does not say it again.
    assert "done=" not in browser.current_url
    browser.refresh()
    assert heading(browser) == "Suggestions to review"
    assert browser.find_element(By.CSS_SELECTOR, "#status").text == ""


def test_approve_with_edits_previews_on_its_page_then_posts(browser, server):
    db = server.agent.project_db
    item_id = fresh_candidate(server, "We must never push to main.")
    browser.get(server.url("/reviews"))
    card = browser.find_element(By.CSS_SELECTOR, f"#review-{item_id}")
    card.find_element(By.CSS_SELECTOR, "[data-edit-form] summary").click()
    box = card.find_element(By.CSS_SELECTOR, "[data-edit-form] textarea")
    box.clear()
    box.send_keys("Edited without JavaScript.")
    Select(card.find_element(By.CSS_SELECTOR, "[data-edit-form] select[name^=scope]")).select_by_value("user")
    follow(browser, card.find_element(By.CSS_SELECTOR, "button[data-action=preview-edits]"))
    assert heading(browser) == "Approve with edits", browser.page_source[:300]
    plan = browser.find_element(By.CSS_SELECTOR, f"#review-{item_id} [data-plan][data-edited]")
    assert plan.find_element(By.CSS_SELECTOR, "[data-plan-field=store]").text.startswith("user store")
    assert read_db(db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id) == [("pending",)]
    follow(browser, browser.find_element(By.CSS_SELECTOR, "button[data-action=approve-edited]"))
    assert heading(browser) == "Suggestions to review", browser.page_source[:300]
    assert "with your edits" in browser.find_element(By.CSS_SELECTOR, "#status [data-said]").text
    assert read_db(db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id) == [("approved",)]
    assert read_db(
        server.agent.user_db,
        "SELECT scope, source FROM memories WHERE content = ?",
        "Edited without JavaScript.",
    ) == [("user", "explicit")]


def test_reject_and_erase_lands_on_its_report(browser, server):
    db = server.agent.project_db
    item_id = read_db(db, "SELECT id FROM memory_review_queue WHERE status = 'pending'")[0][0]
    browser.get(server.url("/reviews"))
    follow(browser, browser.find_element(By.CSS_SELECTOR, f"#review-{item_id} a[data-action=erase]"))
    follow(browser, browser.find_element(By.CSS_SELECTOR, "button[data-action=erase-confirm]"))
    assert "Access token" not in heading(browser), "the report's URL was refused by the token guard"
    row = browser.find_element(By.CSS_SELECTOR, f"#review-erase li[data-item-id='{item_id}']")
    assert row.get_attribute("data-erase-status") == "verified erased"
    assert read_db(db, "SELECT count(*) FROM memory_review_queue WHERE id = ?", item_id) == [(0,)]


def test_project_switcher_posts_and_comes_back(browser, server):
    browser.get(server.url("/memories"))
    Select(browser.find_element(By.ID, "project-switch")).select_by_index(1)
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#project-switcher button[type=submit]"))
    assert browser.current_url.endswith("/memories")
    keys = {
        r.get_attribute("data-key") for r in browser.find_elements(By.CSS_SELECTOR, "#memory-list tr.memory")
    }
    assert "frontend_stack" in keys and "package_manager" not in keys
    Select(browser.find_element(By.ID, "project-switch")).select_by_index(0)
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#project-switcher button[type=submit]"))
    keys = {
        r.get_attribute("data-key") for r in browser.find_elements(By.CSS_SELECTOR, "#memory-list tr.memory")
    }
    assert "package_manager" in keys


def test_hard_purge_confirms_and_shows_the_job(browser, server):
    db = server.agent.project_db
    browser.get(server.url("/forget"))
    picker = browser.find_element(By.CSS_SELECTOR, "form.picker[data-store=project]")
    picker.find_element(By.CSS_SELECTOR, "input[value=soft_deleted]").click()
    follow(browser, picker.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    assert browser.find_element(By.ID, "forget-plan").get_attribute("data-rows") == "1"
    form = browser.find_element(By.ID, "purge-form")
    form.find_element(By.NAME, "confirm").send_keys(form.find_element(By.TAG_NAME, "strong").text)
    follow(browser, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    assert "/forget/jobs/" in browser.current_url
    # Without htmx the page does not poll; reloading it is how a person sees the end.
    for _ in range(50):
        job = browser.find_element(By.CSS_SELECTOR, "[data-job]")
        if job.get_attribute("data-state") != "running":
            break
        browser.refresh()
    assert job.get_attribute("data-verdict") == "verified erased", job.text
    assert read_db(db, "SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL") == [(0,)]
