"""Conversations and where each memory came from, on stores written by the real agentao:
summaries, the crystallizer on the person's words, approvals and explicit saves between."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest
from agentao_world import Agent, wait_for_job
from bs4 import BeautifulSoup

# agentao stamps to the second, from three clocks of its own: while the world is written they
# read this one, an hour ago, and ``_tick`` moves it on a second so that each step has its own.
_CLOCK = {"t": datetime.now() - timedelta(hours=1)}


def _tick():
    _CLOCK["t"] += timedelta(seconds=1)


def _stamp() -> str:
    return _CLOCK["t"].strftime("%Y-%m-%dT%H:%M:%S")


@contextmanager
def agentao_clock():
    """agentao's three clocks read ``_CLOCK`` inside the block."""
    import agentao.memory.crystallizer as crystallizer
    import agentao.memory.manager as manager
    import agentao.memory.storage as storage

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(manager, "_now", _stamp)
        mp.setattr(storage, "_now_iso", _stamp)
        mp.setattr(crystallizer, "_now_iso", _stamp)
        yield


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The world's stores, written once through agentao; each test gets a copy."""
    root = tmp_path_factory.mktemp("conversations")
    with agentao_clock():
        agent, approved = _build(Agent(root))
    for store in (agent.project_store, agent.user_store):
        store.close()
    return root, approved


@pytest.fixture
def world(built, tmp_path):
    """Two conversations: A (a summary, a suggestion approved, an explicit save while it ran)
    and B (a pending and a rejected suggestion, a summary); then a save no conversation spans."""
    root, approved = built
    shutil.copytree(root, tmp_path / "world")
    return Agent(tmp_path / "world"), approved


def _build(agent):
    m = agent.manager
    m.archive_session("conv-a")
    agent.summary("Set up the build with uv.")
    agent.crystallize("I prefer tabs over spaces in every file.")
    _tick()
    agent.save("editor", "Uses Neovim with LazyVim.", ["profile"])
    _tick()
    agent.summary("Fixed the flaky retry test.")
    pending = {i.title: i for i in m.list_review_items("pending")}
    approved = next(iter(pending.values()))
    m.approve_review_item(approved.id)
    _tick()
    m.archive_session("conv-b")
    agent.crystallize("We must never push to main.", "Remember that I like short answers.")
    items = [i for i in m.list_review_items("pending") if i.source_session == "conv-b"]
    m.reject_review_item(items[-1].id)
    agent.summary("Talked about the release.")
    _tick()
    agent.save("release process", "Tag on main, CI builds the wheel.", ["workflow"])
    return agent, approved


def _memory(agent, title):
    for store in (agent.project_store, agent.user_store):
        for r in store.list_memories():
            if r.title == title:
                return r
    raise AssertionError(title)


def test_the_list_names_every_conversation_newest_first(world):
    agent, _item = world
    data = agent.app().test_client().get("/conversations.json").get_json()
    ids = [c["session_id"] for c in data["conversations"]]
    assert ids == ["conv-b", "conv-a"]
    a = data["conversations"][1]
    assert a["summaries"] == 2 and a["suggestions"]["approved"] == 1
    assert a["approved_memories"] == 1 and a["saved_during"] == 1
    b = data["conversations"][0]
    assert b["suggestions"]["rejected"] == 1 and b["suggestions"]["pending"] >= 1


def test_the_pages_follow_a_new_conversation_after_showing_the_trail(world):
    """The trail is kept between views while the files stay as they were: a conversation
    agentao records afterwards appears on the next view, on the list and on its memory's page."""
    agent, _item = world
    client = agent.app().test_client()
    release = _memory(agent, "release process")
    store = "user" if release.scope == "user" else "project"
    assert (
        client.get(f"/memories/{store}/{release.id}.json").get_json()["provenance"]["saves"][0]["active"]
        == []
    )
    assert "conv-c" not in [
        c["session_id"] for c in client.get("/conversations.json").get_json()["conversations"]
    ]
    agent.manager.archive_session("conv-c")
    agent.summary("Talked about the deploy.")
    ids = [c["session_id"] for c in client.get("/conversations.json").get_json()["conversations"]]
    assert ids[0] == "conv-c"


def test_a_crystallized_memory_names_its_suggestion_exactly(world):
    agent, item = world
    client = agent.app().test_client()
    mem = next(
        r
        for s in (agent.project_store, agent.user_store)
        for r in s.list_memories()
        if r.source == "crystallized"
    )
    store = "user" if mem.scope == "user" else "project"
    data = client.get(f"/memories/{store}/{mem.id}.json").get_json()
    prov = data["provenance"]
    assert prov["match"] == "exact"
    assert prov["suggestion"]["id"] == item.id
    assert prov["suggestion"]["source_session"] == "conv-a"
    assert "tabs over spaces" in prov["suggestion"]["evidence"]
    assert prov["suggestion"]["approved_at"]
    page = BeautifulSoup(client.get(f"/memories/{store}/{mem.id}").data, "html.parser")
    link = page.select_one("#provenance a[data-link=conversation]")
    assert link["href"] == "/conversations/conv-a"


