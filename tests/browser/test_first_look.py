"""What a new user trips on at first sight of the demo: a word of a table broken in two
("preferenc" / "e"), and the answer to "Show what it will write" appearing below the fold."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from .conftest import DESKTOP, PHONE, broken_words, htmx_settled, in_viewport, set_size, wait_for


def test_about_you_and_the_preview_keep_every_word_of_their_tables_whole(browser, demo):
    set_size(browser, DESKTOP)
    broken = {}
    for path in ("/about", "/preview?q=how+do+I+deploy+the+service"):
        browser.get(demo.url(path))
        wait_for(browser, htmx_settled, f"htmx never settled on {path}")
        if found := broken_words(browser):
            broken[path] = found
    assert not broken, f"words broken across two lines at 1280 px: {broken}"


def test_what_a_new_memory_will_write_comes_into_view_when_asked(browser, demo):
    """The plan is drawn below the fields and the button, past the bottom of the window at
    both widths: asking for it brings its heading into view."""
    try:
        for size in (DESKTOP, PHONE):
            set_size(browser, size)
            browser.get(demo.url("/memories/new"))
            wait_for(browser, htmx_settled, "htmx never settled on /memories/new")
            browser.find_element(By.ID, "new-key").send_keys("coffee order")
            browser.find_element(By.ID, "new-value").send_keys("I drink my coffee black, no sugar.")
            browser.find_element(By.CSS_SELECTOR, "button[data-action=new-plan]").click()
            heading = wait_for(
                browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#new-plan h3"), "no plan was shown"
            )[0]
            wait_for(browser, htmx_settled)
            assert in_viewport(browser, heading), f"the plan is out of sight at {size[0]} px"
    finally:
        set_size(browser, DESKTOP)


def _language(browser, demo, code: str) -> None:
    browser.get(demo.url("/overview"))
    browser.find_element(By.CSS_SELECTOR, f"#language-switch option[value='{code}']").click()
    browser.find_element(By.CSS_SELECTOR, "#language-switcher button").click()
    wait_for(
        browser, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == code.replace("_", "-")
    )


def test_a_chinese_field_label_stays_on_one_line_on_a_phone(browser, demo):
    """Chinese may break between any two characters: the bulk bar's "操作" (Action) stood as
    "操" over "作" beside its menu at 390 px."""
    _language(browser, demo, "zh_Hans_CN")
    try:
        set_size(browser, PHONE)
        browser.get(demo.url("/memories"))
        wait_for(browser, htmx_settled)
        split = browser.execute_script("""
          return [...document.querySelectorAll('.bulk-bar .field > label, .filters .field > label')]
            .filter(l => l.offsetParent !== null && !/\\s/.test(l.textContent.trim()))
            .filter(l => { const r = document.createRange(); r.selectNodeContents(l);
                           return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })
            .map(l => l.textContent.trim());""")
        assert split == [], f"labels broken over two lines: {split}"
    finally:
        set_size(browser, DESKTOP)
        _language(browser, demo, "en")


def test_opening_the_edits_puts_the_unedited_approve_aside(browser, demo):
    """With "Approve with edits…" open and a new text typed, the blue Approve beside it saved
    the suggestion as it was, not as edited: while the edits are open it is not offered."""
    set_size(browser, DESKTOP)
    browser.get(demo.url("/reviews"))
    wait_for(browser, htmx_settled)
    card = browser.find_element(By.CSS_SELECTOR, "#review-list article.review.pending")
    approve = card.find_element(By.CSS_SELECTOR, "button[data-action=approve]")
    assert approve.is_displayed()
    card.find_element(By.CSS_SELECTOR, "details.edit-before > summary").click()
    wait_for(browser, lambda d: not approve.is_displayed(), "the unedited Approve is still offered")
    assert card.find_element(By.CSS_SELECTOR, "button[data-action=preview-edits]").is_displayed()
    card.find_element(By.CSS_SELECTOR, "details.edit-before > summary").click()  # closed again
    wait_for(browser, lambda d: approve.is_displayed(), "Approve did not come back")
