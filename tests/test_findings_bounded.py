"""A findings page answers whatever the store holds: within its time budget, saying
when it was cut, with the full scan offered as a background job with progress; and
the near-duplicate join says when its bounds left rows out (issue 19 item 3, issue 20)."""

from __future__ import annotations

import http.client
import json
import random
import sqlite3
import threading
from datetime import datetime, timezone

import pytest
from agentao_world import file_digest, seed_corpus, wait_for_job
from bs4 import BeautifulSoup

from dashboard.findings import duplicates
from dashboard.findings import scan as fscan
from dashboard.findings.scan import scan
from dashboard.store import build_refs
from dashboard.store import scan as store_scan

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
JSON = {"Accept": "application/json"}


@pytest.fixture
def many(agent):
    """The usual corpus plus 40 notes, two of them near-duplicates under different keys."""
    seed_corpus(agent)
    for n in range(40):
        agent.save(f"note {n}", f"Service {n} runs behind the gateway on port {8000 + n}.", ["ops"])
    agent.save("uv one", "This project uses uv; run uv sync then uv run pytest.", ["tooling"])
    agent.save("uv two", "This project uses uv: run uv sync, then uv run pytest", ["tooling"])
    agent.manager.delete(
        agent.save("billing mail", "Send invoices to dana.reyes@northwind-mail.com.", ["billing"]).id
    )
    return agent


def test_a_page_out_of_time_answers_with_what_it_read_and_says_so(many, monkeypatch):
    monkeypatch.setattr(store_scan, "BATCH", 5)
    # What every prompt carries is read whole here (its own bound is the test below): the rows are cut.
    whole = fscan._stable_rules
    monkeypatch.setattr(fscan, "_stable_rules", lambda refs, deadline, total: whole(refs))
    before = file_digest(many.project_db, many.user_db)
    client = many.app(CLOCK=lambda: NOW, FINDINGS_TIME_LIMIT_MS=0).test_client()
    data = client.get("/findings.json").get_json()
    assert data["complete"] is False and data["rows_scanned"] == 5 < data["rows_total"]
    assert data["cut"][0].startswith(f"scanned 5 of {data['rows_total']} rows in the time allowed")
    page = BeautifulSoup(client.get("/findings?rescan=1").data, "html.parser")
    notice = page.select_one('[data-field="cut"]')
    assert "scanned 5 of" in notice.text.lower() and "partial" in notice.text
    assert notice.select_one('form[action$="/findings/scan"] [data-action="full-scan"]')
    # The full scan in the background: progress while it runs, then its report is the list.
    started = client.post("/findings/scan", headers=JSON)
    assert started.status_code in (200, 202)
    done = wait_for_job(client, "/findings/scan")  # the latest full scan
    assert done["state"] == "done" and done["progress"] == 1.0
    assert done["result"]["complete"] and done["result"]["rows_scanned"] == data["rows_total"]
    full = client.get("/findings.json?per_page=1000").get_json()
    assert full["complete"] and full["reused"] and full["cut"] == []
    assert not BeautifulSoup(client.get("/findings").data, "html.parser").select('[data-field="cut"]')
    exact = many.app(CLOCK=lambda: NOW).test_client().get("/findings.json?per_page=1000").get_json()
    assert exact["complete"] and full["items"] == exact["items"] and exact["all"] > data["all"]
    assert "conflict.duplicate" in {i["rule"] for i in full["items"]}
    # The page's order (kept from the forked-join test it replaces): category, then reach.
    from dashboard.findings.scan import CATEGORIES, REACH

    ranks = [(list(CATEGORIES).index(i["category"]), list(REACH).index(i["reach"])) for i in exact["items"]]
    assert ranks == sorted(ranks) and {i["category"] for i in exact["items"]} >= {"conflict", "personal"}
    page = BeautifulSoup(client.get(done["url"]).data, "html.parser")
    assert page.select_one('[data-field="done"] a[data-action="show-full"]')
    assert file_digest(many.project_db, many.user_db) == before  # browsing writes nothing


