"""Safe by default: token, Host allow-list, same-origin writes, headers, templates, limits."""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from dashboard.guard import security

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "test-token-0123456789abcdef"
COOKIE = "agentao_dashboard_80"  # the test client talks to port 80


def get_urls(app, seeded) -> list[str]:
    """One URL per GET route, arguments filled from the seeded stores."""
    from hostile import get_routes

    memory = seeded.manager.search("uv")[0]
    return sorted(
        set(
            get_routes(
                app,
                {
                    "store": "project",
                    "key": "project",
                    "memory_id": memory.id,
                    "job_id": "0" * 12,
                    "filename": "app.css",
                    "table": "memories",
                    "row_id": memory.id,
                },
            )
        )
    )


@pytest.fixture
def app(seeded):
    app = seeded.app(AUTH_TOKEN=TOKEN)
    writes = []

    # A stand-in for any state-changing endpoint, so the origin rules are tested
    # independently of which write screens exist.
    @app.post("/_probe")
    def _probe():
        writes.append(1)
        return {"ok": True}

    app.extensions["probe_writes"] = writes
    return app


@pytest.fixture
def anon(app):
    return app.test_client()


def log_in(client, token=TOKEN):
    """The login form, as a person who knows the token uses it (same-origin POST)."""
    return client.post("/login", data={"token": token, "next": "/overview"})


@pytest.fixture
def authed(app):
    client = app.test_client()
    assert log_in(client).status_code == 303
    return client


def test_generated_token_has_at_least_128_bits(seeded):
    app = seeded.app(AUTH_TOKEN=None)
    token = app.config["AUTH_TOKEN"]
    assert len(token) >= 43 and token != seeded.app(AUTH_TOKEN=None).config["AUTH_TOKEN"]
    assert app.test_client().get("/overview").status_code == 403


def test_every_route_needs_the_token(app, anon, seeded):
    urls = get_urls(app, seeded)
    assert {"/overview", "/memories.json", "/static/app.css", "/", "/login"} <= set(urls)
    login = anon.get("/login")  # the one page open to all: a form, nothing from the stores
    assert login.status_code == 200 and b"memory.db" not in login.data and b"Neovim" not in login.data
    assert BeautifulSoup(login.data, "html.parser").select_one("form#login-form input[name=token]")
    icon = anon.get("/favicon.ico", follow_redirects=True)  # fetched at the root: no cookie there
    assert icon.status_code == 200 and icon.headers["Cross-Origin-Resource-Policy"] == "same-origin"
    # The login page's stylesheet is open like the icon: it holds nothing about the stores.
    sheet = anon.get("/static/app.css")
    assert sheet.status_code == 200 and sheet.headers["Cross-Origin-Resource-Policy"] == "same-origin"
    for url in (u for u in urls if u not in ("/login", "/favicon.ico", "/static/app.css")):
        r = anon.get(url)
        assert r.status_code == 403, url
        if url.endswith(".json"):
            assert r.get_json()["error"] == "Token required"
        elif not url.startswith("/static"):
            page = BeautifulSoup(r.data, "html.parser")
            assert page.select_one("#denied #login-form") and page.select_one("#new-link code")
        # The refusal names no file and shows no memory.
        assert b"memory.db" not in r.data and b"Neovim" not in r.data
    assert anon.get("/no/such/page").status_code == 403  # not 404: nothing is revealed


def test_login_code_exchanged_for_strict_httponly_cookie_then_redirect(app, anon):
    code = app.extensions["access"].new_code()
    r = anon.get("/login", query_string={"code": code, "next": "/memories?scope=user&page=1"})
    assert r.status_code == 303
    assert r.headers["Location"] == "/memories?scope=user&page=1"
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith(COOKIE + "=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert TOKEN not in cookie and code not in cookie
    page = anon.get("/memories?scope=user&page=1")
    assert page.status_code == 200
    assert len(BeautifulSoup(page.data, "html.parser").select("tr.memory")) == 2
    assert anon.get("/static/htmx-2.0.11.min.js").status_code == 200


def test_cookie_name_follows_the_configured_port(seeded):
    app = seeded.app(AUTH_TOKEN=TOKEN, PORT=8765)
    r = log_in(app.test_client())
    assert r.headers["Set-Cookie"].startswith("agentao_dashboard_8765=")


@pytest.mark.parametrize(
    "how", ["wrong-form", "wrong-cookie", "token-as-cookie", "wrong-header", "token-in-url", "wrong-code"]
)
def test_wrong_credentials_are_refused(anon, how):
    if how == "wrong-form":
        r = log_in(anon, TOKEN[:-1] + "x")
        assert "not the access token" in r.get_data(as_text=True)
    elif how == "token-in-url":  # even the right one: a URL stays in the history
        r = anon.get(f"/overview?token={TOKEN}")
        assert "does not go in a URL" in r.get_data(as_text=True)
    elif how == "wrong-code":
        r = anon.get("/login?code=" + "A" * 43)
        assert "already been used" in r.get_data(as_text=True)
    else:
        if how == "wrong-cookie":
            anon.set_cookie(COOKIE, "0" * 64)
        elif how == "token-as-cookie":
            anon.set_cookie(COOKIE, TOKEN)
        r = anon.get("/overview", headers={"Authorization": "token nope"} if how == "wrong-header" else {})
    assert r.status_code == 403 and "Set-Cookie" not in r.headers


def test_authorization_header_for_scripts(anon):
    for scheme in ("token", "Bearer"):
        r = anon.get("/memories.json", headers={"Authorization": f"{scheme} {TOKEN}"})
        assert r.status_code == 200 and r.get_json()["total"] == 6


def test_tokens_are_compared_in_constant_time(anon, monkeypatch):
    import hmac

    calls = []
    real = hmac.compare_digest
    from dashboard.guard import access

    monkeypatch.setattr(access.hmac, "compare_digest", lambda a, b: calls.append(1) or real(a, b))
    log_in(anon)  # the form's token
    anon.get("/overview")  # the cookie
    anon.get("/overview", headers={"Authorization": f"token {TOKEN}"})
    assert len(calls) >= 3


def test_no_token_mode(seeded):
    client = seeded.app(AUTH_TOKEN=False).test_client()
    assert client.get("/overview").status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:80",
        "127.0.0.1.evil.example",
        "localhost.evil.example:8765",
        "192.168.1.10:8765",
        "",
    ],
)
def test_rebound_host_is_refused_before_routing(authed, host):
    for url in ["/overview", "/memories.json", "/static/app.css", "/no/such/page"]:
        r = authed.get(url, headers={"Host": host})
        assert r.status_code == 403, (host, url)
        assert b"Host header" in r.data and b"Neovim" not in r.data
        assert r.headers["X-Frame-Options"] == "DENY"


