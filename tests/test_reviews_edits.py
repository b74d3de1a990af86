"""Approve with edits: the dashboard against agentao approving the item and then saving the edit.

Each case runs three copies of one agentao-built store: the dashboard's
approve-with-edits; agentao's single path for it (``MemoryManager.upsert``
of the edited request under the item's key, then the queue row marked
approved — ``promote``'s two steps with the ``save_memory`` request); and
agentao approving the item as proposed and then saving the edit with
``upsert``.  Files and event log must equal the single path (ids and
clocks aside); the rows must equal the two-step result too — the two-step
only adds the approval's own event (and change count) before the edit's.
"""

from __future__ import annotations

import dataclasses

import pytest
from agentao.memory.crystallizer import MemoryCrystallizer
from agentao.memory.models import SaveMemoryRequest
from agentao_world import file_digest
from bs4 import BeautifulSoup
from test_reviews_conformance import Copy, pending_ids, run_both, snapshot, state

from dashboard.actions import approval
from dashboard.actions.approval import Edits
from dashboard.contract import SaveRefused
from dashboard.store import build_refs, writes
from dashboard.store.registry import ref_for
from dashboard.store.writes import WriteConflict


def _one(agent, text):
    agent.crystallize(text)
    [item_id] = pending_ids(agent)
    return agent.manager.project_store.get_review_item(item_id)


def _request(item, edits: Edits) -> SaveMemoryRequest:
    pick = lambda e, p: p if e is None else e  # noqa: E731
    return SaveMemoryRequest(
        key=item.key_normalized,
        value=pick(edits.value, item.content),
        tags=list(pick(edits.tags, item.tags)),
        scope=pick(edits.scope, item.scope),
        type=pick(edits.type, item.type),
    )


def ours(item, edits):
    def step(copy):
        try:
            plan, saved = approval.approve(copy.refs, item.id, edits=edits)
            return ("ok", saved.event, plan.save.store)
        except SaveRefused as refused:
            return ("refused", str(refused))

    return step


def single_path(item, edits):
    def step(copy, manager):
        before = {m.id for m in manager.get_all_entries()}
        try:
            record = manager.upsert(_request(item, edits))
        except ValueError as refused:  # SensitiveMemoryError is a ValueError
            return ("refused", str(refused))
        manager.project_store.update_review_status(item.id, "approved")
        return ("ok", "update" if record.id in before else "create", record.scope)

    return step


def two_steps(item, edits):
    """agentao approves the item (where the edit puts it), then the edit is saved."""

    def step(copy, manager):
        scoped = dataclasses.replace(item, scope=edits.scope or item.scope)
        record = MemoryCrystallizer().promote(scoped, manager)  # = approve_review_item at that scope
        manager.upsert(dataclasses.replace(_request(item, edits), key=record.title))

    return step


def compare(agent, tmp_path, item, edits):
    """Both agentao references and the dashboard; returns the dashboard's outcome and state."""
    out, theirs, st, st_single = run_both(agent, tmp_path / "a", ours(item, edits), single_path(item, edits))
    assert out == theirs
    assert st == st_single  # files and event log, ids and clocks aside
    if out[0] == "ok":
        _, _, _, st_two = run_both(agent, tmp_path / "b", lambda c: None, two_steps(item, edits))
        for db in ("project_db", "user_db"):
            assert st[db]["memories"] == st_two[db]["memories"]
            assert st[db]["queue"] == st_two[db]["queue"]
    return out, st


def test_value_edit_writes_the_edited_row(agent, tmp_path):
    item = _one(agent, "We must never push to main.")
    out, st = compare(agent, tmp_path, item, Edits(value="Never push to main; open a PR."))
    assert out == ("ok", "create", "project")
    [row] = st["project_db"]["memories"]
    assert row["content"] == "Never push to main; open a PR."
    assert (row["source"], row["confidence"]) == ("explicit", "explicit_user")
    assert st["project_db"]["queue"][0]["status"] == "approved"


