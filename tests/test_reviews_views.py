"""The review screen and the curation forms, as a person (with and without htmx) and a script see them."""

from __future__ import annotations

import pytest
from agentao_world import Agent, file_digest
from bs4 import BeautifulSoup

HTMX = {"HX-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}
JSON = {"Accept": "application/json"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def detail(client, item_id):
    """What a card's Details shows once opened (htmx fetches it then)."""
    r = client.get("/reviews/detail", query_string={"id": item_id}, headers=HTMX)
    assert r.status_code == 200
    return soup(r)


@pytest.fixture
def queue(agent) -> Agent:
    """One pending item of each kind: user, project, two CJK folding onto one key,
    a secret, and a collision with a live memory."""
    agent.save("constraint_never_push_to_main", "Push freely.", ["git"])
    agent.crystallize(
        "I prefer tabs over spaces. We must never push to main.",
        "我喜欢用中文回答问题",
        "我偏好简洁的代码风格",
        "I use token=abcdefgh12345678 for the staging API.",
    )
    return agent


def items_by_content(client):
    return {i["content"]: i for i in client.get("/reviews.json").get_json()["items"]}


def tokens(page, item_id):
    """The hidden fields one card carries, as the browser would send them."""
    card = page.select_one(f"#review-{item_id}")
    return {i["name"]: i["value"] for i in card.select("input[type=hidden]")}


def counts(page):
    return {
        a["data-status"]: int(a.select_one('[data-field="count"]').text)
        for a in page.select("#review-tabs a")
    }


# --------------------------------------------------------------------------- the page
def test_page_shows_every_field_and_the_plan(queue):
    client = queue.app().test_client()
    page = soup(client.get("/reviews"))
    assert counts(page) == {"pending": 5, "approved": 0, "rejected": 0}
    by_content = items_by_content(client)
    cjk = detail(client, by_content["用中文回答问题"]["id"])
    assert cjk.select_one('[data-field="key_normalized"]').text == "preference_用中文回答问题"
    plan = cjk.select_one("[data-plan]")
    assert plan.select_one('[data-plan-field="key_normalized"] code').text == "preference"
    assert plan.select_one('[data-plan-field="title"]').text == "preference_用中文回答问题"
    assert plan.select_one('[data-plan-field="store"]').text.startswith("user store")
    card = page.select_one(f"#review-{by_content['用中文回答问题']['id']}")
    assert card.select_one('[data-field="evidence"]').text == "我喜欢用中文回答问题"
    secret_id = by_content["token=abcdefgh12345678 for the staging API"]["id"]
    secret = detail(client, secret_id)
    assert secret.select_one("[data-plan]")["data-action"] == "refused"
    assert "sensitive credentials" in secret.select_one('[data-field="refusal"]').text
    assert page.select_one(f'#review-{secret_id} button[data-action="approve"]').has_attr("disabled")
    collide = detail(client, by_content["never push to main"]["id"])
    assert collide.select_one("[data-plan]")["data-action"] == "update"
    row = collide.select_one('[data-diff-field="content"]')
    assert [p.text for p in row.select("pre")] == ["Push freely.", "never push to main"]
    assert all(p.has_attr("hx-disable") for p in page.select("div.review-body > p"))
    assert collide.select_one("div.detail-body").has_attr("hx-disable")


def test_fragment_boosted_json_and_tabs(queue):
    client = queue.app().test_client()
    fragment = soup(client.get("/reviews", headers=HTMX))
    assert fragment.find("html") is None and fragment.select_one("#review-list")
    assert soup(client.get("/reviews", headers=BOOSTED)).find("html") is not None
    data = client.get("/reviews.json").get_json()
    assert data["counts"]["pending"] == 5 and len(data["items"]) == 5
    plans = {i["content"]: i["plan"] for i in data["items"]}
    assert plans["tabs over spaces"]["store"] == "user" and plans["tabs over spaces"]["action"] == "create"
    assert client.get("/reviews.json?status=approved").get_json()["items"] == []
    assert client.get("/reviews?status=bogus").status_code == 400
    assert soup(client.get("/reviews?status=rejected")).select_one("[data-empty]")


def test_browsing_writes_nothing(queue):
    before = file_digest(queue.project_db, queue.user_db)
    client = queue.app().test_client()
    client.get("/reviews"), client.get("/reviews.json"), client.get("/reviews?status=approved")
    assert file_digest(queue.project_db, queue.user_db) == before


# --------------------------------------------------------------------------- approve / reject one
def _one(client, item_id, action, headers=None, page=None):
    page = page or soup(client.get("/reviews"))
    return client.post(f"/reviews/{item_id}/{action}", data=tokens(page, item_id), headers=headers or {})


def test_approve_without_js_redirects_and_writes(queue):
    client = queue.app().test_client()
    item = items_by_content(client)["tabs over spaces"]
    r = _one(client, item["id"], "approve")
    assert r.status_code == 303 and "/reviews?" in r.headers["Location"]
    page = soup(client.get(r.headers["Location"]))
    # The result in words in the pinned #status region: the suggestion's title, and that the
    # memory really entered the always-on block (read back from the files).
    said = page.select_one("#status [data-said]")
    assert said["data-said"] == "ok"
    assert said.text == f"Approved “{item['title']}” — it now enters every prompt."
    assert counts(page)["approved"] == 1 and page.select_one(f"#review-{item['id']}") is None
    # Said once: a reload (or the tab's address shared) does not say it again.
    again = soup(client.get(r.headers["Location"]))
    assert again.select_one("#status").get_text().strip() == ""
    assert again.select_one('[data-field="stable-after"]') is None
    [memory] = queue.manager.get_all_entries("user")
    assert (memory.key_normalized, memory.source) == ("preference_tabs_over_spaces", "crystallized")


def test_approve_with_htmx_swaps_row_and_counters(queue):
    client = queue.app().test_client()
    item = items_by_content(client)["never push to main"]
    r = _one(client, item["id"], "approve", HTMX)
    assert r.status_code == 200
    frag = soup(r)
    row = frag.select_one(f"#review-{item['id']}")
    assert row["data-outcome"] == "approved" and row["data-status"] == "approved"
    # The card became one line saying what happened, the same words as the #status region.
    outcome = row.select_one('[data-field="outcome"]')
    said = frag.select_one('[hx-swap-oob="innerHTML:#status"] [data-said]')
    assert said.text.startswith(f"Approved “{item['title']}” — it ")
    assert outcome.text.startswith(said.text) and row.select("h2, .decide, [data-plan]") == []
    [memory] = [
        m for m in queue.manager.get_all_entries() if m.key_normalized == "constraint_never_push_to_main"
    ]
    assert outcome.select_one("a")["href"].endswith(f"/memories/project/{memory.id}")
    tabs = frag.select_one("#review-tabs")
    assert tabs["hx-swap-oob"] == "true" and counts(frag) == {"pending": 4, "approved": 1, "rejected": 0}


def test_json_answers_and_not_pending_is_409(queue):
    client = queue.app().test_client()
    item = items_by_content(client)["tabs over spaces"]
    page = soup(client.get("/reviews"))
    first = _one(client, item["id"], "reject", JSON, page)
    assert first.status_code == 200 and first.get_json()["outcomes"][0]["outcome"] == "rejected"
    again = _one(client, item["id"], "approve", JSON, page)
    assert again.status_code == 409
    assert again.get_json()["outcomes"][0]["outcome"] == "not_pending"
    html = _one(client, item["id"], "approve", None, page)
    assert html.status_code == 409
    assert "no longer pending (it is rejected)" in soup(html).select_one("#review-messages").text
    assert queue.manager.get_all_entries() != [] and queue.manager.get_all_entries("user") == []


def test_refusal_keeps_item_pending_with_agentaos_reason(queue):
    client = queue.app().test_client()
    item = items_by_content(client)["token=abcdefgh12345678 for the staging API"]
    r = _one(client, item["id"], "approve", JSON)
    assert r.status_code == 422
    assert (
        r.get_json()["outcomes"][0]["message"]
        == "Refused to save: content appears to contain sensitive credentials"
    )
    row = soup(_one(client, item["id"], "approve", HTMX)).select_one(f"#review-{item['id']}")
    assert row["data-outcome"] == "refused" and row["data-status"] == "pending"
    assert _one(client, item["id"], "approve").status_code == 422
    assert items_by_content(client)[item["content"]]["status"] == "pending"


def test_concurrent_change_is_409_then_user_redecides(queue):
    client = queue.app().test_client()
    item = items_by_content(client)["tabs over spaces"]
    page = soup(client.get("/reviews"))
    queue.save("preference_tabs_over_spaces", "Spaces after all.", scope="user")  # the agent, meanwhile
    before = file_digest(queue.project_db, queue.user_db)
    r = _one(client, item["id"], "approve", JSON, page)
    assert r.status_code == 409 and "changed since you looked" in r.get_json()["outcomes"][0]["message"]
    assert file_digest(queue.project_db, queue.user_db) == before
    row = soup(_one(client, item["id"], "approve", HTMX, page)).select_one(f"#review-{item['id']}")
    assert row["data-outcome"] == "conflict"
    assert detail(client, item["id"]).select_one("[data-plan]")["data-action"] == "update"  # the overwrite
    fresh = {i["name"]: i["value"] for i in row.select("input[type=hidden]")}
    ok = client.post(f"/reviews/{item['id']}/approve", data=fresh, headers=JSON)
    assert ok.status_code == 200 and ok.get_json()["outcomes"][0]["event"] == "update"


def test_missing_tokens_is_400(queue):
    client = queue.app().test_client()
    item = items_by_content(client)["tabs over spaces"]
    r = client.post(f"/reviews/{item['id']}/approve", data={}, headers=JSON)
    assert r.status_code == 400 and "reload" in r.get_json()["outcomes"][0]["message"]
    assert client.post("/reviews/x/publish").status_code == 404


# --------------------------------------------------------------------------- bulk
def _bulk(client, action, ids, headers=None):
    page = soup(client.get("/reviews"))
    data = {"ids": ids}
    for i in ids:
        data.update(tokens(page, i))
    return client.post(f"/reviews/{action}", data=data, headers=headers or {})


def test_bulk_approve_cjk_items_fold_onto_one_memory(queue):
    client = queue.app().test_client()
    by = items_by_content(client)
    first = _bulk(client, "approve", [by["用中文回答问题"]["id"]])
    assert first.status_code == 303
    second = _bulk(client, "approve", [by["简洁的代码风格"]["id"], by["tabs over spaces"]["id"]], HTMX)
    frag = soup(second)
    assert frag.select_one("#review-list") and counts(frag)["approved"] == 3
    keys = sorted(m.key_normalized for m in queue.manager.get_all_entries("user"))
    assert keys == ["preference", "preference_tabs_over_spaces"]
    assert (
        next(m for m in queue.manager.get_all_entries("user") if m.key_normalized == "preference").content
        == "简洁的代码风格"
    )


def test_bulk_with_a_refusal_reports_each_item(queue):
    client = queue.app().test_client()
    by = items_by_content(client)
    ids = [by["tabs over spaces"]["id"], by["token=abcdefgh12345678 for the staging API"]["id"]]
    r = _bulk(client, "approve", ids, JSON)
    assert r.status_code == 422 and "Set-Cookie" not in r.headers  # a script's answer starts no session
    assert [o["outcome"] for o in r.get_json()["outcomes"]] == ["approved", "refused"]
    assert r.get_json()["counts"] == {"pending": 4, "approved": 1, "rejected": 0}
    rejected = _bulk(client, "reject", [ids[1]])
    assert rejected.status_code == 303 and rejected.headers["Location"] == "/reviews?status=pending"
    said = soup(client.get(rejected.headers["Location"])).select_one("#status [data-said]")
    assert said is not None and said.get_text().strip()
    assert client.post("/reviews/approve", data={}).status_code == 400


def test_read_only_refuses_and_hides_buttons(queue):
    client = queue.app(READ_ONLY=True).test_client()
    before = file_digest(queue.project_db, queue.user_db)
    page = soup(client.get("/reviews"))
    assert page.select("button[data-action]") == [] and page.select("input[name=ids]") == []
    item = items_by_content(client)["tabs over spaces"]
    r = client.post(f"/reviews/{item['id']}/reject", data={"seen": "x"}, headers=JSON)
    assert r.status_code == 403
    assert file_digest(queue.project_db, queue.user_db) == before


# --------------------------------------------------------------------------- curation
def _detail(client, store, memory_id):
    page = soup(client.get(f"/memories/{store}/{memory_id}"))
    forms = {
        f["id"]: {i["name"]: i.get("value", "") for i in f.select("input")}
        for f in page.select("#memory-actions form")
    }
    return page, forms


def test_edit_without_js_and_with_htmx(seeded, client):
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "database")
    page, forms = _detail(client, "project", memory.id)
    assert page.select_one("#memory-actions")["data-memory-id"] == memory.id
    data = dict(forms["edit-form"], value="PostgreSQL 17.", tags="infra, db", type="decision")
    r = client.post(f"/memories/project/{memory.id}/edit", data=data)
    assert r.status_code == 303 and r.headers["Location"].endswith(f"/memories/project/{memory.id}")
    saved = seeded.manager.get_entry(memory.id)
    assert (saved.content, saved.tags, saved.type, saved.source) == (
        "PostgreSQL 17.",
        ["infra", "db"],
        "decision",
        "explicit",
    )
    _, forms = _detail(client, "project", memory.id)
    r = client.post(
        f"/memories/project/{memory.id}/edit",
        data=dict(forms["edit-form"], value="PostgreSQL 18.", tags="infra", type="note"),
        headers=HTMX,
    )
    assert r.status_code == 200 and r.headers["HX-Redirect"].endswith(f"/memories/project/{memory.id}")
    events = client.get(f"/memories/project/{memory.id}.json").get_json()["events"]
    assert [e["event_type"] for e in events] == ["create", "update", "update"]


def test_editing_the_value_keeps_tags_the_field_cannot_show_apart(agent):
    # agentao keeps tags as given: one may hold a comma or outer spaces.
    memory = agent.save("deploy_notes", "Deploy on Fridays.", ["release, 2024", " ops "])
    client = agent.app().test_client()
    page, forms = _detail(client, "project", memory.id)
    assert forms["edit-form"]["tags"] == "release, 2024,  ops "
    warning = page.select_one('[data-field="tags-kept"]')
    assert [c.text for c in warning.select("code")] == ["release, 2024", " ops "]
    assert page.select_one("#edit-tags")["aria-describedby"] == warning["id"]
    effect = client.get(
        f"/memories/project/{memory.id}/effect",
        headers=JSON,
        query_string=dict(forms["edit-form"], value="Deploy on Mondays.", type=""),
    )
    assert effect.status_code == 200 and effect.get_json()["refusal"] is None
    r = client.post(
        f"/memories/project/{memory.id}/edit",
        data=dict(forms["edit-form"], value="Deploy on Mondays.", type=""),
    )
    assert r.status_code == 303
    saved = agent.manager.get_entry(memory.id)
    assert (saved.content, saved.tags) == ("Deploy on Mondays.", ["release, 2024", " ops "])
    # Once the field is changed it means what it says: split at commas, trimmed.
    _, forms = _detail(client, "project", memory.id)
    r = client.post(
        f"/memories/project/{memory.id}/edit",
        data=dict(forms["edit-form"], value="Deploy on Mondays.", type="", tags="release, 2024, ops, infra"),
    )
    assert r.status_code == 303
    assert agent.manager.get_entry(memory.id).tags == ["release", "2024", "ops", "infra"]
    page, _ = _detail(client, "project", memory.id)
    assert page.select_one('[data-field="tags-kept"]') is None


def test_edit_refusal_and_stale_form(seeded, client):
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "database")
    _, forms = _detail(client, "project", memory.id)
    bad = client.post(
        f"/memories/project/{memory.id}/edit",
        headers=JSON,
        data=dict(forms["edit-form"], value="password = hunter2hunter2", tags="", type=""),
    )
    assert bad.status_code == 422 and "sensitive credentials" in bad.get_json()["message"]
    seeded.save("database", "The agent rewrote this memory meanwhile.")
    before = file_digest(seeded.project_db)
    stale = dict(forms["edit-form"], value="new", tags="", type="")
    r = client.post(f"/memories/project/{memory.id}/edit", data=stale)
    assert r.status_code == 409
    assert "changed since you looked" in soup(r).select_one('[data-field="message"]').text
    frag = soup(client.post(f"/memories/project/{memory.id}/edit", data=stale, headers=HTMX))
    assert frag.select_one("#memory-actions [data-outcome]")["data-outcome"] == "conflict"
    assert file_digest(seeded.project_db) == before
    assert (
        client.post(f"/memories/project/{memory.id}/edit", data={"value": "x"}, headers=JSON).status_code
        == 400
    )
    for bad in ({"row": "not a fingerprint"}, {"change": "many"}, {"effect": "<script>"}):
        r = client.post(
            f"/memories/project/{memory.id}/edit",
            headers=JSON,
            data=dict(forms["edit-form"], value="x", **bad),
        )
        assert r.status_code == 400 and file_digest(seeded.project_db) == before


