"""The hostile-content corpus in a real browser: no script runs, no request fires.

tests/hostile.py plants its corpus through agentao (plus raw-SQL bytes); this
module adds payloads whose success a browser can observe directly: they set
``window.__pwned``, change ``document.title``, or ask for ``/marker``.  Before
any page script, a recorder (injected through the DevTools protocol, which the
page's CSP does not govern) notes every fetch/XHR and turns ``alert`` into a
flag.  Every HTML page the app serves is visited (half here, half in
test_hostile_content_2.py) — discovered from its url_map, so a new screen is
covered without editing this file.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hostile import plant
from selenium.webdriver.common.by import By

from .conftest import (
    DESKTOP,
    PHONE,
    Agent,
    axe_in_every_page,
    axe_problems,
    both_widths,
    close_agent,
    console_problems,
    first_row,
    half,
    html_pages,
    htmx_settled,
    layout_problems,
    resource_urls,
    screenshot,
    serving,
    wait_for,
)

BROWSER_PAYLOADS = {
    "b_script": "<script>window.__pwned = 1; document.title = 'pwned'</script>",
    "b_img": '<img src="/marker-img" onerror="window.__pwned = 2">',
    "b_svg": "<svg><script>window.__pwned = 3</script></svg><svg onload=\"fetch('/marker-svg')\">",
    "b_hx_load": '<div hx-get="/marker-hx" hx-trigger="load" hx-swap="outerHTML">m</div>',
    "b_hx_data": '<p data-hx-get="/marker-data-hx" data-hx-trigger="load">m</p>',
    "b_hx_on": '<b hx-on::load="window.__pwned = 4">m</b>',
    "b_breakout": '"><img src=/marker-attr onerror=window.__pwned=5><"',
    "b_style": "<style>body{background:url(/marker-css)}</style>",
}
MARKERS = ("marker", "pwn", "evil.example")
# Runs in every document before its own scripts; the CSP does not apply to it.
RECORDER = """
window.__requests = [];
const open = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (method, url) {
  window.__requests.push(String(url)); return open.apply(this, arguments); };
const realFetch = window.fetch;
window.fetch = function (url) { window.__requests.push(String(url)); return realFetch.apply(this, arguments); };
window.alert = window.confirm = window.prompt = function () { window.__pwned = 'dialog'; };
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    agent = Agent(tmp_path_factory.mktemp("hostile-browser"))
    planted = plant(agent)
    for i, (name, text) in enumerate(BROWSER_PAYLOADS.items()):
        memory = agent.save(
            f"{name} {text[:40]}", text, tags=[text[:30], name], scope="user" if i % 2 else "project"
        )
        planted[name] = ("user" if i % 2 else "project", memory.id)
    agent.crystallize(
        "I prefer " + BROWSER_PAYLOADS["b_script"] + " always.",
        "We must never " + BROWSER_PAYLOADS["b_hx_load"],
    )
    agent.summary(BROWSER_PAYLOADS["b_img"] + BROWSER_PAYLOADS["b_hx_load"], session_id="hostile")
    close_agent(agent)
    return agent, planted


@pytest.fixture(scope="module")
def server(corpus, browser):
    agent, _ = corpus
    recorder = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    with serving(browser, agent) as srv:
        yield srv
    browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", recorder)


def pages(corpus, which: int) -> list[str]:
    """Half ``which`` (see ``half``: this file walks the first, test_hostile_content_2.py the
    second) of: every list page once; each memory page kind (detail, edit what-if, forget
    one) with several payloads, each payload on one of them, in turn.

    The list pages show every planted row, and tests/test_hostile.py checks the HTML
    of every page for every payload; here the browser adds what runs.
    """
    agent, planted = corpus
    app = agent.app()
    item = first_row(agent.project_db, "SELECT id FROM memory_review_queue")[0]
    wanted = [planted[name] for name in [*BROWSER_PAYLOADS, "raw_bytes", "raw_json"]]
    queries = {"/preview": "?q=pwn+script+marker+alert"}
    one_per_store = list({store: (store, memory_id) for store, memory_id in wanted}.values())
    assert len(one_per_store) == 2  # the store-keyed pages (residue, dry run) for both stores
    urls = [
        u
        for u in html_pages(app, one_per_store, item, queries)
        if not any(memory_id in u for _, memory_id in one_per_store)
    ]
    for turn, memory in enumerate(wanted):
        own = [u for u in html_pages(app, [memory], item, queries) if memory[1] in u]
        urls.append(own[turn % len(own)])
    urls += ["/memories?q=pwn&deleted=1", "/reviews?status=approved", "/reviews?status=rejected"]
    assert len(urls) >= 25, urls
    return half(urls, which, [memory_id for _, memory_id in planted.values()] + [item])


