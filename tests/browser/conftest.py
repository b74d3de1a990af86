"""Real-browser fixtures: the dashboard as a user starts it, Debian's Chromium driving it.

The server is the real command line (``python -m dashboard ... --port 0 --token``)
in a subprocess, over stores written by the real agentao; the browser opens
the printed one-time link (``/<prefix>/login?code=…``) exactly as a person's
browser would, and later logins type the token into the login form.
After every test the browser's console is read: any error, and any Content
Security Policy refusal, fails the test that caused it.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # tests/agentao_world.py and tests/hostile.py

from agentao_world import Agent, seed_corpus  # noqa: E402  (the real agentao MemoryManager)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TOKEN = "browser-tests-fixed-token-0123456789"
ARTIFACTS = REPO / "test-artifacts" / "screenshots"
SAVE_SCREENSHOTS = os.environ.get("SCREENSHOTS") == "1"  # see screenshot()
DESKTOP = (1280, 900)
NARROW = (360, 800)
WAIT = 30  # seconds: generous for a busy 2-core machine three times slower; never reached when all works

os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager try to download


# -- the server ----------------------------------------------------------------------------


class Server:
    """``python -m dashboard`` in a subprocess; ``url(path)`` builds addresses on it."""

    def __init__(self, projects, user_db, extra=()):
        args = [sys.executable, "-m", "dashboard", "--port", "0", "--token", TOKEN, "--threads", "4"]
        for p in projects:
            args += ["--project", str(p)]
        if projects:  # no projects: ``extra`` says what to show (``--demo``)
            args += ["--user-db", str(user_db)] if user_db else ["--no-user-db"]
        self.proc = subprocess.Popen(
            [*args, *extra], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        self.output: list[str] = []
        self.link = self._wait_for_url()  # works once; login() spends it
        # ``--demo`` prints its folder before the URL: its two stores, read-only, for the tests.
        self.demo_root = next(
            (Path(m.group(1)) for line in self.output if (m := re.search(r"Demo data: (\S+)", line))), None
        )
        if self.demo_root is not None:
            self.project_db = self.demo_root / "demo-project" / ".agentao" / "memory.db"
            self.user_db = self.demo_root / "home" / ".agentao" / "memory.db"
        # Every page lives under the random path drawn at this start.
        self.base = self.link.split("?")[0].rpartition("/")[0]
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.output.append(line)
            found = re.search(r"http://[^/\s]+/\S*/login\?code=\S+", line)
            if found:
                assert TOKEN not in line, line  # the long-lived token never goes in a URL
                return found.group(0)
        self.stop()
        raise RuntimeError("the dashboard did not print its URL:\n" + "".join(self.output))

    def _drain(self):
        for line in self.proc.stdout:
            self.output.append(line)

    def url(self, path: str = "/") -> str:
        return self.base + path

    def login_url(self) -> str | None:
        """The printed one-time link the first time, then None (it is dead once used)."""
        link, self.link = self.link, None
        return link

    def stop(self):
        # A page of this server left open keeps polling its live pulse every 2 s: leave it
        # first, or the poll that meets the stopped server is a console error in the test
        # that happens to be running (the pages' own behaviour, not the test's).
        driver = getattr(self, "driver", None)
        if driver is not None:
            try:
                if driver.current_url.startswith(self.base):
                    driver.get("about:blank")
            except Exception:  # noqa: BLE001 - a browser already gone has no page to leave
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def close_agent(agent: Agent) -> None:
    """Close agentao's connections so no -wal lingers beside the files the server reads."""
    for store in (agent.project_store, agent.user_store):
        if store is not None:
            store.close()


def fresh_candidate(server, text: str) -> str:
    """A new pending review item, proposed by agentao's crystallizer from ``text``; its id."""
    agent = Agent(server.agent.project_dir.parent)
    try:
        [item] = agent.crystallize(text)
        return item.id
    finally:
        close_agent(agent)


# -- the browser ---------------------------------------------------------------------------


