"""Warnings before approval, as the review card and /reviews.json show them.

Every store here is written by the real agentao 0.5.17 (candidates by its
crystallizer, live memories by ``MemoryManager.upsert``); each warning is
checked where it must appear and where it must not.
"""

from __future__ import annotations

import pytest
from agentao_world import Agent, agentao_blocks, file_digest
from bs4 import BeautifulSoup
from hostile import HOSTILE, shown_text
from test_hostile import check_inert

HTMX = {"HX-Request": "true"}


def listing(agent):
    """content -> (item with its plan, the card) for each pending candidate."""
    client = agent.app().test_client()
    items = client.get("/reviews.json").get_json()["items"]
    page = BeautifulSoup(client.get("/reviews").get_data(as_text=True), "html.parser")
    return {i["content"]: (i, page.select_one(f"#review-{i['id']}")) for i in items}


def detail(agent, item_id):
    """What a card's Details shows once opened (htmx fetches it then)."""
    r = agent.app().test_client().get("/reviews/detail", query_string={"id": item_id}, headers=HTMX)
    assert r.status_code == 200
    return BeautifulSoup(r.get_data(as_text=True), "html.parser")


def codes(item) -> list[str]:
    return [w["code"] for w in item["plan"]["warnings"]]


def shown(card) -> dict[str, str]:
    """code -> the words the card shows for it."""
    return {li["data-warning"]: shown_text(li) for li in card.select("[data-warning]")}


def named(item, code) -> list[str]:
    (warning,) = [w for w in item["plan"]["warnings"] if w["code"] == code]
    return [m["key_normalized"] for m in warning["memories"]]


# ---------------------------------------------------------------- contradicts_evidence
def test_a_dropped_never_is_pointed_at(agent):
    agent.crystallize(
        "please never use emojis in commit messages",
        "I prefer not to use mocks in integration tests",
        "Don't worry about lint, I prefer tabs over spaces",
    )
    by = listing(agent)
    emojis, card = by["use emojis in commit messages"]
    assert codes(emojis) == ["contradicts_evidence"]
    # The card's first line says it in words, quoting what the user wrote, before the title.
    first = card.select_one(".review-head [data-consequence]")
    assert first["data-consequence"] == "contradicts_evidence"
    assert (
        shown(card)["contradicts_evidence"]
        == "Contradicts its evidence: you wrote “please never use emojis in commit messages”."
    )
    # The negation kept, and a negation in another clause: no warning.
    assert codes(by["not to use mocks in integration tests"][0]) == []
    assert codes(by["tabs over spaces"][0]) == []
    assert not by["tabs over spaces"][1].select("[data-warning]")
    # "Don't worry about lint" lost its "don't" too.
    assert codes(by["worry about lint"][0]) == ["contradicts_evidence"]


def test_chinese_negation_dropped(agent):
    agent.crystallize("永远不要提交 .env 文件", "我喜欢不加分号的风格")
    by = listing(agent)
    assert codes(by["要提交 .env 文件"][0]) == ["contradicts_evidence"]
    assert codes(by["不加分号的风格"][0]) == []


def test_labelled_pairs_precision_and_recall_floor():
    from warnings_labelled import PAIRS, score

    assert len(PAIRS) >= 60
    assert any(ord(e[0]) > 0x3400 for e, _c, _l in PAIRS)  # Chinese among them
    assert {label for *_, label in PAIRS} == {True, False}
    precision, recall, _misses, _alarms = score(PAIRS)
    assert precision >= 0.95 and recall >= 0.85, (precision, recall)


