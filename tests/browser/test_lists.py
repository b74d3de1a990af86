"""The memories list, About you and the filters as a person uses them (#31 items 3, 7, 9), in a
real browser at 1280×900 and 390×844, in English and in Chinese.

* Rows lead with what the memory says; its key sits beside it, small and exact, and on a
  phone it wraps only between its words (after a "_"), never inside one.
* Each row deletes its memory where it is listed (Undo in its place, the result in the
  status line) and links to "forget for good"; both journeys are counted (Journey).
* The search box shows its whole placeholder, every filter label stays beside its field,
  a change applies without a button, and the bulk action starts at nothing chosen.

The stores are written by the real agentao; what a click changed is read from the files.
"""

from __future__ import annotations

import pytest
from agentao_world import Agent
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .conftest import (
    DESKTOP,
    PHONE,
    Journey,
    htmx_settled,
    in_viewport,
    read_db,
    screenshot,
    seed,
    serving,
    set_size,
    wait_for,
)

LONG_KEY = "decision use dramatiq instead of celery for background jobs"
LONG_VALUE = "We use Dramatiq instead of Celery for background jobs: fewer moving parts."
PHONE_VALUE = "My phone number is +1 415 555 0177."

SIDEWAYS = "return document.documentElement.scrollWidth - window.innerWidth"

# Every key shown in a row: its text, its font size against the value's, and every word of
# it (the text between two "_" line-break chances) that the browser laid out on more than
# one line.
KEYS = """
const out = [];
for (const lead of document.querySelectorAll(arguments[0])) {
  const key = lead.querySelector('code.key'), says = lead.querySelector('a.says');
  if (!key || !says) { out.push({missing: lead.outerHTML.slice(0, 200)}); continue; }
  const broken = [];
  const walk = document.createTreeWalker(key, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const range = document.createRange(); range.selectNodeContents(n);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (lines.size > 1) broken.push(n.textContent);
  }
  const first = [...lead.querySelectorAll('a, code')].filter(e => e.offsetParent !== null)[0];
  out.push({key: key.textContent, broken,
            smaller: parseFloat(getComputedStyle(key).fontSize) < parseFloat(getComputedStyle(says).fontSize),
            leads: first === says, says: says.textContent});
}
return out;
"""

# A label and the field it names: on one line, the label just before the field; or (a phone's
# search box) the label right above the field, at its left edge.
PAIRED = """
const label = document.querySelector('label[for="' + arguments[0] + '"]');
const field = document.getElementById(arguments[0]);
const l = label.getBoundingClientRect(), f = field.getBoundingClientRect();
const middle = l.top + l.height / 2;
const above = l.bottom <= f.top + 1 && f.top - l.bottom < 12 && Math.abs(l.left - f.left) < 4;
return {beside: middle > f.top && middle < f.bottom && l.right <= f.left + 1 && f.left - l.right < 24,
        above, visible: l.width > 0 && f.width > 0};
"""


def paired(browser, field: str) -> bool:
    pair = browser.execute_script(PAIRED, field)
    return pair["visible"] and (pair["beside"] or pair["above"] and field == "f-q")


# Whether the search box shows its whole placeholder: its text width in the box's own font.
PLACEHOLDER = """
const box = document.getElementById('f-q'), style = getComputedStyle(box);
const ctx = document.createElement('canvas').getContext('2d');
ctx.font = style.font;
const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
// less the room Chromium keeps for the search box's clear button (about 20 px)
return {room: room - 20, needs: ctx.measureText(box.placeholder).width, width: box.getBoundingClientRect().width};
"""


@pytest.fixture(scope="module")
def own(browser, tmp_path_factory):
    """A server of its own over an agentao corpus: this module deletes, restores and erases."""
    agent = seed(Agent(tmp_path_factory.mktemp("lists")))
    agent.save(LONG_KEY, LONG_VALUE, ["decision"], type="decision")
    agent.save("user phone", PHONE_VALUE, ["profile"], scope="user")
    for n in range(2):
        agent.save(f"throwaway note {n}", f"A note to forget for good, number {n}.", ["scratch"])
    with serving(browser, agent) as server:
        yield server