def walk(browser, server, corpus, which: int) -> None:
    seen, inaccessible = [], []
    with axe_in_every_page(browser):
        for path in pages(corpus, which):
            for size in both_widths(browser, server.url(path)):
                if size == DESKTOP:
                    state = browser.execute_script(
                        "return {pwned: window.__pwned, title: document.title, requests: window.__requests,"
                        " text: document.body.innerText}"
                    )
                    assert state["requests"] is not None, "the request recorder did not run"
                    assert state["pwned"] is None, (path, state["pwned"])
                    assert state["title"].endswith("· agentao memory dashboard"), (path, state["title"])
                    fired = [
                        u
                        for u in state["requests"] + resource_urls(browser)
                        if any(m in u.lower() for m in MARKERS)
                    ]
                    assert not fired, (path, fired)
                    problems = console_problems(browser)
                    assert not problems, (path, problems)
                    seen.append(state["text"])
                # Hostile text must not break the page for people either: axe-core (serious and
                # critical WCAG 2.1 A/AA violations) at both widths, and the phone layout's measures.
                extra = layout_problems(browser) if size == PHONE else []
                inaccessible += [f"{path} @{size[0]}: {p}" for p in axe_problems(browser) + extra]
            assert browser.execute_script("return window.__pwned") is None, path
    # The recorder does see htmx requests (a search), so silence above means none fired.
    browser.get(server.url("/memories"))
    wait_for(browser, htmx_settled)
    browser.find_element(By.ID, "f-q").send_keys("zzz")
    wait_for(
        browser,
        lambda d: any("q=zzz" in u for u in d.execute_script("return window.__requests")),
        "recorder is blind",
    )
    # The payloads were there to be tried: the pages showed them as text.
    shown = "\n".join(seen)
    for text in (BROWSER_PAYLOADS["b_script"], BROWSER_PAYLOADS["b_hx_load"]):
        assert text in shown, text
    assert not inaccessible, "\n".join(inaccessible)


def test_no_payload_runs_and_no_request_fires_on_the_first_half_of_the_pages(browser, server, corpus):
    walk(browser, server, corpus, 0)


def test_boosted_navigation_through_hostile_pages_fires_nothing(browser, server):
    # Clicking the header's links swaps each page in with htmx (hx-boost): the
    # swapped-in memory text goes through htmx's processing, not the parser's.
    browser.get(server.url("/overview"))
    wait_for(browser, htmx_settled)
    browser.execute_script("window.__samePage = true")
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "header nav a")]
    assert len(links) >= 6
    for href in links:
        browser.find_element(By.CSS_SELECTOR, f"header nav a[href='{urlsplit(href).path}']").click()
        wait_for(
            browser, lambda d, href=href: d.current_url == href and htmx_settled(d), f"never reached {href}"
        )
        assert browser.execute_script("return window.__samePage") is True, f"{href} was a full load"
    state = browser.execute_script("return {pwned: window.__pwned, requests: window.__requests}")
    assert state["pwned"] is None
    fired = [u for u in state["requests"] + resource_urls(browser) if any(m in u.lower() for m in MARKERS)]
    assert not fired, fired


def test_hostile_list_and_review_pages_look_like_text(browser, server):
    browser.get(server.url("/memories?q=marker"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#memory-list tr.memory")
    assert len(rows) >= 4
    assert not browser.find_elements(
        By.CSS_SELECTOR, "#memory-list img, #memory-list svg, #memory-list style, #memory-list script"
    )
    screenshot(browser, "hostile-memories")
    browser.get(server.url("/reviews"))
    assert not browser.find_elements(By.CSS_SELECTOR, "#review-list script, #review-list img")
    screenshot(browser, "hostile-reviews")
    assert browser.execute_script("return window.__pwned") is None
