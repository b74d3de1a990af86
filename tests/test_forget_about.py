"""Forgetting as a person asks for it (#21): one memory by its title, "what is about me", "everything"
on screen only.  Every outcome is read back from the files and through agentao's own manager."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from agentao_world import Agent, BrowserClient, file_digest, wait_for_job
from bs4 import BeautifulSoup
from jsonschema import Draft202012Validator
from test_forget import files_of, naive_hits

from dashboard import create_app
from dashboard.views.forget.one import typeable

HTMX = {"HX-Request": "true"}
JSON = {"Accept": "application/json"}
CONTACT = "Support escalations go to sam.jones@example.com or +49 170 1234567 after hours."
TALK = "Sam said the office number is +49 30 901820 and to mail sam.jones@example.com."


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def rows(db, sql):
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def world(seeded) -> Agent:
    """The seeded corpus plus a project memory and a session summary holding personal data."""
    seeded.contact = seeded.save("support contact", CONTACT, ["support"], scope="project")
    seeded.summary(TALK, session_id="session-c")
    [seeded.asked] = seeded.crystallize("We must never deploy on Fridays, call Sam on +49 170 7654321 first.")
    return seeded


@pytest.fixture
def client(world):
    return world.app().test_client()


NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
ABOUT_LENA = "Lena asked to move CI to uv; Marta reviewed the change."


@pytest.fixture
def lena(world) -> Agent:
    """The corpus as a person named Lena builds it: her name, e-mail and phone saved for her; a
    colleague's phone and two project credentials in the project; a summary and a suggestion
    naming her; a project note with her own number."""
    world.save("user_name", "Lena Vogel", ["user"])
    world.save("user_email", "My e-mail is lena.vogel@posteo.de", ["user"])
    world.save("user_phone", "My phone is +49 151 23456789", ["user"])
    world.marta = world.save("marta phone", "Marta's phone is +49 170 5550123", ["team"], scope="project")
    world.db_url = world.save(
        "db_url_staging", "Staging DB: postgres://app:s3cretPassw0rd@staging-db:5432/app", ["infra"]
    )
    world.npm = world.save("npm publish", f"Publish with {NPM} as the token.", ["release"])
    world.her_number = world.save("release calls", "For releases call +4915123456789 first.", ["release"])
    world.summary(ABOUT_LENA, session_id="session-l")
    [world.named] = world.crystallize("Lena here: we must never deploy on Fridays.")
    return world


def _plan(client):
    plan = client.get("/forget/about.json").get_json()
    return plan, {s["store"]: s for s in plan["stores"]}


def test_about_me_decides_from_who_you_are_and_lists_what_goes_and_what_stays(client, lena):
    plan, by = _plan(client)
    assert plan["person"]["names"][0] == "Lena Vogel" and len(plan["person"]["contacts"]) == 2
    user_ids = {r[0] for r in rows(lena.user_db, "SELECT id FROM memories")}
    assert {r["id"] for r in by["user"]["rows"] if r["kind"].startswith("memory")} == user_ids
    goes = {r["id"]: (r["why"], r["detail"]) for r in by["project"]["rows"] if r["kind"] != "event"}
    summary_id = rows(lena.project_db, "SELECT id FROM session_summaries WHERE session_id = 'session-l'")[0][
        0
    ]
    assert goes[summary_id] == ("your_name", "Lena")  # the summary that names her
    assert goes[lena.named.id] == ("your_name", "Lena")  # her own words, in the suggestion's evidence
    assert goes[lena.her_number.id][0] == "your_contact"  # her phone, written another way
    stays = {r["id"]: r["why"] for r in by["project"]["kept"]}
    assert stays[lena.marta.id] == "not_yours"  # a colleague's phone is not about her
    assert stays[lena.db_url.id] == stays[lena.npm.id] == "project_secret"
    assert not {lena.marta.id, lena.db_url.id, lena.npm.id, lena.contact.id} & set(goes)
    assert NPM not in str(plan) and "s3cretPassw0rd" not in str(plan)  # masked as Findings masks
    schema = json.loads((Path(__file__).parent.parent / "docs/schemas/forget_about.schema.json").read_text())
    Draft202012Validator(schema).validate(plan)

    page = soup(client.get("/forget/about"))
    form = page.select_one("#about-form")
    project = page.select_one('section.about-store[data-store="project"]')
    going = project.select_one('[data-list="goes"]')
    staying = project.select_one('[data-list="stays"]')
    assert going.sourceline < form.sourceline and staying.sourceline < form.sourceline  # before confirming
    line = going.select_one(f'li[data-id="{summary_id}"]')
    assert ABOUT_LENA in line.text and "names you (Lena)" in line.text
    marta = staying.select_one(f'li[data-id="{lena.marta.id}"]')
    assert marta.text.startswith("Marta's phone is") and "stays: not about you" in marta.text
    secret = staying.select_one(f'li[data-id="{lena.npm.id}"]')
    assert "stays: it belongs to the project" in secret.text and secret.select_one("a[href*=findings]")
    assert "Lena Vogel" in page.select_one("[data-field=person]").text


def test_about_me_erases_what_is_about_you_verified_and_keeps_the_rest_live(client, lena):
    plan, by = _plan(client)
    form = {"store": [], "confirm": plan["phrase"]}
    for s in plan["stores"]:
        form["store"].append(s["store"])
        form[f"fingerprint-{s['store']}"] = s["fingerprint"]
        form[f"cat-{s['store']}"] = s["categories"]
    before = file_digest(lena.project_db, lena.user_db)
    wrong = client.post("/forget/about", data={**form, "confirm": "project"}, headers=JSON)
    assert wrong.status_code == 400 and plan["phrase"] in wrong.get_json()["message"]
    assert file_digest(lena.project_db, lena.user_db) == before
    user_texts = [r[0] for r in rows(lena.user_db, "SELECT content FROM memories")]

    r = client.post("/forget/about", data=form, headers=JSON)
    assert r.status_code == 202, r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job  # the bytes searched, as every purge does
    for table in ("memories", "memory_events", "memory_review_queue", "session_summaries"):
        assert rows(lena.user_db, f"SELECT count(*) FROM {table}") == [(0,)], table
    # agentao's own view: her name is in no summary or suggestion, the rest is live.
    said = [s.summary_text for s in lena.project_store.list_session_summaries()]
    assert said and not [t for t in said if "Lena" in t]
    asked = lena.manager.list_review_items(status=None)
    assert not [i for i in asked if "Lena" in i.evidence + i.content + i.title]
    live = {m.id: m.content for m in lena.manager.get_all_entries()}
    assert {lena.marta.id, lena.db_url.id, lena.npm.id, lena.contact.id} <= set(live)
    assert live[lena.marta.id] == "Marta's phone is +49 170 5550123" and NPM in live[lena.npm.id]
    assert lena.her_number.id not in live and "user_language" not in {
        m.title for m in lena.manager.get_all_entries()
    }
    assert {"Package Manager", "database", "release process"} <= {
        m.title for m in lena.manager.get_all_entries()
    }
    assert (
        naive_hits(
            files_of(lena.project_db) + files_of(lena.user_db),
            [ABOUT_LENA, "Lena here: we must never deploy", "For releases call +4915123456789", *user_texts],
        )
        == []
    )


def test_about_me_without_a_name_or_contact_takes_only_what_was_saved_for_you(client, world):
    plan, by = _plan(client)
    assert plan["person"] == {"names": [], "contacts": []}
    project = {(r["kind"], r["why"]) for r in by["project"]["rows"] if r["kind"] != "event"}
    assert project == {("review", "user_scope")}  # "I prefer tabs" drawn from your words
    stays = {r["id"]: r["why"] for r in by["project"]["kept"]}
    assert stays[world.contact.id] == "not_yours"  # support's phone number is nobody's "me"
    live_project = rows(world.project_db, "SELECT count(*) FROM memories WHERE deleted_at IS NULL")[0][0]
    assert by["project"]["stays"]["memories"] == live_project
    assert by["project"]["stays"]["summaries"] == 3 and by["project"]["stays"]["reviews"] == 2
    page = soup(client.get("/forget/about"))
    assert page.select_one("#about-form [data-field=phrase]").text == plan["phrase"]
    assert {s["data-store"] for s in page.select("section.about-store")} == {"project", "user"}


def test_about_me_refuses_when_a_confirmed_row_changed(client, lena):
    _plan_, by = _plan(client)
    lena.save("release calls", "For releases call +4915123456789 first, then Marta.", ["release"])
    before = file_digest(lena.project_db)
    r = client.post(
        "/forget/about",
        headers=JSON,
        data={
            "store": "project",
            "fingerprint-project": by["project"]["fingerprint"],
            "confirm": "forget me",
        },
    )
    assert r.status_code == 409 and "changed since the dry run" in r.get_json()["message"]
    assert file_digest(lena.project_db) == before


def test_about_me_htmx_answer_replaces_the_dry_run_and_takes_focus(client, world):
    plan = client.get("/forget/about.json").get_json()
    user = next(s for s in plan["stores"] if s["store"] == "user")
    answer = client.post(
        "/forget/about",
        headers=HTMX,
        data={
            "store": "user",
            "fingerprint-user": user["fingerprint"],
            "cat-user": user["categories"],
            "confirm": plan["phrase"],
        },
    )
    page = soup(answer)
    job = page.select_one(".job")
    assert job is not None and page.find("html") is None
    focused = page.select("[autofocus]")
    assert len(focused) == 1 and focused[0].get("tabindex") == "-1"
    assert page.select_one('[hx-swap-oob="innerHTML:#status"]')  # the result where the eye is
    assert "user_language" not in answer.get_data(as_text=True)  # no erased title in view
    wait_for_job(client, f"/forget/jobs/{job['data-job']}")
    report = soup(client.get(f"/forget/jobs/{job['data-job']}", headers=HTMX))
    assert "Facts about the project stay" in report.select_one("[data-field=gone]").text


def test_one_memory_htmx_purge_shows_the_verdict_not_the_text(client, world):
    contact = world.contact
    page = soup(client.get(f"/forget/memory/project/{contact.id}"))
    form = page.select_one("#purge-memory-form")
    assert form["hx-target"] == "#forget-one" and page.select_one("#forget-one pre").text == CONTACT
    assert form.select_one("[data-field=phrase]").text == "support contact"
    refused = client.post(
        f"/forget/memory/project/{contact.id}", headers=HTMX, data={"mode": "purge", "confirm": "project"}
    )
    assert refused.headers["HX-Reswap"] == "none"  # the form stays, to be corrected
    assert (
        "“support contact”"
        in soup(refused).select_one('[hx-swap-oob="innerHTML:#status"] .error-message').text
    )
    answer = client.post(
        f"/forget/memory/project/{contact.id}",
        headers=HTMX,
        data={"mode": "purge", "confirm": "support contact"},
    )
    job = soup(answer).select_one(".job")
    done = wait_for_job(client, f"/forget/jobs/{job['data-job']}")
    assert done["verdict"] == "verified erased" and done["memory"] == {"store": "project", "id": contact.id}
    final = soup(client.get(f"/forget/jobs/{job['data-job']}", headers=HTMX))
    verdict = final.select_one("[data-field=verdict]")
    assert verdict.text == "Erased: no copy left in the file, its journal or side files"
    assert verdict.has_attr("autofocus")
    assert CONTACT not in str(final) and "support contact" not in str(final)
    assert not final.select("form[action*='/forget/memory/']")  # no button for a gone memory
    assert client.get(f"/forget/memory/project/{contact.id}").status_code == 404


def test_a_title_no_one_can_type_is_confirmed_by_its_key(client, world):
    odd = world.save("Note \u202ereversed\u200b x", "Hidden marks in the title.")
    asked = client.get(f"/forget/memory/project/{odd.id}.json").get_json()["confirm"]
    assert asked == {"asks": "key", "phrase": "note_reversed_x"}
    page = soup(client.get(f"/forget/memory/project/{odd.id}"))
    assert "confirmed by its key" in page.select_one("[data-field=untypeable]").text
    r = client.post(
        f"/forget/memory/project/{odd.id}", headers=JSON, data={"mode": "purge", "confirm": "note_reversed_x"}
    )
    assert wait_for_job(client, r.get_json()["url"])["verdict"] == "verified erased"


@pytest.mark.parametrize(
    "text, ok",
    [
        ("travel plan", True),
        ("回答语言 answer", True),
        ("a\u202eb", False),
        ("zero\u200bwidth", False),
        ("no\u00a0break", False),
        ("tab\there", False),
        ("", False),
        ("e\u0301", False),
    ],
)  # not NFC: a keyboard types é
def test_typeable(text, ok):
    assert typeable(text) is ok


def test_forget_everything_names_and_spares_the_project_not_on_screen(tmp_path, world):
    other = Agent(tmp_path / "second", with_user_store=False)
    other.save("service port", "The service listens on port 8081.", ["infra"])
    app = create_app(
        {
            "PROJECT_DIR": [world.project_dir, other.project_dir],
            "USER_DB": world.user_db,
            "TESTING": True,
            "AUTH_TOKEN": False,
        }
    )
    app.test_client_class = BrowserClient
    client = app.test_client()
    dry = client.get("/forget.json").get_json()["everything"]
    assert [s["store"] for s in dry["stores"]] == ["project", "user"]
    assert dry["stores"][0]["memories"] == len(rows(world.project_db, "SELECT id FROM memories"))
    assert dry["untouched_projects"] == [{"name": "project (second)", "path": str(other.project_db)}]
    page = soup(client.get("/forget"))
    assert "Not touched: project (second)" in page.select_one("[data-field=untouched]").text
    assert page.select_one("#everything-form label").text.startswith(
        f"To erase project {dry['stores'][0]['name']} and your user store, type"
    )
    before = file_digest(other.project_db)
    stale = client.post(
        "/forget/everything",
        headers=JSON,
        data={"confirm": "forget everything", "project": str(other.project_db)},
    )
    assert stale.status_code == 409  # not the project on screen
    r = client.post(
        "/forget/everything",
        headers=JSON,
        data={"confirm": "forget everything", "project": dry["stores"][0]["path"]},
    )
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased" and {x["store"] for x in job["results"]} == {"project", "user"}
    assert file_digest(other.project_db) == before
    assert [m.title for m in other.manager.get_all_entries()] == ["service port"]


def test_a_long_purge_shows_its_progress_in_the_status_region(client, world, monkeypatch):
    import threading

    from dashboard.store import purge as purge_sql

    release, real = threading.Event(), purge_sql._vacuum
    monkeypatch.setattr(purge_sql, "_vacuum", lambda conn: (release.wait(10), real(conn)))
    try:
        first = soup(
            client.post(
                f"/forget/memory/project/{world.contact.id}",
                headers=HTMX,
                data={"mode": "purge", "confirm": "support contact"},
            )
        )
        line = first.select_one(".job [data-field=progress]")
        assert line.has_attr("autofocus")  # focus on the work started
        status = first.select_one('[hx-swap-oob="innerHTML:#status"]')
        assert status.text.strip().startswith("Working")
        job_id = first.select_one(".job")["data-job"]
        polled = soup(client.get(f"/forget/jobs/{job_id}", headers=HTMX))
        assert polled.select_one('[hx-swap-oob="innerHTML:#status"]').text.strip().startswith("Working")
        assert not polled.select("[autofocus]")  # a poll never steals focus
    finally:
        release.set()
    wait_for_job(client, f"/forget/jobs/{job_id}")
    done = soup(client.get(f"/forget/jobs/{job_id}", headers=HTMX))
    assert done.select_one('[hx-swap-oob="innerHTML:#status"] .said-ok').text.startswith("Erased")


def test_about_me_follows_what_the_agent_saves_after_it_was_shown(client, lena):
    """The dry run is kept between views while no file moves: a memory agentao saves after it
    was shown is in the next view, on the page and in its twin, and its fingerprint names it."""
    before, by = _plan(client)
    assert client.get("/forget/about").status_code == 200
    later = lena.save(
        "escalation", "Page me at +49 151 23456789 when staging is down.", ["ops"], scope="project"
    )
    after, by_after = _plan(client)
    going = {r["id"]: r["why"] for r in by_after["project"]["rows"] if r["kind"] != "event"}
    assert going[later.id] == "your_contact"
    assert later.id not in {r["id"] for r in by["project"]["rows"]}
    assert by_after["project"]["fingerprint"] != by["project"]["fingerprint"]
    listed = soup(client.get("/forget/about")).select_one('section.about-store[data-store="project"]')
    assert listed.select_one(f'li[data-id="{later.id}"]') is not None