def test_an_explicit_save_is_linked_by_time_only(world):
    agent, _item = world
    client = agent.app().test_client()
    editor = _memory(agent, "editor")
    store = "user" if editor.scope == "user" else "project"
    prov = client.get(f"/memories/{store}/{editor.id}.json").get_json()["provenance"]
    assert prov["match"] == "by time" and prov["recorded_conversation"] is None
    assert [a["session_id"] for a in prov["saves"][0]["active"]] == ["conv-a"]
    release = _memory(agent, "release process")
    store = "user" if release.scope == "user" else "project"
    prov = client.get(f"/memories/{store}/{release.id}.json").get_json()["provenance"]
    assert prov["saves"][0]["active"] == []
    page = BeautifulSoup(client.get(f"/memories/{store}/{release.id}").data, "html.parser")
    assert "does not record which conversation" in page.select_one("#provenance").get_text()


def test_a_conversation_shows_what_the_agent_kept(world):
    agent, item = world
    client = agent.app().test_client()
    data = client.get("/conversations/conv-a.json").get_json()
    assert [s["in_tail"] for s in data["summaries"]] == ["whole", "whole"]
    assert {i["id"] for i in data["suggestion_items"]} >= {item.id}
    assert [m["match"] for m in data["approved"]] == ["exact"]
    assert [m["title"] for m in data["during"]] == ["editor"]
    assert data["forget"]["action"] == "/forget/conversations/conv-a"
    assert set(data["forget"]["fields"]) >= {"store", "confirm"}


@pytest.mark.parametrize("bad", ["../etc", "x" * 300, "%00", "~zz", "a.json.json"])
def test_hostile_session_ids_are_refused_plainly(world, bad):
    agent, _item = world
    assert agent.app().test_client().get("/conversations/" + bad).status_code == 404


def _form(plan):
    form = dict(plan["forget"]["fields"])
    form["confirm"] = plan["forget"]["phrase"]
    return form


def test_forgetting_a_conversation_is_verified_by_agentao_and_on_disk(world):
    from test_forget import files_of, naive_hits

    agent, item = world
    client = agent.app().test_client()
    plan = client.get("/conversations/conv-a.json").get_json()
    texts = [s["text"] for s in plan["summaries"]] + [i["evidence"] for i in plan["suggestion_items"]]
    kinds = {(r["kind"], r["why"]) for s in plan["forget"]["stores"] for r in s["rows"]}
    assert {("summary", "summary"), ("review", "suggestion"), ("memory", "approved")} <= kinds
    assert "editor" not in {r["label"] for s in plan["forget"]["stores"] for r in s["rows"]}
    wrong = client.post(
        plan["forget"]["action"],
        data={**_form(plan), "confirm": "no"},
        headers={"Accept": "application/json"},
    )
    assert wrong.status_code == 400
    r = client.post(plan["forget"]["action"], data=_form(plan), headers={"Accept": "application/json"})
    assert r.status_code == 202, r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    m = agent.manager
    m.archive_session("a-new-one")
    tail = m.get_cross_session_tail()
    assert "uv" not in tail and "flaky" not in tail and "release" in tail
    every = [i for s in ("pending", "approved", "rejected") for i in m.list_review_items(s)]
    assert every and not [i for i in every if i.source_session == "conv-a"]
    titles = {e.title for e in m.get_all_entries()}
    assert "editor" in titles  # matched by time only: not erased unasked
    assert not [e for e in m.get_all_entries() if e.source == "crystallized"]
    assert naive_hits(files_of(agent.project_db) + files_of(agent.user_db), texts) == []
    gone = client.get("/conversations.json").get_json()["conversations"]
    assert [c["session_id"] for c in gone] == ["conv-b"]


def test_a_memory_saved_while_it_ran_is_erased_only_when_added(world):
    agent, _item = world
    client = agent.app().test_client()
    editor = _memory(agent, "editor")
    store = "user" if editor.scope == "user" else "project"
    plain = client.get("/conversations/conv-a").data
    box = BeautifulSoup(plain, "html.parser").select_one(f"#conv-add input[value='{store}:{editor.id}']")
    assert box is not None and not box.has_attr("checked")
    plan = client.get(f"/conversations/conv-a.json?add={store}:{editor.id}").get_json()
    added = [r for s in plan["forget"]["stores"] for r in s["rows"] if r["why"] == "added"]
    assert [r["id"] for r in added] == [editor.id]
    r = client.post(plan["forget"]["action"], data=_form(plan), headers={"Accept": "application/json"})
    assert wait_for_job(client, r.get_json()["url"])["verdict"] == "verified erased"
    assert "editor" not in {e.title for e in agent.manager.get_all_entries()}


