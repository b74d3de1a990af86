"""Bulk actions from the memories list, against the real agentao 0.5.17.

The conformance cases copy a store built by agentao twice: the dashboard's
toolbar -> "Review changes…" -> Apply runs on one copy (as a browser does,
posting the forms the pages give), agentao's own calls for the same rows on
the other (``delete``, ``save_memory`` with the tag added, a save in the other
scope then ``delete``); every row, event and counter must be equal, both
clocks frozen.  Then agentao's listing, search and prompt block over the
dashboard's copy are checked as a user would: the rows are gone, tagged or
moved there too.
"""

from __future__ import annotations

import sqlite3
from unittest import mock

from agentao.tools.memory import SaveMemoryTool
from agentao_world import agentao_blocks, file_digest, wait_for_job
from bs4 import BeautifulSoup
from test_adding import app_for
from test_reviews_conformance import run_both
from werkzeug.datastructures import MultiDict

from dashboard.actions import bulk

JSON = {"Accept": "application/json"}
HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def ids_on_list(client, query="") -> list[str]:
    page = soup(client.get("/memories" + query))
    assert page.select_one("form#bulk") is not None
    return [i["value"] for i in page.select("input[name=ids][form=bulk]")]


def apply_form(response) -> MultiDict:
    form = soup(response).select_one("#bulk-apply")
    assert form is not None, soup(response).get_text(" ", strip=True)[:400]
    return MultiDict([(i["name"], i.get("value", "")) for i in form.select("input[type=hidden]")])


def review(client, action, ids=None, headers=None, **more):
    data = MultiDict({"action": action, **more})
    for i in ids or ():
        data.add("ids", i)
    return client.post("/memories/bulk/plan", data=data, headers=headers or {})


def through_the_toolbar(client, action, ids, **more):
    """Review changes…, then Apply with the form the dry run gave; the Apply answer."""
    r = review(client, action, ids, **more)
    assert r.status_code == 200
    form = apply_form(r)
    for k, v in more.items():
        if k == "confirm":
            form[k] = v
    return client.post("/memories/bulk", data=form)


def by_key(agent, key, store="project") -> str:
    db = agent.project_db if store == "project" else agent.user_db
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id FROM memories WHERE key_normalized = ? AND deleted_at IS NULL", (key,)
        ).fetchone()[0]
    finally:
        conn.close()


def test_a_bulk_soft_delete_writes_what_agentaos_delete_writes(seeded, tmp_path):
    picked = [
        ("project", by_key(seeded, "database")),
        ("project", by_key(seeded, "release_process")),
        ("user", by_key(seeded, "editor", "user")),
    ]

    def ours(copy):
        client = app_for(copy).test_client()
        return through_the_toolbar(client, "delete", [f"{s}:{i}" for s, i in picked]).status_code

    def theirs(copy, manager):
        return [manager.delete(i) for _s, i in picked]

    out_ours, out_theirs, st_ours, st_theirs = run_both(seeded, tmp_path, ours, theirs)
    assert out_ours == 200 and out_theirs == [True] * 3
    assert st_ours == st_theirs


def test_a_bulk_tag_is_agentaos_save_memory_with_the_tag_added(seeded, tmp_path):
    keys = [("project", "package_manager"), ("project", "deploy"), ("user", "user_language")]
    picked = [(s, by_key(seeded, k, s)) for s, k in keys]
    rows = {m.id: m for m in seeded.manager.get_all_entries()}

    def ours(copy):
        client = app_for(copy).test_client()
        return through_the_toolbar(
            client, "tag", [f"{s}:{i}" for s, i in picked], add_tag="reviewed"
        ).status_code

    def theirs(copy, manager):
        tool = SaveMemoryTool(manager)
        return [
            tool.execute(
                key=rows[i].title,
                value=rows[i].content,
                tags=[*rows[i].tags, "reviewed"],
                scope=rows[i].scope,
                type=rows[i].type,
            ).startswith("Saved memory")
            for _s, i in picked
        ]

    out_ours, out_theirs, st_ours, st_theirs = run_both(seeded, tmp_path, ours, theirs)
    assert out_ours == 200 and out_theirs == [True] * 3
    assert st_ours == st_theirs