def start_browser():
    """Headless Chromium through Debian's matching chromedriver; fails loudly when missing."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.fail(
            f"Real-browser tests need Debian's Chromium: {', '.join(missing)} not found. "
            "Install with: apt-get install chromium chromium-driver (.ci/run does this).",
            pytrace=False,
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="dashboard-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    # Generous: at a load of 25 on two cores a page took over 30 s (chromedriver's "Timed out
    # receiving message from renderer"); a page that works is never near it.
    driver.set_page_load_timeout(120)
    driver.profile_dir = profile
    return driver


def quit_browser(driver) -> None:
    driver.quit()
    shutil.rmtree(driver.profile_dir, ignore_errors=True)


def console_problems(driver, allowed=()) -> list[str]:
    """Console errors and CSP refusals since the last call (reading the log empties it).

    ``allowed`` holds substrings of errors a test provoked on purpose (say, the
    "status of 400" a refused form leaves); a CSP refusal is never allowed.
    """
    bad = []
    for entry in driver.get_log("browser"):
        message = entry.get("message", "")
        csp = "Content Security Policy" in message or "Refused to" in message
        if csp or entry.get("level") == "SEVERE" and not any(a in message for a in allowed):
            bad.append(f"{entry.get('level')}: {message}")
    return bad


@pytest.fixture(scope="session")
def browser():
    # One Chromium for the whole run: starting one costs seconds, and the servers'
    # cookies cannot mix (each is named after its server's port).
    driver = start_browser()
    yield driver
    quit_browser(driver)


@pytest.fixture(autouse=True)
def clean_console(request):
    """Every browser test fails on a console error or CSP violation it caused."""
    if "browser" not in request.fixturenames:
        yield
        return
    driver = request.getfixturevalue("browser")
    driver.get_log("browser")  # start from an empty log
    driver.console_allows = []
    yield
    problems = console_problems(driver, driver.console_allows)
    assert not problems, "browser console:\n" + "\n".join(problems)


# -- servers the tests log in to -----------------------------------------------------------


@contextmanager
def serving(browser, agent: Agent | None = None, extra=(), size=DESKTOP, others=()):
    """The dashboard, logged in at ``size``, stopped on leaving.

    Over the demo when ``agent`` is None; else over ``agent``'s stores (its connections
    closed first, so no -wal lingers) and ``others``' projects beside it.
    """
    if agent is None:
        server = Server([], None, extra=["--demo", *extra])
    else:
        for each in (agent, *others):
            close_agent(each)
        projects = [agent.project_dir, *(o.project_dir for o in others)]
        server = Server(projects, agent.user_db, extra=extra)
        server.agent = agent
    try:
        login(browser, server)
        set_size(browser, size)
        yield server
    finally:
        server.stop()
        set_size(browser, DESKTOP)  # what the next test expects


@pytest.fixture(scope="session")
def shared_demo(browser):
    """One demo per test process, for the modules that only look at it."""
    server = Server([], None, extra=["--demo"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def demo(browser, shared_demo):
    """The demo, logged in anew for each module that only looks (a module whose tests write
    brings its own ``demo``): starting a server costs seconds, and a walk's two halves and
    the header tests would start one each."""
    login(browser, shared_demo)
    return shared_demo


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    """A dashboard over ``seed``'s stores (written by agentao), shared by a module's tests."""
    with serving(browser, seed(Agent(tmp_path_factory.mktemp("seeded")))) as srv:
        yield srv


# -- helpers the tests share -------------------------------------------------------------


def login(driver, server: Server) -> None:
    """Log in as a person would: the printed one-time link on a server's first login
    (303 + cookie, the URL loses the code), the login form with the token after that."""
    set_size(driver, DESKTOP)
    server.driver = driver  # Server.stop leaves its pages first (see there)
    # Start each module as a new visitor: no project choice left by another module.
    if driver.current_url.startswith("http"):
        # Leave the page first: its live poll, sent after the cookie is gone, would be a 403
        # in the console of this test.  Then forget every server's cookie.
        driver.get("about:blank")
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    link = server.login_url()
    if link is not None:
        driver.get(link)
    else:
        driver.get(server.url("/login"))
        driver.find_element("css selector", "#login-token").send_keys(TOKEN)
        driver.find_element("css selector", "#login-form button[type=submit]").click()
        wait_for(driver, lambda d: "/login" not in d.current_url, "the login form did not log in")
    assert "code=" not in driver.current_url and "/login" not in driver.current_url
    assert driver.current_url.startswith(server.base + "/"), driver.current_url
    assert driver.find_elements("css selector", "header.top"), driver.page_source[:500]


def wait_for(driver, condition, message="", timeout: float = WAIT):
    """Wait until ``condition(driver)`` is truthy and return it.

    ``message`` may be a callable, evaluated only on timeout (to show what the page had).
    """
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    # A swap can replace an element between finding it and reading it: just look again.
    waiter = WebDriverWait(
        driver, timeout, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]
    )
    try:
        return waiter.until(condition)
    except TimeoutException:
        raise AssertionError(message() if callable(message) else message or "timed out") from None


def finished_job(driver, timeout: float = 120):
    """The first job (an erase, a purge) on the page once it stopped running: it takes seconds."""
    return wait_for(
        driver,
        lambda d: [
            j
            for j in d.find_elements("css selector", ".job[data-job]")
            if j.get_attribute("data-state") != "running"
        ],
        "the job never finished",
        timeout=timeout,
    )[0]


def htmx_settled(driver) -> bool:
    """No htmx request in flight (htmx marks the element with .htmx-request)."""
    return driver.execute_script(
        "return window.htmx !== undefined && document.querySelector('.htmx-request') === null"
    )


def set_size(driver, size) -> None:
    """Resize the window, skipping the round trip when it already has that size."""
    if getattr(driver, "size_now", None) != tuple(size):
        driver.set_window_size(*size)
        driver.size_now = tuple(size)


def screenshot(driver, name: str, sizes=(DESKTOP, NARROW), restore=True) -> list[Path]:
    """Show the current page at each size; with SCREENSHOTS=1 in the environment, also save it
    there under test-artifacts/screenshots/ (nobody reads them in a test run, and each costs
    the browser an encode; the README's come from readme_screenshots.py).

    JPEG, not PNG: Chromium encodes it in a quarter of the time, and these are
    for looking at, not for pixel comparison.
    """
    import base64

    saved = []
    for size in sizes:
        set_size(driver, size)
        if not SAVE_SCREENSHOTS:
            continue
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "jpeg", "quality": 85})
        path = ARTIFACTS / f"{name}-{size[0]}x{size[1]}.jpg"
        path.write_bytes(base64.b64decode(shot["data"]))
        saved.append(path)
    if restore:
        set_size(driver, DESKTOP)
    return saved


def resource_urls(driver) -> list[str]:
    """Every sub-resource and fetch/XHR the page made since its last full load."""
    return driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")


# -- data ---------------------------------------------------------------------------------


def seed(agent: Agent) -> Agent:
    """A realistic corpus through agentao: both scopes, a soft-deleted row, summaries,
    reviews, and twelve "service NN" notes for the recall tests."""
    return seed_corpus(agent, services=12)


def read_db(path, sql, *args):
    """Rows straight from a store file, read-only: what the click really changed."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def second_project(root) -> Agent:
    """Another agentao project beside the seeded one (no user store of its own)."""
    other = Agent(root, with_user_store=False)
    other.save("frontend stack", "The web app is built with Svelte and Vite.", ["frontend"])
    other.save("api base url", "The app talks to https://api.example.test/v2.", ["api"])
    return other


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    """Two seeded projects sharing one user store, as ``--project A --project B`` shows them.

    Shared by the modules that only look (browsing, layout); a module that changes
    data starts its own server over ``seed``.
    """
    main = seed(Agent(tmp_path_factory.mktemp("first")))
    other = second_project(tmp_path_factory.mktemp("second"))
    for agent in (main, other):
        close_agent(agent)
    server = Server([main.project_dir, other.project_dir], main.user_db)
    server.agent, server.other = main, other
    yield server
    server.stop()


def html_pages(app, memories: list[tuple[str, str]], item_id: str, queries=None) -> list[str]:
    """Every HTML page of ``app`` (from its url_map), detail pages once per (store, id).

    ``item_id`` must be a pending review item (the review effect page needs one).

    Downloads, JSON twins, static files and job pages (which need a running job)
    are left out; the dry-run pages get a category, the preview a message
    (``queries`` maps a path to the query string to add instead).
    """
    from hostile import get_routes

    urls = set()
    for store, memory_id in memories:
        urls.update(
            get_routes(
                app,
                {
                    "store": store,
                    "key": store,
                    "memory_id": memory_id,
                    "item_id": item_id,
                    "job_id": "0" * 12,
                    "filename": "app.css",
                    "table": "memories",
                    "row_id": memory_id,
                },
            )
        )
    # Job and report pages exist only after an action has run.
    skip = ("/static/", "/forget/jobs/", "/favicon.ico", "/reviews/erased", "/login")
    urls = {
        u for u in urls if not u.startswith(skip) and u != "/" and not u.endswith((".json", ".csv", ".md"))
    }
    # A conversation's id comes from the stores, not from the filler: the first two listed.
    urls = {u for u in urls if not u.startswith("/conversations/")}
    urls.update(
        c["url"] for c in app.test_client().get("/conversations.json").get_json()["conversations"][:2]
    )
    extra = {
        "/memories": "?per_page=200&deleted=1",
        "/forget/plan/project": "?cat=everything",
        "/reviews/erase": f"?ids={item_id}",
        "/reviews/effect": f"?id={item_id}",
        "/reviews/detail": f"?id={item_id}",
        "/forget/plan/user": "?cat=everything",
        "/preview": "?q=which+port+for+service+03",
    } | (queries or {})

    def query(url):
        if url.startswith("/memories/") and url.endswith("/effect"):
            return "?value=An+edited+value"  # the edit form's what-if
        if url.startswith("/findings/check/"):
            return "?rule=secret.npm_token&field=content&label=a+key"  # a finding to re-check
        return extra.get(url, "")

    return sorted(u + query(u) for u in urls)


def half(urls: list[str], which: int, ids) -> list[str]:
    """Half ``which`` (0 or 1) of a page walk: every other page, in an order that does not
    depend on the ids in the addresses (``ids``, and the conversations' ``html_pages`` took),
    since each half's file builds its own stores.

    A long walk is cut in two files so that the two workers run its halves side by side
    (``pytest_collection_modifyitems`` below starts them first)."""

    def shape(url: str) -> str:
        for each in ids:
            url = url.replace(each, "<id>")
        return "/conversations/<id>" if url.startswith("/conversations/") else url

    ordered = sorted(urls, key=shape)
    halves = ordered[0::2], ordered[1::2]
    assert sorted(halves[0] + halves[1]) == sorted(urls), "a page is missing from both halves"
    return halves[which]


def first_row(db, sql: str):
    """One row from a store, read-only."""
    rows = read_db(db, sql)
    return rows[0] if rows else None


# -- journeys (#21): what a person does, counted --------------------------------------------

JOURNEYS = REPO / "test-artifacts" / "journeys.json"


class Journey:
    """One task a person does, counting what it costs them: every click, every key.

    Use its ``click`` / ``type`` / ``key`` instead of the element's own, then
    ``done()``; the counts go to test-artifacts/journeys.json (one entry per
    name and window width), which the README's table is made from.
    """

    def __init__(self, driver, name: str):
        self.driver, self.name = driver, name
        self.clicks = self.keys = 0

    def click(self, element):
        element.click()
        self.clicks += 1  # after it landed: a click on a replaced element is retried, not counted
        return element

    def type(self, element, text: str):
        self.keys += len(text)
        element.send_keys(text)
        return element

    def key(self, element, *keys):
        """Named keys (Keys.TAB, Keys.ENTER, …) sent to ``element``; each counts as one."""
        self.keys += len(keys)
        element.send_keys(*keys)
        return element

    def tab_to(self, predicate, limit: int = 60):
        """Press Tab until the focused element satisfies ``predicate``; it, or AssertionError."""
        from selenium.webdriver.common.keys import Keys

        for _ in range(limit):
            active = self.driver.switch_to.active_element
            if predicate(active):
                return active
            self.key(active, Keys.TAB)
        raise AssertionError(f"{self.name}: nothing reached with Tab in {limit} presses")

    def done(self) -> dict:
        import json

        width = self.driver.execute_script("return window.innerWidth")
        record = {"journey": self.name, "width": width, "clicks": self.clicks, "keys": self.keys}
        JOURNEYS.parent.mkdir(parents=True, exist_ok=True)
        # The suite runs in two worker processes: one writer at a time.
        with open(JOURNEYS.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            known = json.loads(JOURNEYS.read_text()) if JOURNEYS.exists() else []
            known = [r for r in known if (r["journey"], r["width"]) != (self.name, width)]
            JOURNEYS.write_text(
                json.dumps(sorted(known + [record], key=lambda r: (r["journey"], r["width"])), indent=1)
            )
        return record


def in_viewport(driver, element) -> bool:
    """Whether ``element`` is wholly inside the visible window (no scrolling needed to see it)."""
    return driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 &&"
        " r.bottom <= window.innerHeight && r.right <= window.innerWidth;",
        element,
    )


PHONE = (390, 844)


# -- accessibility (#21): axe-core in the page, and the phone layout's measures ---------------

AXE = REPO / "tests" / "browser" / "vendor" / "axe-core-4.14.1.min.js"
AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations'], runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
  .then(r => done(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))))
  .catch(e => done(['axe failed: ' + e]));
