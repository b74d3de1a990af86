"""One number per fact (#29, #31): the header's badges, the overview's sentences, the list
pages' headlines and the JSON twins give the same count, on the demo and after each action,
and the header follows an action without a reload (every htmx fragment answer redraws it).

The browser walk of the same journey is tests/browser/test_counts_agree.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from agentao_world import BrowserClient, wait_for_job
from bs4 import BeautifulSoup

from dashboard import create_app, facts
from dashboard.demo import build_demo
from dashboard.findings.rules import Finding
from dashboard.findings.scan import Item, Report

HTMX = {"HX-Request": "true"}
RISKY = ("secret", "personal", "instruction")


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def demo(tmp_path):
    project_dir, user_db = build_demo(tmp_path)
    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    app.test_client_class = BrowserClient
    return app.test_client(), project_dir / ".agentao" / "memory.db", user_db


def oob(answer, tab):
    """What a fragment answer puts inside a tab of the header, out of band (None: nothing)."""
    return answer.select_one(f'[hx-swap-oob="innerHTML:#tabs a[data-tab={tab}]"]')


def badge(page, tab):
    """The count beside a tab as a number (a page's header, or a fragment's out-of-band
    redraw of it), None when there is none."""
    inside = page.select_one(f'nav#tabs a[data-tab="{tab}"]') or oob(page, tab)
    count = inside.select_one(".count")
    return None if count is None else int(count["data-count"])


def risky_in_files(client) -> int:
    """Entries with a secret, personal data or an instruction, from the findings' own list."""
    items = client.get("/findings.json?per_page=1000").get_json()["items"]
    return len({(i["store"], i["table"], i["row_id"]) for i in items if i["category"] in RISKY})


def pending_in_file(project_db) -> int:
    with sqlite3.connect(f"file:{project_db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM memory_review_queue WHERE status = 'pending'").fetchone()[0]


def agree(client, project_db) -> dict:
    """Every place a person reads a count, against each other and against the files."""
    findings_page = soup(client.get("/findings"))
    twin = client.get("/findings.json").get_json()
    overview = client.get("/overview.json").get_json()["counts"]
    headline = findings_page.select_one("[data-field=risky]")
    risky = risky_in_files(client)
    assert int(headline["data-count"]) == twin["risky"]["count"] == overview["risky"] == risky
    assert headline.text.strip() == twin["risky"]["text"]
    # The scan is held now: the tab shows it, on the Findings page and on any other.
    assert badge(findings_page, "findings") == (risky or None)
    assert badge(soup(client.get("/summaries")), "findings") == (risky or None)
    pending = pending_in_file(project_db)
    reviews = client.get("/reviews.json").get_json()["counts"]
    assert overview["pending"] == reviews["pending"] == pending
    assert badge(findings_page, "reviews") == (pending or None)
    # The block's characters: the preview's own reading of the same block.
    assert client.get("/preview.json").get_json()["budgets"]["stable"]["used"] == overview["block"]["chars"]
    # What the agent knows and what is deleted: the Memories list says the same.
    assert client.get("/memories.json").get_json()["total"] == overview["knows"]
    assert (
        client.get("/memories.json?deleted=1").get_json()["total"] == overview["knows"] + overview["deleted"]
    )
    return {"risky": risky, "pending": pending}


def test_the_demo_says_one_number_for_risky_everywhere(demo):
    client, project_db, _user_db = demo
    seen = agree(client, project_db)
    assert seen == {"risky": 4, "pending": 4}  # the demo holds both; 7 and 10 were said before


def test_approve_and_reject_redraw_the_header_counts(demo):
    client, project_db, _user_db = demo
    agree(client, project_db)
    items = client.get("/reviews.json").get_json()["items"]
    for verb, item in (("approve", items[0]), ("reject", items[1])):
        page = soup(client.get("/reviews"))
        form = {i["name"]: i["value"] for i in page.select("#review-form input[type=hidden]")}
        answer = soup(client.post(f"/reviews/{item['id']}/{verb}", data=form, headers=HTMX))
        assert oob(answer, "reviews") and oob(answer, "findings"), verb
        assert badge(answer, "reviews") == pending_in_file(project_db)
        agree(client, project_db)
    # In bulk: the two left, approved together.
    page = soup(client.get("/reviews"))
    form = {i["name"]: i["value"] for i in page.select("#review-form input[type=hidden]")}
    answer = soup(
        client.post("/reviews/approve", headers=HTMX, data=dict(form, ids=[i["id"] for i in items[2:4]]))
    )
    assert pending_in_file(project_db) == 0
    assert oob(answer, "reviews") and badge(answer, "reviews") is None
    agree(client, project_db)