def test_a_bulk_move_is_a_save_in_the_other_store_then_agentaos_delete(seeded, tmp_path):
    picked = [by_key(seeded, "database"), by_key(seeded, "release_process")]
    rows = {m.id: m for m in seeded.manager.get_all_entries()}

    def ours(copy):
        client = app_for(copy).test_client()
        return through_the_toolbar(client, "move-user", [f"project:{i}" for i in picked]).status_code

    def theirs(copy, manager):
        tool = SaveMemoryTool(manager)
        out = []
        for i in picked:
            out.append(
                tool.execute(
                    key=rows[i].title,
                    value=rows[i].content,
                    tags=list(rows[i].tags),
                    scope="user",
                    type=rows[i].type,
                ).startswith("Saved memory")
            )
            out.append(manager.delete(i))
        return out

    out_ours, out_theirs, st_ours, st_theirs = run_both(seeded, tmp_path, ours, theirs)
    assert out_ours == 200 and out_theirs == [True] * 4
    assert st_ours == st_theirs


def test_agentao_lists_searches_and_renders_the_result(seeded):
    client = seeded.app().test_client()
    gone, tagged, moved = (by_key(seeded, k) for k in ("database", "package_manager", "release_process"))
    assert through_the_toolbar(client, "delete", [f"project:{gone}"]).status_code == 200
    assert through_the_toolbar(client, "tag", [f"project:{tagged}"], add_tag="checked").status_code == 200
    assert through_the_toolbar(client, "move-user", [f"project:{moved}"]).status_code == 200
    listed = {m.id: m for m in seeded.manager.get_all_entries()}
    assert gone not in listed and moved not in listed
    assert "checked" in listed[tagged].tags and listed[tagged].source == "explicit"
    assert [m.id for m in seeded.manager.filter_by_tag("checked")] == [tagged]
    assert seeded.manager.search("PostgreSQL") == []
    [there] = seeded.manager.search("CI builds the wheel")
    assert (there.scope, there.id != moved) == ("user", True)
    stable, _dynamic = agentao_blocks(seeded, "how do we release")
    assert "PostgreSQL" not in stable and "CI builds the wheel" in stable
    assert client.get("/preview.json").get_json()["stable_block"] == stable


def test_the_dry_run_shows_each_row_the_block_effect_and_writes_nothing(seeded):
    client = seeded.app().test_client()
    ids = ids_on_list(client)
    before = file_digest(seeded.project_db, seeded.user_db)
    r = review(client, "delete", ids[:2])
    page = soup(r)
    assert [tr["data-code"] for tr in page.select("#bulk-plan tbody tr")] == ["delete", "delete"]
    assert page.select_one("#bulk-plan h2").get_text(strip=True) == "Soft delete 2 memories?"
    effect = page.select_one("[data-field=bulk-effect] [data-block-effect]")
    assert int(effect["data-delta"]) < 0  # two rows leave the block
    assert page.select_one("[data-warning=leaves_block]") is not None
    plan = client.post(
        "/memories/bulk/plan.json", json={"action": "delete", "ids": ids[:2]}, headers=JSON
    ).get_json()
    assert plan["count"] == 2 and plan["effect"]["delta"] == int(effect["data-delta"])
    assert file_digest(seeded.project_db, seeded.user_db) == before
    # The block the dry run predicted is the block agentao renders afterwards.
    form = apply_form(r)
    body = client.post("/memories/bulk.json", data=form, headers=JSON).get_json()
    assert body["effect_as_shown"] is True
    stable, _ = agentao_blocks(seeded, "anything")
    assert plan["effect"]["after"] == stable


