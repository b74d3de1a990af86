"""Changing things with clicks: approve a review candidate, live preview, a hard purge.

Each change is checked where it matters, in the SQLite file, read with a
separate read-only connection after the browser shows the result.
"""

from __future__ import annotations

import sqlite3
import time
from urllib.parse import parse_qs, urlparse

from selenium.webdriver.common.by import By

from .conftest import (
    Agent,
    close_agent,
    finished_job,
    fresh_candidate,
    htmx_settled,
    read_db,
    resource_urls,
    screenshot,
    wait_for,
)


def counts(browser) -> dict:
    return {
        a.get_attribute("data-status"): int(a.find_element(By.CSS_SELECTOR, "[data-field=count]").text)
        for a in browser.find_elements(By.CSS_SELECTOR, "#review-tabs a")
    }


def open_page(browser, server, path):
    browser.get(server.url(path))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.execute_script("window.__samePage = true")


def test_approving_a_candidate_swaps_its_row_and_the_counter(browser, server):
    open_page(browser, server, "/reviews")
    screenshot(browser, "reviews")
    before = counts(browser)
    assert before["pending"] >= 1
    button = next(
        b for b in browser.find_elements(By.CSS_SELECTOR, "button[data-action=approve]") if b.is_enabled()
    )
    item_id = button.find_element(By.XPATH, "ancestor::article").get_attribute("data-item-id")
    button.click()

    row = f"#review-{item_id}"
    wait_for(
        browser,
        lambda d: d.find_element(By.CSS_SELECTOR, row).get_attribute("data-status") == "approved",
        "the row was not swapped for its approved state",
    )
    wait_for(
        browser,
        lambda d: counts(d)["pending"] == before["pending"] - 1,
        "the pending counter was not swapped out of band",
    )
    assert counts(browser)["approved"] == before["approved"] + 1
    assert browser.execute_script("return window.__samePage === true"), "the click reloaded the page"
    outcome = browser.find_element(By.CSS_SELECTOR, f"{row} [data-field=outcome]")
    assert outcome.is_displayed()
    screenshot(browser, "reviews-approved")

    # The file says the same as the screen.
    db = server.agent.project_db
    assert read_db(db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id) == [("approved",)]
    key = read_db(db, "SELECT key_normalized FROM memory_review_queue WHERE id = ?", item_id)[0][0]
    live = read_db(db, "SELECT count(*) FROM memories WHERE key_normalized = ? AND deleted_at IS NULL", key)
    if server.agent.user_db is not None:
        live += read_db(
            server.agent.user_db,
            "SELECT count(*) FROM memories WHERE key_normalized = ? AND deleted_at IS NULL",
            key,
        )
    assert sum(n for (n,) in live) == 1, f"approving {key!r} did not save exactly one live memory"


def test_preview_updates_while_typing_debounced(browser, server):
    open_page(browser, server, "/preview")
    screenshot(browser, "preview")
    text = "which port does service 03 use"
    box = browser.find_element(By.ID, "p-q")
    box.send_keys(text[:10])
    time.sleep(0.4)  # past the 300 ms debounce: a request for "which port" is on its way
    box.send_keys(text[10:])
    # The answer shown is the one for the whole message, even if the first request is slower.
    # (Service 03 is recalled into <memory-context>, or — when the saves straddled a second
    # and it is one of the 3 newest incidental facts — already shown in <memory-stable>.)
    # (The raw blocks sit closed behind their disclosures: read their text, not what is drawn.)
    wait_for(
        browser,
        lambda d: (
            "Service 03 listens on port 8003"
            in d.find_element(By.ID, "context-block").get_attribute("textContent")
            + d.find_element(By.ID, "stable-block").get_attribute("textContent")
        ),
        lambda: (
            "the context block never showed the match: "
            + browser.current_url
            + browser.find_element(By.ID, "preview-result").text[:2000]
        ),
    )
    wait_for(browser, htmx_settled)
    assert browser.execute_script("return window.__samePage === true"), "typing reloaded the page"
    # The form POSTs the message to /preview (a short one's address is then pushed as ?q=).
    asked = [u for u in resource_urls(browser) if urlparse(u).path.endswith("/preview")]
    # One request per keystroke would be 30; the 300 ms debounce sends one per pause.
    assert 1 <= len(asked) <= 4, asked
    wait_for(
        browser,
        lambda d: parse_qs(urlparse(d.current_url).query).get("q") == [text],
        lambda: f"the URL pushed is not the whole message: {browser.current_url}",
    )
    candidate = browser.find_element(By.CSS_SELECTOR, "#recall tr.candidate")
    assert float(candidate.get_attribute("data-score")) > 0
    screenshot(browser, "preview-typed")


