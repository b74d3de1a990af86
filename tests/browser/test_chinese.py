"""Every demo page in Simplified Chinese at 1280×900 and 390×844 (#23; this file walks the
first half, test_chinese_2.py the second): chosen with the header's switcher, no English
UI word left in what a person reads, no text overflowing its box.  Memory text (``<bdi>``,
what ``|shown`` renders; a ``<textarea>``, which holds what the person typed or the stored
text to edit), prompt blocks (``data-prompt-block``), code and the names of files, tools and
products are left out: they are shown as stored, byte for byte.
"""

from __future__ import annotations

import json
import re

from selenium.webdriver.common.by import By

from .conftest import DESKTOP, both_widths, wait_for
from .test_accessibility import demo_pages

# Words that stay as they are in a Chinese page: names, not UI words.
NAMES = {
    "agentao",
    "sqlite",
    "json",
    "markdown",
    "jieba",
    "htmx",
    "cjk",
    "wal",
    "utc",
    "id",
    "url",
    "ctrl",
    "vacuum",
    "uv",
    "pypi",
    "neovim",
    "lazyvim",
    "postgresql",
    "httpx",
    "ruff",
    "memory",
    "stable",
    "context",
    "db",
    "md",
    "csv",
    "english",
    # agentao's two prompt block tags, <memory-stable> and <memory-context>: names, as sent
    "memory-stable",
    "memory-context",
    # products and standards a Chinese page names in Latin letters ("UTF-" is how the
    # word pattern below cuts "UTF-8")
    "api",
    "excel",
    "utf-",
    "ssd",
    # the key names the secret rule looks for, quoted as they appear in a file
    # ("API_KEY=…", "password: …")
    "key",
    "password",
}
# Names of more than one word, taken out of the text before its words are counted.
PHRASES = ("Time Machine",)
VISIBLE_TEXT = """
const root = document.body.cloneNode(true);
root.querySelectorAll('bdi, code, pre, kbd, samp, script, noscript, style, [data-prompt-block], option[lang],'
                      + ' .ctl, [hidden], .visually-hidden, #project-switch, #project-name, textarea').forEach(e => e.remove());
return root.innerText;
"""
OVERFLOWING = """
return [...document.querySelectorAll('button, label, th, td, a, .badge, .tag, summary, h1, h2, h3')]
  .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 2
               && getComputedStyle(e).overflowX === 'visible' && e.clientWidth > 0)
  .slice(0, 5).map(e => e.tagName + ': ' + e.textContent.trim().slice(0, 30));
"""


def english_words(text: str) -> list[str]:
    for phrase in PHRASES:
        text = text.replace(phrase, " ")
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text)
    return sorted({w for w in words if w.lower() not in NAMES})


def walk(browser, demo, which: int) -> None:
    browser.get(demo.url("/overview"))
    switch = browser.find_element(By.ID, "language-switch")
    switch.find_element(By.CSS_SELECTOR, "option[value='zh_Hans_CN']").click()
    browser.find_element(By.CSS_SELECTOR, "#language-switcher button").click()
    wait_for(
        browser,
        lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-Hans-CN",
        "the switcher did not switch the page to Chinese",
    )
    left, overflow = {}, {}
    # Each page loaded once: its words are read at 1280 px (the text is the same at any
    # width), its boxes measured at both widths (the phone layout is the stylesheet's).
    for path in demo_pages(demo, which):
        for size in both_widths(browser, demo.url(path)):
            if size == DESKTOP:
                assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-Hans-CN"
                if words := english_words(browser.execute_script(VISIBLE_TEXT)):
                    left[path] = words[:15]
            if spill := browser.execute_script(OVERFLOWING):
                overflow[f"{path} @{size[0]}"] = spill
    assert not left, "English left on Chinese pages:\n" + json.dumps(left, indent=1, ensure_ascii=False)
    assert not overflow, "text overflowing its box:\n" + json.dumps(overflow, indent=1, ensure_ascii=False)


def test_first_half_of_the_demo_pages_reads_in_chinese(browser, demo):
    walk(browser, demo, 0)
