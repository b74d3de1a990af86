"""A memory → the conversation it came from → forget that conversation → the verified report
in view (#32), on the demo at 1280×900.  The outcome is read from the demo's files."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from .conftest import finished_job, htmx_settled, in_viewport, read_db, serving, wait_for


def test_a_memory_to_its_conversation_to_forgetting_it(browser):
    with serving(browser) as server:
        # The demo's approved "commit messages in English" suggestion, in the user store.
        [(mem_id,)] = read_db(server.user_db, "SELECT id FROM memories WHERE source = 'crystallized'")
        store = "user"
        browser.get(server.url(f"/memories/{store}/{mem_id}"))
        wait_for(browser, htmx_settled, "htmx did not load")
        browser.find_element(By.CSS_SELECTOR, "#provenance a[data-link=conversation]").click()
        wait_for(browser, lambda d: d.find_elements(By.ID, "conv-forget-form"), "no conversation page")
        session = browser.find_element(By.CSS_SELECTOR, "h1 code").text
        phrase = browser.find_element(By.CSS_SELECTOR, "#conv-forget-form kbd").text
        box = browser.find_element(By.ID, "conv-confirm")
        box.send_keys(phrase)
        browser.find_element(By.CSS_SELECTOR, "[data-action=forget-conversation]").click()
        job = finished_job(browser)
        assert job.get_attribute("data-verdict") == "verified erased", job.text
        verdict = job.find_element(By.CSS_SELECTOR, "[data-field=verdict]")
        assert in_viewport(browser, verdict), "the verified report is not in view"
        assert read_db(
            server.project_db, "SELECT count(*) FROM session_summaries WHERE session_id = ?", session
        ) == [(0,)]
        assert read_db(
            server.project_db, "SELECT count(*) FROM memory_review_queue WHERE source_session = ?", session
        ) == [(0,)]
        browser.get(server.url("/"))