def test_tags_edit(agent, tmp_path):
    item = _one(agent, "We decided to use uv for packaging.")
    out, st = compare(agent, tmp_path, item, Edits(tags=("tooling", "python")))
    [row] = st["project_db"]["memories"]
    assert row["tags_json"] == '["tooling", "python"]' and "tooling" in row["keywords_json"]


def test_scope_change_lands_in_the_user_file(agent, tmp_path):
    item = _one(agent, "We decided to use uv for packaging.")
    assert item.scope == "project"
    out, st = compare(agent, tmp_path, item, Edits(scope="user"))
    assert out == ("ok", "create", "user")
    assert st["project_db"]["memories"] == [] and len(st["user_db"]["memories"]) == 1
    assert st["project_db"]["queue"][0]["status"] == "approved"


def test_type_change(agent, tmp_path):
    item = _one(agent, "We must never push to main.")
    out, st = compare(agent, tmp_path, item, Edits(type="workflow"))
    assert st["project_db"]["memories"][0]["type"] == "workflow" != item.type


def test_secret_in_the_edit_is_refused_and_writes_nothing(agent, tmp_path):
    item = _one(agent, "We must never push to main.")
    original = snapshot(agent)
    out, st = compare(agent, tmp_path, item, Edits(value="deploy with token=abcdefgh12345678"))
    assert out == ("refused", "Refused to save: content appears to contain sensitive credentials")
    assert st == state(Copy(agent, tmp_path / "untouched"), original)
    assert st["project_db"]["queue"][0]["status"] == "pending"


def test_an_edit_can_fix_a_candidate_agentao_would_refuse(agent, tmp_path):
    item = _one(agent, "I use token=abcdefgh12345678 for the staging API.")
    refs = build_refs(agent.project_dir, agent.user_db)
    assert approval.plan_approval(refs, item_of(refs, item.id)).refusal
    out, theirs, st, st_single = run_both(
        agent,
        tmp_path,
        ours(item, Edits(value="Staging API: token in the vault.")),
        single_path(item, Edits(value="Staging API: token in the vault.")),
    )
    assert out == theirs == ("ok", "create", item.scope) and st == st_single


def item_of(refs, item_id):
    return writes.review_item(ref_for(refs, "project").path, item_id)


@pytest.mark.parametrize("scope", ["project", "user"])
def test_key_collision_overwrites_the_live_memory_and_says_so_first(agent, tmp_path, scope):
    item = _one(agent, "We must never push to main.")
    agent.save(item.key_normalized, "Push freely.", ["git"], scope=scope)
    refs = build_refs(agent.project_dir, agent.user_db)
    edits = Edits(value="Never push to main.", scope=scope)
    plan = approval.plan_approval(refs, item_of(refs, item.id), edits=edits)
    assert plan.existing is not None and plan.existing.content == "Push freely."
    assert {"field": "content", "before": "Push freely.", "after": "Never push to main."} in plan.diff
    out, st = compare(agent, tmp_path, item, edits)
    assert out == ("ok", "update", scope)
    assert [e[1] for e in st[f"{scope}_db"]["events"]] == ["create", "update"]


def test_edits_that_change_nothing_are_a_plain_approval(agent, tmp_path):
    item = _one(agent, "We must never push to main.")
    refs = build_refs(agent.project_dir, agent.user_db)
    same = Edits(value=item.content, tags=tuple(item.tags), scope=item.scope, type=item.type)
    plan = approval.plan_approval(refs, item_of(refs, item.id), edits=same)
    assert plan.edits is None and plan.save.source == "crystallized"


def test_a_stale_target_from_the_unedited_plan_is_a_conflict(agent):
    """The card's target token is the unedited plan's: it must not bless an edited scope's row."""
    item = _one(agent, "We decided to use uv for packaging.")
    agent.save(item.key_normalized, "pip and requirements.txt", scope="user")
    refs = build_refs(agent.project_dir, agent.user_db)
    plain = approval.plan_approval(refs, item_of(refs, item.id))
    with pytest.raises(WriteConflict):
        approval.approve(
            refs, item.id, plain.item_fingerprint, plain.target_fingerprint, edits=Edits(scope="user")
        )
    assert agent.manager.list_review_items()[0].id == item.id  # still pending