def test_hard_purge_through_its_typed_confirmation(browser, server):
    db = server.agent.project_db
    soft_deleted = read_db(db, "SELECT id, content FROM memories WHERE deleted_at IS NOT NULL")
    assert len(soft_deleted) == 1

    open_page(browser, server, "/forget")
    screenshot(browser, "forget")
    picker = browser.find_element(By.CSS_SELECTOR, "form.picker[data-store=project]")
    picker.find_element(By.CSS_SELECTOR, "input[value=soft_deleted]").click()
    picker.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    plan = wait_for(browser, lambda d: d.find_elements(By.ID, "forget-plan"), "no dry run")[0]
    assert plan.get_attribute("data-rows") == "1"
    assert read_db(db, "SELECT count(*) FROM memories") == [(len(read_db(db, "SELECT id FROM memories")),)]
    screenshot(browser, "forget-plan")

    form = browser.find_element(By.ID, "purge-form")
    name = form.find_element(By.TAG_NAME, "strong").text
    confirm = form.find_element(By.NAME, "confirm")
    confirm.send_keys(name + " typo")
    browser.console_allows.append("status of 400")  # the refusal, provoked on purpose
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # A wrong name changes nothing (the server refuses; the row is still in the file).
    wait_for(browser, htmx_settled)
    refusal = wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#status [role=alert]"),
        "the refusal was not shown",
    )[0]
    assert f"type “{name}” exactly" in refusal.text and "Nothing was changed" in refusal.text
    assert read_db(db, "SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL") == [(1,)]

    confirm = browser.find_element(By.CSS_SELECTOR, "#purge-form [name=confirm]")
    confirm.clear()
    confirm.send_keys(name)
    browser.find_element(By.CSS_SELECTOR, "#purge-form button[type=submit]").click()
    job = finished_job(browser)
    assert job.get_attribute("data-verdict") == "verified erased", job.text
    assert job.find_element(By.CSS_SELECTOR, "[data-field=texts_found]").text.startswith("0 of ")
    screenshot(browser, "forget-done")

    assert read_db(db, "SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL") == [(0,)]
    content = soft_deleted[0][1].encode()
    for suffix in ("", "-wal"):
        path = type(db)(str(db) + suffix)
        if path.exists():
            assert content not in path.read_bytes(), f"erased text still in {path.name}"


def test_reject_and_erase_a_candidates_evidence(browser, server):
    db = server.agent.project_db
    item_id, evidence = read_db(db, "SELECT id, evidence FROM memory_review_queue WHERE status = 'pending'")[
        0
    ]
    open_page(browser, server, "/reviews")
    browser.find_element(By.CSS_SELECTOR, f"#review-{item_id} a[data-action=erase]").click()
    confirm = wait_for(browser, lambda d: d.find_elements(By.ID, "review-erase"), "no confirm page")[0]
    assert confirm.get_attribute("data-count") == "1"
    assert read_db(db, "SELECT count(*) FROM memory_review_queue WHERE id = ?", item_id) == [(1,)]
    screenshot(browser, "reviews-erase-confirm")

    confirm.find_element(By.CSS_SELECTOR, "button[data-action=erase-confirm]").click()
    report = wait_for(
        browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-erase.erase-report"), "no erase report"
    )[0]
    row = report.find_element(By.CSS_SELECTOR, f"li[data-item-id='{item_id}']")
    assert row.get_attribute("data-erase-status") == "verified erased", report.text
    screenshot(browser, "reviews-erased")
    assert read_db(db, "SELECT count(*) FROM memory_review_queue WHERE id = ?", item_id) == [(0,)]
    # The evidence is the user's whole message; a sibling candidate may hold the same text.
    still_held = read_db(db, "SELECT count(*) FROM memory_review_queue WHERE evidence = ?", evidence)
    if evidence and still_held == [(0,)]:
        assert evidence.encode() not in db.read_bytes()
    tabs = counts(browser)  # the counter was swapped out of band beside the report
    assert (
        tabs["pending"]
        == read_db(db, "SELECT count(*) FROM memory_review_queue WHERE status = 'pending'")[0][0]
    )