def test_one_memory_and_several_are_said_with_the_right_plural(seeded):
    client = seeded.app().test_client()
    ids = ids_on_list(client)
    r = through_the_toolbar(client, "tag", ids[:1], add_tag="one")
    # (A second sentence follows when the agent's clock moved the block meanwhile: not this test's.)
    assert soup(r).select_one("#status").get_text(strip=True).startswith("Added the tag “one” to 1 memory.")
    r = through_the_toolbar(client, "tag", ids[:3], add_tag="three")
    assert (
        soup(r).select_one("#status").get_text(strip=True).startswith("Added the tag “three” to 3 memories.")
    )
    assert (
        soup(review(client, "tag", ids[:1], add_tag="x")).select_one("h2").get_text(strip=True)
        == "Add the tag to 1 memory?"
    )


def test_rows_that_would_not_change_are_shown_and_left_out(seeded):
    client = seeded.app().test_client()
    user_row = next(i for i in ids_on_list(client) if i.startswith("user:"))
    project_row = next(i for i in ids_on_list(client) if i.startswith("project:"))
    page = soup(review(client, "move-user", [user_row, project_row]))
    codes = {tr["data-store"]: tr["data-code"] for tr in page.select("#bulk-plan tbody tr")}
    assert codes == {"user": "already_there", "project": "move"}
    assert [i["value"] for i in page.select("#bulk-apply input[name=rows]")][0].startswith(project_row)


def test_all_matching_is_capped_and_says_so_then_does_the_rest(agent):
    for n in range(7):
        agent.save(f"note {n}", f"A note numbered {n}.", ["batch"], scope="project")
    client = agent.app().test_client()
    with mock.patch.object(bulk, "CAP", 3):
        r = review(client, "delete", all="1", tag="batch")
        page = soup(r)
        assert page.select_one("#bulk-plan")["data-count"] == "3"
        assert "the first 3 of 7" in page.select_one("[data-warning=capped]").get_text()
        assert client.post("/memories/bulk", data=apply_form(r)).status_code == 200
        assert len(agent.manager.filter_by_tag("batch")) == 4
        r = review(client, "delete", all="1", tag="batch")
        assert "the first 3 of 4" in soup(r).select_one("[data-warning=capped]").get_text()
        client.post("/memories/bulk", data=apply_form(r))
        r = review(client, "delete", all="1", tag="batch")
        assert soup(r).select_one("[data-warning=capped]") is None
        client.post("/memories/bulk", data=apply_form(r))
    assert agent.manager.filter_by_tag("batch") == []


def test_a_row_changed_since_the_dry_run_refuses_everything(seeded):
    client = seeded.app().test_client()
    ids = ids_on_list(client)
    form = apply_form(review(client, "delete", ids[:3]))
    changed = ids[1].split(":")[1]
    conn = sqlite3.connect(seeded.project_db if ids[1].startswith("project") else seeded.user_db)
    conn.execute("UPDATE memories SET content = 'edited by hand' WHERE id = ?", (changed,))
    conn.commit()
    conn.close()
    before = file_digest(seeded.project_db, seeded.user_db)
    r = client.post("/memories/bulk.json", data=form, headers=JSON)
    assert r.status_code == 409 and [row["id"] for row in r.get_json()["rows"]] == [changed]
    r = client.post("/memories/bulk", data=form, headers=HX)
    assert r.status_code == 409  # htmx swaps a 409 (base.html's htmx-config)
    assert soup(r).select_one(f"[data-field=moved] [data-memory-id='{changed}']") is not None
    assert file_digest(seeded.project_db, seeded.user_db) == before


def _events(db, memory_id):
    conn = sqlite3.connect(db)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT event_type FROM memory_events WHERE memory_id = ? ORDER BY id", (memory_id,)
            )
        ]
    finally:
        conn.close()


