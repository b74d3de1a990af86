"""Odd request input gets a 400 with the reason (or the page's own note), never a 500."""

from __future__ import annotations

import sqlite3

import pytest
from agentao_world import file_digest
from bs4 import BeautifulSoup


@pytest.mark.parametrize("url", ["/memories", "/memories.json", "/findings", "/findings.json"])
@pytest.mark.parametrize("value", ["²", "٣", "¹⁰", "9" * 30, "-1", " 1", "1e3"])
@pytest.mark.parametrize("name", ["page", "per_page"])
def test_page_numbers_that_are_not_ascii_digits_are_400(client, url, name, value):
    r = client.get(url, query_string={name: value})
    assert r.status_code == 400, r.status_code
    text = r.get_data(as_text=True).replace("&#39;", "'")
    assert f"'{name}' must be a whole number" in text


@pytest.mark.parametrize("value", ["²", "٣", "9" * 30, "-1"])
def test_an_odd_shown_size_after_an_edit_is_ignored(client, value):
    """``shown`` (the block size a page predicted, carried to the page after an edit) is
    a number only when it is ASCII digits; anything else is no prediction, not a 500."""
    memory = client.get("/memories.json").get_json()["items"][0]
    r = client.get(
        f"/memories/{memory['store']}/{memory['id']}", query_string={"done": "edited", "shown": value}
    )
    assert r.status_code == 200


def test_a_project_cookie_that_is_not_a_number_shows_the_first_project(client):
    client.set_cookie("agentao_memory_project_localhost", "²")
    assert client.get("/overview").status_code == 200
    assert client.get("/memories.json").status_code == 200


