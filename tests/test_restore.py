"""Restoring a soft-deleted memory from its page: afterwards agentao treats it as any live memory.

agentao has no undelete, so there is no agentao side to compare files with;
what is compared instead is what agentao does with the result: its listing,
its search and its prompt blocks, read through its own MemoryManager.
"""

from __future__ import annotations

import sqlite3
from unittest import mock

from agentao_world import agentao_blocks, file_digest
from bs4 import BeautifulSoup

from dashboard.store import writes

JSON = {"Accept": "application/json"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def gone_row(agent, key="old_api"):
    conn = sqlite3.connect(agent.project_db)
    try:
        return conn.execute(
            "SELECT id FROM memories WHERE key_normalized = ? AND deleted_at IS NOT NULL", (key,)
        ).fetchone()[0]
    finally:
        conn.close()


def restore_form(client, memory_id, store="project"):
    form = soup(client.get(f"/memories/{store}/{memory_id}")).select_one("#restore-form")
    assert form is not None
    return form, {i["name"]: i.get("value", "") for i in form.select("input")}


def events(agent, memory_id):
    conn = sqlite3.connect(agent.project_db)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT event_type FROM memory_events WHERE memory_id = ? ORDER BY id", (memory_id,)
            )
        ]
    finally:
        conn.close()


def test_a_restored_memory_is_listed_searched_and_rendered_by_agentao(seeded, client):
    memory_id = gone_row(seeded)
    assert memory_id not in {m.id for m in seeded.manager.get_all_entries()}
    _, form = restore_form(client, memory_id)
    r = client.post(f"/memories/project/{memory_id}/restore", data=form)
    assert r.status_code == 303 and r.headers["Location"].startswith(f"/memories/project/{memory_id}")
    page = soup(client.get(r.headers["Location"]))
    assert page.select_one("[data-field=done]")["data-done"] == "restored"
    assert page.select_one("#status [data-said]").get_text().startswith("Restored '")
    assert page.select_one("#edit-form") is not None  # an ordinary live memory's page now

    restored = seeded.manager.get_entry(memory_id)
    assert restored is not None and restored.content == "The old API lived at /v1."
    assert memory_id in {m.id for m in seeded.manager.get_all_entries()}
    assert memory_id in {m.id for m in seeded.manager.search("old api")}
    assert memory_id in {m.id for m in seeded.manager.filter_by_tag("legacy")}
    stable, _dynamic = agentao_blocks(seeded, "where did the old api live")
    assert "The old API lived at /v1." in stable
    # One event, in agentao's vocabulary: the row changed in place and is live.
    assert events(seeded, memory_id) == ["create", "soft_delete", "update"]
    # And the dashboard's own preview agrees with agentao's block.
    assert client.get("/preview.json").get_json()["stable_block"] == stable


def test_the_effect_shown_is_the_block_the_restore_produces(seeded, client):
    memory_id = gone_row(seeded)
    # One clock for the page and the click: rows saved in the second the page is shown
    # tie with the predicted stamp, which a click a second later would not.
    with mock.patch.object(writes, "now", lambda: "2099-01-02T03:04:05"):
        form_el, form = restore_form(client, memory_id)
        assert form_el.select_one("[data-field=restore-effect] [data-block-effect]") is not None
        r = client.post(f"/memories/project/{memory_id}/restore", data=form, headers=JSON)
    body = r.get_json()
    assert (r.status_code, body["outcome"], body["event"], body["effect_as_shown"]) == (
        200,
        "restored",
        "update",
        True,
    )


def test_refused_while_a_live_memory_holds_its_key(seeded, client):
    memory_id = gone_row(seeded)
    holder = seeded.save("old api", "The API now lives at /v2.", ["legacy"])
    page = soup(client.get(f"/memories/project/{memory_id}"))
    problem = page.select_one("[data-field=restore-problem]")
    assert holder.id in problem.get_text() and page.select_one("button[data-action=restore]") is None
    detail = client.get(f"/memories/project/{memory_id}.json").get_json()["write"]
    assert holder.id in detail["restore_problem"]
    before = file_digest(seeded.project_db)
    r = client.post(
        f"/memories/project/{memory_id}/restore",
        headers=JSON,
        data={"updated_at": detail["updated_at"], "row": detail["row"]},
    )
    assert r.status_code == 409 and holder.id in r.get_json()["message"]
    assert file_digest(seeded.project_db) == before
    assert [m.content for m in seeded.manager.search("old api")] == ["The API now lives at /v2."]


def test_refused_when_the_row_changed_since_the_page(seeded, client):
    memory_id = gone_row(seeded)
    _, form = restore_form(client, memory_id)
    conn = sqlite3.connect(seeded.project_db)
    conn.execute("UPDATE memories SET content = 'edited by hand' WHERE id = ?", (memory_id,))
    conn.commit()
    conn.close()
    before = file_digest(seeded.project_db)
    r = client.post(f"/memories/project/{memory_id}/restore", data=form, headers=JSON)
    assert r.status_code == 409 and "changed since you looked" in r.get_json()["message"]
    # htmx: the refusal is said inside the partial, with its status (htmx swaps a 409: base.html).
    r = client.post(f"/memories/project/{memory_id}/restore", data=form, headers={"HX-Request": "true"})
    assert r.status_code == 409 and soup(r).select_one("#memory-actions [data-outcome=conflict]")
    assert file_digest(seeded.project_db) == before
    # Restoring a live row is refused too: the same click twice restores once.
    _, fresh = restore_form(client, memory_id)
    assert client.post(f"/memories/project/{memory_id}/restore", headers=JSON, data=fresh).status_code == 200
    r = client.post(f"/memories/project/{memory_id}/restore", headers=JSON, data=fresh)
    assert r.status_code == 409 and "live already" in r.get_json()["message"]


def test_a_deleted_secret_is_not_brought_back(seeded, client):
    # Saved before the guard knew the shape (or written by hand), then deleted for it.
    conn = sqlite3.connect(seeded.project_db)
    conn.execute("UPDATE memories SET content = 'api_key=abcdefgh12345678' WHERE key_normalized = 'old_api'")
    conn.commit()
    conn.close()
    memory_id = gone_row(seeded)
    problem = soup(client.get(f"/memories/project/{memory_id}")).select_one("[data-field=restore-problem]")
    assert "credential" in problem.get_text()


def test_the_auto_cap_is_not_exceeded_by_a_restore(agent, tmp_path):
    gone = agent.save("auto 00", "An auto-saved fact.", source="auto")
    agent.manager.delete(gone.id)
    for n in range(1, 51):
        agent.save(f"auto {n:02d}", f"Auto fact {n}.", source="auto")
    client = agent.app().test_client()
    problem = soup(client.get(f"/memories/project/{gone.id}")).select_one("[data-field=restore-problem]")
    assert "50" in problem.get_text() and "soft-delete the oldest" in problem.get_text()


def test_read_only_store_refuses_restore(seeded):
    memory_id = gone_row(seeded)
    client = seeded.app(READ_ONLY=True).test_client()
    page = soup(client.get(f"/memories/project/{memory_id}"))
    assert page.select_one("#restore-form [data-readonly]") is not None
    detail = client.get(f"/memories/project/{memory_id}.json").get_json()["write"]
    r = client.post(
        f"/memories/project/{memory_id}/restore",
        headers=JSON,
        data={"updated_at": detail["updated_at"], "row": detail["row"]},
    )
    assert r.status_code == 403
