"""The credential stays with the person who started the dashboard (issue 19, items 4-8).

Bodies are refused before waitress reads them; the cookie is good for one
start, goes stale, and lives under a random path; the printed link works once;
cookies tossed in from another port change nothing; weak tokens are refused
and wrong ones slow down.  Most checks talk to the real command line.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from agentao_world import Agent, seed_corpus
from bs4 import BeautifulSoup
from test_security import _get, _start

from dashboard import cli
from dashboard.guard import access

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "credential-tests-Jd9v3LmA-0123456789"
# Characters that break an un-encoded URL: + (space), & (next field), # (fragment), % (escape).
ODD_TOKEN = "Zq+&#%7-credential-tests-Jd9v3LmA"
COOKIE = "agentao_dashboard_80"  # the test client talks to port 80
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The real CLI over agentao-written stores, TMPDIR pointed at a folder we watch."""
    root = tmp_path_factory.mktemp("credential")
    agent = seed_corpus(Agent(root))
    for store in (agent.project_store, agent.user_store):
        store.close()
    tmp = root / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "AGENTAO_DASHBOARD_TOKEN": TOKEN}
    proc, port, link = _start("--project", str(agent.project_dir), "--user-db", str(agent.user_db), env=env)
    proc.port, proc.link, proc.tmp = port, link, tmp
    proc.prefix = _prefix(link)
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


def _open(port, link, **kw):
    """Follow the printed link as a browser would: (the answer, its cookie as a header value)."""
    r = _get(port, link, **kw)
    return r, (r.getheader("Set-Cookie") or "").split(";")[0]


def _prefix(link: str) -> str:
    return link.split("?")[0].rpartition("/")[0]  # "/<prefix>/login" -> "/<prefix>"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc):
    proc.terminate()
    proc.wait(timeout=10)


def _login(port, prefix="", token=TOKEN):
    """The login form, from a script: the token in the body, never in a URL."""
    from urllib.parse import urlencode

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(
        "POST",
        prefix + "/login",
        urlencode({"token": token}),
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{port}"},
    )
    r = conn.getresponse()
    r.read()
    conn.close()
    return r


def _temp_bytes(pid: int, folder: Path) -> int:
    """Bytes in the files ``pid`` holds open below ``folder`` (deleted temp files included)."""
    total = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(folder)):
                total += os.stat(f"/proc/{pid}/fd/{fd}").st_size
        except OSError:
            pass  # closed meanwhile
    return total


def _post_head(port, length, host="attacker.example"):
    size = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (
        f"POST /login HTTP/1.1\r\nHost: {host}\r\n{size}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n\r\n"
    ).encode()


# -- item 4: bodies beyond the limit are refused before they are read -------------------