def test_edit_goes_through_when_the_agent_saved_other_rows(seeded, client):
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "database")
    _, forms = _detail(client, "project", memory.id)
    seeded.save("something else", "The agent wrote meanwhile.")  # moves the change counter
    # Scripts may still send the counter they read; it is accepted and not checked.
    r = client.post(
        f"/memories/project/{memory.id}/edit",
        headers=JSON,
        data={"change": "0", **forms["edit-form"], "value": "PostgreSQL 17.", "tags": "", "type": ""},
    )
    assert r.status_code == 200 and r.get_json()["event"] == "update"
    assert seeded.manager.get_entry(memory.id).content == "PostgreSQL 17."


def test_the_answer_says_when_the_effect_shown_was_out_of_date(seeded, client, monkeypatch):
    # A prediction is worked out for the second the page is shown; pin the clock so that
    # the writes land in that second too (see test_reviews_effects.py).
    import dashboard.actions.effects
    import dashboard.store.writes

    monkeypatch.setattr(dashboard.store.writes, "now", lambda: "2099-01-01T00:00:00")
    monkeypatch.setattr(dashboard.actions.effects, "agentao_now", lambda: "2099-01-01T00:00:00")
    first, second = (
        next(m for m in seeded.manager.get_all_entries() if m.key_normalized == k)
        for k in ("release_process", "database")
    )
    _, forms = _detail(client, "project", first.id)
    r = client.post(f"/memories/project/{first.id}/delete", data=forms["delete-form"])
    done = soup(client.get(r.headers["Location"])).select_one('[data-field="done"]')
    assert not done.has_attr("data-effect-stale")  # nothing else changed: as shown
    _, forms = _detail(client, "project", second.id)
    shown = int(forms["delete-form"]["effect"].split("-")[0])
    seeded.save("deploy rule", "Deploys need two approvals.", type="decision")  # in the block
    r = client.post(f"/memories/project/{second.id}/delete", data=forms["delete-form"])
    done = soup(client.get(r.headers["Location"])).select_one('[data-field="done"]')
    assert int(done["data-shown-chars"]) == shown != int(done["data-stable-chars"])
    assert "not the effect shown before you clicked" in done.text
    # A quiet store: the move and the edit come out exactly as shown.
    third, fourth = (
        next(m for m in seeded.manager.get_all_entries() if m.key_normalized == k)
        for k in ("package_manager", "user_language")
    )
    r = client.post(
        f"/memories/project/{third.id}/move",
        headers=JSON,
        data=_detail(client, "project", third.id)[1]["move-form"],
    )
    assert r.get_json()["effect_as_shown"] is True
    edit = {"value": "Answer in French.", "tags": "user", "type": ""}
    page = soup(client.get(f"/memories/user/{fourth.id}/effect", query_string=edit))
    form = {i["name"]: i.get("value", "") for i in page.select("#edit-form input")}
    r = client.post(f"/memories/user/{fourth.id}/edit", headers=JSON, data=dict(form, **edit))
    assert r.get_json()["effect_as_shown"] is True
    # An effect shown for other values than those saved says nothing either way.
    page = soup(client.get(f"/memories/user/{fourth.id}/effect", query_string=edit))
    form = {i["name"]: i.get("value", "") for i in page.select("#edit-form input")}
    r = client.post(
        f"/memories/user/{fourth.id}/edit", headers=JSON, data={**form, **edit, "value": "Answer in German."}
    )
    assert r.status_code == 200 and r.get_json()["effect_as_shown"] is None