def test_forget_about_me_redraws_the_header_when_its_job_ends(demo):
    client, project_db, _user_db = demo
    before = agree(client, project_db)
    plan = client.get("/forget/about.json").get_json()
    user = next(s for s in plan["stores"] if s["store"] == "user")
    answer = soup(
        client.post(
            "/forget/about",
            headers=HTMX,
            data={
                "store": "user",
                "fingerprint-user": user["fingerprint"],
                "cat-user": user["categories"],
                "confirm": plan["phrase"],
            },
        )
    )
    job = answer.select_one(".job")["data-job"]
    assert wait_for_job(client, f"/forget/jobs/{job}")["state"] == "done"
    final = soup(client.get(f"/forget/jobs/{job}", headers=HTMX))  # the page's last poll
    after = pending_in_file(project_db)
    assert oob(final, "reviews") is not None
    assert badge(final, "reviews") == (after or None)
    # The files changed after the last scan: no findings count rather than a stale one.
    assert badge(final, "findings") is None
    seen = agree(client, project_db)
    assert seen["risky"] < before["risky"]


def test_a_hard_purge_leaves_no_stale_findings_count(demo):
    client, project_db, _user_db = demo
    before = agree(client, project_db)
    secret = next(i for i in client.get("/findings.json").get_json()["items"] if i["category"] == "secret")
    url = f"/forget/memory/{secret['store']}/{secret['row_id']}"
    phrase = client.get(url + ".json").get_json()["confirm"]["phrase"]
    answer = soup(client.post(url, headers=HTMX, data={"mode": "purge", "confirm": phrase}))
    job = answer.select_one(".job")["data-job"]
    assert wait_for_job(client, f"/forget/jobs/{job}")["verdict"] == "verified erased"
    final = soup(client.get(f"/forget/jobs/{job}", headers=HTMX))
    assert oob(final, "reviews") is not None
    assert badge(final, "findings") is None
    assert agree(client, project_db)["risky"] == before["risky"] - 1


def test_a_fragment_redraws_only_the_counts_not_the_tabs(demo):
    """The live pulse or a region's refresh answers from another URL than the page shown: the
    tabs stay (which is current, where the focus is); only the counted tabs' insides change."""
    client, _project_db, _user_db = demo
    answer = soup(client.get("/overview/risky", headers=HTMX))
    assert answer.select_one("nav") is None
    assert sorted(e["hx-swap-oob"] for e in answer.select("[hx-swap-oob^='innerHTML:#tabs']")) == [
        "innerHTML:#tabs a[data-tab=findings]",
        "innerHTML:#tabs a[data-tab=reviews]",
    ]
    assert badge(answer, "findings") == 4  # the sentence's own scan, held now
    assert oob(answer, "reviews").text.split() == ["Suggestions", "4"]


def test_a_scan_out_of_time_says_at_least_everywhere(tmp_path):
    project_dir, user_db = build_demo(tmp_path)
    client = create_app(
        {
            "PROJECT_DIR": project_dir,
            "USER_DB": user_db,
            "TESTING": True,
            "AUTH_TOKEN": False,
            "FINDINGS_TIME_LIMIT_MS": 0,
        }
    ).test_client()
    client.environ_base["HTTP_SEC_FETCH_SITE"] = "same-origin"
    twin = client.get("/findings.json").get_json()
    assert not twin["complete"] and twin["risky"]["text"].startswith("At least ")
    overview = client.get("/overview.json").get_json()
    sentence = next(s for s in overview["sentences"] if s["code"] == "risky")
    assert sentence["text"] == twin["risky"]["text"] and not overview["counts"]["risky_complete"]
    count = soup(client.get("/summaries")).select_one('nav#tabs a[data-tab="findings"] .count')
    assert count.has_attr("data-at-least") and count.text == f"{twin['risky']['count']}+"
    assert count["title"] == twin["risky"]["text"]