def test_a_row_named_twice_is_changed_once_and_the_answer_says_so(seeded):
    """The same row token twice (a script, a doubled form field): tag writes once, move moves
    once (it answered count 2, and 503 'both stores could not be read')."""
    client = seeded.app().test_client()
    project = [i for i in ids_on_list(client) if i.startswith("project:")]
    for action, row in (("tag", project[0]), ("move-user", project[1])):
        form = apply_form(review(client, action, [row], add_tag="twice"))
        form.setlist("rows", form.getlist("rows") * 2)
        r = client.post("/memories/bulk.json", data=form, headers=JSON)
        body = r.get_json()
        assert r.status_code == 200 and body["count"] == 1 and body["named_twice"] == 1, body
        assert "named twice in the form: it was changed once" in body["message"]
        assert _events(seeded.project_db, row.split(":")[1])[-1] == (
            "update" if action == "tag" else "soft_delete"
        )
        assert _events(seeded.project_db, row.split(":")[1]).count("update") <= (1 if action == "tag" else 0)
    # The same row as two different states: refused, nothing written.
    form = apply_form(review(client, "delete", [project[2]]))
    token = form["rows"]
    other = token.rsplit(":", 1)[0] + ":" + ("0" * 16 if not token.endswith("0" * 16) else "1" * 16)
    form.setlist("rows", [token, other])
    before = file_digest(seeded.project_db, seeded.user_db)
    r = client.post("/memories/bulk.json", data=form, headers=JSON)
    assert r.status_code == 400 and "named twice" in r.get_json()["message"]
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_the_agent_saving_other_rows_meanwhile_refuses_nothing(seeded):
    client = seeded.app().test_client()
    ids = ids_on_list(client)
    form = apply_form(review(client, "move-user", [i for i in ids if i.startswith("project:")][:2]))
    seeded.save("new fact", "The agent saved this while the page was open.", scope="project")
    r = client.post("/memories/bulk.json", data=form, headers=JSON)
    assert r.status_code == 200 and r.get_json()["count"] == 2
    assert r.get_json()["effect_as_shown"] is False  # the block moved on; the answer says so


def test_htmx_apply_refreshes_the_list_and_says_the_result(seeded):
    client = seeded.app().test_client()
    ids = ids_on_list(client, "?scope=project")
    r = review(client, "delete", ids[:2], headers=HX, scope="project")
    assert soup(r).select_one("#bulk-plan h2[autofocus]") is not None
    assert soup(r).select_one("#bulk-apply")["hx-target"] == "#memory-list"
    r = client.post("/memories/bulk", data=apply_form(r), headers=HX)
    page = soup(r)
    assert page.select_one("section#memory-list") is not None
    listed = [i["value"] for i in page.select("input[name=ids]")]
    assert not set(ids[:2]) & set(listed) and listed and all(i.startswith("project:") for i in listed)
    assert page.select_one("[data-field=bulk-done][autofocus]") is not None
    assert (
        page.select_one("[hx-swap-oob] [data-said]").get_text(strip=True)
        == "Soft-deleted 2 memories; agentao no longer uses them."
    )