def test_soft_delete_and_move(seeded, client):
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "package_manager")
    _, forms = _detail(client, "project", memory.id)
    r = client.post(f"/memories/project/{memory.id}/move", data=forms["move-form"])
    assert r.status_code == 303 and "/memories/user/" in r.headers["Location"]
    moved = [m for m in seeded.manager.get_all_entries("user") if m.key_normalized == "package_manager"]
    assert len(moved) == 1 and moved[0].content == memory.content
    assert client.get(r.headers["Location"]).status_code == 200
    _, forms = _detail(client, "user", moved[0].id)
    r = client.post(f"/memories/user/{moved[0].id}/delete", data=forms["delete-form"], headers=JSON)
    assert r.status_code == 200 and r.get_json()["event"] == "soft_delete"
    assert soup(client.get(f"/memories/user/{moved[0].id}")).select_one('[data-field="no-actions"]')
    again = client.post(f"/memories/user/{moved[0].id}/delete", data=forms["delete-form"], headers=JSON)
    assert again.status_code == 409


def test_no_user_store_has_no_move(tmp_path):
    agent = Agent(tmp_path, with_user_store=False)
    memory = agent.save("database", "SQLite.")
    client = agent.app().test_client()
    page, forms = _detail(client, "project", memory.id)
    assert "no user store" in page.select_one('[data-field="move-problem"]').text
    assert "target" not in forms["move-form"]