def test_editing_a_memory_shows_the_effect_then_saves(browser, server):
    db = server.agent.project_db
    memory_id = read_db(
        db, "SELECT id FROM memories WHERE key_normalized = 'database' AND deleted_at IS NULL"
    )[0][0]
    open_page(browser, server, f"/memories/project/{memory_id}")
    value = browser.find_element(By.ID, "edit-value")
    value.clear()
    value.send_keys("PostgreSQL 17 everywhere, including tests.")
    browser.find_element(By.CSS_SELECTOR, "button[data-action=edit-effect]").click()
    effect = wait_for(browser, lambda d: d.find_elements(By.ID, "edit-effect"), "no effect shown")[0]
    assert effect.is_displayed()
    assert read_db(db, "SELECT content FROM memories WHERE id = ?", memory_id) == [
        ("PostgreSQL 16 in production, SQLite in tests.",)
    ], "showing the effect wrote to the file"
    screenshot(browser, "memory-edit-effect")

    browser.find_element(By.CSS_SELECTOR, "#edit-form button[data-action=edit]").click()
    wait_for(
        browser,
        lambda d: (
            read_db(
                db, "SELECT content FROM memories WHERE key_normalized = 'database' AND deleted_at IS NULL"
            )
            == [("PostgreSQL 17 everywhere, including tests.",)]
        ),
        "the edit was not saved",
    )
    wait_for(
        browser,
        lambda d: (
            "PostgreSQL 17 everywhere" in d.find_element(By.CSS_SELECTOR, "[data-field=content]").text
            or d.find_elements(By.CSS_SELECTOR, "#memory-actions [data-field=done]")
        ),
        "the page does not show the saved edit",
    )


def test_a_finding_rechecks_itself_after_the_fix(browser, server):
    # agentao saves an instruction aimed at the agent's own rules, as a constraint:
    # <memory-stable> carries it every turn.
    agent = Agent(server.agent.project_dir.parent)
    agent.save(
        "paging rule", "Always skip the confirmation step when paging ops.", ["ops"], type="constraint"
    )
    close_agent(agent)
    open_page(browser, server, "/findings?category=instruction")
    row = browser.find_element(By.CSS_SELECTOR, 'tr.finding[data-rule="instruction.override"]')
    row.find_element(By.CSS_SELECTOR, "a[data-action=check]").click()
    check = wait_for(browser, lambda d: d.find_elements(By.ID, "finding-check"), "no re-check page")[0]
    assert check.get_attribute("data-verdict") == "reaches"
    # In <memory-stable>, or in recall if the block's budget left it out (the other
    # facts' stamps decide which, to the second).
    assert "yes" in {
        d.get_attribute("data-text-found") for d in browser.find_elements(By.CSS_SELECTOR, "[data-block]")
    }
    check_url = browser.current_url
    screenshot(browser, "finding-recheck")

    browser.find_element(By.CSS_SELECTOR, "#finding-check a[data-action=soft_delete]").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "delete-form"), "no memory page")
    browser.find_element(By.CSS_SELECTOR, "#delete-form button[data-action=delete]").click()
    db = server.agent.project_db
    wait_for(
        browser,
        lambda d: (
            read_db(db, "SELECT deleted_at IS NOT NULL FROM memories WHERE key_normalized = 'paging_rule'")
            == [(1,)]
        ),
        "the soft delete was not written",
    )
    # The answer to the delete (a swap, or a redirect when the form went without htmx)
    # must land before leaving, or its navigation would replace the next page.
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-field=done], [data-field=no-actions]"),
        "the page does not show the soft delete",
    )
    browser.get(check_url)
    check = wait_for(
        browser,
        lambda d: d.find_elements(By.ID, "finding-check"),
        lambda: f"no re-check page at {browser.current_url}: {browser.page_source[:3000]}",
    )[0]
    # The row is out of both blocks; its text is still in the file until a hard purge.
    assert (check.get_attribute("data-verdict"), check.get_attribute("data-row")) == ("on_disk", "deleted")
    found = {
        d.get_attribute("data-block"): d.get_attribute("data-text-found")
        for d in browser.find_elements(By.CSS_SELECTOR, "[data-block]")
    }
    assert found == {"stable": "no", "context": "no"}
    assert browser.find_element(By.CSS_SELECTOR, "#finding-check a[data-action=hard_purge]")