def test_configured_allow_list_includes_the_port(seeded):
    app = seeded.app(AUTH_TOKEN=False, ALLOWED_HOSTS=security.allowed_hosts("127.0.0.1", 8765))
    client = app.test_client()
    for host in ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "LOCALHOST:8765"]:
        assert client.get("/overview", headers={"Host": host}).status_code == 200, host
    for host in ["127.0.0.1:9999", "localhost", "evil.example:8765"]:
        assert client.get("/overview", headers={"Host": host}).status_code == 403, host
    assert "myhost.lan:8765" in security.allowed_hosts("myhost.lan", 8765)
    assert "[::1]:80" in security.allowed_hosts("::1", 80)


SAME_ORIGIN = "http://localhost"


@pytest.mark.parametrize(
    "headers,allowed",
    [
        ({"Sec-Fetch-Site": "same-origin"}, True),
        ({"Sec-Fetch-Site": "none"}, True),
        ({"Sec-Fetch-Site": "same-site"}, False),
        ({"Sec-Fetch-Site": "cross-site"}, False),
        ({"Sec-Fetch-Site": "cross-site", "Origin": SAME_ORIGIN}, False),
        ({"Sec-Fetch-Site": "", "Origin": SAME_ORIGIN}, False),
        ({"Origin": SAME_ORIGIN}, True),
        ({"Origin": "http://localhost:8080"}, False),
        ({"Origin": "http://evil.example"}, False),
        ({"Origin": "null"}, False),
        ({"Origin": SAME_ORIGIN + ".evil.example"}, False),
        ({}, False),
    ],
)
def test_unsafe_methods_need_same_origin(app, authed, headers, allowed):
    authed.environ_base.pop("HTTP_SEC_FETCH_SITE", None)  # only what the test sends
    r = authed.post("/_probe", headers=headers)
    assert (r.status_code == 200) is allowed, r.status_code
    if not allowed:
        assert r.status_code == 403
        assert "own pages" in r.get_data(as_text=True)
    assert app.extensions["probe_writes"] == ([1] if allowed else [])


def test_unsafe_method_with_token_header_needs_no_origin(app, anon):
    anon.environ_base.pop("HTTP_SEC_FETCH_SITE", None)
    r = anon.post("/_probe", headers={"Authorization": f"token {TOKEN}"})
    assert r.status_code == 200 and app.extensions["probe_writes"] == [1]
    r = anon.post("/_probe", headers={"Origin": SAME_ORIGIN})  # no cookie, no token
    assert r.status_code == 403 and app.extensions["probe_writes"] == [1]


def test_security_headers_on_everything(app, authed, anon):
    responses = [
        authed.get("/overview"),
        authed.get("/memories.json"),
        authed.get("/static/app.css"),
        authed.get("/no/such/page"),
        anon.get("/overview"),
        authed.get("/", headers={"Host": "evil.example"}),
        authed.get("/memories?page=0"),
    ]
    for r in responses:
        assert r.headers["Content-Security-Policy"].startswith(
            "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
            "frame-ancestors 'none'"
        ), r.request.path
        assert r.headers["X-Frame-Options"] == "DENY"
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Referrer-Policy"] == "no-referrer"
    assert responses[0].headers["Cache-Control"] == "no-store"


