"""Each review/curation action shows its effect on <memory-stable>; the prediction is what happens."""

from __future__ import annotations

import pytest
from agentao_world import Agent
from bs4 import BeautifulSoup

from dashboard.actions.effects import BlockEffect

HTMX = {"HX-Request": "true"}
JSON = {"Accept": "application/json"}
STAMP = "2099-01-01T00:00:00"  # every write and prediction in these tests happens "now"


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    # The prediction and the write must agree on updated_at (it decides which
    # incidental rows are "recent"); a second boundary between them is not the point here.
    import dashboard.actions.effects
    import dashboard.store.writes

    monkeypatch.setattr(dashboard.store.writes, "now", lambda: STAMP)
    monkeypatch.setattr(dashboard.actions.effects, "agentao_now", lambda: STAMP)


def engine_block(agent: Agent) -> str:
    """The block the engine computes from the files as they are now (a fresh app reads them)."""
    return agent.app().test_client().get("/preview.json").get_json()["stable_block"]


def agentao_block(agent: Agent) -> str:
    """agentao's own rendering of the block for a brand-new session."""
    from agentao.memory import MemoryPromptRenderer

    fresh = Agent(agent.project_dir.parent)
    fresh.manager._session_id = "a-brand-new-session"
    renderer = MemoryPromptRenderer()
    tail = fresh.manager.get_cross_session_tail()
    return renderer.render_stable_block(
        renderer.fit_stable_records(fresh.manager.get_stable_entries(), tail), tail
    )


def hidden_fields(form) -> dict:
    return {i["name"]: i["value"] for i in form.select("input[type=hidden]")}


def test_approve_prediction_equals_engine_and_agentao_after(seeded):
    client = seeded.app().test_client()
    before = engine_block(seeded)
    items = client.get("/reviews.json").get_json()["items"]
    item = next(i for i in items if i["content"] == "tabs over spaces")
    effect = item["stable_effect"]
    assert effect["before_chars"] == len(before) and effect["budget"] == 2000
    assert effect["changed"] and "+title: preference_tabs_over_spaces" in effect["diff"]
    page = soup(client.get("/reviews"))
    opened = soup(client.get("/reviews/detail", query_string={"id": item["id"]}, headers=HTMX))
    shown = opened.select_one(f"[data-detail='{item['id']}'] [data-plan] [data-block-effect]")
    assert shown.has_attr("hx-disable")
    assert shown.select_one("pre[data-field=block-diff]").text == effect["diff"]
    assert int(shown["data-after-chars"]) == effect["after_chars"]
    card = page.select_one(f"#review-{item['id']}")
    r = client.post(f"/reviews/{item['id']}/approve", data=hidden_fields(card), headers=HTMX)
    after = engine_block(seeded)
    assert effect["after"] == after == agentao_block(seeded)
    row = soup(r).select_one(f"#review-{item['id']}")
    assert row["data-outcome"] == "approved"
    assert f"now {len(after):,} of 2,000" in row.select_one('[data-field="stable-after"]').text


def test_approve_onto_a_live_memory_without_js(agent):
    agent.save("constraint_never_push_to_main", "Push freely.", ["git"])
    agent.crystallize("We must never push to main.")
    client = agent.app().test_client()
    [item] = client.get("/reviews.json").get_json()["items"]
    effect = item["stable_effect"]
    assert "-value: Push freely." in effect["diff"] and "+value: never push to main" in effect["diff"]
    card = soup(client.get("/reviews")).select_one(f"#review-{item['id']}")
    r = client.post(f"/reviews/{item['id']}/approve", data=hidden_fields(card))
    assert r.status_code == 303
    after = engine_block(agent)
    assert effect["after"] == after
    page = soup(client.get(r.headers["Location"]))
    assert f"now {len(after):,} of 2,000" in page.select_one('[data-field="stable-after"]').text


def _actions(client, store, memory_id):
    page = soup(client.get(f"/memories/{store}/{memory_id}"))
    return page, {f["id"]: f for f in page.select("#memory-actions form")}