# --------------------------------------------------------------------------- the card, the form, the twin
HTMX = {"HX-Request": "true"}
JSON = {"Accept": "application/json"}


def _soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def _card_fields(card) -> dict:
    """What the browser sends from one card: hidden tokens and the edit form's fields."""
    out = {i["name"]: i["value"] for i in card.select("input[type=hidden], input[type=text]")}
    out.update({t["name"]: t.text for t in card.select("textarea")})
    out.update({s["name"]: s.select_one("option[selected]")["value"] for s in card.select("select")})
    return out


@pytest.fixture
def pending(agent):
    agent.save("constraint_never_push_to_main", "Push freely.", ["git"], scope="user")
    item = _one(agent, "We must never push to main.")
    return agent, item


def _user_rows(agent):
    return [(m.key_normalized, m.content, m.source) for m in agent.manager.get_all_entries("user")]


def test_form_path_previews_then_approves_the_edit(pending):
    agent, item = pending
    client = agent.app().test_client()
    card = _soup(client.get("/reviews")).select_one(f"#review-{item.id}")
    form = _card_fields(card)
    assert form[f"value-{item.id}"] == item.content  # prefilled with the proposal
    form.update({f"value-{item.id}": "Never push to main; open a PR.", f"scope-{item.id}": "user"})
    preview = client.get("/reviews/effect", query_string=dict(form, id=item.id))
    card = _soup(preview).select_one(f"#review-{item.id}")
    plan = card.select_one("[data-plan]")
    assert plan.has_attr("data-edited") and plan["data-action"] == "update"  # shown before the click
    assert "Push freely." in plan.select_one('[data-diff-field="content"]').text
    assert "Never push to main; open a PR." in plan.select_one('[data-field="block-diff"]').text
    assert _user_rows(agent) == [(item.key_normalized, "Push freely.", "explicit")]  # nothing written
    button = card.select_one('[data-action="approve-edited"]')
    done = client.post(button["formaction"], data=_card_fields(card))
    assert done.status_code == 303
    assert _user_rows(agent) == [(item.key_normalized, "Never push to main; open a PR.", "explicit")]
    assert agent.manager.list_review_items("approved")[0].id == item.id


def test_htmx_path_and_a_refused_edit_keeps_what_was_typed(pending):
    agent, item = pending
    client = agent.app().test_client()
    card = _soup(client.get("/reviews")).select_one(f"#review-{item.id}")
    form = dict(_card_fields(card), **{f"value-{item.id}": "use password=hunter2hunter2"})
    preview = _soup(client.get("/reviews/effect", query_string=dict(form, id=item.id), headers=HTMX))
    assert preview.select_one("[data-plan]")["data-action"] == "refused"
    assert preview.select_one('[data-action="approve-edited"]').has_attr("disabled")
    before = file_digest(agent.project_db, agent.user_db)
    url = f"/reviews/{item.id}/approve?edits=1"
    answer = client.post(url, data=_card_fields(preview.select_one("article")), headers=HTMX)
    card = _soup(answer).select_one(f"#review-{item.id}")
    assert card["data-outcome"] == "refused" and card["data-status"] == "pending"
    assert card.select_one("textarea").text == "use password=hunter2hunter2"
    assert file_digest(agent.project_db, agent.user_db) == before


def test_plain_approve_ignores_the_edit_fields(pending):
    """The collapsed form rides along in the bulk form: only "Approve with edits" applies it."""
    agent, item = pending
    client = agent.app().test_client()
    card = _soup(client.get("/reviews")).select_one(f"#review-{item.id}")
    form = dict(_card_fields(card), **{f"value-{item.id}": "typed but not previewed"})
    assert client.post(f"/reviews/{item.id}/approve", data=form).status_code == 303
    [row] = [m for m in agent.manager.get_all_entries("project")]
    assert (row.content, row.source) == (item.content, "crystallized")


