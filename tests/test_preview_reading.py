"""A store too large to index within a request (#30): the preview says it is still reading
and shows no answer, never a partial one; the index is built in the background and the
next request answers exactly."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

from agentao_world import agentao_blocks
from bs4 import BeautifulSoup

from dashboard.views.preview import reading

ASOF = "2031-01-01T00:00:00"
ASKED = {"q": "which package manager", "asof": ASOF, "session": "session-b"}


def test_still_reading_then_the_exact_answer(client, seeded, monkeypatch):
    release = threading.Event()
    started: list[threading.Thread] = []
    real = reading.build

    def slow_build(statuses, cjk):
        started.append(threading.current_thread())
        assert release.wait(120), "the test never released the build"
        real(statuses, cjk)

    monkeypatch.setattr(reading, "build", slow_build)
    monkeypatch.setattr(reading, "WAIT_S", 0.01)
    monkeypatch.setattr(reading, "LARGE_BYTES", 0)  # the test's small files count as large
    page = BeautifulSoup(client.get("/preview", query_string=ASKED).get_data(as_text=True), "html.parser")
    assert len(started) == 1
    said = page.select_one('[data-answer="reading"]')
    assert said is not None and "Still reading" in said.text
    assert page.select_one("pre#context-block") is None and page.select_one("pre#stable-block") is None
    twin = client.get("/preview.json", query_string=ASKED)
    assert twin.status_code == 503 and twin.headers["Retry-After"]
    assert twin.get_json()["complete"] is False

    release.set()
    started[0].join(120)
    assert not started[0].is_alive() and len(started) == 1  # one build for both requests
    page = BeautifulSoup(client.get("/preview", query_string=ASKED).get_data(as_text=True), "html.parser")
    assert page.select_one('[data-answer="reading"]') is None
    stable, _context = agentao_blocks(
        seeded, "which package manager", "session-b", datetime(2031, 1, 1, tzinfo=timezone.utc)
    )
    assert page.select_one("pre#stable-block").text == stable


def test_the_background_read_of_a_large_store_is_not_cut_at_a_request_s_limit(seeded, monkeypatch):
    """A request's read stops after 5 s; the index's read in the background thread must not, or on a
    busy machine a 60 MB project store is read as nothing and the preview recalls from the user
    store alone.  Counted in steps, not timed: a request's limit of 0 stops any read at once."""
    from dashboard.preview_source import snapshot
    from dashboard.store import connection
    from dashboard.web import statuses

    app = seeded.app()
    with app.test_request_context("/preview"):
        found = statuses()
        assert all(st.readable for st in found)
        monkeypatch.setattr(connection, "READ_TIME_LIMIT_S", 0)
        monkeypatch.setattr(connection, "READ_STEPS", 1)
        build = threading.Thread(target=reading.build, args=(found, "off"))
        build.start()
        build.join(120)
        snap = snapshot(found)  # the rows the build held: read again (and cut) if it held none
        assert snap.problems == {}
        assert snap.project and snap.user


def test_the_preview_marks_risky_memories_from_the_held_scan_without_scanning_again(client, monkeypatch):
    """The preview marks secrets, personal data and instructions, which hold while no file moves: with
    a scan held for the files as they are, it scans no more (at 100,000 memories a scan costs
    seconds, and a page's own scan is redone once its minute is up)."""
    from dashboard.views import findings

    scans: list[int] = []
    real = findings.scan

    def counted(*args, **kwargs):
        scans.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(findings, "scan", counted)
    monkeypatch.setattr(findings, "REUSE_S", 0)  # a page's own scan is stale at once
    assert client.get("/preview", query_string=ASKED).status_code == 200
    assert len(scans) == 1  # none held yet: the preview's scan
    for _ in range(2):
        assert client.get("/preview", query_string=ASKED).status_code == 200
    assert len(scans) == 1
    assert client.get("/findings").status_code == 200  # Findings itself scans again, as before
    assert len(scans) == 2