def test_bad_input_is_refused_with_a_reason_and_writes_nothing(seeded):
    client = seeded.app().test_client()
    ids = ids_on_list(client)
    before = file_digest(seeded.project_db, seeded.user_db)
    cases = [
        ({"action": "explode", "ids": ids[0]}, "Choose what to do"),
        ({"action": "delete"}, "Tick the memories"),
        ({"action": "delete", "ids": "nope"}, "store:id"),
        ({"action": "tag", "ids": ids[0]}, "Type the tag"),
        ({"action": "move", "ids": ids[0]}, "where to move"),
    ]
    for data, words in cases:
        r = client.post("/memories/bulk/plan", data=data)
        assert r.status_code == 400 and words in soup(r).select_one("[data-field=bulk-refused]").get_text()
        r = client.post("/memories/bulk/plan", data=data, headers=HX)
        assert r.status_code == 400 and words in soup(r).select_one("[data-field=bulk-refused]").get_text()
    r = client.post("/memories/bulk.json", data={"action": "delete", "rows": "project:x:zz"}, headers=JSON)
    assert r.status_code == 400
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_read_only_refuses_apply(seeded):
    client = seeded.app(READ_ONLY=True).test_client()
    ids = ids_on_list(client)
    before = file_digest(seeded.project_db, seeded.user_db)
    page = soup(review(client, "delete", ids[:1]))
    # The dry run still says what would happen, and why it cannot: no Apply button.
    assert (
        page.select_one("#bulk-plan [data-readonly]") is not None and page.select_one("#bulk-apply") is None
    )
    plan = client.post("/memories/bulk/plan.json", data={"action": "delete", "ids": ids[:1]}).get_json()
    r = client.post(
        "/memories/bulk.json",
        headers=JSON,
        data={"action": "delete", "rows": [row["token"] for row in plan["rows"]]},
    )
    assert r.status_code == 403 and "cannot be changed" in r.get_json()["message"]
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_a_bulk_purge_asks_for_the_number_then_erases_verified(seeded):
    client = seeded.app().test_client()
    picked = [f"project:{by_key(seeded, 'database')}", f"user:{by_key(seeded, 'editor', 'user')}"]
    r = review(client, "purge", picked)
    page = soup(r)
    assert page.select_one("[data-warning=irreversible]") is not None
    assert page.select_one("#bulk-confirm") is not None
    form = apply_form(r)
    before = file_digest(seeded.project_db, seeded.user_db)
    wrong = client.post("/memories/bulk", data=MultiDict([*form.items(multi=True), ("confirm", "3")]))
    assert wrong.status_code == 400 and "type the number" in wrong.get_data(as_text=True)
    assert file_digest(seeded.project_db, seeded.user_db) == before
    r = client.post("/memories/bulk", data=MultiDict([*form.items(multi=True), ("confirm", "2")]))
    assert r.status_code == 303 and r.headers["Location"].startswith("/forget/jobs/")
    job = wait_for_job(client, r.headers["Location"])
    assert job["verdict"] == "verified erased", job
    for db in (seeded.project_db, seeded.user_db):
        conn = sqlite3.connect(db)
        ids = [i.split(":")[1] for i in picked]
        assert conn.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", ids).fetchone()[0] == 0
        assert (
            conn.execute("SELECT count(*) FROM memory_events WHERE memory_id IN (?, ?)", ids).fetchone()[0]
            == 0
        )
        conn.close()
    assert seeded.manager.search("PostgreSQL") == [] and seeded.manager.search("Neovim") == []
    assert len(seeded.manager.get_all_entries()) == 4  # of the six live ones


# -- races with real processes (the pattern of tests/test_races.py) ---------------------------

from test_races import (  # noqa: E402
    FORK,
    WAIT,
    _agent_saves,
    _child,
    _join,
    _live,
    _movable,
    _no_leftover_process,  # noqa: F401 - the fixture ends leftovers
    _split_states,
)


def _move_forms(client, ids):
    return apply_form(review(client, "move-user", [f"project:{i}" for i in ids]))


def test_bulk_moves_while_agentao_saves_leave_no_split(agent):
    rounds, per = 8, 3
    memories = _movable(agent, rounds * per)
    client = agent.app().test_client()
    barrier = FORK.Barrier(2)
    proc = _child(_agent_saves, agent.project_db, agent.user_db, barrier, rounds, 6, "agent")
    answers = []
    for r in range(rounds):
        form = _move_forms(client, [m.id for m in memories[r * per : (r + 1) * per]])
        barrier.wait(WAIT)
        answers.append(client.post("/memories/bulk.json", data=form, headers=JSON).get_json())
        barrier.wait(WAIT)
    assert _join(*proc) == rounds * 6
    assert _split_states(agent, memories) == []
    # The agent saved only other memories: no bulk move had a reason to be refused.
    assert [a["outcome"] for a in answers] == ["done"] * rounds, answers
    assert all(_live(agent.user_db, m.key_normalized) for m in memories)