def test_soft_delete_prediction_equals_after(seeded):
    client = seeded.app().test_client()
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "editor")
    before = engine_block(seeded)
    page, forms = _actions(client, "user", memory.id)
    shown = forms["delete-form"].select_one('[data-field="delete-effect"] [data-block-effect]')
    assert shown.has_attr("hx-disable") and "-title: editor" in shown.select_one("pre").text
    predicted_chars = int(shown["data-after-chars"])
    r = client.post(f"/memories/user/{memory.id}/delete", data=hidden_fields(forms["delete-form"]))
    assert r.status_code == 303 and r.headers["Location"].endswith(f"/memories/user/{memory.id}")
    after = engine_block(seeded)
    assert predicted_chars == len(after)
    assert shown.select_one("pre").text == BlockEffect(before, after, 2000).diff  # the whole change
    done = soup(client.get(r.headers["Location"])).select_one('[data-field="done"]')
    assert done["data-stable-chars"] == str(len(after))


def test_edit_effect_get_then_save_matches(seeded):
    client = seeded.app().test_client()
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "database")
    _, forms = _actions(client, "project", memory.id)
    edit = forms["edit-form"]
    button = edit.select_one('button[data-action="edit-effect"]')
    assert (button["formmethod"], button["formaction"]) == ("get", f"/memories/project/{memory.id}/effect")
    query = dict(hidden_fields(edit), value="PostgreSQL 17 everywhere.", tags="infra", type="decision")
    # No JavaScript: a page with the effect and the form still holding the new values.
    page = soup(client.get(button["formaction"], query_string=query))
    assert page.find("html") is not None
    assert page.select_one("#edit-value").text == "PostgreSQL 17 everywhere."
    effect_box = page.select_one("#edit-effect [data-block-effect]")
    assert "+value: PostgreSQL 17 everywhere." in effect_box.select_one("pre").text
    # htmx: the actions partial alone; JSON: the numbers.
    frag = soup(client.get(button["formaction"], query_string=query, headers=HTMX))
    assert frag.find("html") is None and frag.select_one("#memory-actions #edit-effect")
    predicted = client.get(button["formaction"], query_string=query, headers=JSON).get_json()["effect"]
    r = client.post(f"/memories/project/{memory.id}/edit", data=query, headers=JSON)
    assert r.status_code == 200
    after = engine_block(seeded)
    assert predicted["after"] == after and r.get_json()["stable_block_chars"] == len(after)
    refused = client.get(
        button["formaction"], headers=JSON, query_string=dict(query, value="password=hunter2hunter2")
    ).get_json()
    assert refused["effect"] is None and "sensitive" in refused["refusal"]


def test_move_prediction_equals_after(seeded):
    client = seeded.app().test_client()
    memory = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "release_process")
    before = engine_block(seeded)
    _, forms = _actions(client, "project", memory.id)
    move = forms["move-form"]
    box = move.select_one('[data-field="move-effect"] [data-block-effect]')
    assert box is not None
    predicted_chars = int(box["data-after-chars"])
    diff = box.select_one("pre").text if box.select_one("pre") else ""
    r = client.post(f"/memories/project/{memory.id}/move", data=hidden_fields(move))
    assert r.status_code == 303
    after = engine_block(seeded)
    assert predicted_chars == len(after)
    assert diff == BlockEffect(before, after, 2000).diff and 'scope="user"' in diff
    assert after == agentao_block(seeded)


def test_moving_an_auto_memory_predicts_the_cap_eviction(agent):
    for n in range(50):
        agent.save(f"auto fact {n}", f"auto value {n}", scope="user", source="auto")
    moved = agent.save("auto newcomer", "moves into the user store", source="auto", scope="project")
    # The newest-created auto row is the least recently updated: shown in the block, and the
    # one the cap evicts when the moved row arrives.
    import sqlite3

    with sqlite3.connect(agent.user_db) as conn:
        conn.execute(
            "UPDATE memories SET updated_at = '2000-01-01T00:00:00' WHERE key_normalized = 'auto_fact_49'"
        )
    conn.close()
    client = agent.app().test_client()
    before = engine_block(agent)
    _, forms = _actions(client, "project", moved.id)
    box = forms["move-form"].select_one('[data-field="move-effect"] [data-block-effect]')
    diff = box.select_one("pre").text
    assert "-title: auto fact 49" in diff  # evicted by the cap, as the write will do it
    client.post(f"/memories/project/{moved.id}/move", data=hidden_fields(forms["move-form"]))
    after = engine_block(agent)
    assert diff == BlockEffect(before, after, 2000).diff
    assert len([m for m in agent.manager.get_all_entries("user") if m.source == "auto"]) == 50