def test_chinese_only_approvals_on_one_key_name_the_one_holding_its_text(agent):
    m = agent.manager
    with agentao_clock():
        m.archive_session("zh-1")
        [first] = agent.crystallize("我喜欢用中文回答问题")
        m.approve_review_item(first.id)
        _tick()
        m.archive_session("zh-2")
        [second] = agent.crystallize("我喜欢简短的回答")
        m.approve_review_item(second.id)
    client = agent.app().test_client()
    mem = next(
        r
        for s in (agent.project_store, agent.user_store)
        for r in s.list_memories()
        if r.source == "crystallized"
    )
    store = "user" if mem.scope == "user" else "project"
    prov = client.get(f"/memories/{store}/{mem.id}.json").get_json()["provenance"]
    # Both collapse onto one key; the memory holds the second's text, so that one is exact.
    assert prov["match"] == "exact" and prov["suggestion"]["id"] == second.id
    assert [i["id"] for i in prov["other_approvals"]] == [first.id]
    zh = client.get(f"/memories/{store}/{mem.id}", headers={"Accept-Language": "zh-CN"})
    section = BeautifulSoup(zh.data, "html.parser").select_one("#provenance")
    assert "简短的回答" in section.select_one("[data-field=evidence]").get_text()
    assert "来源" in section.h2.get_text()


def test_the_conversations_pages_speak_chinese(world):
    agent, _item = world
    client = agent.app().test_client()
    page = BeautifulSoup(
        client.get("/conversations", headers={"Accept-Language": "zh-CN"}).data, "html.parser"
    )
    assert page.h1.get_text() == "对话"
    detail = BeautifulSoup(
        client.get("/conversations/conv-a", headers={"Accept-Language": "zh-CN"}).data, "html.parser"
    )
    assert "忘记这个对话" in detail.select_one("#conv-forget h2").get_text()


def test_a_suggestion_card_and_a_finding_reach_their_conversation(world):
    agent, _item = world
    client = agent.app().test_client()
    page = BeautifulSoup(client.get("/reviews").data, "html.parser")
    link = page.select_one("a[data-link=conversation]")
    assert client.get(link["href"]).headers["Location"] == "/conversations/conv-b"
    agent.summary("Sam's number is +49 170 1234567, call after six.", session_id="conv-c")
    found = client.get("/findings.json").get_json()
    hrefs = [a["href"] for i in found["items"] for a in i["actions"] if a["code"] == "conversation"]
    assert any(client.get(h).headers["Location"] == "/conversations/conv-c" for h in hrefs)
    assert client.get("/conversations/of/memories/x").status_code == 404


@pytest.mark.parametrize("sid", ['<img src=x onerror="alert(1)">/../x.json', "会话 一", "a" * 150, ""])
def test_an_odd_session_id_is_a_conversation_like_any(agent, sid):
    agent.summary("Odd one out.", session_id=sid)
    client = agent.app().test_client()
    [conv] = client.get("/conversations.json").get_json()["conversations"]
    assert conv["session_id"] == sid and conv["url"].count("/") == 2
    page = client.get(conv["url"])
    assert page.status_code == 200
    html = BeautifulSoup(page.data, "html.parser")
    assert not html.select("img")
    assert client.get(conv["url"] + ".json").get_json()["summaries"][0]["text"] == "Odd one out."


def test_forgetting_a_conversation_from_the_chinese_page_reports_in_chinese(world):
    agent, _item = world
    client = agent.app().test_client()
    zh = {"Accept-Language": "zh-CN"}
    page = BeautifulSoup(client.get("/conversations/conv-b", headers=zh).data, "html.parser")
    form = page.select_one("#conv-forget-form")
    data = [(i["name"], i.get("value", "")) for i in form.select("input[type=hidden]")]
    data.append(("confirm", form.select_one("kbd").get_text()))
    assert data[-1][1] == "忘记这个对话"
    from werkzeug.datastructures import MultiDict

    r = client.post(form["action"], data=MultiDict(data), headers=zh)
    assert r.status_code == 303
    job = wait_for_job(client, r.headers["Location"])
    assert job["verdict"] == "verified erased"
    report = BeautifulSoup(client.get(r.headers["Location"], headers=zh).data, "html.parser")
    assert "已抹去：文件、日志和附属文件中都不留副本" in report.get_text()
    assert not [
        i
        for s in ("pending", "approved", "rejected")
        for i in agent.manager.list_review_items(s)
        if i.source_session == "conv-b"
    ]