def test_json_twin_previews_and_approves_with_edits(pending):
    agent, item = pending
    client = agent.app().test_client()
    query = {"id": item.id, "value": "Never push.", "tags": "git, policy", "type": "workflow"}
    plan = client.get("/reviews/effect.json", query_string=query).get_json()["plan"]
    assert plan["edits"] == {
        "value": "Never push.",
        "tags": ["git", "policy"],
        "scope": None,
        "type": "workflow",
        "key": None,
    }
    assert (plan["source"], plan["type"], plan["store"]) == ("explicit", "workflow", "project")
    bad = client.post(
        f"/reviews/{item.id}/approve",
        headers=JSON,
        json=dict(
            query,
            value="token=abcdefgh12345678",
            seen=plan["item_fingerprint"],
            target=plan["target_fingerprint"],
        ),
    )
    assert bad.status_code == 422
    assert bad.get_json()["outcomes"][0]["error_type"] == "SensitiveMemoryError"
    scope = client.post(
        f"/reviews/{item.id}/approve",
        headers=JSON,
        json=dict(query, scope="team", seen=plan["item_fingerprint"], target=plan["target_fingerprint"]),
    )
    assert scope.status_code == 400 and "'scope' must be" in scope.get_json()["outcomes"][0]["message"]
    ok = client.post(
        f"/reviews/{item.id}/approve",
        headers=JSON,
        json=dict(
            query, tags=["git", "policy"], seen=plan["item_fingerprint"], target=plan["target_fingerprint"]
        ),
    )
    assert ok.status_code == 200 and ok.get_json()["outcomes"][0]["outcome"] == "approved"
    [row] = agent.manager.get_all_entries("project")
    assert (row.content, row.tags, row.type, row.source) == (
        "Never push.",
        ["git", "policy"],
        "workflow",
        "explicit",
    )


# --------------------------------------------------------------------------- approve under another key
def _chinese_pair(agent):
    """Two Chinese preferences; agentao keeps only ``preference`` of each key, so the
    first, approved by agentao, is what approving the second would replace."""
    first = _one(agent, "以后我喜欢用中文写注释。")
    agent.manager.approve_review_item(first.id)
    return _one(agent, "以后我喜欢用中文回答问题。")


def saved_under(item, key):
    """agentao's reference: ``save_memory`` of the item under ``key``, then the item marked approved."""

    def step(copy, manager):
        answer = manager.save_from_tool(key, item.content, list(item.tags), scope=item.scope, type=item.type)
        if not answer.startswith("Saved memory: "):
            return ("refused", answer)
        manager.project_store.update_review_status(item.id, "approved")
        return ("ok", "create", item.scope)

    return step


def test_approving_under_another_key_is_save_memory_of_that_key(agent, tmp_path):
    item = _chinese_pair(agent)
    refs = build_refs(agent.project_dir, agent.user_db)
    plain = approval.plan_approval(refs, item_of(refs, item.id))
    assert plain.save.key_normalized == "preference" and plain.existing.content == "用中文写注释"
    edits = Edits(key="Answer language")
    planned = approval.plan_approval(refs, item_of(refs, item.id), edits=edits)
    assert (planned.save.key_normalized, planned.save.title, planned.existing) == (
        "answer_language",
        "Answer language",
        None,
    )
    out, theirs, st, st_theirs = run_both(agent, tmp_path, ours(item, edits), saved_under(item, edits.key))
    assert out == theirs == ("ok", "create", "user")
    assert st == st_theirs  # files and event log, ids and clocks aside
    rows = {r["key_normalized"]: r["content"] for r in st["user_db"]["memories"]}
    assert rows == {"preference": "用中文写注释", "answer_language": "用中文回答问题"}  # nothing replaced


def test_a_key_agentao_empties_is_refused_as_agentao_refuses_it(agent, tmp_path):
    item = _chinese_pair(agent)
    original = snapshot(agent)
    out, theirs, st, st_theirs = run_both(
        agent, tmp_path, ours(item, Edits(key="回答")), saved_under(item, "回答")
    )
    assert out == ("refused", "Memory key is empty after normalization")
    assert theirs == ("refused", "Error saving memory: Memory key is empty after normalization")
    assert st == st_theirs == state(Copy(agent, tmp_path / "untouched"), original)