# ------------------------------------------------------------------- overwrites, refused
def test_overwrites_names_the_live_memory(agent):
    agent.crystallize("I prefer tabs over spaces", "I use token=abcdefgh12345678 for the staging API.")
    (key,) = [
        i["plan"]["key_normalized"] for i, _ in listing(agent).values() if i["content"] == "tabs over spaces"
    ]
    live = agent.save(key, "tabs over spaces", scope="user")  # same content, same key
    by = listing(agent)
    item, card = by["tabs over spaces"]
    assert codes(item) == ["overwrites"]  # the same key is no duplicate of itself
    (warning,) = item["plan"]["warnings"]
    assert warning["memories"] == [{"store": "user", "id": live.id, "key_normalized": key, "title": key}]
    assert key in shown(card)["overwrites"]
    assert card.select_one(f'[data-warning-memory="{live.id}"]')["href"].endswith(live.id)
    secret, card = by["token=abcdefgh12345678 for the staging API"]
    assert codes(secret) == ["refused"]
    assert shown(card)["refused"] == "Would be refused: it contains a secret (agentao never saves one)."
    assert (
        "sensitive credentials"
        in detail(agent, secret["id"]).select_one('[data-warning-detail="refused"]').text
    )


# ------------------------------------------------------------ contradicts_memory, duplicates
def test_contradicts_a_live_preference_on_the_same_subject(agent):
    agent.save(
        "preference_tabs_width", "Indent with four spaces, never tabs", scope="user", type="preference"
    )
    agent.crystallize("I prefer tabs over spaces", "I prefer small pull requests")
    by = listing(agent)
    item, card = by["tabs over spaces"]
    assert codes(item) == ["contradicts_memory"]
    assert named(item, "contradicts_memory") == ["preference_tabs_width"]
    assert "preference_tabs_width" in shown(card)["contradicts_memory"]
    assert codes(by["small pull requests"][0]) == []


def test_contradicts_a_live_constraint_on_the_same_subject(agent):
    agent.save("constraint_push_freely", "Push straight to main, no review needed", type="constraint")
    agent.crystallize("We must never push to main", "always run the tests before pushing")
    by = listing(agent)
    item, card = by["never push to main"]
    assert codes(item) == ["contradicts_memory"]  # the "never" is kept: no evidence warning
    assert named(item, "contradicts_memory") == ["constraint_push_freely"]
    assert codes(by["run the tests before pushing"][0]) == []


def test_duplicates_under_another_key(agent):
    agent.save("editor_indentation", "Tabs over spaces", scope="project", type="note")
    agent.crystallize("I prefer tabs over spaces", "I prefer small pull requests")
    by = listing(agent)
    item, card = by["tabs over spaces"]
    assert codes(item) == ["duplicates"]
    assert named(item, "duplicates") == ["editor_indentation"]
    assert "editor_indentation" in shown(card)["duplicates"]
    assert codes(by["small pull requests"][0]) == []


def test_the_rows_are_looked_up_once_per_state_of_the_files(agent):
    """The live rows the warnings search are prepared once per state of the files (held
    under the stamps they were read at), not once per page; a memory saved between two
    loads is weighed on the next one."""
    from dashboard.actions import warnings
    from dashboard.views import block_effects

    agent.crystallize("I prefer tabs over spaces", "I prefer small pull requests")
    app = agent.app()
    client = app.test_client()

    def tabs():
        items = client.get("/reviews.json").get_json()["items"]
        with app.test_request_context("/"):
            held = warnings.lookups(block_effects.snapshot())
        return next(i for i in items if i["content"] == "tabs over spaces"), held

    item, first = tabs()
    assert codes(item) == []
    assert tabs()[1] is first  # the files did not move: the same lookups
    agent.save("editor_indentation", "Tabs over spaces", scope="project", type="note")
    agent.save(
        "preference_tabs_width", "Indent with four spaces, never tabs", scope="user", type="preference"
    )
    item, now = tabs()
    assert now is not first
    assert codes(item) == ["contradicts_memory", "duplicates"]
    assert named(item, "duplicates") == ["editor_indentation"]
    assert named(item, "contradicts_memory") == ["preference_tabs_width"]
    assert tabs()[1] is now


# ------------------------------------------------------------------------ evicts_explicit
def fill_block(agent, source="explicit"):
    """Six user-scope memories that nearly fill the 2,000-character stable block."""
    for n in range(6):
        agent.save(
            f"note {n}", f"fact number {n}: " + "keep this always in mind " * 11, scope="user", source=source
        )