def test_oversized_body_is_refused_from_its_headers(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:  # busy machine: late
        sock.sendall(_post_head(server.port, 512 * MIB))
        answer = sock.recv(200)  # no body sent: a server that waits for it never answers
    assert answer.startswith(b"HTTP/1.1 413"), answer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_oversized_body_never_grows_the_temp_folder(server, framing):
    size, chunk, most = 24 * MIB, b"x" * (256 * 1024), 0
    if framing == "chunked":  # no length to refuse up front: counted as it comes
        chunk = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(_post_head(server.port, size if framing == "content-length" else None))
        try:
            for _ in range(size // len(chunk)):
                sock.sendall(chunk)
                most = max(most, _temp_bytes(server.pid, server.tmp))
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed: what we want
    assert most == 0, f"the server buffered {most / MIB:.1f} MiB of an unauthenticated body to disk"
    assert _temp_bytes(server.pid, server.tmp) == 0 and not any(server.tmp.iterdir())


# -- item 5: a cookie for one start, stale soon, under a random path ---------------------


def test_cli_serves_under_a_random_path_and_scopes_the_cookie_to_it(server):
    assert re.fullmatch(r"/[A-Za-z0-9_-]{16}", server.prefix), server.link
    r = _login(server.port, server.prefix)
    assert r.status == 303 and r.getheader("Location") == server.prefix + "/"
    attrs = [a.strip() for a in r.getheader("Set-Cookie").split(";")]
    assert f"Path={server.prefix}" in attrs and "Max-Age=43200" in attrs
    cookie = attrs[0]
    page = _get(server.port, server.prefix + "/memories", {"Cookie": cookie})
    assert page.status == 200
    assert access.new_prefix() != access.new_prefix()  # drawn at each start


def test_a_restart_voids_cookies_even_with_a_fixed_token(tmp_path):
    port, args = _free_port(), ("--project", str(tmp_path), "--no-user-db", "--token", TOKEN)
    first, _, link = _start(*args, "--port", str(port))
    try:
        r, cookie = _open(port, link)
        assert _get(port, _prefix(link) + "/overview", {"Cookie": cookie}).status == 200
    finally:
        _stop(first)
    again, _, link = _start(*args, "--port", str(port))  # same port, same token
    try:
        assert _get(port, _prefix(link) + "/overview", {"Cookie": cookie}).status == 403
        assert _get(port, "/overview", {"Cookie": cookie}).status == 403
    finally:
        _stop(again)
    assert "Max-Age=43200" in r.getheader("Set-Cookie")  # and it goes stale


def test_cookie_goes_stale_unless_used(seeded, monkeypatch):
    clock = [1_800_000_000.0]
    monkeypatch.setattr(access, "_now", lambda: clock[0])
    app = seeded.app(AUTH_TOKEN=TOKEN)
    client = app.test_client()
    client.post("/login", data={"token": TOKEN})
    old = client.get_cookie(COOKIE).value
    clock[0] += 11 * 3600  # in use after 11 hours: renewed
    r = client.get("/overview")
    assert r.status_code == 200 and "Max-Age=43200" in r.headers["Set-Cookie"]
    assert client.get_cookie(COOKIE).value != old
    clock[0] += 2 * 3600  # the first copy is now 13 hours old
    assert client.get("/overview").status_code == 200
    stale = app.test_client()
    stale.set_cookie(COOKIE, old)
    assert stale.get("/overview").status_code == 403


def test_every_link_stays_under_the_prefix(seeded):
    from test_security import get_urls

    app = seeded.app(URL_PREFIX="/p-sweep")
    client = app.test_client()
    pages = [
        u
        for u in get_urls(app, seeded)
        if not u.startswith("/static/") and not u.endswith((".json", ".csv", ".md"))
    ]
    linked = 0
    for url in pages:
        r = client.get("/p-sweep" + url)
        assert r.status_code in (200, 302, 303, 400, 404), (url, r.status_code)
        if r.status_code in (302, 303):
            assert r.headers["Location"].startswith("/p-sweep/"), url
            continue
        soup = BeautifulSoup(r.data, "html.parser")
        for el in soup.find_all(True):
            for attr in ("href", "src", "action", "hx-get", "hx-post", "value"):
                link = el.get(attr)
                if attr == "value" and el.get("name") != "next":
                    continue
                if link and link.startswith("/"):
                    linked += 1
                    assert link.startswith("/p-sweep/"), f"{url}: <{el.name} {attr}={link!r}>"
    assert linked > 100


# -- item 6: the printed link works once --------------------------------------------------


def test_printed_link_works_once(server):
    first = _get(server.port, server.link)
    assert first.status == 303 and first.getheader("Location") == server.prefix + "/"
    cookie = first.getheader("Set-Cookie").split(";")[0]
    assert _get(server.port, server.prefix + "/overview", {"Cookie": cookie}).status == 200
    again = _get(server.port, server.link)  # from history, scrollback, a synced browser
    assert again.status == 403 and not again.getheader("Set-Cookie")
    # The browser that used it, reopening it, simply goes on in.
    assert _get(server.port, server.link, {"Cookie": cookie}).status == 303
    # The long-lived token in a URL is refused, even when right (it would stay in history).
    r = _get(server.port, server.prefix + "/overview?token=" + TOKEN)
    assert r.status == 403 and not r.getheader("Set-Cookie")


# -- item 7: cookies tossed in from another port ------------------------------------------


def test_a_tossed_auth_cookie_does_not_lock_the_user_out(tmp_path):
    proc, port, link = _start("--project", str(tmp_path), "--no-user-db", "--token", TOKEN)
    try:
        _, mine = _open(port, link)
        forget = _prefix(link) + "/forget"
        name = mine.partition("=")[0]
        # A page on another port set name=garbage with Path=<...>/forget: the browser
        # sends that narrower copy first, then ours.
        assert _get(port, forget, {"Cookie": f"{name}=garbage; {mine}"}).status == 200
        assert _get(port, forget, {"Cookie": f"{name}=garbage"}).status == 403
    finally:
        _stop(proc)


def test_a_tossed_project_cookie_is_ignored(seeded, tmp_path):
    other = Agent(tmp_path / "other", with_user_store=False)
    other.save("frontend stack", "The web app is built with Svelte.", ["frontend"])
    app = seeded.app(PROJECT_DIR=[seeded.project_dir, other.project_dir])
    name = "agentao_memory_project_localhost"
    shown = lambda c: (
        app.test_client(use_cookies=False)
        .get(  # noqa: E731
            "/overview.json", headers={"Cookie": c}
        )
        .get_json()["stores"][0]["path"]
    )
    first, second = str(seeded.project_db), str(other.project_db)
    client = app.test_client()
    assert client.post("/projects/select", data={"project": "1"}).status_code == 303
    chosen = client.get_cookie(name).value
    assert shown(f"{name}={chosen}") == second
    assert shown(f"{name}=0; {name}={chosen}") == second  # a tossed copy sent first
    assert shown(f"{name}=1") == first  # a tossed copy alone


# -- item 8: token hygiene ------------------------------------------------------------------


@pytest.mark.parametrize(
    "token,reason",
    [
        (" " * 16, "no space at either end"),
        ("a" * 24, "too predictable"),
        ("ab" * 12, "too predictable"),
        ("short", "at least 16"),
        ("tëst-tøken-0123456789", "ASCII"),
    ],
)
def test_weak_tokens_are_refused_with_what_is_required(token, reason, capsys):
    parser = cli.build_parser()
    with pytest.raises(SystemExit) as exit_:
        cli.token_from_args(parser.parse_args(["--token", token]), parser)
    assert exit_.value.code == 2 and reason in capsys.readouterr().err
    for good in (TOKEN, ODD_TOKEN, "correct horse battery staple"):
        args = argparse.Namespace(no_token=False, token=good, host="127.0.0.1")
        assert cli.token_from_args(args, parser) == good


def test_token_with_url_characters_works_and_stays_out_of_the_url(tmp_path):
    env = {**os.environ, "AGENTAO_DASHBOARD_TOKEN": ODD_TOKEN}
    proc, port, link = _start("--project", str(tmp_path), "--no-user-db", env=env)
    try:
        parts = urlsplit(link)
        assert set(parse_qs(parts.query)) == {"code"} and not parts.fragment, link
        r, cookie = _open(port, link)  # the printed URL opens the dashboard
        assert r.status == 303 and _get(port, _prefix(link) + "/overview", {"Cookie": cookie}).status == 200
        prefix = _prefix(link)
        r = _get(port, prefix + "/overview.json", {"Authorization": f"token {ODD_TOKEN}"})
        assert r.status == 200
        assert _login(port, prefix, ODD_TOKEN).status == 303
    finally:
        _stop(proc)


def test_wrong_tokens_slow_down_but_never_lock_out_the_user(seeded, monkeypatch):
    clock = [1_800_000_000.0]
    monkeypatch.setattr(access, "_now", lambda: clock[0])
    app = seeded.app(AUTH_TOKEN=TOKEN)
    user = app.test_client()
    user.post("/login", data={"token": TOKEN})
    attacker = app.test_client()
    guess = lambda t: attacker.get(
        "/memories.json",  # noqa: E731
        headers={"Authorization": f"token {t}"},
    )
    assert [guess(f"guess-{i}").status_code for i in range(access.FREE_FAILURES)] == [403] * 5
    paused = guess(TOKEN)  # even the right token is not checked now
    assert paused.status_code == 429 and paused.headers["Retry-After"] == "1"
    assert "for 1 s" in paused.get_json()["message"]
    assert attacker.post("/login", data={"token": TOKEN}).status_code == 429
    assert user.get("/overview").status_code == 200  # the cookie still works
    code = app.extensions["access"].new_code()
    assert app.test_client().get(f"/login?code={code}").status_code == 303  # and a code
    clock[0] += 1
    assert guess("guess-5").status_code == 403  # the pause doubles: 2 s now
    clock[0] += 1
    assert guess(TOKEN).headers["Retry-After"] == "1"
    clock[0] += 1
    assert guess(TOKEN).status_code == 200  # right: checked again, and the count resets
    assert guess("typo").status_code == 403
