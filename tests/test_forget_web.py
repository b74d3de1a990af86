"""The forget screen as a person and as a script use it: pages, fragments, POSTs, JSON, reports."""

from __future__ import annotations

import sqlite3

import pytest
from agentao_world import file_digest, wait_for_job
from bs4 import BeautifulSoup
from test_forget import LONG, VERSIONS, files_of, naive_hits

HTMX = {"HX-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}
JSON = {"Accept": "application/json"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def rich(seeded):
    seeded.save("user_biography", LONG, ["user"])
    for text in VERSIONS:
        seeded.save("travel plan", text, ["travel"])
    return seeded


@pytest.fixture
def client(rich):
    return rich.app().test_client()


def test_forget_page_fragment_and_twin(client):
    page = soup(client.get("/forget"))
    assert page.select_one('nav a[aria-current="page"]').text == "Forget"
    assert {d["data-store"] for d in page.select(".store-residue")} == {"project", "user"}
    assert page.select_one("#wipe-form") and page.select_one("#everything-form")
    assert soup(client.get("/forget", headers=BOOSTED)).find("html") is not None
    data = client.get("/forget.json").get_json()
    assert [s["store"] for s in data["stores"]] == ["project", "user"]


def test_residue_on_demand_changes_nothing(client, rich):
    before = file_digest(rich.project_db, rich.user_db)
    fragment = soup(client.get("/forget/residue/project", headers=HTMX))
    assert fragment.find("html") is None
    box = fragment.select_one("#residue-project")
    assert box.has_attr("hx-disable")
    assert box.select_one('[data-field="soft_deleted"]').text == "1"
    assert len(box.select('ul.reviews[data-status="pending"] li pre')) == 2  # evidence shown
    full = soup(client.get("/forget/residue/user"))
    assert full.find("html") is not None and full.select_one("#residue-user")
    assert client.get("/forget/residue/user.json").get_json()["soft_deleted"]["count"] == 0
    assert file_digest(rich.project_db, rich.user_db) == before


def test_wipe_post_without_js_with_htmx_and_json(client, rich):
    r = client.post("/forget/wipe", data={"confirm": "yes"})
    assert r.status_code == 303 and "/forget/jobs/" in r.headers["Location"]
    page = soup(client.get(r.headers["Location"]))
    assert page.select_one('[data-field="wipe"]').text.startswith("8 memories soft-deleted")
    assert rich.manager.get_all_entries() == []
    assert rich.manager.list_review_items()  # left alone, as agentao does
    fragment = soup(client.post("/forget/wipe", data={"confirm": "yes"}, headers=HTMX))
    assert fragment.find("html") is None and fragment.select_one('[data-state="done"]')
    data = client.post("/forget/wipe", data={"confirm": "yes"}, headers=JSON).get_json()
    assert data["wipe"]["ok"] and data["wipe"]["memories_cleared"] == 0


def test_wipe_needs_confirmation(client, rich):
    r = client.post("/forget/wipe", data={}, headers=JSON)
    assert r.status_code == 400 and "Nothing was changed" in r.get_json()["message"]
    assert len(rich.manager.get_all_entries()) == 8


def test_dry_run_then_purge_with_typed_name(client, rich):
    client.post("/forget/wipe", data={"confirm": "yes"})
    plan_page = soup(client.get("/forget/plan/project?cat=soft_deleted&cat=events"))
    rows = plan_page.select("tr.plan-row")
    assert {r["data-kind"] for r in rows} == {"memory_deleted", "event"}
    plan = client.get("/forget/plan/project.json?cat=soft_deleted&cat=events").get_json()
    assert len(plan["rows"]) == len(rows)
    form = {"cat": ["soft_deleted", "events"], "fingerprint": plan["fingerprint"]}
    wrong = client.post("/forget/purge/project", data={**form, "confirm": "nope"}, headers=JSON)
    assert wrong.status_code == 400 and plan["name"] in wrong.get_json()["message"]
    assert client.get("/forget/plan/project.json?cat=soft_deleted").get_json()["rows"]
    r = client.post("/forget/purge/project", data={**form, "confirm": plan["name"]})
    assert r.status_code == 303
    job = wait_for_job(client, r.headers["Location"])
    assert job["verdict"] == "verified erased"
    page = soup(client.get(r.headers["Location"]))
    assert page.select_one('[data-verdict="verified erased"]')
    assert naive_hits(files_of(rich.project_db), VERSIONS) == []


def test_rows_that_arrive_after_the_dry_run_are_kept_and_reported(client, rich):
    client.post("/forget/wipe", data={"confirm": "yes"})
    plan = client.get("/forget/plan/project.json?cat=soft_deleted").get_json()
    confirmed = {r["id"] for r in plan["rows"]}
    late = rich.save("late", "Saved after the dry run, then deleted.")
    rich.manager.delete(late.id)
    r = client.post(
        "/forget/purge/project",
        data={"cat": "soft_deleted", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
    )
    assert r.status_code == 303
    job = wait_for_job(client, r.headers["Location"])
    [result] = job["results"]
    assert result["status"] == "verified erased"
    assert {x["id"] for x in result["rows"]} == confirmed
    assert result["kept"] == [{"kind": "memory_deleted", "id": late.id}]
    page = soup(client.get(r.headers["Location"]))
    assert page.select_one('[data-field="kept"]').text.startswith("Kept, because they arrived after")
    still = client.get("/forget/plan/project.json?cat=soft_deleted").get_json()
    assert [x["id"] for x in still["rows"]] == [late.id]  # kept, for the next dry run


def test_missing_or_damaged_fingerprint_is_a_400_that_changes_nothing(client, rich):
    client.post("/forget/wipe", data={"confirm": "yes"})
    before = file_digest(rich.project_db)
    for bad in ("", "0123456789abcdef", "1.notbase64!", "1.eJwLycxLBQAEngHA"):
        r = client.post(
            "/forget/purge/project",
            headers=JSON,
            data={"cat": "soft_deleted", "fingerprint": bad, "confirm": "project"},
        )
        assert r.status_code == 400 and "fingerprint" in r.get_json()["message"], bad
    assert file_digest(rich.project_db) == before


def test_a_fingerprint_naming_more_rows_than_the_store_holds_is_refused_before_it_is_built(client, rich):
    """2 KiB of fingerprint can name a million events (deltas of 1 compress to nothing): it is
    refused with the damaged-fingerprint message, without building the rows (243 MiB before)."""
    import base64
    import json
    import tracemalloc
    import zlib

    from dashboard.actions import dryrun

    body = json.dumps({"rows": {}, "events": [1] * 1_000_000}, separators=(",", ":")).encode()
    token = dryrun.VERSION + base64.urlsafe_b64encode(zlib.compress(body, 9)).decode()
    assert len(token) < 4096
    before = file_digest(rich.project_db)
    tracemalloc.start()
    try:
        r = client.post(
            "/forget/purge/project",
            headers=JSON,
            data={"cat": "events", "fingerprint": token, "confirm": "project"},
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.status_code == 400 and "fingerprint" in r.get_json()["message"]
    assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB allocated for a refused fingerprint"
    assert file_digest(rich.project_db) == before
    with pytest.raises(ValueError):
        dryrun.rows_of(token, most=999_999)


def test_a_dry_run_too_large_for_one_form_says_so(client, rich, monkeypatch):
    from dashboard.actions import dryrun

    monkeypatch.setattr(dryrun, "MAX_TOKEN", 40)
    client.post("/forget/wipe", data={"confirm": "yes"})
    plan = soup(client.get("/forget/plan/project?cat=everything"))
    assert "more than one form can confirm" in plan.select_one('[data-field="too_large"]').text
    assert plan.select_one("#purge-form") is None


def test_htmx_purge_polls_and_report_has_no_text(client, rich):
    client.post("/forget/wipe", data={"confirm": "yes"})
    plan = client.get("/forget/plan/user.json?cat=everything").get_json()
    fragment = soup(
        client.post(
            "/forget/purge/user",
            headers=HTMX,
            data={"cat": "everything", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
        )
    )
    box = fragment.select_one(".job")
    assert box and fragment.find("html") is None
    if box["data-state"] == "running":
        assert box["hx-trigger"] == "every 1s"
    job = wait_for_job(client, f"/forget/jobs/{box['data-job']}")
    assert job["verdict"] == "verified erased"
    report = client.get(job["report_url"])
    assert "attachment" in report.headers["Content-Disposition"]
    body = report.get_data(as_text=True)
    assert LONG[:20] not in body and "Neovim" not in body and "user_biography" not in body
    data = report.get_json()
    assert data["results"][0]["rows"][0]["sha256"] and data["results"][0]["files_scanned"]


def test_forget_one_memory_soft_then_purge(client, rich):
    travel = next(m for m in rich.manager.get_all_entries() if m.title == "travel plan")
    page = soup(client.get(f"/forget/memory/project/{travel.id}"))
    assert page.select_one('[data-field="limits"]').text.startswith("The on-disk check")
    r = client.post(f"/forget/memory/project/{travel.id}", data={"mode": "soft"}, headers=JSON)
    assert r.get_json()["soft_deleted"] is True
    assert travel.id not in {m.id for m in rich.manager.get_all_entries()}
    # Confirmed by the memory's title (#21), not by the store's name.
    asked = client.get(f"/forget/memory/project/{travel.id}.json").get_json()["confirm"]
    assert asked == {"asks": "title", "phrase": "travel plan"}
    before = file_digest(rich.project_db)
    r = client.post(
        f"/forget/memory/project/{travel.id}", headers=JSON, data={"mode": "purge", "confirm": "project"}
    )
    assert r.status_code == 400 and "“travel plan”" in r.get_json()["message"]
    assert file_digest(rich.project_db) == before
    r = client.post(
        f"/forget/memory/project/{travel.id}",
        headers=JSON,
        data={"mode": "purge", "confirm": "  travel plan "},
    )
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased" and job["results"][0]["deleted"]["memory"] == 1
    assert naive_hits(files_of(rich.project_db), VERSIONS) == []


def test_forget_everything_one_report(client, rich):
    bad = client.post("/forget/everything", data={"confirm": "forget"}, headers=JSON)
    assert bad.status_code == 400
    r = client.post("/forget/everything", data={"confirm": "forget everything"}, headers=JSON)
    assert r.status_code == 202
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased"
    assert {x["store"] for x in job["results"]} == {"project", "user"}
    assert job["wipe"]["ok"]
    for db in (rich.project_db, rich.user_db):
        conn = sqlite3.connect(db)
        counts = [
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("memories", "memory_review_queue", "session_summaries", "memory_events")
        ]
        conn.close()
        assert counts == [0, 0, 0, 0]
    assert (
        naive_hits(
            files_of(rich.project_db) + files_of(rich.user_db), [LONG, *VERSIONS, "Uses Neovim with LazyVim."]
        )
        == []
    )


def test_read_only_dashboard_refuses_every_forget(rich):
    client = rich.app(READ_ONLY=True).test_client()
    before = file_digest(rich.project_db, rich.user_db)
    assert client.post("/forget/wipe", data={"confirm": "yes"}, headers=JSON).status_code == 403
    r = client.post("/forget/everything", data={"confirm": "forget everything"})
    assert r.status_code == 403
    assert file_digest(rich.project_db, rich.user_db) == before


def test_bad_input_is_a_clear_400(client):
    assert client.get("/forget/plan/project?cat=nonsense").status_code == 400
    assert client.get("/forget/plan/nowhere?cat=summaries").status_code == 404
    r = client.post("/forget/memory/project/abc", data={"mode": "shred"}, headers=JSON)
    assert r.status_code == 400 and "mode" in r.get_json()["message"]
    assert client.get("/forget/jobs/unknown.json").status_code == 404


def test_long_purge_shows_progress_and_page_stays_responsive(client, rich, monkeypatch):
    import threading

    from dashboard.store import purge as purge_sql

    release, real = threading.Event(), purge_sql._vacuum
    monkeypatch.setattr(purge_sql, "_vacuum", lambda conn: (release.wait(10), real(conn)))
    client.post("/forget/wipe", data={"confirm": "yes"})
    plan = client.get("/forget/plan/project.json?cat=soft_deleted").get_json()
    try:
        r = client.post(
            "/forget/purge/project",
            headers=HTMX,
            data={"cat": "soft_deleted", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
        )
        box = soup(r).select_one(".job")
        assert box["data-state"] == "running" and box["hx-trigger"] == "every 1s"
        polled = soup(client.get(f"/forget/jobs/{box['data-job']}", headers=HTMX)).select_one(".job")
        assert polled["data-state"] == "running" and "Working" in polled.text
        assert client.get("/forget/residue/user.json").status_code == 200  # still answering
        again = client.post(
            "/forget/purge/project",
            headers=JSON,
            data={"cat": "soft_deleted", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
        )
        assert again.status_code == 409 and "already running" in again.get_json()["message"]
    finally:
        release.set()
    job = wait_for_job(client, f"/forget/jobs/{box['data-job']}")
    assert job["verdict"] == "verified erased"
    done = soup(client.get(f"/forget/jobs/{box['data-job']}", headers=HTMX)).select_one(".job")
    assert not done.has_attr("hx-trigger")


def test_templates_have_no_inline_script(client):
    for url in ("/forget", "/forget/residue/project", "/forget/plan/project?cat=everything"):
        page = soup(client.get(url))
        assert not [s for s in page.find_all("script") if not s.get("src")]
        assert not [t for t in page.find_all(True) if any(a.startswith("on") for a in t.attrs)]


def test_refused_htmx_post_gets_a_message_fragment(client, rich):
    answer = client.post("/forget/everything", data={"confirm": "no"}, headers=HTMX)
    message = soup(answer).select_one('[hx-swap-oob="innerHTML:#status"] .error-message')
    assert answer.status_code == 400 and answer.headers["HX-Reswap"] == "none"
    assert message["data-status"] == "400" and "forget everything" in message.text
    assert len(rich.manager.get_all_entries()) == 8


def test_a_long_residue_lists_its_newest_rows_and_the_twin_every_one(agent):
    from dashboard.views.forget import RESIDUE_LISTED

    for n in range(RESIDUE_LISTED + 3):
        agent.manager.delete(agent.save(f"note {n}", f"a forgotten thing number {n}").id)
    page = soup(agent.app().test_client().get("/forget/residue/project"))
    listed = page.select("ul.soft-deleted li")
    assert len(listed) == RESIDUE_LISTED
    more = page.select_one(".residue p.more")
    assert more["data-more"] == "3" and f"{RESIDUE_LISTED} of {RESIDUE_LISTED + 3}" in more.text
    assert more.select_one("a")["href"].endswith("/forget/residue/project.json")
    twin = agent.app().test_client().get("/forget/residue/project.json").get_json()
    assert twin["soft_deleted"]["count"] == len(twin["soft_deleted"]["items"]) == RESIDUE_LISTED + 3
    newest = [i["id"] for i in twin["soft_deleted"]["items"][:RESIDUE_LISTED]]
    assert [li["data-memory-id"] for li in listed] == newest


def test_the_forget_page_counts_what_the_dry_run_lists(rich):
    from dashboard.store import build_refs, scoped

    rich.manager.delete(rich.save("gone soon", "a note the agent forgot").id)
    rich.save("about me", "I prefer tea", scope="user")  # a user memory: kept by a project wipe
    data = rich.app().test_client().get("/forget.json").get_json()
    for ref in build_refs(rich.project_dir, rich.user_db):
        rows = scoped.scoped_rows(ref)
        goes = [m for m in rows["memories"] if not m[2] or m[1] == ref.kind]
        entry = next(e for e in data["everything"]["stores"] if e["store"] == ref.key)
        assert (entry["memories"], entry["memories_kept"]) == (len(goes), len(rows["memories"]) - len(goes))
        assert (entry["reviews"], entry["summaries"], entry["events"]) == (
            len(rows["reviews"]),
            len(rows["summaries"]),
            rows["events"],
        )


def test_a_purge_report_has_no_saved_conversations_heading_over_nothing(seeded):
    """The project keeps a saved conversation, but it holds nothing of the memory purged: the
    report names no file, so it shows no "Saved conversations" heading with nothing under it."""
    from saved_world import conversation

    mem = seeded.save("build tool", "The build uses make and nothing else.", scope="project")
    conversation(seeded.project_dir, said="Deploys go through the blue-green switch.")
    client = seeded.app().test_client()
    r = client.post(
        f"/forget/memory/project/{mem.id}", headers=JSON, data={"mode": "purge", "confirm": "build tool"}
    )
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    page = soup(client.get(r.get_json()["url"]))
    headings = [h.get_text(strip=True) for h in page.select("h2, h3")]
    assert "Saved conversations" not in headings, headings
    assert page.select_one('[data-field="saved-files"]') is None


def test_a_long_dry_run_lists_the_first_rows_and_says_the_rest_go_too(client, rich, monkeypatch):
    """A dry run's page lists its first rows (a large store's listed thousands); it says how many
    more the purge erases, and its JSON names every one."""
    from dashboard.views import forget

    client.post("/forget/wipe", data={"confirm": "yes"})
    url = "/forget/plan/project?cat=soft_deleted&cat=events"
    every = client.get(url.replace("project?", "project.json?")).get_json()["rows"]
    assert len(every) > 3
    monkeypatch.setattr(forget, "PLAN_LISTED", 3)
    page = soup(client.get(url))
    listed = page.select("tr.plan-row")
    assert [r["data-id"] for r in listed] == [r["id"] for r in every[:3]]
    more = page.select_one("[data-more]")
    assert int(more["data-more"]) == len(every) - 3
    assert f"The first 3 of {len(every)} are listed here" in more.get_text()
    twin = client.get(more.select_one("a")["href"]).get_json()
    assert [r["id"] for r in twin["rows"]] == [r["id"] for r in every]
    assert page.select_one("[data-rows]")["data-rows"] == str(len(every))  # the count is all of them
