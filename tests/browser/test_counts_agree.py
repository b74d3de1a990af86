"""One number per fact (#29, #31), walked on the demo: after each action the header's badges
follow without a reload (the Findings one fetched by its stand-in once a write moved the files), and the badge, the overview's sentence, the Findings page's headline
and the JSON twins give the same count, the count the files hold.

Actions: approve one suggestion, reject one, forget what is about me, purge one memory for
good, fix a flagged secret.  The suggestions waiting are read from the project file with a
read-only connection; the risky entries from the findings twin's own list of findings.
"""

from __future__ import annotations

import json

from selenium.webdriver.common.by import By

from .conftest import finished_job, htmx_settled, read_db, serving, wait_for

RISKY = ("secret", "personal", "instruction")
NEW_VALUE = "Staging deploys read the key from the team vault."


def css(driver, selector):
    return driver.find_element(By.CSS_SELECTOR, selector)


def now(driver, read, what):
    """``read(driver)`` inside a wait: every htmx answer redraws the header's badges (and a
    lazy card or a job replaces itself), so an element found may be replaced before it is
    read; a stale one is found again."""
    return wait_for(driver, lambda d: (read(d),), f"{what} could not be read")[0]


def click(driver, selector):
    """Click ``selector`` as it is now: a click on a replaced element did not land, so it is
    found and clicked again."""
    wait_for(driver, lambda d: css(d, selector).click() or True, f"{selector} could not be clicked")


def badge(driver, tab):
    """The count beside a tab on the page as it is now (None without one)."""
    found = driver.find_elements(By.CSS_SELECTOR, f'nav#tabs a[data-tab="{tab}"] .count')
    return int(found[0].get_attribute("data-count")) if found else None


def twin(driver, server, path):
    """A JSON twin, fetched by the page itself (its session, its cookies)."""
    text = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {headers: {Accept: 'application/json'}})"
        ".then(r => r.text()).then(done, e => done(String(e)));",
        server.url(path),
    )
    return json.loads(text)


def pending_in_file(server) -> int:
    return read_db(server.project_db, "SELECT COUNT(*) FROM memory_review_queue WHERE status = 'pending'")[0][
        0
    ]


def check_pending_badge(driver, server) -> None:
    """The Suggestions badge, as it is after the action (no reload), says what the file holds."""
    want = pending_in_file(server) or None
    wait_for(
        driver,
        lambda d: badge(d, "reviews") == want,
        lambda: f"Suggestions badge {badge(driver, 'reviews')}, the file holds {want}",
    )


def risky_badge_now(driver):
    """The Findings badge as it is after the action (no reload): once a write moved the files
    the tab holds a stand-in until its own fetch brings the fresh scan's count."""
    wait_for(
        driver,
        lambda d: not d.find_elements(By.CSS_SELECTOR, "nav#tabs a[data-tab=findings] [data-later]"),
        "the Findings badge never came back after the action",
    )
    return now(driver, lambda d: badge(d, "findings"), "the Findings badge")


def verdict(driver) -> str:
    """The finished job's verdict, read from the job as it is now (``finished_job`` waits)."""
    finished_job(driver)
    return now(driver, lambda d: css(d, ".job[data-job]").get_attribute("data-verdict"), "the verdict")


def check_agree(driver, server) -> dict:
    """Overview, Findings and twins against each other and against the files."""
    pending = pending_in_file(server)
    driver.get(server.url("/overview"))
    risky = wait_for(
        driver,
        lambda d: [
            int(s.get_attribute("data-count"))
            for s in d.find_elements(By.CSS_SELECTOR, "p[data-sentence=risky][data-count]")
        ],
        "the risky sentence never came",
    )[0]
    # The sentence's own answer redraws the header: the badge is the scan it was read from.
    wait_for(
        driver,
        lambda d: badge(d, "findings") == (risky or None),
        lambda: f"overview says {risky}, the Findings badge {badge(driver, 'findings')}",
    )
    waiting = now(
        driver,
        lambda d: int(css(d, "p[data-sentence=pending]").get_attribute("data-count")),
        "the pending sentence",
    )
    assert waiting == pending == (now(driver, lambda d: badge(d, "reviews"), "the Suggestions badge") or 0)

    driver.get(server.url("/findings"))
    wait_for(driver, htmx_settled)
    headline = "#finding-list [data-field=risky]"
    said = now(driver, lambda d: int(css(d, headline).get_attribute("data-count")), "the headline")
    assert said == risky == (now(driver, lambda d: badge(d, "findings"), "the Findings badge") or 0)
    findings = twin(driver, server, "/findings.json?per_page=1000")
    in_files = {(i["store"], i["table"], i["row_id"]) for i in findings["items"] if i["category"] in RISKY}
    assert findings["risky"]["count"] == len(in_files) == risky
    assert now(driver, lambda d: css(d, headline).text, "the headline") == findings["risky"]["text"]
    overview = twin(driver, server, "/overview.json")["counts"]
    assert (overview["risky"], overview["pending"]) == (risky, pending)
    assert twin(driver, server, "/reviews.json")["counts"]["pending"] == pending
    return {"risky": risky, "pending": pending}