def test_a_running_full_scan_is_shown_polling_on_the_list(many, monkeypatch):
    gate = threading.Event()
    real = store_scan.batches

    def slow(*args, **kwargs):
        gate.wait(10)
        yield from real(*args, **kwargs)

    monkeypatch.setattr("dashboard.findings.scan.batches", slow)
    client = many.app(CLOCK=lambda: NOW).test_client()
    job = client.post("/findings/scan", headers=JSON).get_json()
    assert job["state"] == "running"
    again = client.post("/findings/scan", headers=JSON).get_json()
    assert again["id"] == job["id"]  # one full scan at a time: the running one answers
    # With htmx the answer is the job's fragment, polling itself while it runs.
    fragment = BeautifulSoup(
        client.post("/findings/scan", headers={"HX-Request": "true"}).data, "html.parser"
    ).select_one("#findings-job")
    assert fragment["data-state"] == "running" and fragment["hx-trigger"] == "every 1s"
    assert fragment["hx-get"] == job["url"]
    gate.set()
    assert wait_for_job(client, "/findings/scan")["state"] == "done"
    assert client.get(job["json_url"]).get_json()["id"] == job["id"]
    assert client.get("/findings/scan.json?job=nope").status_code == 404


def test_the_duplicate_join_says_when_common_words_were_skipped(many, monkeypatch):
    refs = build_refs(many.project_dir, many.user_db)
    exact = scan(refs, NOW)
    assert exact.complete and any(i.finding.rule == "conflict.duplicate" for i in exact.items)
    monkeypatch.setattr(duplicates, "COMMON_ROWS", 1)
    monkeypatch.setattr(duplicates, "MIN_TOKENS", 3)
    texts = ["alpha beta gamma delta " + " ".join(f"w{i}" for i in range(20)) + f" x{n}" for n in range(4)]
    pairs, cut = duplicates.pairs_of_sets([f"k{n}" for n in range(4)], [frozenset(t.split()) for t in texts])
    assert cut and cut.common_rows and "too common" in cut.notes()[0]


def test_the_duplicate_join_says_when_it_looked_at_too_many_rows(monkeypatch):
    monkeypatch.setattr(duplicates, "MAX_VISITED", 3)
    rng = random.Random(1)
    sets = [frozenset(f"w{rng.randint(0, 30)}" for _ in range(25)) for _ in range(30)]
    _pairs, cut = duplicates.pairs_of_sets([f"k{n}" for n in range(30)], sets)
    assert cut.capped_rows and "compared with only 3 others" in cut.notes()[-1]
    monkeypatch.setattr(duplicates, "MAX_VISITED", 10**6)
    _pairs, cut = duplicates.pairs_of_sets([f"k{n}" for n in range(30)], sets)
    assert not cut and cut.notes() == []


# --- through a real server: a big scan must not starve other requests --------------


def _big_store(agent, rows: int) -> None:
    from texts import realistic_text, vocabulary

    rng = random.Random(3)
    vocab = vocabulary(rng)
    weights = [1 / (r + 1) for r in range(len(vocab))]
    texts = [realistic_text(rng, vocab, weights, 3990) for _ in range(300)]
    conn = sqlite3.connect(agent.project_db)
    conn.executemany(
        "INSERT INTO memories (id, scope, type, key_normalized, title, content, tags_json,"
        " keywords_json, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (
                f"b{i:07x}",
                "project",
                "note",
                f"big_{i}",
                f"big {i}",
                f"{texts[i % 300]} r{i}",
                "[]",
                "[]",
                "2026-05-01T10:00:00",
                "2026-05-01T10:00:00",
            )
            for i in range(rows)
        ],
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _get(port, cookie, path, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path, headers={"Cookie": cookie, "Accept": "application/json"})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


