"""On a phone a memory titled by its key (agentao titles a memory by its raw key) wraps between
the key's words, never inside one ("…_in_en/glish"), in Activity and Preview, on the demo."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from .conftest import set_size

PHONE = (390, 844)
KEY = "preference_commit_messages_in_english"

# The character each rendered line of ``arguments[0]`` ends with: one Range a character.
LINE_ENDS = """
const ends = [];
let top = null, last = null;
const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (let i = 0; i < node.data.length; i++) {
    const range = document.createRange();
    range.setStart(node, i); range.setEnd(node, i + 1);
    const box = range.getClientRects()[0];
    if (!box) continue;
    if (top !== null && box.top > top + 2) ends.push(last);
    top = box.top; last = node.data[i];
  }
}
return ends;
"""


def test_a_long_key_wraps_at_its_underscores_on_a_phone(browser, demo):
    set_size(browser, PHONE)
    try:
        for path, where in (
            ("/activity?q=commit", "#activity-feed td.lead a"),
            ("/preview?q=commit", "a[id^=st-]"),
        ):
            browser.get(demo.url(path))
            [link] = [
                a for a in browser.find_elements(By.CSS_SELECTOR, where) if a.text.replace("\n", "") == KEY
            ][:1]
            ends = browser.execute_script(LINE_ENDS, link)
            assert ends, f"{path}: the key fits on one line at 390 px; nothing to check"
            assert set(ends) == {"_"}, f"{path}: lines of {KEY!r} end with {ends}"
    finally:
        set_size(browser, (1280, 900))