def decide(driver, server, verb):
    driver.get(server.url("/reviews"))
    wait_for(driver, htmx_settled)
    # The first pending card, as it is now (its lazy effect replaces the whole card).
    item = now(
        driver,
        lambda d: css(d, "#review-list article.review[data-status=pending]").get_attribute("data-item-id"),
        "the first pending card",
    )
    click(driver, f"article[data-item-id='{item}'] button[data-action={verb}]")
    wait_for(
        driver,
        lambda d: (
            css(d, f"article[data-item-id='{item}']").get_attribute("data-status") == verb.rstrip("e") + "ed"
        ),
        f"the {verb} card was not replaced",
    )
    check_pending_badge(driver, server)
    return risky_badge_now(driver)


def test_every_count_agrees_after_each_action(browser):
    with serving(browser) as server:
        seen = check_agree(browser, server)
        assert seen == {"risky": 4, "pending": 4}

        for verb in ("approve", "reject"):
            shown = decide(browser, server, verb)
            seen = check_agree(browser, server)
            assert shown == (seen["risky"] or None)

        # Fix the flagged secret from the Findings page: its edit form, the value without it.
        browser.get(server.url("/findings?category=secret"))
        wait_for(browser, htmx_settled)
        secret = 'tr.finding[data-category="secret"]'
        memory = now(browser, lambda d: css(d, secret).get_attribute("data-row-id"), "the secret's row")
        click(browser, f'{secret} a[data-action="edit"]')
        field = wait_for(
            browser,
            lambda d: d.switch_to.active_element.tag_name == "textarea" and d.switch_to.active_element,
            "the value is not focused",
        )
        field.clear()
        field.send_keys(NEW_VALUE)
        click(browser, '#edit button[data-action="edit"], #edit-form button[data-action="edit"]')
        wait_for(
            browser,
            lambda d: (
                read_db(server.project_db, "SELECT content FROM memories WHERE id = ?", memory)[0][0]
                == NEW_VALUE
            ),
            "not saved",
        )
        # The save leaves for the memory's page (HX-Redirect): read its badge once it is in,
        # not the edit form's, which is idle too while the new page loads.
        wait_for(
            browser,
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "#memory-actions [data-field=done]") and htmx_settled(d)
            ),
            lambda: f"the memory's page did not come after the save: {browser.current_url}",
        )
        shown = risky_badge_now(browser)
        after = check_agree(browser, server)
        assert after["risky"] == seen["risky"] - 1 and shown == (after["risky"] or None)
        seen = after

        # Purge a flagged memory for good (the instruction aimed at the agent).
        flagged = next(
            i for i in twin(browser, server, "/findings.json")["items"] if i["category"] == "instruction"
        )
        browser.get(server.url(f"/forget/memory/{flagged['store']}/{flagged['row_id']}"))
        wait_for(browser, htmx_settled)
        phrase = now(browser, lambda d: css(d, "#purge-memory-form [data-field=phrase]").text, "the phrase")
        css(browser, "#forget-confirm").send_keys(phrase)
        click(browser, "#purge-memory-form button[type=submit]")
        assert verdict(browser) == "verified erased"
        # The files changed after the last scan: the badge follows with a fresh one.
        shown = risky_badge_now(browser)
        after = check_agree(browser, server)
        assert after["risky"] == seen["risky"] - 1 and shown == (after["risky"] or None)
        seen = after

        # Forget what is about me: the dry run, the typed phrase, the verified report.
        browser.get(server.url("/forget/about"))
        wait_for(browser, htmx_settled)
        phrase = now(browser, lambda d: css(d, "#about-form [data-field=phrase]").text, "the phrase")
        css(browser, "#about-confirm").send_keys(phrase)
        click(browser, "#about-form button[type=submit]")
        assert verdict(browser) == "verified erased"
        check_pending_badge(browser, server)  # its suggestions about you went with it
        shown = risky_badge_now(browser)
        after = check_agree(browser, server)
        assert after["pending"] < seen["pending"] and after["risky"] < seen["risky"]
        assert shown == (after["risky"] or None)
