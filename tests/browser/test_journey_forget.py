"""Journeys 4 and 5 of #21 on the demo, at 1280×900 and 390×844.

5. "Forget what is about me": keyboard only (Tab, Enter, typing) from the Forget page to the
   dry run (what goes and what stays, both listed before the confirmation), its typed
   confirmation, and the verified report, which must be in view and focused.
4. "Forget one memory for good and see it verified": at most 4 steps from its row in the list.

The outcome is read from the demo's files with a read-only connection: the user store is empty,
the project facts are still there, the erased text is in no byte of the database or its -wal.
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
    finished_job,
    htmx_settled,
    in_viewport,
    read_db,
    screenshot,
    serving,
    wait_for,
)


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def demo(request, browser):
    """A fresh demo per window size: both journeys erase what they walk through."""
    with serving(browser, size=request.param) as server:
        server.size = request.param
        yield server


def _focused(browser):
    return browser.switch_to.active_element


def _no_trace(db: Path, texts: list[str]) -> list[str]:
    found = []
    for suffix in ("", "-wal"):
        path = Path(str(db) + suffix)
        if path.exists():
            data = path.read_bytes()
            found += [f"{t[:20]}… in {path.name}" for t in texts if t.encode() in data]
    return found


def test_journey_5_forget_what_is_about_me_keyboard_only(browser, demo):
    user_texts = [r[0] for r in read_db(demo.user_db, "SELECT content FROM memories")]
    facts = {
        r[0]
        for r in read_db(
            demo.project_db, "SELECT id FROM memories WHERE deleted_at IS NULL AND type = 'project_fact'"
        )
    }
    assert user_texts and facts

    browser.get(demo.url("/forget"))
    wait_for(browser, htmx_settled, "htmx did not load")
    j = Journey(browser, "5 forget what is about me (keyboard)")
    link = j.tab_to(lambda el: el.get_attribute("data-action") == "about")
    j.key(link, Keys.ENTER)
    wait_for(browser, lambda d: d.find_elements(By.ID, "about-form"), "no dry run")
    wait_for(browser, htmx_settled)
    plan = browser.find_element(By.ID, "forget-about")
    assert int(plan.get_attribute("data-rows")) > 0
    stores = {
        s.get_attribute("data-store") for s in browser.find_elements(By.CSS_SELECTOR, "section.about-store")
    }
    assert stores == {"project", "user"}
    # Two plain lists before the typed confirmation: what goes, what stays, each with why.
    # The demo's staging credential belongs to the project: it is listed as staying.
    confirm = browser.find_element(By.ID, "about-confirm")
    for name in ("goes", "stays"):
        listed = [
            el for el in browser.find_elements(By.CSS_SELECTOR, f'[data-list="{name}"]') if el.is_displayed()
        ]
        assert listed, f"no visible list of what {name}"
        assert listed[0].location["y"] < confirm.location["y"], (
            f"what {name} is listed after the confirmation"
        )
    project = 'section.about-store[data-store="project"]'
    staying = browser.find_elements(
        By.CSS_SELECTOR, f'{project} [data-list="stays"] li[data-why="project_secret"]'
    )
    secret_ids = {li.get_attribute("data-id") for li in staying}
    assert secret_ids and all("stays" in li.text for li in staying)
    flagged = {
        li.get_attribute("data-id")
        for li in browser.find_elements(
            By.CSS_SELECTOR, f'{project} [data-list="goes"] li[data-kind="memory"]'
        )
    }
    kept = facts - flagged
    assert kept
    browser.execute_script(
        "arguments[0].scrollIntoView({block: 'start'})",
        browser.find_element(By.CSS_SELECTOR, f'{project} [data-list="goes"]'),
    )
    screenshot(browser, "journey5-dry-run", sizes=[demo.size], restore=False)

    phrase = browser.find_element(By.CSS_SELECTOR, "#about-form [data-field=phrase]").text
    box = j.tab_to(lambda el: el.get_attribute("id") == "about-confirm")
    j.type(box, phrase)
    j.key(box, Keys.ENTER)
    job = finished_job(browser)
    assert job.get_attribute("data-verdict") == "verified erased", job.text
    verdict = job.find_element(By.CSS_SELECTOR, "[data-field=verdict]")
    wait_for(browser, lambda d: _focused(d) == verdict, "focus did not move to the report")
    assert in_viewport(browser, verdict), "the verified report is not in view"
    said = browser.find_element(By.CSS_SELECTOR, "#status .said")
    # The status line says the result; the pulse does not take the purge's own deletion of
    # suggestions for news of the agent's.
    assert in_viewport(browser, said) and said.text.startswith("Erased"), said.text
    assert not browser.find_elements(By.ID, "about-form")  # the dry run made way for it
    screenshot(browser, "journey5-report", sizes=[demo.size], restore=False)
    record = j.done()
    assert record["clicks"] == 0

    # On disk: the user store holds nothing, the project facts are all there.
    assert read_db(demo.user_db, "SELECT count(*) FROM memories") == [(0,)]
    assert read_db(demo.project_db, "SELECT count(*) FROM memory_review_queue WHERE scope = 'user'") == [(0,)]
    left = {
        r[0]
        for r in read_db(
            demo.project_db, "SELECT id FROM memories WHERE deleted_at IS NULL AND type = 'project_fact'"
        )
    }
    assert left == kept
    live = {r[0] for r in read_db(demo.project_db, "SELECT id FROM memories WHERE deleted_at IS NULL")}
    assert secret_ids <= live  # the project's credential stayed, as the dry run said
    assert _no_trace(demo.user_db, user_texts) == []


def test_journey_4_forget_one_memory_for_good_from_its_row(browser, demo):
    memory_id, title, content = read_db(
        demo.project_db,
        "SELECT id, title, content FROM memories "
        "WHERE type = 'project_fact' AND deleted_at IS NULL "
        "ORDER BY title LIMIT 1",
    )[0]
    browser.get(demo.url("/memories?per_page=200"))
    wait_for(browser, htmx_settled, "htmx did not load")
    j = Journey(browser, "4 forget one memory for good")
    # The row's own "Forget for good…" (#31 item 7): no need to open the memory first.
    row = browser.find_element(By.CSS_SELECTOR, f'tr[data-memory-id="{memory_id}"]')
    j.click(row.find_element(By.CSS_SELECTOR, "a[data-action=forget-for-good]"))
    box = wait_for(browser, lambda d: d.find_elements(By.ID, "forget-confirm"), "no confirmation")[0]
    wait_for(browser, htmx_settled)
    phrase = browser.find_element(By.CSS_SELECTOR, "#purge-memory-form [data-field=phrase]").text
    assert box.get_attribute("data-asks") == "title" and phrase == title  # its name, not the store's
    screenshot(browser, "journey4-confirm", sizes=[demo.size], restore=False)
    j.type(box, phrase)
    j.click(browser.find_element(By.CSS_SELECTOR, "#purge-memory-form button[type=submit]"))
    job = finished_job(browser)
    assert job.get_attribute("data-verdict") == "verified erased", job.text
    verdict = job.find_element(By.CSS_SELECTOR, "[data-field=verdict]")
    assert verdict.text == "Erased: no copy left in the file, its journal or side files"
    assert in_viewport(browser, verdict)
    body = browser.find_element(By.TAG_NAME, "main").text
    assert content not in body and title not in body  # the verdict, not the erased text
    assert not browser.find_elements(By.CSS_SELECTOR, "#purge-memory-form, #soft-form")
    screenshot(browser, "journey4-verdict", sizes=[demo.size], restore=False)
    record = j.done()
    assert record["clicks"] <= 2  # two clicks and the typed title (three before #31)
    assert read_db(demo.project_db, "SELECT count(*) FROM memories WHERE id = ?", memory_id) == [(0,)]
    assert _no_trace(demo.project_db, [content]) == []
