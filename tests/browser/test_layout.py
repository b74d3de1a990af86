"""Every page at 1280 px and at 360 px, every control labelled (the first half of the pages
here, the second in test_layout_2.py), and the project switcher.

The server shows two projects sharing one user store, as ``--project A
--project B`` would; with SCREENSHOTS=1 in the environment, screenshots of each page at
both sizes are saved under test-artifacts/screenshots/.
"""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from .conftest import (
    DESKTOP,
    NARROW,
    first_row,
    half,
    html_pages,
    htmx_settled,
    login,
    screenshot,
    set_size,
    wait_for,
)

SCROLL_TOLERANCE = 2  # px: sub-pixel rounding, not a layout that overflows
UNLABELLED = """
return [...document.querySelectorAll('input, select, textarea')]
  .filter(e => e.type !== 'hidden')
  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
               && !e.getAttribute('aria-labelledby'))
  .map(e => e.outerHTML.slice(0, 120));
"""


@pytest.fixture(scope="module")
def server(workspace, browser):
    login(browser, workspace)
    return workspace


@pytest.fixture
def two_projects(workspace):
    return workspace.agent, workspace.other


def pages(main, which: int) -> list[str]:
    """Half ``which`` of the pages (see ``half``): this file walks the first, test_layout_2.py
    the second."""
    project_memory = first_row(main.project_db, "SELECT id FROM memories WHERE deleted_at IS NULL")[0]
    user_memory = first_row(main.user_db, "SELECT id FROM memories")[0]
    item = first_row(main.project_db, "SELECT id FROM memory_review_queue")[0]
    app = main.app()
    urls = html_pages(app, [("project", project_memory), ("user", user_memory)], item)
    assert {"/overview", "/projects", "/reviews", "/forget"} <= {u.split("?")[0] for u in urls}
    return half(urls, which, [project_memory, user_memory, item])


def slug(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.split("?")[0].lower()).strip("-") or "root"


def walk(browser, server, two_projects, which: int) -> None:
    too_wide, unlabelled, names = {}, {}, set()
    for path in pages(two_projects[0], which):
        set_size(browser, DESKTOP)
        browser.get(server.url(path))
        wait_for(browser, htmx_settled, f"htmx never settled on {path}")
        name = slug(path)
        name = name if name not in names else f"{name}-{len(names)}"
        names.add(name)
        screenshot(browser, name, sizes=[DESKTOP], restore=False)
        missing = browser.execute_script(UNLABELLED)
        if missing:
            unlabelled[path] = missing

        set_size(browser, NARROW)
        assert browser.execute_script("return window.innerWidth") == NARROW[0]
        width = browser.execute_script("return document.documentElement.scrollWidth")
        if width > NARROW[0] + SCROLL_TOLERANCE:
            too_wide[path] = (width, browser.execute_script(WIDEST))
        screenshot(browser, name, sizes=[NARROW], restore=False)
    set_size(browser, DESKTOP)
    assert not unlabelled, f"form controls without a label: {unlabelled}"
    assert not too_wide, f"pages that scroll sideways at 360 px (width, widest element): {too_wide}"


def test_first_half_of_the_pages_fits_360_px_and_labels_every_control(browser, server, two_projects):
    walk(browser, server, two_projects, 0)


# What sticks out furthest on the right, to make a failure actionable.
WIDEST = """
let worst = null, right = 0;
for (const e of document.querySelectorAll('body *')) {
  const r = e.getBoundingClientRect().right;
  if (r > right) { right = r; worst = e; }
}
return worst ? [Math.round(right), worst.tagName + (worst.id ? '#' + worst.id : '')
                + (worst.className ? '.' + String(worst.className).split(' ')[0] : '')] : null;
"""


def listed_keys(browser) -> set[str]:
    return {
        r.get_attribute("data-key") for r in browser.find_elements(By.CSS_SELECTOR, "#memory-list tr.memory")
    }


def test_switching_projects_in_the_header(browser, server, two_projects):
    import sqlite3

    conn = sqlite3.connect(f"file:{two_projects[0].user_db}?mode=ro", uri=True)
    user_keys = {k for (k,) in conn.execute("SELECT key_normalized FROM memories WHERE deleted_at IS NULL")}
    conn.close()
    browser.get(server.url("/memories"))
    first = listed_keys(browser)
    assert "package_manager" in first and "frontend_stack" not in first
    switcher = Select(browser.find_element(By.ID, "project-switch"))
    assert len(switcher.options) == 2
    switcher.select_by_index(1)
    browser.find_element(By.CSS_SELECTOR, "#project-switcher button[type=submit]").click()

    wait_for(browser, lambda d: "frontend_stack" in listed_keys(d), "the second project never showed")
    second = listed_keys(browser)
    assert "package_manager" not in second, "the first project's memories are still listed"
    # The user store is shared: its memories are listed under both projects.
    assert user_keys and user_keys <= first and user_keys <= second
    assert browser.current_url.endswith("/memories")
    selected = Select(browser.find_element(By.ID, "project-switch")).first_selected_option
    assert selected.get_attribute("value") == "1"
    screenshot(browser, "memories-second-project")

    # Back to the first; the choice holds as one moves between pages.
    Select(browser.find_element(By.ID, "project-switch")).select_by_index(0)
    browser.find_element(By.CSS_SELECTOR, "#project-switcher button[type=submit]").click()
    wait_for(browser, lambda d: "package_manager" in listed_keys(d), "switching back failed")
    browser.find_element(By.CSS_SELECTOR, "header nav a[href$='/overview']").click()
    wait_for(browser, lambda d: d.current_url.endswith("/overview"))
    assert (
        Select(browser.find_element(By.ID, "project-switch")).first_selected_option.get_attribute("value")
        == "0"
    )


# WCAG 2 contrast of every element that shows its own text, against the first
# opaque background behind it (SVG charts are left out: their colours are fills).
LOW_CONTRAST = """
const parse = c => (c.match(/[\\d.]+/g) || []).map(Number);
const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92
                                                   : Math.pow((v + 0.055) / 1.055, 2.4); };
                             return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const background = e => { for (; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
                                                          if (c.length === 3 || c[3] > 0.5) return c; }
                          return [255, 255, 255]; };
const bad = [];
for (const e of document.querySelectorAll('body *')) {
  if (e.closest('svg') || !e.checkVisibility()) continue;
  if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
  const s = getComputedStyle(e), fg = parse(s.color), bg = background(e);
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  const ratio = (hi + 0.05) / (lo + 0.05);
  const large = parseFloat(s.fontSize) >= 24 || parseFloat(s.fontSize) >= 18.66 && s.fontWeight >= 700;
  if (ratio < (large ? 3 : 4.5)) bad.push([e.tagName + '.' + e.className, ratio.toFixed(2),
                                           e.textContent.trim().slice(0, 30)]);
}
return bad.slice(0, 10);
"""


def test_text_contrast_meets_wcag_aa(browser, server, two_projects):
    low = {}
    for path in [
        "/overview",
        "/memories?deleted=1",
        "/summaries",
        "/findings",
        "/reviews",
        "/forget",
        "/export",
        "/preview?q=which+port+for+service+03",
        "/projects",
    ]:
        browser.get(server.url(path))
        wait_for(browser, htmx_settled)
        found = browser.execute_script(LOW_CONTRAST)
        if found:
            low[path] = found
    assert not low, f"text below WCAG AA contrast (element, ratio, text): {low}"