def test_editing_an_old_incidental_row_among_many(agent):
    # Eight incidental rows: only the three most recently updated are in the block. Editing
    # the least recent one makes it the most recent: it enters, the third one drops out.
    import sqlite3

    rows = [agent.save(f"note {n}", f"incidental fact number {n}", type="note") for n in range(8)]
    with sqlite3.connect(agent.project_db) as conn:
        for n, m in enumerate(rows):
            conn.execute(
                "UPDATE memories SET updated_at = ? WHERE id = ?", (f"2030-01-01T00:00:{n:02d}", m.id)
            )
    conn.close()
    client = agent.app().test_client()
    before = engine_block(agent)
    assert "note 7" in before and "note 4" not in before and "note 0" not in before
    _, forms = _actions(client, "project", rows[0].id)
    query = dict(hidden_fields(forms["edit-form"]), value="incidental fact, edited", tags="", type="note")
    url = f"/memories/project/{rows[0].id}/effect"
    predicted = client.get(url, query_string=query, headers=JSON).get_json()["effect"]
    assert "+title: note 0" in predicted["diff"] and "-title: note 5" in predicted["diff"]
    assert client.post(f"/memories/project/{rows[0].id}/edit", data=query).status_code == 303
    assert predicted["after"] == engine_block(agent) == agentao_block(agent)


def test_long_queue_over_a_large_store_links_the_rest(agent, monkeypatch):
    from dashboard.views import block_effects

    monkeypatch.setattr(block_effects, "WORK_PER_PAGE", 0)  # as if the store were huge
    agent.crystallize(
        *[f"I prefer {w} style." for w in "amber bronze cobalt denim ebony fuchsia garnet".split()]
    )
    client = agent.app().test_client()
    page = soup(client.get("/reviews"))
    cards = page.select("article.review")
    linked = [c for c in cards if c.select_one("[data-lazy-effect]")]
    assert len(linked) == len(cards) - block_effects.MIN_EAGER > 0
    link = "/reviews/effect?id=" + linked[0]["data-item-id"]
    assert linked[0].select_one("[data-lazy-effect]")["hx-get"] == link
    shown = soup(client.get(link)).select_one("#review-effect [data-block-effect]")
    item_id = linked[0]["data-item-id"]
    data = client.get(f"/reviews/effect.json?id={item_id}").get_json()["stable_effect"]
    assert int(shown["data-after-chars"]) == data["after_chars"]
    client.post(f"/reviews/{item_id}/approve", data=hidden_fields(linked[0]))
    assert data["after"] == engine_block(agent)
    assert client.get("/reviews/effect?id=nope").status_code == 404


def test_a_saved_row_takes_the_place_the_file_would_list_it_at():
    """The rows an effect weighs are the file's listing (ORDER BY created_at, scope, key):
    a saved row goes after its equals, a replaced one leaves its old place, and stamps
    of other kinds (a hand edit: NULL, a number) order as SQLite orders them."""
    from dataclasses import replace

    from dashboard.actions.effects import _all_saved_in, _place
    from dashboard.records import Memory

    def row(i, created, key="k", scope="project"):
        return Memory(f"{i:02x}", scope, "note", key, "t", "c", created_at=created, updated_at="x")

    stamps = [None, 5, "2025-01-01", "2025-01-01", "2025-01-01", "2025-02-01", "2025-03-01"]
    rows = sorted((row(i, s, key="k%d" % (i % 2)) for i, s in enumerate(stamps)), key=_place)
    for saved in (
        [row(99, "2025-01-01", key="k1")],  # among equals: after them
        [row(98, "2025-01-01", key="k0"), row(99, "2024-12-31")],
        [replace(rows[2], created_at="2025-02-01")],  # a replaced row moves
        [row(97, None), row(96, 7)],
    ):
        ids = {m.id for m in saved}
        expected = sorted([m for m in rows if m.id not in ids] + saved, key=_place)
        assert [m.id for m in _all_saved_in(rows, saved)] == [m.id for m in expected]