@pytest.mark.parametrize("asof", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00"])
def test_preview_date_outside_utc_years_is_explained(client, asof):
    page = client.get("/preview", query_string={"asof": asof, "q": "uv"})
    assert page.status_code == 200
    assert "outside the years 1 to 9999" in page.get_data(as_text=True)
    twin = client.get("/preview.json", query_string={"asof": asof})
    assert twin.status_code == 400 and "outside the years 1 to 9999" in twin.get_json()["error"]


@pytest.mark.parametrize("asof", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59+00:00"])
def test_preview_at_the_edges_of_the_calendar_answers(client, asof):
    assert client.get("/preview.json", query_string={"asof": asof, "q": "uv"}).status_code == 200


def test_deeply_nested_json_body_is_400_and_changes_nothing(seeded, client):
    conn = sqlite3.connect(seeded.project_db)
    item = conn.execute("SELECT id FROM memory_review_queue").fetchone()[0]
    memory = conn.execute("SELECT id FROM memories WHERE deleted_at IS NULL").fetchone()[0]
    conn.close()
    before = file_digest(seeded.project_db, seeded.user_db)
    deep = '{"a":' * 50_000 + "1" + "}" * 50_000
    for url in (
        "/reviews/approve",
        f"/reviews/{item}/reject",
        f"/memories/project/{memory}/edit",
        "/reviews/erase",
    ):
        r = client.post(
            url, data=deep, headers={"Content-Type": "application/json", "Accept": "application/json"}
        )
        assert r.status_code == 400, url
        assert "nested too deeply" in r.get_json()["message"], url
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_every_405_says_which_methods_the_url_allows(seeded, client):
    app = seeded.app()
    fill = {
        "store": "project",
        "key": "project",
        "memory_id": "x",
        "item_id": "x",
        "action": "approve",
        "job_id": "0" * 12,
        "filename": "app.css",
        "table": "memories",
        "row_id": "x",
        "token": "t",
    }
    checked = 0
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        url = rule.build(
            {a: fill[a] for a in rule.arguments if a not in (rule.defaults or {})}
            | dict(rule.defaults or {}),
            append_unknown=False,
        )[1]
        for method in {"GET", "POST", "PUT", "DELETE", "PATCH"} - rule.methods:
            r = client.open(url, method=method)
            if r.status_code != 405:
                continue  # another rule at this URL takes the method
            allowed = {m.strip() for m in r.headers["Allow"].split(",")}
            assert rule.methods - {"HEAD", "OPTIONS"} <= allowed and method not in allowed, url
            for other in allowed - {"HEAD", "OPTIONS"}:
                assert client.open(url, method=other).status_code != 405, (url, other)
            checked += 1
    assert checked > 100


MALFORMED = [
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon <script>x</script>\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
    b"G<b>T / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n",
]


def test_waitress_own_error_answers_carry_the_security_headers(seeded):
    import re
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dashboard",
            "--port",
            "0",
            "--project",
            str(seeded.project_dir),
            "--user-db",
            str(seeded.user_db),
        ],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline, port = time.time() + 30, None
        while port is None and time.time() < deadline:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
            port = int(m.group(1)) if m else None
        assert port, "the server did not print its address"
        for request in MALFORMED:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(request)
                answer = b""
                while chunk := s.recv(65536):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
            assert re.match(r"HTTP/1\.[01] 400 ", lines[0]) and b"generated by waitress" in body, lines[0]
            assert headers["x-content-type-options"] == "nosniff", request
            assert "frame-ancestors 'none'" in headers["content-security-policy"]
            assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_slow_headers_from_110_connections_do_not_make_the_dashboard_unreachable(seeded):
    """waitress serves 100 connections and waits 120 s after each byte: 110 local connections
    trickling a header byte at a time held every slot.  A connection whose headers are not in
    within HEADER_SECONDS is closed, so a real request gets its answer (a real server)."""
    import re
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dashboard",
            "--port",
            "0",
            "--project",
            str(seeded.project_dir),
            "--user-db",
            str(seeded.user_db),
        ],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    slow = []
    try:
        deadline, port = time.time() + 30, None
        while port is None and time.time() < deadline:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
            port = int(m.group(1)) if m else None
        assert port, "the server did not print its address"
        for _ in range(110):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\n")
            slow.append(s)
        asked = socket.create_connection(("127.0.0.1", port), timeout=60)
        asked.sendall(
            f"GET /static/app.css HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        give_up = time.time() + 60
        while not answer.startswith(b"HTTP/1.1 ") and time.time() < give_up:
            for s in slow:  # a header byte each, as a slow client sends them
                try:
                    s.sendall(b"X")
                except OSError:
                    pass
            asked.settimeout(1)
            try:
                answer += asked.recv(65536)
            except TimeoutError:
                pass
        assert answer.startswith(b"HTTP/1.1 "), "no answer while slow connections held the server"
        asked.close()
    finally:
        for s in slow:
            s.close()
        proc.terminate()
        proc.wait(timeout=10)


# JSON bodies of the wrong shape, found by walking every POST route with crafted bodies: each
# is refused with the field's name (the stores unchanged), never a 500.
JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true"}


@pytest.mark.parametrize("url", ["/preview", "/preview/ranked"])
@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_a_json_body_sent_to_the_preview_form_says_where_scripts_send_it(client, url, headers):
    r = client.post(url, json={"q": "uv"}, headers=headers)
    assert r.status_code == 415, r.status_code
    assert "/preview.json" in BeautifulSoup(r.data, "html.parser").get_text()


def test_a_preview_question_with_a_lone_surrogate_is_refused_with_a_message(client):
    r = client.post("/preview.json", data='{"q": "uv \\ud800"}', content_type="application/json")
    assert r.status_code == 400 and "lone surrogate" in r.get_json()["message"]


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("tags", 5, "'tags' must be text (comma-separated) or a list of texts."),
        ("tags", {"a": "b"}, "'tags' must be text (comma-separated) or a list of texts."),
        ("tags", ["ok", None, 3], "'tags' must be text (comma-separated) or a list of texts."),
        ("type", ["note"], "'type' must be text."),
        ("type", 7, "'type' must be text."),
    ],
)
def test_an_edit_whose_json_field_is_not_text_is_refused_and_changes_nothing(
    seeded, client, field, value, says
):
    memory = next(m for m in client.get("/memories.json").get_json()["items"] if m["store"] == "project")
    before = file_digest(seeded.project_db, seeded.user_db)
    body = {"value": "Edited.", "updated_at": memory["updated_at"], field: value}
    r = client.post(f"/memories/project/{memory['id']}/edit", json=body, headers=JSON)
    assert r.status_code == 400 and r.get_json()["message"] == says
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_a_delete_whose_shown_in_is_not_text_answers_with_the_memory_deleted(seeded, client):
    """The delete is done before the answer is drawn: an odd ``shown_in`` (which list's row
    to redraw) must not turn a delete that worked into a 500 saying nothing was changed."""
    memory = next(m for m in client.get("/memories.json").get_json()["items"] if m["store"] == "project")
    body = {"updated_at": memory["updated_at"], "shown_in": ["list"]}
    r = client.post(f"/memories/project/{memory['id']}/delete", json=body, headers=HTMX)
    assert r.status_code == 200 and "The agent no longer sees it" in r.get_data(as_text=True)
    gone = client.get(f"/memories/project/{memory['id']}.json").get_json()["memory"]
    assert gone["deleted_at"] is not None


@pytest.mark.parametrize("url", ["/reviews/approve", "/reviews/reject", "/reviews/erase"])
@pytest.mark.parametrize("ids", [5, True, [["x"]], [{"id": "x"}]], ids=["int", "bool", "nested", "object"])
def test_review_ids_that_are_not_strings_are_refused_and_change_nothing(seeded, client, url, ids):
    before = file_digest(seeded.project_db, seeded.user_db)
    r = client.post(url, json={"ids": ids, "confirm": "1"}, headers=JSON)
    assert r.status_code == 400 and r.get_json()["message"] == "'ids' must be a list of strings."
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_one_review_id_sent_as_a_string_is_that_item_not_its_letters(client):
    item = client.get("/reviews.json").get_json()["items"][0]
    r = client.post("/reviews/reject", json={"ids": item["id"]}, headers=JSON)
    assert [o["id"] for o in r.get_json()["outcomes"]] == [item["id"]]