def test_evicts_explicit_names_what_leaves_the_block(agent):
    fill_block(agent)
    agent.crystallize("I prefer tabs over spaces")
    item, card = listing(agent)["tabs over spaces"]
    assert item["stable_effect"]["changed"]
    assert codes(item) == ["evicts_explicit"]
    gone = named(item, "evicts_explicit")
    assert gone and set(gone) <= {f"note_{n}" for n in range(6)}
    # What the warning names was in the block and is not in the predicted one ...
    after = item["stable_effect"]["after"]
    removed = [
        line
        for line in item["stable_effect"]["diff"].splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]
    for key in gone:
        assert any(f"fact number {key[-1]}:" in line for line in removed)
        assert f"fact number {key[-1]}:" not in after
    said = shown(card)["evicts_explicit"]
    memories = "memory" if len(gone) == 1 else "memories"
    assert said.startswith(
        f"Pushes {len(gone)} {memories} you saved yourself out of the always-on block: “note"
    )
    assert card.select_one(".review-head [data-consequence]")["data-consequence"] == "evicts_explicit"
    assert (
        "<memory-stable>"
        in detail(agent, item["id"]).select_one('[data-warning-detail="evicts_explicit"]').text
    )
    client = agent.app().test_client()
    effect = client.get("/reviews/effect.json", query_string={"id": item["id"]}).get_json()
    assert [w["code"] for w in effect["plan"]["warnings"]] == ["evicts_explicit"]
    r = client.post(
        f"/reviews/{item['id']}/approve",
        data={"seen": item["plan"]["item_fingerprint"], "target": item["plan"]["target_fingerprint"]},
    )
    assert r.status_code == 303
    # ... nor in the block agentao itself renders after the approval.
    stable = agentao_blocks(agent, "anything")[0]
    for key in gone:
        assert f"fact number {key[-1]}:" not in stable
    assert "tabs over spaces" in stable


def test_no_evicts_explicit_for_agent_saved_memories_or_a_roomy_block(agent, tmp_path):
    fill_block(agent, source="auto")
    agent.crystallize("I prefer tabs over spaces")
    item, _card = listing(agent)["tabs over spaces"]
    assert (
        item["stable_effect"]["changed"]
        and item["stable_effect"]["after_chars"] < item["stable_effect"]["before_chars"]
    )  # something left the block ...
    assert codes(item) == []  # ... but nothing the user saved
    roomy = Agent(tmp_path / "roomy")
    roomy.save("note", "one explicit fact", scope="user")
    roomy.crystallize("I prefer tabs over spaces")
    assert codes(listing(roomy)["tabs over spaces"][0]) == []


# ---------------------------------------------------------------------------- hostile text
@pytest.mark.parametrize(
    "name", ["script", "img_onerror", "attr_breakout_dq", "hx_get", "jinja", "rtl_override", "javascript_url"]
)
def test_hostile_names_in_warnings_are_inert(agent, name):
    text = HOSTILE[name]
    agent.save(text[:60], "tabs over spaces", scope="project", type="note")
    agent.crystallize("I prefer tabs over spaces")
    before = file_digest(agent.project_db, agent.user_db)
    client = agent.app().test_client()
    for headers in ({}, HTMX):
        html = client.get("/reviews", headers=headers).get_data(as_text=True)
        check_inert(html, name)
        page = BeautifulSoup(html, "html.parser")
        (li,) = page.select('[data-warning="duplicates"]')
        assert text[:60].strip() in shown_text(li)
    data = client.get("/reviews.json").get_json()
    (item,) = data["items"]
    assert item["plan"]["warnings"][0]["memories"][0]["title"] == text[:60]
    assert file_digest(agent.project_db, agent.user_db) == before


def test_chinese_words_holding_a_negation_character_negate_nothing():
    from dashboard.actions.polarity import contradicts, negated

    assert not contradicts("部署时不同环境用不同配置", "不同环境用不同配置")
    assert not contradicts("我特别喜欢用 vim 写 Python", "用 vim 写 Python")
    assert not negated("这个库不错") and not negated("别人都用 conda")
    assert negated("别用 print") and negated("不要这样") and contradicts("别用 print 调试", "用 print 调试")