def test_a_full_scan_in_the_background_leaves_the_server_answering(agent):
    from served import login, start_server

    seed_corpus(agent)
    _big_store(agent, 6000)
    proc, port, token = start_server(agent.project_dir, agent.user_db, threads=4)
    try:
        cookie = login(port, token)
        # The first view of a page reads the store once (not the scan's concern): before the scan.
        assert _get(port, cookie, "/overview")[0] == 200
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "POST",
            "/findings/scan",
            headers={
                "Cookie": cookie,
                "Accept": "application/json",
                "Origin": f"http://127.0.0.1:{port}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            body="",
        )
        r = conn.getresponse()
        job = json.loads(r.read())
        conn.close()
        assert r.status == 202, job
        for path in ("/static/app.css", "/overview", "/static/app.css", "/overview"):
            assert _get(port, cookie, path)[0] == 200
        status, body = _get(port, cookie, job["json_url"])
        state = json.loads(body)
        # Still scanning after the other requests were answered: they ran beside it, not after
        # it (how long they took is bench/bench_findings.py --server's concern).
        assert state["state"] == "running" and state["progress"] is not None and state["progress"] < 1, state
    finally:
        proc.kill()
        proc.wait()


def test_a_recheck_on_a_cut_scan_does_not_call_an_unread_row_fixed(many, monkeypatch):
    exact = many.app(CLOCK=lambda: NOW).test_client().get("/findings.json?per_page=1000").get_json()
    item = next(i for i in exact["items"] if i["label"] == "billing_mail")
    assert item["reach"] == "disk" and item["state"] == "deleted"
    check = next(a["href"] for a in item["actions"] if a["code"] == "check")
    monkeypatch.setattr(store_scan, "BATCH", 5)
    client = many.app(CLOCK=lambda: NOW, FINDINGS_TIME_LIMIT_MS=0).test_client()
    data = client.get(check.replace("?", ".json?", 1)).get_json()
    assert data["complete"] is False and data["verdict"] == "unknown" and not data["held_elsewhere"]
    assert "ran out of time" in data["verdict_text"]


def test_what_every_prompt_carries_is_read_within_the_same_bound_and_about_you_says_so(many, monkeypatch):
    """The stable block's picks (every row's reach depends on them) are read in batches under
    the page's time budget: out of time, the scan stops after one batch, checks no row, and
    About you and its twin say how far it got, as the findings list does."""
    reads = []
    real = store_scan.stable_batches

    def counted(ref):
        for batch in real(ref):
            reads.append(len(batch))
            yield batch

    monkeypatch.setattr(store_scan, "STABLE_BATCH", 2)
    monkeypatch.setattr("dashboard.findings.scan.stable_batches", counted)
    refs = build_refs(many.project_dir, many.user_db)
    full = scan(refs, NOW)
    memories = sum(full.scanned[k]["memories"] for k in full.scanned)
    assert full.complete and sum(reads) == memories and len(reads) >= memories // 2
    reads.clear()
    cut = scan(refs, NOW, time_limit=0)
    assert reads == [2]  # one read, then the budget stopped it
    assert not cut.complete and cut.rows_scanned == 0 and cut.items == []
    assert (
        str(cut.cut[0])
        == f"found what every prompt carries in 2 of {memories} memories, then ran out of time"
    )
    assert str(cut.cut[1]).startswith(f"scanned 0 of {cut.rows_total} rows in the time allowed")

    before = file_digest(many.project_db, many.user_db)
    client = many.app(CLOCK=lambda: NOW, FINDINGS_TIME_LIMIT_MS=0).test_client()
    notice = BeautifulSoup(client.get("/about").data, "html.parser").select_one(
        '#about-findings [data-field="cut"]'
    )
    text = " ".join(notice.text.split())
    assert text.startswith(
        f"Found what every prompt carries in 2 of {memories} memories, then ran out of time;"
    )
    assert f"scanned 0 of {cut.rows_total} rows" in text and notice.a["href"] == "/findings"
    data = client.get("/about.json").get_json()
    assert data["scan_complete"] is False and data["scan"]["rows_scanned"] == 0
    assert data["scan"]["cut"][0].startswith("found what every prompt carries in 2 of")
    assert file_digest(many.project_db, many.user_db) == before  # browsing writes nothing