def test_hostile_review_text_stays_text(agent):
    import sqlite3

    from hostile import HOSTILE, MARK

    with sqlite3.connect(agent.project_db) as conn:
        for n, (name, text) in enumerate(HOSTILE.items()):
            conn.execute(
                "INSERT INTO memory_review_queue (id, scope, type, key_normalized, title, content,"
                " tags_json, evidence, created_at, updated_at) VALUES (?, 'project', 'decision',"
                " ?, ?, ?, '[\"decision\"]', ?, '2025-01-01T00:00:00', '2025-01-01T00:00:00')",
                (f"{n:012x}", f"decision_{name}_{text[:40]}", text[:200], text, text),
            )
    client = agent.app().test_client()
    page = soup(client.get("/reviews", query_string={"per_page": len(HOSTILE)}))
    listing = page.select_one("#review-list")
    assert len(listing.select("article.review")) == len(HOSTILE)
    assert listing.select("script, img, svg, iframe, meta, style, a[href^=javascript]") == []
    for el in listing.find_all(True):
        # The hx-gets are the card's own "Preview the edited approval" and its Details (GETs by design).
        own = (el.get("data-action") == "preview-edits" and el["hx-get"].startswith("/reviews/effect?")) or (
            el.name == "details" and el.get("hx-get", "").startswith("/reviews/detail?id=")
        )
        assert not any(
            a.startswith(("on", "hx-on", "data-hx")) or MARK in a or (a == "hx-get" and not own)
            for a in el.attrs
        )
    for body in listing.select("div.review-body > p, div.review-head"):
        assert body.has_attr("hx-disable")
    for card in listing.select("article.review"):
        shown = detail(client, card["data-item-id"]).select_one("div.detail-body")
        assert shown.has_attr("hx-disable") and shown.select("script, img, svg, iframe, style") == []