def test_an_edit_that_restores_the_negation_clears_the_warning(agent):
    """The evidence is read against the content the approval would write: fixing the
    candidate on the card ("never use …") answers without the warning."""
    agent.crystallize("please never use emojis in commit messages")
    item, _ = listing(agent)["use emojis in commit messages"]
    client = agent.app().test_client()
    as_is = client.get("/reviews/effect.json", query_string={"id": item["id"]}).get_json()
    assert [w["code"] for w in as_is["plan"]["warnings"]] == ["contradicts_evidence"]
    fixed = client.get(
        "/reviews/effect.json",
        query_string={"id": item["id"], "value": "never use emojis in commit messages"},
    ).get_json()
    assert fixed["plan"]["edits"]["value"] == "never use emojis in commit messages"
    assert "contradicts_evidence" not in [w["code"] for w in fixed["plan"]["warnings"]]


def test_cards_past_the_page_budget_fetch_effect_and_warnings_when_shown(agent, monkeypatch):
    """A long queue computes a bounded number of cards' effects; the others say so in the
    twin and fetch their effect and store-wide warnings when scrolled into view (htmx)."""
    from dashboard.views import block_effects

    monkeypatch.setattr(block_effects, "WORK_PER_PAGE", 0)  # MIN_EAGER cards only
    agent.crystallize(
        "I prefer pytest over unittest",
        "I prefer ruff for linting",
        "I prefer tabs in makefiles",
        "I prefer uv to install packages",
        "I prefer short commit messages",
        "I prefer rebasing feature branches",
        "I prefer dark themes in editors",
        "I prefer squash merges on github",
    )
    client = agent.app().test_client()
    items = client.get("/reviews.json").get_json()["items"]
    pending = [i for i in items if i["status"] == "pending"]
    assert len(pending) > block_effects.MIN_EAGER
    eager = [i for i in pending if i["stable_effect"]]
    later = [i for i in pending if not i["stable_effect"]]
    assert len(eager) == block_effects.MIN_EAGER and later
    assert {i["warnings_checked"] for i in eager} == {"all"}
    assert {i["warnings_checked"] for i in later} == {"plan"}
    page = BeautifulSoup(client.get("/reviews").get_data(as_text=True), "html.parser")
    lazy = page.select_one(f"#review-{later[0]['id']} [data-lazy-effect]")
    assert lazy["hx-trigger"] == "revealed" and not page.select_one(
        f"#review-{eager[0]['id']} [data-lazy-effect]"
    )
    card = BeautifulSoup(client.get(lazy["hx-get"], headers=HTMX).get_data(as_text=True), "html.parser")
    shown = card.select_one(f"#review-{later[0]['id']}")
    assert shown.select_one("[data-consequence]")["data-consequence"] == "enters_prompt"
    assert not card.select("[data-lazy-effect]")
    # Its Details, once opened, show the effect too.
    assert detail(agent, later[0]["id"]).select_one("[data-plan] [data-block-effect]")


def test_the_queue_is_paged(agent):
    """A long queue is shown a page at a time (each card plans against the target file)."""
    agent.crystallize(
        "I prefer pytest over unittest",
        "I prefer ruff for linting",
        "I prefer tabs in makefiles",
        "I prefer uv to install packages",
        "I prefer short commit messages",
    )
    client = agent.app().test_client()
    first = client.get("/reviews.json?per_page=2").get_json()
    assert first["total"] == 5 and first["pages"] == 3 and len(first["items"]) == 2
    last = client.get("/reviews.json?per_page=2&page=3").get_json()
    assert len(last["items"]) == 1
    seen = {
        i["id"]
        for p in (1, 2, 3)
        for i in client.get(f"/reviews.json?per_page=2&page={p}").get_json()["items"]
    }
    assert len(seen) == 5
    page = BeautifulSoup(client.get("/reviews?per_page=2").get_data(as_text=True), "html.parser")
    assert len(page.select("article.review")) == 2 and page.select_one("nav.pager a[rel=next]")
    assert client.get("/reviews.json?page=0").status_code == 400
