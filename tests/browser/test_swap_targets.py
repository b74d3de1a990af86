"""In Chromium, a button's swap lands where the page means, whatever the row's id says.

The Approve/Reject buttons used to target ``#review-{{ id }}``: an item with
the id ``list`` (a valid id) replaced the whole queue with its card, one with
``a, body`` (raw SQL) swapped its answer over ``<body>``.
"""

from __future__ import annotations

import sqlite3

import pytest
from selenium.webdriver.common.by import By

from .conftest import Agent, close_agent, htmx_settled, read_db, seed, serving, wait_for

IDS = ["list", "a, body"]


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    agent = seed(Agent(tmp_path_factory.mktemp("targets")))
    close_agent(agent)
    conn = sqlite3.connect(agent.project_db)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(memory_review_queue)")]
    first = dict(zip(cols, conn.execute("SELECT * FROM memory_review_queue LIMIT 1").fetchone()))
    for n, item_id in enumerate(IDS):
        row = dict(first, id=item_id, key_normalized=f"target_{n}", title=f"Planted {n}")
        conn.execute(
            f"INSERT INTO memory_review_queue ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
    conn.commit()
    conn.close()
    with serving(browser, agent) as srv:
        yield srv


def card(browser, item_id):
    return next(
        a
        for a in browser.find_elements(By.CSS_SELECTOR, "article.review")
        if a.get_attribute("data-item-id") == item_id
    )


@pytest.mark.parametrize("item_id", IDS)
def test_reject_swaps_only_its_own_card(browser, server, item_id):
    browser.get(server.url("/reviews"))
    wait_for(browser, htmx_settled, "htmx did not load")
    cards_before = len(browser.find_elements(By.CSS_SELECTOR, "#review-list article.review"))
    if item_id != "list":  # a malformed id is refused with its 400, on purpose
        browser.console_allows.append("status of 400")
    card(browser, item_id).find_element(By.CSS_SELECTOR, "button[data-action=reject]").click()
    wait_for(browser, lambda d: card(d, item_id).get_attribute("data-outcome"), "no answer in the card")
    wait_for(browser, htmx_settled)
    assert browser.find_elements(By.CSS_SELECTOR, "header.top nav a")  # the page is still there
    assert len(browser.find_elements(By.CSS_SELECTOR, "#review-list article.review")) == cards_before
    outcome = card(browser, item_id).get_attribute("data-outcome")
    status = read_db(server.agent.project_db, "SELECT status FROM memory_review_queue WHERE id = ?", item_id)
    if item_id == "list":
        assert outcome == "rejected" and status == [("rejected",)]
    else:  # not an id the dashboard acts on: refused in the card, nothing changed
        assert outcome == "blocked" and status == [("pending",)]


def test_residue_report_lands_in_its_own_slot(browser, server):
    browser.get(server.url("/forget"))
    wait_for(browser, htmx_settled, "htmx did not load")
    browser.find_element(
        By.CSS_SELECTOR, '.store-residue[data-store="project"] a[data-action=residue]'
    ).click()
    slot = wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#residue-slot-project .residue"),
        "no residue report in the slot",
    )[0]
    assert slot.get_attribute("data-store") == "project"
    assert not browser.find_elements(By.CSS_SELECTOR, "#residue-slot-user .residue")