def test_a_page_of_cards_weighs_each_save_from_the_held_selection_as_the_full_walk_does():
    """A card's effect comes from the held selection with its one row put in (a page of cards
    costs no pass over every row); for new rows, overwritten ones of every kind, equal stamps,
    an id in both files and budgets full or not, the fit is the full walk's, entry by entry."""
    import random

    from dashboard.actions import effects
    from dashboard.contract import PlannedSave
    from dashboard.engine import EngineCache, all_entries, session_tail
    from dashboard.engine.stable import fit, select
    from dashboard.preview_source import Snapshot
    from dashboard.records import Memory, Summary

    def entries_of(fitted):
        return [(s.memory.store, s.memory.id, s.because, s.cost, s.shown, s.room_before) for s in fitted]

    quick = 0
    for seed in range(60):
        rng = random.Random(seed)
        days = rng.choice([5, 40, 400])  # few days: many equal stamps

        def stamp(rng=rng, days=days):
            return (
                f"2025-{1 + rng.randrange(days) // 28 % 12:02d}-{1 + rng.randrange(days) % 28:02d}T00:00:00"
            )

        files: dict[str, list] = {"project": [], "user": []}
        for n in range(rng.randint(0, 120)):
            store = rng.choice(["project"] * 4 + ["user"])
            scope = store if rng.random() < 0.9 else rng.choice(["project", "user"])
            kind = rng.choice(["note", "project_fact", "decision", "workflow", "preference"])
            mid = f"{n:08x}" if rng.random() > 0.02 else "00000001"  # now and then in both files
            created = stamp()
            files[store].append(
                Memory(
                    mid, scope, kind, f"k{n}", f"title {n}", "x" * rng.randint(1, 300), ("t",),
                    created_at=created, updated_at=max(created, stamp()), store=store,
                )
            )  # fmt: skip
        for rows in files.values():
            rows.sort(key=effects._place)
            rows[:] = [m for i, m in enumerate(rows) if all(m.id != o.id for o in rows[:i])]
        summaries = [Summary("s1", "a", "summary " * rng.randint(0, 40))] if rng.random() < 0.5 else []
        snap = Snapshot(
            files["project"], files["user"], summaries, (seed,), EngineCache(files["project"], files["user"])
        )
        ids = [m.id for m in (*snap.project, *snap.user)]
        recent = effects._recent(snap.cache.stable()[0])
        for _ in range(8):
            live = snap.project + snap.user
            existing = rng.choice(live) if live and rng.random() < 0.5 else None
            store = existing.store if existing else rng.choice(["project", "user"])
            kind = rng.choice(["note", "project_fact", "decision", "preference"])
            key = existing.key_normalized if existing else "new"
            plan = PlannedSave(key, "saved", "y" * rng.randint(1, 200), (), (), store, store, kind, "crystallized",
                               "inferred", False)  # fmt: skip
            row = effects.would_save(plan, existing, rng.choice([stamp(), "2099-01-01T00:00:00"]))
            tail = session_tail(summaries, None)
            project = effects._all_saved_in(snap.project, [row] if store == "project" else [])
            user = effects._all_saved_in(snap.user, [row] if store == "user" else [])
            full = fit(select(all_entries(project, user)), tail, snap.cache.costs)
            held = effects._saved_quickly(snap, row, existing, recent) if len(set(ids)) == len(ids) else None
            if held is not None:
                quick += 1
                assert entries_of(held) == entries_of(full), (seed, row, existing)
                assert held.block(tail) == full.block(tail)
    assert quick > 150  # the held selection answers most cards (equal stamps take the walk)
