"""'Forget what is about you' at any size (#30): its twin pages each store's rows as the other lists
do, and a dry run out of time lists what it found, says "at least" and how far it read, erases only
that, and is read again whole by the next view.  Bounds are made small through the app's config and
the rows read between two looks at the clock (store.plan.STEP): counted steps, never wall clock."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from agentao_world import wait_for_job
from bs4 import BeautifulSoup
from jsonschema import Draft202012Validator
from test_forget_about import JSON, lena, rows, world  # noqa: F401 - the fixtures

from dashboard.actions import about as scope
from dashboard.store import plan as plan_sql

SCHEMA = json.loads((Path(__file__).parent.parent / "docs/schemas/forget_about.schema.json").read_text())


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def twin(client, query=""):
    data = client.get(f"/forget/about.json{query}").get_json()
    Draft202012Validator(SCHEMA).validate(data)
    return data, {s["store"]: s for s in data["stores"]}


def form_of(data) -> dict:
    form = {"store": [], "confirm": data["phrase"]}
    for s in data["stores"]:
        if s["total"]:
            form["store"].append(s["store"])
            form[f"fingerprint-{s['store']}"] = s["fingerprint"]
            form[f"cat-{s['store']}"] = s["categories"]
    return form


def test_the_twin_pages_each_stores_rows_and_its_fingerprint_still_names_them_all(lena, monkeypatch):
    client = lena.app().test_client()
    whole, by = twin(client, "?per_page=1000")
    assert whole["complete"] is True and whole["pages"] == 1
    user = by["user"]
    assert user["total"] == len(user["rows"]) == sum(user["goes"].values())
    assert user["rows_read"] == user["rows_total"] and user["complete"] is True

    first, by_first = twin(client, "?per_page=3")
    assert (first["page"], first["per_page"]) == (1, 3)
    assert first["pages"] == math.ceil(max(s["total"] for s in whole["stores"]) / 3)
    paged = []
    for at in range(1, first["pages"] + 1):
        data, by_page = twin(client, f"?per_page=3&page={at}")
        assert by_page["user"]["fingerprint"] == user["fingerprint"]  # every page confirms every row
        assert by_page["user"]["total"] == user["total"]
        paged += by_page["user"]["rows"]
    assert paged == user["rows"]  # in order, each once
    assert client.get("/forget/about.json?per_page=1001").status_code == 400
    assert client.get("/forget/about.json?page=0").status_code == 400

    # The page lists the first of each store and counts the rest, events apart.
    monkeypatch.setattr(scope, "SHOWN", 2)
    section = soup(client.get("/forget/about")).select_one('section.about-store[data-store="user"]')
    listed = section.select('[data-list="goes"] li[data-id]')
    going = user["total"] - user["goes"].get("event", 0)
    assert [li["data-id"] for li in listed] == [r["id"] for r in user["rows"][:2]]
    assert section.select_one("[data-field=goes-more]").text == f"and {going - 2} more"

    # The fingerprint of page 2 erases every row, not that page's.
    r = client.post("/forget/about", data=form_of(twin(client, "?per_page=3&page=2")[0]), headers=JSON)
    assert wait_for_job(client, r.get_json()["url"])["verdict"] == "verified erased"
    assert rows(lena.user_db, "SELECT count(*) FROM memories") == [(0,)]


@pytest.fixture
def cut(lena, monkeypatch):
    """Two rows a look at the clock, and no time at all: each store is read two rows far."""
    monkeypatch.setattr(plan_sql, "STEP", 2)
    return lena.app(FORGET_ABOUT_TIME_LIMIT_MS=0).test_client()


def test_a_dry_run_out_of_time_says_at_least_how_far_it_read_and_erases_only_that(lena, cut):
    data, by = twin(cut)
    assert data["complete"] is False
    user, project = by["user"], by["project"]
    listed = [r for r in user["rows"] if r["kind"] != "event"]
    assert (user["complete"], user["rows_read"], len(listed)) == (False, 2, 2)
    in_user = sum(
        rows(lena.user_db, f"SELECT count(*) FROM {t}")[0][0]
        for t in ("memories", "memory_review_queue", "session_summaries")
    )
    assert user["rows_total"] == in_user > 2
    assert (project["complete"], project["rows_read"]) == (False, 2)

    page = soup(cut.get("/forget/about"))
    assert page.select_one("[data-field=summary] strong").text.startswith("At least ")
    said = page.select_one('section[data-store="user"] [data-field=cut]')
    assert f"read 2 of the {in_user} rows in this file" in said.text
    assert said.select_one("a")["href"] == "/forget/about"  # look again
    assert page.select_one('section[data-store="project"] [data-field=stays]').text.startswith(
        "Of the rows read, these stay:"
    )

    # Erasing it erases the two memories it listed (and their history), nothing it did not read.
    kept = {r[0] for r in rows(lena.user_db, "SELECT id FROM memories")} - {r["id"] for r in listed}
    form = page.select_one("#about-form")
    posted = {i["name"]: i["value"] for i in form.select("input[type=hidden]") if i["name"] == "partial"}
    r = cut.post("/forget/about", data={**form_of(data), **posted}, headers=JSON)
    assert wait_for_job(cut, r.get_json()["url"])["verdict"] == "verified erased"
    assert {r[0] for r in rows(lena.user_db, "SELECT id FROM memories")} == kept
    report = soup(cut.get(r.get_json()["url"])).select_one("[data-field=gone]")
    assert "It did not read every row" in report.text and report.select_one("a")["href"] == "/forget/about"
    assert not rows(
        lena.user_db, "SELECT id FROM memory_events WHERE memory_id NOT IN (SELECT id FROM memories)"
    )


def test_a_dry_run_cut_short_is_not_kept_the_next_view_reads_again(lena, cut):
    assert twin(cut)[0]["complete"] is False
    cut.application.config["FORGET_ABOUT_TIME_LIMIT_MS"] = None  # the next view has the time
    data, by = twin(cut)
    assert data["complete"] is True and by["user"]["rows_read"] == by["user"]["rows_total"]
    page = soup(cut.get("/forget/about"))
    assert not page.select("[data-field=cut]")
    assert not page.select_one("[data-field=summary] strong").text.startswith("At least")


def test_a_read_the_agent_tore_and_that_is_read_again_counts_each_row_once(lena, monkeypatch):
    from dashboard.store import connection, scoped

    client = lena.app().test_client()
    _data, by = twin(client)
    # A read an agent's write tore is done again from the start (store.connection.read).
    monkeypatch.setattr(
        scoped, "read", lambda path, fn: (connection.read(path, fn), connection.read(path, fn))[1]
    )
    _again, by_again = twin(lena.app().test_client())
    for key in ("stays", "kept_total", "kept", "rows_read", "rows_total", "goes"):
        assert by_again["project"][key] == by["project"][key], key


def test_erasing_a_dry_run_cut_short_erases_what_it_listed_and_calls_nothing_it_never_read_new(lena, cut):
    # Soft-deleted memories and their history in the user store: a dry run two rows long lists
    # two of them; the rest it never read must not come back as rows "that arrived since".
    for i in range(3):
        m = lena.save(f"old thing {i}", f"An old fact number {i} about me.", ["user"], scope="user")
        lena.manager.delete(m.id)
    data, by = twin(cut)
    assert by["user"]["complete"] is False
    listed = {r["id"] for r in by["user"]["rows"] if r["kind"] != "event"}
    before = {r[0] for r in rows(lena.user_db, "SELECT id FROM memories")}
    r = cut.post("/forget/about", data={**form_of(data), "partial": "1"}, headers=JSON)
    job = wait_for_job(cut, r.get_json()["url"])
    assert job["verdict"] == "verified erased"
    assert all(not res.get("kept") for res in job["results"]), [
        res.get("kept_by_kind") for res in job["results"]
    ]
    assert {r[0] for r in rows(lena.user_db, "SELECT id FROM memories")} == before - listed
    report = soup(cut.get(r.get_json()["url"]))
    assert not report.select("[data-field=kept]")
    assert "It did not read every row" in report.select_one("[data-field=gone]").text