"""
# Visible table cells narrower than 60 px (a column squeezed to a word per line); a header
# row that the phone layout hides off-screen (position: absolute, 1 px) does not count.
NARROW_CELLS = """
return [...document.querySelectorAll('td, th')].filter(c => {
  const r = c.getBoundingClientRect(), head = c.closest('thead');
  if (head && getComputedStyle(head).position === 'absolute') return false;
  return r.width > 0 && r.height > 0 && r.width < 59.5 && c.textContent.trim() !== '';
}).slice(0, 5).map(c => Math.round(c.getBoundingClientRect().width) + 'px: ' + c.textContent.trim().slice(0, 30));
"""

# Words broken across two lines inside a table cell ("preferenc" / "e"): a plain word of 2 to
# 15 letters, outside code and keys (which may wrap anywhere), whose letters sit on more than
# one line.  Each as "word in <tag.class>".
BROKEN_WORDS = """
const out = [], main = document.querySelector('main') || document.body;
const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!el || !el.closest('td, th') || el.closest('pre, code') || el.offsetParent === null) continue;
  for (const m of n.textContent.matchAll(/[A-Za-z\u00c0-\u024f]{2,15}/g)) {
    const r = document.createRange();
    r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
    const lines = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
    if (lines.size > 1) out.push(m[0] + ' in <' + el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + '>');
  }
}
return out.slice(0, 10);
"""


def broken_words(driver) -> list[str]:
    """The words of the page's tables broken inside (see BROKEN_WORDS), as it is laid out now."""
    return driver.execute_script(BROKEN_WORDS)


