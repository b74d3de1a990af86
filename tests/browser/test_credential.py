"""The cookie in real Chromium: it stays with its server, and cookies tossed at it change nothing.

Another server on 127.0.0.1 — any local program can run one, and any page can
send the browser there — is where cookies leak (they ignore ports) and where
they are tossed from.  Here it is a plain ``http.server`` on a second port.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from .conftest import login, wait_for


class Other:
    """A web server on another port: records the Cookie header of every request it gets,
    and serves one page whose script sets cookies for the host (they reach every port)."""

    def __init__(self, toss_script: str):
        self.cookies: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.cookies.append(self.headers.get("Cookie", ""))
                script = toss_script if self.path == "/toss" else ""
                body = (
                    f'<!doctype html><link rel="icon" href="data:,"><title>other</title>'
                    f"<p>another local server</p><script>{script}</script>"
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def parts(workspace):
    base = urlsplit(workspace.base)
    return base.port, base.path  # the dashboard's port and its random path


def test_the_cookie_is_not_sent_to_a_server_on_another_port(browser, workspace, parts):
    port, prefix = parts
    login(browser, workspace)
    login(browser, workspace)  # a second visitor: the token typed into the form
    other = Other("")
    try:
        browser.get(other.url("/probe"))
        wait_for(browser, lambda d: d.title == "other")
    finally:
        other.close()
    assert other.cookies and not any(f"agentao_dashboard_{port}" in c for c in other.cookies), (
        f"another port's server got the dashboard's cookie: {other.cookies}"
    )
    browser.get(workspace.url("/overview"))
    assert browser.find_elements(By.CSS_SELECTOR, "header.top"), "the cookie no longer works here"


def test_cookies_tossed_from_another_port_change_nothing(browser, workspace, parts):
    port, prefix = parts
    login(browser, workspace)
    browser.get(workspace.url("/memories"))
    Select(browser.find_element(By.ID, "project-switch")).select_by_index(1)
    browser.find_element(By.CSS_SELECTOR, "#project-switcher button[type=submit]").click()
    wait_for(
        browser,
        lambda d: (
            Select(d.find_element(By.ID, "project-switch")).first_selected_option.get_attribute("value")
            == "1"
        ),
        "the switch did not take",
    )
    # The worst case: the other page even knows the random path (say, from history).
    toss = (
        "".join(
            f'document.cookie = "{name}={value}; path={path}";'
            for name, value, path in [
                (f"agentao_dashboard_{port}", "garbage", f"{prefix}/forget"),
                (f"agentao_dashboard_{port}", "garbage", "/forget"),
                (f"agentao_dashboard_{port}", "garbage", "/"),
                (f"agentao_memory_project_{port}", "0", f"{prefix}/overview"),
                (f"agentao_memory_project_{port}", "0", "/"),
            ]
        )
        + 'document.title = "tossed";'
    )
    other = Other(toss)
    try:
        browser.get(other.url("/toss"))
        wait_for(browser, lambda d: d.title == "tossed", "the other page's script did not run")
    finally:
        other.close()
    browser.get(workspace.url("/forget"))  # not locked out
    assert browser.find_elements(By.CSS_SELECTOR, "header.top"), browser.page_source[:400]
    assert not browser.find_elements(By.ID, "denied")
    browser.get(workspace.url("/overview"))  # still the project the user chose
    chosen = Select(browser.find_element(By.ID, "project-switch")).first_selected_option
    assert chosen.get_attribute("value") == "1"