@pytest.fixture(scope="module")
def chinese(browser, tmp_path_factory):
    agent = seed(Agent(tmp_path_factory.mktemp("lists-zh")))
    agent.save("user phone", PHONE_VALUE, ["profile"], scope="user")
    with serving(browser, agent, extra=["--lang", "zh_Hans_CN"]) as server:
        yield server


def open_page(browser, server, path, size):
    set_size(browser, size)
    browser.get(server.url(path))
    wait_for(browser, htmx_settled, "htmx did not load")


def row(browser, where: str, memory_id: str):
    return browser.find_element(By.CSS_SELECTOR, f'{where} tr[data-memory-id="{memory_id}"]')


def said(browser) -> str:
    return browser.find_element(By.ID, "status").text


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_rows_lead_with_what_the_memory_says(browser, own, size):
    for path, leads in (("/memories", "#memory-list td.lead"), ("/about", "#about-memories td.lead")):
        open_page(browser, own, path, size)
        shown = browser.execute_script(KEYS, leads)
        assert shown and all("missing" not in s for s in shown), shown
        assert all(s["leads"] and s["smaller"] for s in shown), (path, size, shown)
        assert not [s for s in shown if s["broken"]], f"a key broke inside a word at {size}: {shown}"
        assert browser.execute_script(SIDEWAYS) <= 0, (path, size)
        keys = {s["key"]: s["says"] for s in shown}
        if path == "/memories":
            assert keys["decision_use_dramatiq_instead_of_celery_for_background_jobs"] == LONG_VALUE
            long_key = browser.find_element(By.CSS_SELECTOR, 'tr[data-key^="decision_use"] code.key')
            if size == PHONE:  # the long key wraps on the card, only between its words
                assert long_key.size["height"] > 1.5 * float(
                    long_key.value_of_css_property("line-height")[:-2]
                )
            screenshot(browser, f"lists-memories-{size[0]}", sizes=(size,), restore=False)
        else:
            assert keys["user_phone"] == PHONE_VALUE
            screenshot(browser, f"lists-about-{size[0]}", sizes=(size,), restore=False)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_delete_from_the_row_then_undo(browser, own, size):
    db = own.agent.project_db
    [(memory_id,)] = read_db(db, "SELECT id FROM memories WHERE key_normalized LIKE 'decision_use%'")
    open_page(browser, own, "/memories?q=Dramatiq", size)
    browser.execute_script("window.__samePage = true")
    j = Journey(browser, "delete a memory from the list and undo it")
    j.click(row(browser, "#memory-list", memory_id).find_element(By.CSS_SELECTOR, "[data-action=delete]"))
    wait_for(browser, lambda d: "Deleted '" in said(d), lambda: f"the delete said {said(browser)!r}")
    wait_for(browser, htmx_settled)
    deleted = row(browser, "#memory-list", memory_id)
    assert deleted.get_attribute("data-deleted") == "1"
    assert deleted.find_element(By.CSS_SELECTOR, "[data-badge=deleted]").is_displayed()
    assert read_db(db, "SELECT deleted_at IS NOT NULL FROM memories WHERE id = ?", memory_id) == [(1,)]
    assert browser.execute_script("return window.__samePage === true"), "the list was reloaded"
    assert in_viewport(browser, browser.find_element(By.ID, "status")), "the result is out of view"
    # The Undo is where the Delete button was, with the keyboard on it: Enter brings it back.
    undo = wait_for(
        browser,
        lambda d: (
            d.switch_to.active_element.get_attribute("data-action") == "restore"
            and d.switch_to.active_element
        ),
        "focus is not on the Undo",
    )
    assert undo.text == "Undo" and in_viewport(browser, undo)
    screenshot(browser, f"lists-deleted-{size[0]}", sizes=(size,), restore=False)
    j.key(undo, Keys.ENTER)
    wait_for(browser, lambda d: "Restored '" in said(d), lambda: f"the undo said {said(browser)!r}")
    wait_for(browser, htmx_settled)
    assert row(browser, "#memory-list", memory_id).get_attribute("data-deleted") == "0"
    assert read_db(db, "SELECT deleted_at FROM memories WHERE id = ?", memory_id) == [(None,)]
    record = j.done()
    assert (record["clicks"], record["keys"]) == (1, 1), record


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_delete_on_about_you_then_undo(browser, own, size):
    user_db = own.agent.user_db
    [(memory_id,)] = read_db(user_db, "SELECT id FROM memories WHERE key_normalized = 'user_phone'")
    open_page(browser, own, "/about", size)
    j = Journey(browser, "delete a memory on About you and undo it")
    j.click(row(browser, "#about-memories", memory_id).find_element(By.CSS_SELECTOR, "[data-action=delete]"))
    wait_for(browser, lambda d: "Deleted 'user phone'" in said(d), lambda: said(browser))
    wait_for(browser, htmx_settled)
    assert read_db(user_db, "SELECT deleted_at IS NOT NULL FROM memories WHERE id = ?", memory_id) == [(1,)]
    undo = row(browser, "#about-memories", memory_id).find_element(By.CSS_SELECTOR, "[data-action=restore]")
    assert undo == browser.switch_to.active_element and in_viewport(browser, undo)
    screenshot(browser, f"lists-about-deleted-{size[0]}", sizes=(size,), restore=False)
    j.click(undo)
    wait_for(browser, lambda d: "Restored 'user phone'" in said(d), lambda: said(browser))
    assert read_db(user_db, "SELECT deleted_at FROM memories WHERE id = ?", memory_id) == [(None,)]
    record = j.done()
    assert (record["clicks"], record["keys"]) == (2, 0), record


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_forget_for_good_from_the_row(browser, own, size):
    db = own.agent.project_db
    n = 0 if size == DESKTOP else 1
    [(memory_id, title)] = read_db(
        db, "SELECT id, title FROM memories WHERE key_normalized = ?", f"throwaway_note_{n}"
    )
    open_page(browser, own, "/memories?q=throwaway", size)
    j = Journey(browser, "forget a memory for good from the list")
    j.click(
        row(browser, "#memory-list", memory_id).find_element(By.CSS_SELECTOR, "[data-action=forget-for-good]")
    )
    field = wait_for(browser, lambda d: d.find_elements(By.ID, "forget-confirm"), "no forget page")[0]
    j.type(field, title)
    j.click(browser.find_element(By.CSS_SELECTOR, "[data-action=purge-memory]"))
    wait_for(
        browser,
        lambda d: not read_db(db, "SELECT 1 FROM memories WHERE id = ?", memory_id),
        "the memory is still in the file",
        timeout=90,
    )
    record = j.done()
    # Before #31: open the memory, its "Forget for good…", the button (3 clicks).
    assert (record["clicks"], record["keys"]) == (2, len(title)), record


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_filters_read_whole_and_apply_on_change(browser, own, size):
    open_page(browser, own, "/memories", size)
    box = browser.execute_script(PLACEHOLDER)
    assert box["room"] >= box["needs"], f"the placeholder is cut at {size}: {box}"
    if size == DESKTOP:
        assert box["width"] >= 300, box
    else:
        browser.find_element(By.CSS_SELECTOR, "label[for=show-filters]").click()
    for field in ("f-q", "f-scope", "f-type", "f-source", "f-confidence", "f-tag", "f-sort"):
        assert paired(browser, field), (field, size, browser.execute_script(PAIRED, field))
    # The direction of the order stays on the line of "Order by" too.
    line = "const r = e => document.querySelector(e).getBoundingClientRect(); return [r(arguments[0]), r(arguments[1])];"
    label, order = browser.execute_script(line, "label[for=f-sort]", "#f-order")
    assert order["top"] < label["top"] + label["height"] / 2 < order["bottom"], (label, order)
    # The tag field shows while "Add a tag" is the chosen action (the bar stays short otherwise).
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "bulk-action")).select_by_value("tag")
    for field in ("bulk-action", "bulk-tag"):
        assert paired(browser, field), (field, size, browser.execute_script(PAIRED, field))
    # No "Show" button with JavaScript on: choosing applies at once, in place.
    assert not [
        b for b in browser.find_elements(By.CSS_SELECTOR, "#memory-filters button") if b.is_displayed()
    ]
    browser.execute_script("window.__samePage = true")
    Select(browser.find_element(By.ID, "f-scope")).select_by_value("user")
    wait_for(browser, lambda d: "scope=user" in d.current_url, "choosing a scope did not apply")
    wait_for(browser, htmx_settled)
    scopes = {r.get_attribute("data-scope") for r in browser.find_elements(By.CSS_SELECTOR, "tr.memory")}
    assert scopes == {"user"} and browser.execute_script("return window.__samePage === true")
    screenshot(browser, f"lists-filters-{size[0]}", sizes=(size,), restore=False)

    # The bulk action starts at nothing chosen; reviewing without one is refused, in words.
    action = Select(browser.find_element(By.ID, "bulk-action"))
    assert action.first_selected_option.get_attribute("value") == ""
    assert action.first_selected_option.text == "Choose an action…"
    browser.console_allows.append("status of 400")  # the refusal, provoked on purpose
    browser.find_element(By.CSS_SELECTOR, "#memory-list input.pick").click()
    browser.find_element(By.CSS_SELECTOR, "[data-action=bulk-review]").click()
    wait_for(browser, lambda d: "Choose what to do" in said(d), lambda: said(browser))
    assert not browser.find_elements(By.CSS_SELECTOR, "#bulk-apply")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_findings_labels_sit_with_their_selects(browser, own, size):
    open_page(browser, own, "/findings", size)
    for field in ("f-category", "f-store", "f-reach"):
        assert paired(browser, field), (field, size, browser.execute_script(PAIRED, field))
    assert not [
        b for b in browser.find_elements(By.CSS_SELECTOR, "#finding-filters button") if b.is_displayed()
    ]
    Select(browser.find_element(By.ID, "f-category")).select_by_value("personal")
    wait_for(browser, lambda d: "category=personal" in d.current_url, "choosing a kind did not apply")
    assert browser.execute_script(SIDEWAYS) <= 0
    screenshot(browser, f"lists-findings-filters-{size[0]}", sizes=(size,), restore=False)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_in_chinese(browser, chinese, size):
    open_page(browser, chinese, "/memories", size)
    shown = browser.execute_script(KEYS, "#memory-list td.lead")
    assert all(s["leads"] and not s["broken"] for s in shown), shown
    first = browser.find_element(By.CSS_SELECTOR, "#memory-list tr.memory td.row-actions")
    assert first.find_element(By.CSS_SELECTOR, "[data-action=delete]").text == "删除"
    assert first.find_element(By.CSS_SELECTOR, "[data-action=forget-for-good]").text == "彻底清除…"
    action = Select(browser.find_element(By.ID, "bulk-action"))
    assert action.first_selected_option.text == "选择操作…"
    if size == PHONE:
        browser.find_element(By.CSS_SELECTOR, "label[for=show-filters]").click()
    for field in ("f-q", "f-scope", "f-sort"):
        assert paired(browser, field), (field, size, browser.execute_script(PAIRED, field))
    box = browser.execute_script(PLACEHOLDER)
    assert box["room"] >= box["needs"], box
    assert browser.execute_script(SIDEWAYS) <= 0
    screenshot(browser, f"lists-memories-zh-{size[0]}", sizes=(size,), restore=False)
    open_page(browser, chinese, "/about", size)
    tools = browser.find_element(By.CSS_SELECTOR, "#about-memories td.row-actions")
    assert tools.find_element(By.CSS_SELECTOR, "[data-action=delete]").text == "删除"
    open_page(browser, chinese, "/findings", size)
    for field in ("f-category", "f-store", "f-reach"):
        assert paired(browser, field), (field, size, browser.execute_script(PAIRED, field))
    screenshot(browser, f"lists-findings-zh-{size[0]}", sizes=(size,), restore=False)