def test_delete_and_restore_redraw_the_header_and_the_counts_follow(demo):
    """A soft-deleted secret is still in the file: still risky, now also deleted-on-disk."""
    client, project_db, _user_db = demo
    agree(client, project_db)
    before = client.get("/overview.json").get_json()["counts"]
    secret = next(i for i in client.get("/findings.json").get_json()["items"] if i["category"] == "secret")
    page = f"/memories/{secret['store']}/{secret['row_id']}"
    for form_id, deleted in (("#delete-form", before["deleted"] + 1), ("#restore-form", before["deleted"])):
        form = soup(client.get(page)).select_one(form_id)
        fields = {i["name"]: i.get("value", "") for i in form.select("input[type=hidden]")}
        answer = soup(client.post(form["action"], data=fields, headers=HTMX))
        assert oob(answer, "findings") is not None, form_id
        risky = agree(client, project_db)["risky"]
        assert risky == before["risky"]
        # The memory's page marks its findings from a scan of the files after the write.
        assert badge(answer, "findings") == risky
        now = client.get("/overview.json").get_json()["counts"]
        assert (now["deleted"], now["knows"]) == (deleted, before["knows"] + before["deleted"] - deleted)


def _item(row_id, category, rule="r"):
    return Item(
        "project",
        "memories",
        row_id,
        row_id,
        Finding(rule, category, "content", 0, 1, "x", "why"),
        "stable",
        "",
        "live",
    )


def test_an_entry_is_risky_once_and_upkeep_is_not_risky():
    report = Report(
        items=[
            _item("a", "personal", "phone"),
            _item("a", "personal", "email"),
            _item("b", "secret"),
            _item("c", "conflict"),
            _item("d", "upkeep"),
        ]
    )
    found = facts.risky_in(report)
    assert (found.count, found.complete) == (2, True)
    assert found.by_category == {"secret": 1, "personal": 2, "instruction": 0}


def test_a_scan_cut_short_says_at_least():
    from flask import Flask
    from flask_babel import Babel

    app = Flask(__name__)
    Babel(app)
    with app.test_request_context("/"):
        found = facts.risky_in(Report(items=[_item("a", "secret")], timed_out=True))
        assert found.text.startswith("At least 1 entry")
        assert facts.risky_badge(Report(items=[_item("a", "secret")], timed_out=True), "").at_least
        # A scan cut short before it found anything is not "nothing risky": the tab says 0+.
        empty = facts.risky_badge(Report(timed_out=True), "")
        assert empty is not None and (empty.count, empty.at_least) == (0, True)
        assert facts.risky_badge(Report(), "") is None


def test_a_scan_that_could_not_read_a_store_never_says_nothing_is_risky():
    """A store busy or broken during the scan is left out of it; the tab then says "0+", not
    nothing, and the words say why (it hid a count of 4 in a browser walk under load)."""
    from flask import Flask
    from flask_babel import Babel

    app = Flask(__name__)
    Babel(app)
    unread = [{"store": "user", "kind": "busy", "message": "The file is busy."}]
    with app.test_request_context("/"):
        empty = facts.risky_badge(Report(problems=unread), "")
        assert empty is not None and (empty.count, empty.at_least) == (0, True)
        found = facts.risky_in(Report(items=[_item("a", "secret")], problems=unread))
        assert not found.complete and "could not be read" in found.text
        assert found.text.startswith("At least 1 entry")


def test_a_store_that_cannot_be_read_is_never_counted_as_nothing_risky(demo):
    """A store left out of the scan because it cannot be read (here: not an SQLite file) is
    not counted: the tab, the overview and the Findings page say "at least", and why, never
    the other store's count as if it were all (the tab's count vanished in a browser walk)."""
    client, _project_db, user_db = demo
    for side in ("-wal", "-shm"):
        Path(f"{user_db}{side}").unlink(missing_ok=True)
    user_db.write_bytes(b"not a database " * 100)
    page = soup(client.get("/findings"))
    count = page.select_one('nav#tabs a[data-tab="findings"] .count')
    assert count is not None and count.has_attr("data-at-least"), count
    assert "could not be read" in count["title"]
    twin = client.get("/findings.json").get_json()
    overview = client.get("/overview.json").get_json()["counts"]
    assert int(count["data-count"]) == twin["risky"]["count"] == overview["risky"] == 2  # the project's
    assert "could not be read" in twin["risky"]["text"]
    # The page lists the unread store once.
    assert [p["store"] for p in twin["problems"]].count("user") == 1