@contextmanager
def axe_in_every_page(driver):
    """axe-core in every document opened inside the block, before the page's own scripts.

    Through DevTools, like the injection in ``axe_problems`` (the page's CSP does not govern
    it), but sent to the browser once instead of over WebDriver into each page."""
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": AXE.read_text()})
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", added)


def resize_page(driver, size) -> None:
    """Resize the window with a page open and wait until the page has its new width."""
    set_size(driver, size)
    wait_for(
        driver,
        lambda d: d.execute_script("return window.innerWidth") == size[0],
        lambda: f"the page never became {size[0]} px wide",
    )
    wait_for(driver, htmx_settled, "htmx never settled after a resize")


def both_widths(driver, url: str):
    """Open ``url`` once at 1280 px, then yield each width (DESKTOP, then PHONE) with the page
    settled at it; the window is back at DESKTOP after, however the walk ends.

    No script of the pages reads the width: the phone layout is the stylesheet's media
    queries, applied on resize, so one load serves both widths."""
    set_size(driver, DESKTOP)
    try:
        driver.get(url)
        wait_for(driver, htmx_settled, f"htmx never settled on {url}")
        yield DESKTOP
        resize_page(driver, PHONE)
        yield PHONE
    finally:
        set_size(driver, DESKTOP)


def axe_problems(driver) -> list[str]:
    """axe-core's serious and critical WCAG 2.1 A/AA violations on the page as it is now.

    axe is injected by WebDriver (the page's CSP does not govern that) and never
    served by the dashboard."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(AXE.read_text())
    driver.set_script_timeout(120)  # axe on a long page of a loaded machine: seconds, not minutes
    return driver.execute_async_script(AXE_RUN)


def layout_problems(driver) -> list[str]:
    """At the current width: sideways scrolling and table cells narrower than 60 px."""
    problems = []
    width = driver.execute_script("return document.documentElement.scrollWidth")
    inner = driver.execute_script("return window.innerWidth")
    if width > inner + 2:
        widest = driver.execute_script("""
          let worst = null, right = 0;
          for (const e of document.querySelectorAll('body *')) {
            const r = e.getBoundingClientRect().right;
            if (r > right) { right = r; worst = e; } }
          return worst ? worst.tagName + (worst.id ? '#' + worst.id : '')
                         + (worst.className ? '.' + String(worst.className).split(' ').join('.') : '')
                         + ' in ' + (worst.parentElement ? worst.parentElement.tagName + '.'
                         + String(worst.parentElement.className) : '') : '';""")
        problems.append(f"scrolls sideways: {width}px wide in a {inner}px window (widest: {widest})")
    problems += [f"narrow cell {c}" for c in driver.execute_script(NARROW_CELLS)]
    return problems


# The long page walks, each cut in two files, in this order before every other file: pytest-xdist
# (--dist loadfile, in collection order) then hands each worker one half of each walk at the
# start, instead of a walk to one worker at the end while the other idles.
LONG_WALKS = (
    "test_hostile_content.py",
    "test_hostile_content_2.py",
    "test_accessibility.py",
    "test_accessibility_2.py",
    "test_chinese.py",
    "test_chinese_2.py",
    "test_layout.py",
    "test_layout_2.py",
)


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent

    def rank(item) -> int:
        name = item.path.name
        return LONG_WALKS.index(name) if item.path.parent == here and name in LONG_WALKS else len(LONG_WALKS)

    items.sort(key=rank)