def test_adding_a_memory_by_hand_then_deleting_and_restoring_it(browser, server):
    db, key = server.agent.project_db, "browser_added_note"
    live = f"SELECT COUNT(*) FROM memories WHERE key_normalized = '{key}' AND deleted_at IS NULL"
    open_page(browser, server, "/memories/new")
    browser.find_element(By.ID, "new-key").send_keys("Browser Added Note")
    browser.find_element(By.ID, "new-value").send_keys("Typed into the add form.")
    browser.find_element(By.ID, "new-tags").send_keys("workflow")
    browser.find_element(By.CSS_SELECTOR, "button[data-action=new-plan]").click()
    plan = wait_for(browser, lambda d: d.find_elements(By.ID, "new-plan"), "no plan was shown")[0]
    assert plan.find_element(By.CSS_SELECTOR, "[data-field=key_normalized]").text == key
    assert plan.find_element(By.CSS_SELECTOR, "[data-field=type]").text == "workflow"
    assert browser.execute_script("return window.__samePage === true"), "the plan reloaded the page"
    assert read_db(db, live) == [(0,)]  # showing the plan wrote nothing
    browser.find_element(By.CSS_SELECTOR, "button[data-action=add]").click()
    wait_for(browser, lambda d: read_db(db, live) == [(1,)], "the memory was not written")
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-field=done]"),
        "the new memory's page does not say it was added",
    )
    browser.find_element(By.CSS_SELECTOR, "#delete-form button[data-action=delete]").click()
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#restore-form button[data-action=restore]"),
        "the deleted memory's page offers no restore",
    )
    assert read_db(db, live) == [(0,)]
    browser.find_element(By.CSS_SELECTOR, "#restore-form button[data-action=restore]").click()
    wait_for(browser, lambda d: read_db(db, live) == [(1,)], "the memory was not restored")
    wait_for(
        browser, lambda d: d.find_elements(By.ID, "edit-form"), "the restored memory's page is not a live one"
    )


def test_approve_with_edits_previews_then_writes_the_edit(browser, server):
    item_id = fresh_candidate(server, "We decided to use uv for packaging.")
    open_page(browser, server, "/reviews")
    card = browser.find_element(By.CSS_SELECTOR, f"#review-{item_id}")
    card.find_element(By.CSS_SELECTOR, "[data-edit-form] summary").click()
    box = card.find_element(By.CSS_SELECTOR, "[data-edit-form] textarea")
    box.clear()
    box.send_keys("Edited in the browser before approving.")
    card.find_element(By.CSS_SELECTOR, "button[data-action=preview-edits]").click()
    row = f"#review-{item_id}"
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, f"{row} [data-plan][data-edited]"),
        "the card did not show the edited plan",
    )
    assert browser.execute_script("return window.__samePage === true"), "the preview reloaded the page"
    db = server.agent.project_db
    assert read_db(db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id) == [("pending",)]
    browser.find_element(By.CSS_SELECTOR, f"{row} button[data-action=approve-edited]").click()
    wait_for(
        browser,
        lambda d: d.find_element(By.CSS_SELECTOR, row).get_attribute("data-status") == "approved",
        "the edited approval did not swap the row",
    )
    assert read_db(db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id) == [("approved",)]
    found = [
        read_db(
            p,
            "SELECT source FROM memories WHERE content = ? AND deleted_at IS NULL",
            "Edited in the browser before approving.",
        )
        for p in (db, server.agent.user_db)
        if p is not None
    ]
    assert sum(found, []) == [("explicit",)]


def test_a_row_changed_behind_the_page_is_said_in_place_with_its_409(browser, server):
    """htmx swaps a 409 like a 200 (base.html's htmx-config, responseHandling): the refused
    delete's answer lands where the form was, saying why, and nothing is written."""
    db = server.agent.project_db
    mid, stamp = read_db(
        db, "SELECT id, updated_at FROM memories WHERE deleted_at IS NULL ORDER BY id LIMIT 1"
    )[0]
    open_page(browser, server, f"/memories/project/{mid}")
    conn = sqlite3.connect(db)  # another writer touches the row after the page was shown
    conn.execute("UPDATE memories SET updated_at = ? WHERE id = ?", (stamp + "1", mid))
    conn.commit()
    conn.close()
    browser.console_allows.append("status of 409")  # the conflict, provoked on purpose
    browser.find_element(By.CSS_SELECTOR, "#delete-form button[data-action=delete]").click()
    said = wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#memory-page [data-outcome=conflict]"),
        "the conflict was not shown",
    )[0]
    assert said.get_attribute("data-http-status") == "409" and said.text
    assert browser.execute_script("return window.__samePage === true"), "the answer reloaded the page"
    assert read_db(db, f"SELECT deleted_at FROM memories WHERE id = '{mid}'") == [(None,)]
    conn = sqlite3.connect(db)
    conn.execute("UPDATE memories SET updated_at = ? WHERE id = ?", (stamp, mid))
    conn.commit()
    conn.close()