def _agent_deletes(project_db, user_db, barrier, ids):
    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from test_races import _jitter

    manager = MemoryManager(SQLiteMemoryStore.open(project_db), SQLiteMemoryStore.open(user_db))
    out = []
    for r, memory_id in enumerate(ids):
        barrier.wait(WAIT)
        import time

        time.sleep(_jitter(r))
        out.append(manager.delete(memory_id))
        barrier.wait(WAIT)
    return out


def test_a_bulk_move_racing_agentaos_delete_of_one_row_moves_all_or_none(agent):
    rounds, per = 10, 3
    memories = _movable(agent, rounds * per)
    client = agent.app().test_client()
    barrier = FORK.Barrier(2)
    # In each round agentao deletes the middle row of the three the dashboard moves.
    proc = _child(
        _agent_deletes,
        agent.project_db,
        agent.user_db,
        barrier,
        [memories[r * per + 1].id for r in range(rounds)],
    )
    outcomes = []
    for r in range(rounds):
        form = _move_forms(client, [m.id for m in memories[r * per : (r + 1) * per]])
        barrier.wait(WAIT)
        outcomes.append(client.post("/memories/bulk.json", data=form, headers=JSON).get_json()["outcome"])
        barrier.wait(WAIT)
    deleted = _join(*proc)
    for r, outcome in enumerate(outcomes):
        group = memories[r * per : (r + 1) * per]
        in_user = [bool(_live(agent.user_db, m.key_normalized)) for m in group]
        in_project = [bool(_live(agent.project_db, m.key_normalized)) for m in group]
        if outcome == "done":  # the dashboard went first: all three moved, agentao found it gone
            assert in_user == [True] * 3 and in_project == [False] * 3 and deleted[r] is False
        else:  # agentao went first: nothing moved, the other two stay
            assert outcome == "conflict" and deleted[r] is True
            assert in_user == [False] * 3 and in_project == [True, False, True]


def test_a_purge_through_htmx_and_json_starts_the_verified_job(seeded):
    client = seeded.app().test_client()
    one, two = (f"project:{by_key(seeded, k)}" for k in ("database", "release_process"))
    r = review(client, "purge", [one], headers=HX)
    assert soup(r).select_one("#bulk-apply")["hx-target"] == "#bulk-review"
    form = MultiDict([*apply_form(r).items(multi=True), ("confirm", "1")])
    page = soup(client.post("/memories/bulk", data=form, headers=HX))
    assert (
        page.select_one("[hx-swap-oob] [data-said]").get_text(strip=True)
        == "Purging 1 memory; the result shows here when it is verified."
    )
    card = page.select_one("[data-job]")  # the job's card, polling itself while it runs
    assert wait_for_job(client, f"/forget/jobs/{card['data-job']}")["verdict"] == "verified erased"
    plan = client.post("/memories/bulk/plan.json", data={"action": "purge", "ids": [two]}).get_json()
    body = client.post(
        "/memories/bulk.json",
        headers=JSON,
        data={
            "action": "purge",
            "rows": [row["token"] for row in plan["rows"]],
            "confirm": "1",
            "fingerprint_project": plan["purge"]["project"]["fingerprint"],
        },
    )
    assert body.status_code in (200, 202) and body.get_json()["outcome"] == "started"
    done = wait_for_job(client, body.get_json()["job"]["url"])
    assert done["verdict"] == "verified erased"
    assert seeded.manager.search("PostgreSQL") == [] and seeded.manager.search("CI builds") == []


def test_hidden_characters_in_a_title_are_named_on_the_dry_run(agent):
    from test_invisible import raw_hidden

    saved = agent.save(
        "invoice \u202etxt.exe", "Pay the \u202einvoice\u202c today.", ["billing"], scope="project"
    )
    client = agent.app().test_client()
    for action in ("delete", "tag", "move-user", "purge"):
        html = review(client, action, [f"project:{saved.id}"], add_tag="x").get_data(as_text=True)
        assert raw_hidden(html) == [], action
        assert "U+202E" in html, action