TEMPLATES = ROOT / "templates"


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: p.name)
def test_templates_have_no_inline_script_or_handlers(path):
    source = path.read_text()
    page = BeautifulSoup(source, "html.parser")
    for script in page.find_all("script"):
        assert script.get("src") and not script.string, f"inline <script> in {path}"
    for element in page.find_all(True):
        handlers = [a for a in element.attrs if a.lower().startswith("on")]
        assert not handlers, f"{handlers} on <{element.name}> in {path}"
        assert not element.has_attr("style"), f"inline style on <{element.name}> in {path}"
        assert not any(a.startswith(("hx-on", "data-hx-on")) for a in element.attrs), path
    # Also the raw text, in case Jinja syntax hides an attribute from the parser.
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", source, re.I), path
    assert not re.search(r"\son[a-z]+\s*=", source, re.I), path
    assert "<style" not in source.lower() and "javascript:" not in source.lower(), path
    assert "|safe" not in source.replace(" ", ""), path


def test_htmx_is_configured_for_the_csp(authed):
    import json

    page = BeautifulSoup(authed.get("/overview").data, "html.parser")
    config = json.loads(page.select_one('meta[name="htmx-config"]')["content"])
    assert config["includeIndicatorStyles"] is False and config["allowEval"] is False
    assert config["allowScriptTags"] is False and config["selfRequestsOnly"] is True
    # htmx first, then our live pulse (views/pulse.py: what htmx cannot do without eval)
    assert [s["src"] for s in page.find_all("script")] == ["/static/htmx-2.0.11.min.js", "/static/live.js"]
    assert ".htmx-indicator" in (ROOT / "static" / "app.css").read_text()


def test_limits_answer_413_414_400_with_reasons(app, authed):
    r = authed.get("/memories?q=" + "x" * 5000)
    assert r.status_code == 414 and "query string is longer" in r.get_data(as_text=True)
    r = authed.get("/memories.json?tag=" + "y" * 5000)
    assert r.status_code == 414 and "4,096" in r.get_json()["message"]  # grouped, as Babel says for English
    r = authed.post(
        "/_probe", data=b"z" * (app.config["MAX_CONTENT_LENGTH"] + 1), headers={"Accept": "application/json"}
    )
    assert r.status_code == 413 and "nothing was changed" in r.get_json()["message"]
    assert app.extensions["probe_writes"] == []
    r = authed.get("/memories.json?per_page=201")
    assert r.status_code == 400 and "per_page" in r.get_json()["message"]


def _start(*args, env=None):
    """The real command line on a free port: (process, port, the printed path and query)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)(/\S*)", line)
        if m:
            return proc, int(m.group(1)), m.group(2)
    proc.kill()
    raise AssertionError("the server did not print its URL")


def _get(port, path, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    r.read()
    conn.close()
    return r


def test_cli_prints_login_link_and_the_real_server_enforces_it(seeded):
    proc, port, link = _start("--project", str(seeded.project_dir), "--user-db", str(seeded.user_db))
    try:
        prefix, _, code = link.partition("/login?code=")
        assert re.fullmatch(r"/[A-Za-z0-9_-]{16}", prefix) and len(code) >= 43, link
        assert _get(port, prefix + "/overview").status == 403
        r = _get(port, link)
        assert r.status == 303 and r.getheader("Location") == prefix + "/"
        cookie = r.getheader("Set-Cookie").split(";")[0]
        assert cookie.startswith(f"agentao_dashboard_{port}=")
        assert _get(port, prefix + "/overview", {"Cookie": cookie}).status == 200
        rebound = {"Cookie": cookie, "Host": f"attacker.example:{port}"}
        assert _get(port, "/overview", rebound).status == 403
        assert _get(port, "/overview", {"Cookie": cookie, "Host": "127.0.0.1:1"}).status == 403
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_token_flags(tmp_path):
    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "dashboard", "--project", str(tmp_path), "--no-user-db", *a],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )

    r = run("--no-token", "--host", "0.0.0.0")
    assert r.returncode == 2 and "only allowed on a loopback" in r.stderr
    r = run("--token", "short")
    assert r.returncode == 2 and "at least 16" in r.stderr
    r = run("--token", "x" * 20, "--no-token")
    assert r.returncode == 2
    proc, port, link = _start("--project", str(tmp_path), "--no-user-db", "--token", "my-chosen-token-1234")
    try:  # the chosen token is for scripts and the form; the link carries a one-time code
        assert "/login?code=" in link and "my-chosen-token" not in link
        assert _get(port, "/overview", {"Authorization": "token my-chosen-token-1234"}).status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    proc, port, link = _start("--project", str(tmp_path), "--no-user-db", "--no-token")
    try:
        assert link == "/" and _get(port, "/overview").status == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "WARNING: --no-token" in err


def test_non_loopback_host_warns_and_keeps_the_token(tmp_path):
    # 0.0.0.0 listens on loopback too, so the test stays on this machine.
    proc, port, link = _start("--project", str(tmp_path), "--no-user-db", "--host", "0.0.0.0")
    try:
        assert "/login?code=" in link and _get(port, "/overview").status == 403
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "WARNING: listening on 0.0.0.0" in err
