"""What a person sees of the header, a memory's page, the forget page and the way in (#31,
items 8 and 10 and the start-up), on the demo at 1280×900 and 390×844, in English and Chinese.

The header: every tab and its count inside the window at once (no sideways strip), the
project and language controls with their labels shown, the header short, and the first
memory of the list on the first screen of a phone.  A memory's page: one link to forget it
for good, its history in words and dates.  The forget page: destructive buttons red, each
checkbox beside its words.  Getting in: the bare address and a used link answer a styled
page naming the command that prints a new link, and that link logs in once.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from selenium.webdriver.common.by import By

from .conftest import DESKTOP, PHONE, REPO, htmx_settled, screenshot, set_size, wait_for

RED = "rgba(180, 35, 24, 1)"  # button.danger's background (static/app.css)
HEADER = """
const h = document.querySelector('header.top').getBoundingClientRect();
const box = e => { const r = e.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom, w: r.width}; };
return {
  header: box(document.querySelector('header.top')), width: window.innerWidth,
  scroll: document.documentElement.scrollWidth,
  tabs: [...document.querySelectorAll('#tabs a')].map(a => ({tab: a.dataset.tab, ...box(a),
         count: a.querySelector('.count') ? box(a.querySelector('.count')) : null})),
  labels: [...document.querySelectorAll('header label')].map(l => ({text: l.textContent.trim(), ...box(l)})),
};
"""


def switch_language(browser, demo, code):
    browser.get(demo.url("/overview"))
    browser.find_element(By.CSS_SELECTOR, f"#language-switch option[value='{code}']").click()
    browser.find_element(By.CSS_SELECTOR, "#language-switcher button").click()
    wanted = "zh-Hans-CN" if code == "zh_Hans_CN" else "en"
    wait_for(browser, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == wanted)


@pytest.mark.parametrize("lang", ["en", "zh_Hans_CN"])
def test_every_tab_and_count_in_view_and_the_first_memory_on_the_first_screen(browser, demo, lang):
    switch_language(browser, demo, lang)
    for size in (DESKTOP, PHONE):
        set_size(browser, size)
        browser.get(demo.url("/memories"))
        wait_for(browser, htmx_settled)
        seen = browser.execute_script(HEADER)
        assert seen["scroll"] <= seen["width"] + 1, seen["scroll"]
        assert len(seen["tabs"]) == 12
        for tab in seen["tabs"]:
            # Inside the window and inside the header: seen without scrolling anything.
            assert tab["l"] >= 0 and tab["r"] <= seen["width"], (size, tab)
            assert tab["b"] <= seen["header"]["b"], (size, tab)
            if tab["count"]:
                assert tab["count"]["r"] <= seen["width"] and tab["count"]["w"] > 5, (size, tab)
        counted = {t["tab"] for t in seen["tabs"] if t["count"]}
        assert {"reviews", "findings"} <= counted
        assert {lb["text"] for lb in seen["labels"]} == (
            {"Project", "Language"} if lang == "en" else {"项目", "语言"}
        )
        assert all(lb["w"] > 10 and lb["r"] <= seen["width"] for lb in seen["labels"]), seen["labels"]
        assert seen["header"]["b"] <= (160 if size == PHONE else 150), seen["header"]
        row = browser.find_element(By.CSS_SELECTOR, "tr.memory")
        top = browser.execute_script("return arguments[0].getBoundingClientRect().top", row)
        inner = browser.execute_script("return window.innerHeight")
        assert top < inner - 80, f"first memory at {top}px on {size}"  # it starts in the first screen
        screenshot(browser, f"header-memories-{lang}", sizes=[size], restore=False)
    set_size(browser, DESKTOP)
    if lang != "en":
        switch_language(browser, demo, "en")


def test_a_memory_page_has_one_forget_link_and_a_history_in_words(browser, demo):
    for size in (DESKTOP, PHONE):
        set_size(browser, size)
        browser.get(demo.url("/memories"))
        browser.find_element(By.CSS_SELECTOR, "tr.memory a.says").click()
        wait_for(browser, lambda d: d.find_elements(By.ID, "memory-detail"))
        links = browser.find_elements(By.CSS_SELECTOR, "a[href*='/forget/memory/']")
        assert len(links) == 1 and links[0].value_of_css_property("background-color") == RED
        history = browser.find_element(By.ID, "events")
        assert "#" not in history.text
        for row in history.find_elements(By.CSS_SELECTOR, "tbody tr[data-event]"):
            assert re.search(r"20\d\d", row.text), row.text  # the date itself, not only "2 days ago"
        screenshot(browser, "memory-page", sizes=[size], restore=False)
    set_size(browser, DESKTOP)


def test_forget_page_destructive_buttons_and_checkboxes(browser, demo):
    for size in (DESKTOP, PHONE):
        set_size(browser, size)
        browser.get(demo.url("/forget"))
        for action in ("forget-everything", "wipe"):
            button = browser.find_element(By.CSS_SELECTOR, f"button[data-action={action}]")
            assert button.value_of_css_property("background-color") == RED, action
        for label in browser.find_elements(By.CSS_SELECTOR, "label.check"):
            box = label.find_element(By.CSS_SELECTOR, "input").rect
            words = browser.execute_script(
                "const r = document.createRange(); r.selectNodeContents(arguments[0]);"
                "const rs = [...r.getClientRects()].filter(x => x.width > 0 && x.left > arguments[1].x + 1);"
                "return rs.length ? {y: rs[0].top, x: rs[0].left} : null",
                label,
                box,
            )
            assert words is not None, label.text
            # The first line of words starts on the checkbox's line, just after it.
            assert abs(words["y"] - box["y"]) < box["height"] and words["x"] - box["x"] < 60, label.text
        assert "user store user store" not in browser.find_element(By.TAG_NAME, "main").text
        screenshot(browser, "forget-page", sizes=[size], restore=False)
    set_size(browser, DESKTOP)


def new_link(server) -> str:
    port = re.search(r":(\d+)/", server.base).group(1)
    made = subprocess.run(
        [sys.executable, "-m", "dashboard", "link", "--port", port],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    return re.search(r"http://\S+/login\?code=\S+", made.stdout).group(0)


def test_the_bare_address_and_a_used_link_say_how_to_get_in(browser, demo):
    started = "".join(demo.output)
    assert "it logs you in once" in started and "agentao-memory-dashboard link" in started
    root = demo.base.rsplit("/", 1)[0] + "/"  # http://127.0.0.1:<port>/, without the random path
    browser.console_allows = ["status of 403"]  # the two refusals this test opens on purpose
    browser.get(root)
    for size in (DESKTOP, PHONE):
        set_size(browser, size)
        page = browser.find_element(By.ID, "denied")
        command = browser.find_element(By.CSS_SELECTOR, "#new-link pre.command")
        assert command.text == "agentao-memory-dashboard link" and command.is_displayed()
        # Styled: app.css loaded (the cards' border), nothing wider than the window.
        card = browser.find_element(By.ID, "new-link")
        assert card.value_of_css_property("border-top-style") == "solid"
        assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0] + 1
        assert page.get_attribute("data-status") == "403"
        screenshot(browser, "login-bare-address", sizes=[size], restore=False)
    set_size(browser, DESKTOP)

    link = new_link(demo)
    browser.get(link)
    wait_for(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "header.top nav#tabs"),
        "the new link did not log in",
    )
    browser.delete_all_cookies()
    browser.get(link)  # the same link again: spent
    message = browser.find_element(By.CSS_SELECTOR, "#denied .error-message").text
    assert "already been used" in message
    assert browser.find_element(By.CSS_SELECTOR, "#new-link pre.command").is_displayed()
    screenshot(browser, "login-used-link", sizes=[DESKTOP, PHONE])
    browser.get(new_link(demo))  # and back in, for whatever runs next
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "header.top nav#tabs"))
