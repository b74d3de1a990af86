"""Conversations and where each memory came from, on stores written by the real agentao:
summaries, the crystallizer on the person's words, approvals and explicit saves between."""

from __future__ import annotations

import time

import pytest
from bs4 import BeautifulSoup

from agentao_world import wait_for_job


def _tick():
    time.sleep(1.05)   # agentao stamps to the second: keep each step's time its own


@pytest.fixture
def world(agent):
    """Two conversations: A (a summary, a suggestion approved, an explicit save while it ran)
    and B (a pending and a rejected suggestion, a summary); then a save no conversation spans."""
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


def test_a_crystallized_memory_names_its_suggestion_exactly(world):
    agent, item = world
    client = agent.app().test_client()
    mem = next(r for s in (agent.project_store, agent.user_store) for r in s.list_memories()
               if r.source == "crystallized")
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