def test_the_card_says_what_approving_replaces_first_and_takes_another_key(agent):
    item = _chinese_pair(agent)
    client = agent.app().test_client()
    card = _soup(client.get("/reviews")).select_one(f"#review-{item.id}")
    first = card.select_one("[data-consequence]")
    assert first["data-consequence"] == "overwrites"
    assert first.text.startswith("Saved as “preference”, replacing “用中文写注释”"), first.text
    form = dict(_card_fields(card), **{f"key-{item.id}": "answer_language"})
    assert _card_fields(card)[f"key-{item.id}"] == item.key_normalized  # prefilled
    preview = _soup(client.get("/reviews/effect", query_string=dict(form, id=item.id), headers=HTMX))
    card = preview.select_one(f"#review-{item.id}")
    assert card.select_one("[data-plan]")["data-action"] == "create"
    assert "overwrites" not in {p["data-consequence"] for p in card.select("[data-consequence]")}
    done = client.post(
        f"/reviews/{item.id}/approve?edits=1", data=_card_fields(card), headers={"Accept": "application/json"}
    )
    assert done.status_code == 200, done.get_json()
    rows = {(m.key_normalized, m.content) for m in agent.manager.get_all_entries("user")}
    assert rows == {("preference", "用中文写注释"), ("answer_language", "用中文回答问题")}


def test_two_suggestions_replacing_the_same_memory_each_say_so(agent):
    _chinese_pair(agent)
    _one_more = agent.crystallize("以后我喜欢用中文写提交信息。")
    assert _one_more
    page = _soup(agent.app().test_client().get("/reviews"))
    assert page.select("[data-shared-warning]") == []
    for card in page.select("article.review"):
        first = card.select_one("[data-consequence]")
        assert first.text.startswith("Saved as “preference”, replacing “用中文写注释”"), first.text


def test_a_key_past_the_bound_or_on_two_lines_changes_nothing(agent):
    item = _chinese_pair(agent)
    client = agent.app().test_client()
    before = file_digest(agent.project_db, agent.user_db)
    long = client.get("/reviews/effect.json", query_string={"id": item.id, "key": "k" * 1001})
    assert long.status_code == 400 and "longer than 1,000 characters" in str(long.get_json())
    plan = client.get("/reviews/effect.json", query_string={"id": item.id, "key": "a\nb"}).get_json()["plan"]
    assert plan["refusal"] == "Memory key/title must be single-line"
    assert file_digest(agent.project_db, agent.user_db) == before


def test_a_card_finds_the_row_it_overwrites_in_the_held_rows_without_a_read_per_card(agent, monkeypatch):
    """The page plans its cards from the rows it already holds: the same target row and
    fingerprint as reading the file, and no read of the file per card."""
    item = _one(agent, "We must never push to main.")
    scope = item.scope  # its save updates the live memory under the same scope and key
    agent.save(item.key_normalized, "Push freely.", ["git"], scope=scope)
    agent.crystallize("We decided to use uv for packaging.")
    from dashboard import create_app

    app = create_app(
        {"PROJECT_DIR": agent.project_dir, "USER_DB": agent.user_db, "TESTING": True, "AUTH_TOKEN": False}
    )
    real, reads = writes.live_at, []
    monkeypatch.setattr(writes, "live_at", lambda *a: reads.append(a) or real(*a))
    plans = {i["id"]: i["plan"] for i in app.test_client().get("/reviews.json").get_json()["items"]}
    assert reads == [] and len(plans) == 2
    target = real(
        ref_for(build_refs(agent.project_dir, agent.user_db), scope).path, scope, item.key_normalized, scope
    )
    assert target is not None and target.content == "Push freely."
    assert plans[item.id]["overwrites"] == target.to_dict()
    assert plans[item.id]["target_fingerprint"] == writes.fingerprint(target)
    assert [p["overwrites"] for i, p in plans.items() if i != item.id] == [None]
