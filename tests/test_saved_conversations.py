"""agentao's saved conversations, read as agentao writes them (its own save_session and replay
recorder), tolerating what is not agentao's, and never changing a byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentao.embedding.sessions import list_sessions
from agentao_world import file_digest
from jsonschema import Draft202012Validator
from saved_world import PHONE, SAID, agent_saves, conversation, replay
from test_conversations import built, world  # noqa: F401  (fixtures)

from dashboard.actions import saved as saved_actions
from dashboard.store import sessions


def test_reads_sessions_and_replays_as_agentao_wrote_them(agent):
    path, sid = conversation(agent.project_dir)
    rpath = replay(agent.project_dir, sid)
    before = file_digest(path, rpath)
    saved = sessions.read_saved(agent.project_dir)
    [s] = saved.sessions
    [r] = saved.replays
    assert (s.session_id, s.note) == (sid, "") and r.session_id == sid and r.note == ""
    assert s.title == list_sessions(agent.project_dir)[0]["title"]
    said = [m for m in s.messages if PHONE in m.text]
    assert [m.role for m in said] == ["user", "assistant"]  # the tool call's arguments count too
    assert {m.role for m in r.messages if PHONE in m.text} == {"user_message", "tool_started"}
    assert s.created_at and r.created_at
    assert file_digest(path, rpath) == before  # reading changes nothing


def test_missing_folders_are_simply_empty(agent):
    saved = sessions.read_saved(agent.project_dir)
    assert saved.files == [] and saved.notes == []
    assert not (agent.project_dir / ".agentao" / "sessions").exists()


def test_foreign_partial_and_future_files_get_a_note_each(agent):
    path, sid = conversation(agent.project_dir)
    folder = path.parent
    (folder / "20990101_000000_000000.json").write_text("[1, 2]")
    (folder / "20990101_000000_000001.json").write_text("{not json")
    (folder / "20990101_000000_000002.json").write_bytes(b"\xff\xfe{}")
    (folder / "20990101_000000_000003.json").write_text("[" * 5000 + "]" * 5000)  # nested too deep
    rpath = replay(agent.project_dir, sid)
    deep = rpath.with_name("deep.abc.jsonl")
    deep.write_text(
        json.dumps({"kind": "user_message", "payload": {"content": "hi"}}) + "\n" + "[" * 5000 + "\n"
    )
    with open(rpath, "a", encoding="utf-8") as fh:
        fh.write('{"kind": "user_message", "payload": {"content": "cut')
    newer = rpath.with_name("other.abc.jsonl")
    newer.write_text(
        json.dumps({"kind": "replay_header", "session_id": "other", "payload": {"schema_version": "9.0"}})
        + "\n"
        + json.dumps({"kind": "user_message", "payload": {"content": "hello"}})
        + "\n"
    )
    saved = sessions.read_saved(agent.project_dir)
    notes = {f.name: f.note for f in saved.files}
    assert notes["20990101_000000_000000.json"] == "foreign"
    assert notes["20990101_000000_000001.json"] == "not_json"
    assert notes["20990101_000000_000002.json"] == "not_utf8"
    assert notes["20990101_000000_000003.json"] == "not_json" and notes[deep.name] == "malformed"
    for url in ("/conversations", "/about.json", "/forget/about", "/overview", "/findings.json"):
        assert agent.app().test_client().get(url).status_code == 200, url
    assert notes[path.name] == ""
    assert notes[rpath.name] == "partial"
    assert (
        notes[newer.name] == "newer"
        and "9.0" in next(f for f in saved.files if f.name == newer.name).note_text()
    )
    assert [m.text for m in next(f for f in saved.files if f.name == newer.name).messages] == ["hello"]
    assert any(PHONE in m.text for m in next(f for f in saved.files if f.name == rpath.name).messages)


def test_reads_are_bounded(agent, monkeypatch):
    path, _sid = conversation(agent.project_dir)
    monkeypatch.setattr(sessions, "MAX_BYTES", 100)
    [s] = sessions.read_saved(agent.project_dir).sessions
    assert s.note == "too_large" and s.messages == []
    monkeypatch.setattr(sessions, "MAX_BYTES", 1 << 20)
    monkeypatch.setattr(sessions, "MAX_FILES", 2)
    for n in range(3):
        conversation(agent.project_dir, said=f"note {n}")
    saved = sessions.read_saved(agent.project_dir)
    assert len(saved.sessions) == 2 and saved.notes == ["more_files"]


def test_about_you_and_the_overview_say_what_saved_conversations_hold(agent):
    path, sid = conversation(agent.project_dir)
    replay(agent.project_dir, sid)
    conversation(agent.project_dir, said="Mail me at robin.k@posteo.de please.")
    before = file_digest(*path.parent.iterdir())
    client = agent.app().test_client()
    about = client.get("/about.json").get_json()["saved"]
    assert (about["sessions"], about["replays"], about["conversations_holding"]) == (2, 1, 2)
    where = {(f["file"], f["message"], f["rule"]) for f in about["found"]}
    assert (path.name, 1, "personal.phone") in where  # the person's message in the checkpoint
    assert any(f["kind"] == "replay" and f["role"] == "user_message" for f in about["found"])
    assert all(PHONE not in f["excerpt"] for f in about["found"])  # masked as on Findings
    html = client.get("/about").get_data(as_text=True)
    assert "also in 2 saved conversations" in html and path.name in html
    overview = client.get("/overview.json").get_json()
    assert overview["counts"]["saved_conversations"]["sessions"] == 2
    assert any(s["code"] == "saved" and s["count"] == 3 for s in overview["sentences"])
    assert file_digest(*path.parent.iterdir()) == before


def _about_form(client):
    plan = client.get("/forget/about.json").get_json()
    form = {"store": [], "confirm": plan["phrase"]}
    for s in plan["stores"]:
        form["store"].append(s["store"])
        form[f"fingerprint-{s['store']}"] = s["fingerprint"]
        form[f"cat-{s['store']}"] = s["categories"]
    return plan, form


def _bytes_of(folder):
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


def test_forget_me_redacts_saved_conversations_that_agentao_still_resumes(seeded):
    from agentao.embedding.sessions import load_session
    from agentao_world import wait_for_job

    seeded.save("my phone", f"Call me on {PHONE}", scope="user")
    path, sid = conversation(seeded.project_dir)
    rpath = replay(seeded.project_dir, sid)
    other, other_sid = conversation(seeded.project_dir, said="Mail me at robin.k@posteo.de please.")
    quiet, quiet_sid = conversation(seeded.project_dir, said="The build uses make.")
    client = seeded.app().test_client()
    plan, form = _about_form(client)
    actions = {f["name"]: (f["action"], f["redacted"]) for f in plan["saved_files"]}
    assert actions[path.name] == ("redact", [1, 2])  # what the person said, and the save of it
    assert actions[rpath.name][0] == "redact" and actions[other.name] == ("redact", [1, 2])
    assert actions[quiet.name] == ("keep", [])
    page = client.get("/forget/about").get_data(as_text=True)
    assert path.name in page and "messages are redacted" in page
    quiet_before = quiet.read_bytes()
    mode = path.stat().st_mode

    r = client.post("/forget/about", data=form, headers={"Accept": "application/json"})
    assert r.status_code == 202, r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    by = {f["name"]: f for f in job["saved_files"]}
    assert by[path.name]["status"] == by[rpath.name]["status"] == by[other.name]["status"] == "erased"
    for folder in (path.parent, rpath.parent):
        assert PHONE.encode() not in _bytes_of(folder) and b"posteo" not in _bytes_of(folder)
    assert quiet.read_bytes() == quiet_before and path.stat().st_mode == mode
    # agentao still lists every conversation and resumes the redacted one, without the number
    assert {s["session_id"] for s in list_sessions(seeded.project_dir)} == {sid, other_sid, quiet_sid}
    messages, model, _skills = load_session(sid, project_root=seeded.project_dir)
    assert model == "test-model" and len(messages) == 6 and "[removed]" in messages[1]["content"]
    assert "Thanks, and use tabs please." in json.dumps(messages)
    assert PHONE not in json.dumps(messages)
    html = client.get(r.get_json()["url"]).get_data(as_text=True)
    assert f"{path.name}: 2 messages redacted, erased" in html


def test_forget_me_drops_a_replay_line_nested_too_deeply_to_read_that_holds_the_text(seeded):
    """Like an unfinished line: the line is dropped whole; one JSON reads is scrubbed however
    deep (the job ended in a RecursionError, the number left on disk)."""
    from agentao_world import wait_for_job

    seeded.save("my phone", f"Call me on {PHONE}", scope="user")
    _path, sid = conversation(seeded.project_dir)
    rpath = replay(seeded.project_dir, sid)
    with open(rpath, "a", encoding="utf-8") as fh:
        fh.write("[" * 3000 + json.dumps(PHONE) + "]" * 3000 + "\n")  # past what json reads
        fh.write('{"a":' * 600 + json.dumps(PHONE) + "}" * 600 + "\n")  # read, past a recursive copy
    client = seeded.app().test_client()
    _plan, form = _about_form(client)
    r = client.post("/forget/about", data=form, headers={"Accept": "application/json"})
    job = wait_for_job(client, r.get_json()["url"])
    assert job["state"] == "done" and job["error"] is None, job
    assert PHONE.encode() not in _bytes_of(rpath.parent)


def test_a_saved_conversation_the_dashboard_may_not_change_is_never_called_erased(seeded):
    from agentao_world import wait_for_job

    path, _sid = conversation(seeded.project_dir)
    client = seeded.app().test_client()
    _plan, form = _about_form(client)
    path.chmod(0o444)
    try:
        r = client.post("/forget/about", data=form, headers={"Accept": "application/json"})
        job = wait_for_job(client, r.get_json()["url"])
    finally:
        path.chmod(0o644)
    [f] = [f for f in job["saved_files"] if f["name"] == path.name]
    assert (f["status"], f["reason"]) == ("still holds", "permission")
    assert job["verdict"] != "verified erased"
    assert PHONE in path.read_text()


def test_retry_after_found_on_disk_redoes_the_saved_conversations(seeded):
    from agentao_world import wait_for_job

    seeded.save("my phone", f"Call me on {PHONE}", scope="user")
    path, _sid = conversation(seeded.project_dir)
    client = seeded.app().test_client()
    _plan, form = _about_form(client)
    path.chmod(0o444)
    try:
        r = client.post("/forget/about", data=form, headers={"Accept": "application/json"})
        job = wait_for_job(client, r.get_json()["url"])
    finally:
        path.chmod(0o644)  # the person makes it writable again
    assert job["verdict"] == "found on disk" and PHONE in path.read_text()
    assert "saved_again" not in job and PHONE not in json.dumps(job)  # the texts stay in the process
    page = client.get(job["url"]).get_data(as_text=True)
    assert f'action="/forget/jobs/{job["id"]}/retry"' in page
    r = client.post(f"/forget/jobs/{job['id']}/retry", headers={"Accept": "application/json"})
    assert r.status_code in (200, 202), r.get_json()
    again = wait_for_job(client, r.get_json()["url"])
    assert again["verdict"] == "verified erased", again
    by = {f["name"]: f for f in again["saved_files"]}
    assert (by[path.name]["status"], by[path.name]["action"]) == ("erased", "redact")
    assert PHONE not in path.read_text()
    html = client.get(again["url"]).get_data(as_text=True)
    assert f"{path.name}: 2 messages redacted, erased" in html


def test_forget_me_when_only_saved_conversations_hold_something_can_be_confirmed(agent):
    from agentao_world import wait_for_job

    path, sid = conversation(agent.project_dir)  # the stores hold nothing about the person
    client = agent.app().test_client()
    plan = client.get("/forget/about.json").get_json()
    assert all(not s["rows"] for s in plan["stores"])
    assert [f["action"] for f in plan["saved_files"]] == ["redact"]
    page = client.get("/forget/about").get_data(as_text=True)
    assert 'id="about-form"' in page and 'data-field="nothing"' not in page
    assert "1 saved conversation file changes too (below)." in page
    r = client.post("/forget/about", data={"confirm": plan["phrase"]}, headers={"Accept": "application/json"})
    assert r.status_code in (200, 202)  # a small job may end before it answers, r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    assert [(f["name"], f["status"]) for f in job["saved_files"]] == [(path.name, "erased")]
    assert PHONE not in path.read_text()
    assert [s["session_id"] for s in list_sessions(agent.project_dir)] == [sid]
    html = client.get(r.get_json()["url"]).get_data(as_text=True)
    assert f"{path.name}: 2 messages redacted, erased" in html and 'data-verdict="verified erased"' in html
    # a wrong phrase still changes nothing
    conversation(agent.project_dir, said=f"Again: {PHONE}")
    r = client.post("/forget/about", data={"confirm": "nope"}, headers={"Accept": "application/json"})
    assert r.status_code == 400 and PHONE in _bytes_of(path.parent).decode()


def test_forgetting_a_conversation_known_only_from_its_saved_file(agent):
    from agentao_world import wait_for_job

    path, _ = conversation(agent.project_dir, said="The build uses make.", session_id="conv-only-saved")
    client = agent.app().test_client()
    plan = client.get("/conversations/conv-only-saved.json").get_json()
    assert plan["forget"]["stores"] == [] and plan["forget"]["saved_files"][0]["action"] == "delete"
    assert 'id="conv-forget-form"' in client.get("/conversations/conv-only-saved").get_data(as_text=True)
    from test_conversations import _form

    r = client.post(plan["forget"]["action"], data=_form(plan), headers={"Accept": "application/json"})
    assert r.status_code in (200, 202), r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    assert [(f["name"], f["status"]) for f in job["saved_files"]] == [(path.name, "erased")]
    assert not path.exists() and list_sessions(agent.project_dir) == []


def test_forgetting_a_conversation_deletes_its_saved_files_and_agentao_no_longer_lists_it(world):
    from agentao.replay import list_replays
    from agentao_world import wait_for_job
    from test_conversations import _form

    agent, _item = world
    a_path, _ = conversation(agent.project_dir, session_id="conv-a")
    a_replay = replay(agent.project_dir, "conv-a")
    b_path, _ = conversation(
        agent.project_dir, said="Set up the build with uv, then run it.", session_id="conv-b"
    )
    client = agent.app().test_client()
    plan = client.get("/conversations/conv-a.json").get_json()
    actions = {f["name"]: f["action"] for f in plan["forget"]["saved_files"]}
    assert actions[a_path.name] == actions[a_replay.name] == "delete"
    assert actions[b_path.name] in ("keep", "redact")
    assert a_path.name in client.get("/conversations/conv-a").get_data(as_text=True)
    r = client.post(plan["forget"]["action"], data=_form(plan), headers={"Accept": "application/json"})
    assert r.status_code == 202, r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    by = {f["name"]: f for f in job["saved_files"]}
    assert by[a_path.name]["status"] == by[a_replay.name]["status"] == "erased"
    assert not a_path.exists() and not a_replay.exists() and b_path.exists()
    assert [s["session_id"] for s in list_sessions(agent.project_dir)] == ["conv-b"]  # agentao's /sessions
    assert [m.session_id for m in list_replays(agent.project_dir)] == []


def test_a_hard_purge_of_a_memory_redacts_its_text_from_saved_conversations(seeded):
    from agentao.embedding.sessions import load_session
    from agentao_world import wait_for_job

    value = "Deploys go through the blue-green switch on host atlas-7."
    mem = seeded.save("deploy switch", value, scope="project")
    path, sid = conversation(seeded.project_dir, said=value)
    quiet, _ = conversation(seeded.project_dir, said="The build uses make.")
    quiet_before = quiet.read_bytes()
    client = seeded.app().test_client()
    dry = client.get(f"/forget/memory/project/{mem.id}.json").get_json()
    assert [(f["name"], f["action"], f["redacted"]) for f in dry["saved_files"]] == [
        (path.name, "redact", [1, 2])
    ]
    r = client.post(
        f"/forget/memory/project/{mem.id}",
        data={"mode": "purge", "confirm": "deploy switch"},
        headers={"Accept": "application/json"},
    )
    assert r.status_code == 202, r.get_json()
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    assert [f["status"] for f in job["saved_files"] if f["name"] == path.name] == ["erased"]
    assert value not in path.read_text() and quiet.read_bytes() == quiet_before
    messages, _model, _skills = load_session(sid, project_root=seeded.project_dir)
    assert len(messages) == 6 and value not in json.dumps(messages)


def test_forget_everything_deletes_every_saved_conversation(seeded):
    from agentao.replay import list_replays
    from agentao_world import wait_for_job

    path, sid = conversation(seeded.project_dir)
    replay(seeded.project_dir, sid)
    client = seeded.app().test_client()
    dry = client.get("/forget.json").get_json()["everything"]
    assert {f["action"] for f in dry["saved_files"]} == {"delete"} and len(dry["saved_files"]) == 2
    r = client.post(
        "/forget/everything",
        headers={"Accept": "application/json"},
        data={"confirm": "forget everything", "project": dry["stores"][0]["path"]},
    )
    job = wait_for_job(client, r.get_json()["url"])
    assert job["verdict"] == "verified erased", job
    assert {f["status"] for f in job["saved_files"]} == {"erased"}
    assert list_sessions(seeded.project_dir) == [] and list_replays(seeded.project_dir) == []


def test_findings_lists_what_its_rules_find_in_saved_conversations(agent):
    path, sid = conversation(agent.project_dir)
    replay(agent.project_dir, sid)
    client = agent.app().test_client()
    found = client.get("/findings.json").get_json()["saved_conversations"]
    assert {(f["file"], f["message"], f["rule"]) for f in found} >= {(path.name, 1, "personal.phone")}
    html = client.get("/findings").get_data(as_text=True)
    assert f'data-file="{path.name}"' in html and "saved conversation" in html


def test_a_suggestion_points_to_the_message_it_came_from(agent):
    said = "I prefer tabs over spaces in every file."
    agent.manager._session_id = "conv-t"
    agent.crystallize(said)
    path, _ = conversation(agent.project_dir, said=said, session_id="conv-t")
    rpath = replay(agent.project_dir, "conv-t", said=said)
    only, _ = conversation(agent.project_dir, said="The build uses make.", session_id="conv-only-saved")
    client = agent.app().test_client()
    listed = {c["session_id"]: c for c in client.get("/conversations.json").get_json()["conversations"]}
    assert listed["conv-t"]["saved_files"] == 2
    assert listed["conv-only-saved"]["saved_files"] == 1  # known from its checkpoint alone
    conv = client.get(listed["conv-t"]["url"] + ".json").get_json()
    assert {f["name"] for f in conv["saved_files"]} == {path.name, rpath.name}
    [item] = conv["suggestion_items"]
    assert item["said_in"]["message"] in (1, 3) and item["said_in"]["file"] in (path.name, rpath.name)
    html = client.get(listed["conv-t"]["url"]).get_data(as_text=True)
    assert 'data-field="said-in"' in html and only.name not in html


def test_all_files_together_are_read_within_a_budget(agent, monkeypatch):
    for n in range(3):
        conversation(agent.project_dir, said=f"note {n}")
    size = max(p.stat().st_size for p in (agent.project_dir / ".agentao" / "sessions").iterdir())
    monkeypatch.setattr(sessions, "MAX_TOTAL", size * 2 + 1)
    notes = [f.note for f in sessions.read_saved(agent.project_dir).sessions]
    assert notes == ["", "", "over_budget"]


def test_a_link_in_the_sessions_folder_is_never_followed(agent, tmp_path):
    path, _ = conversation(agent.project_dir)
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"session_id": "x", "messages": [{"role": "user", "content": PHONE}]}))
    (path.parent / "20990101_000000_000000.json").symlink_to(outside)
    saved = sessions.read_saved(agent.project_dir)
    link = next(f for f in saved.sessions if f.name == "20990101_000000_000000.json")
    assert link.note == "not_file" and link.messages == []
    client = agent.app().test_client()
    plan = client.get("/forget/about.json").get_json()
    assert {f["name"]: f["action"] for f in plan["saved_files"]}["20990101_000000_000000.json"] == "keep"


def test_what_is_held_follows_agentao_saving_again(agent):
    path, sid = conversation(agent.project_dir)
    client = agent.app().test_client()
    assert client.get("/about.json").get_json()["saved"]["sessions"] == 1
    conversation(agent.project_dir, said="Mail me at robin.k@posteo.de please.")
    rpath = replay(agent.project_dir, sid)
    saved = client.get("/about.json").get_json()["saved"]
    assert (saved["sessions"], saved["replays"]) == (2, 1)
    with open(rpath, "a", encoding="utf-8") as fh:  # agentao appending to a replay
        fh.write(
            json.dumps(
                {
                    "kind": "user_message",
                    "session_id": sid,
                    "payload": {"content": "Or call +49 171 2223344."},
                }
            )
            + "\n"
        )
    last = len(rpath.read_text(encoding="utf-8").splitlines())
    found = client.get("/about.json").get_json()["saved"]["found"]
    assert any(f["file"] == rpath.name and f["message"] == last for f in found)


def test_a_replay_ties_the_agents_save_to_the_turn_that_made_it(agent):
    value = "The staging database is reset every Monday at 06:00."
    rpath = agent_saves(agent, "conv-r", "staging reset", value)
    [mem] = [m for m in agent.manager.get_all_entries() if m.content == value]
    store = "user" if mem.scope == "user" else "project"
    other = agent.save("build tool", "The build uses make.", scope="project")
    client = agent.app().test_client()
    prov = client.get(f"/memories/{store}/{mem.id}.json").get_json()["provenance"]
    assert (prov["match"], prov["recorded_conversation"]) == ("exact", "conv-r")
    [tie] = prov["saved_by_agent"]
    assert (tie["session_id"], tie["turn"], tie["file"], tie["match"]) == ("conv-r", 2, rpath.name, "exact")
    assert tie["url"] == "/conversations/conv-r"
    html = client.get(f"/memories/{store}/{mem.id}").get_data(as_text=True)
    assert 'data-field="saved-by-agent" data-match="exact">Saved by the agent in conversation' in html
    assert f"<bdi>conv-r</bdi>, turn 2 (replay {rpath.name}, line" in html
    assert "agentao does not record which conversation saved this" not in html
    # a memory the replay does not name keeps the honest "by time"
    assert client.get(f"/memories/project/{other.id}.json").get_json()["provenance"]["match"] == "by time"
    conv = client.get("/conversations/conv-r.json").get_json()
    assert [(t["id"], t["turn"], t["match"]) for t in conv["saved_by_agent"]] == [(mem.id, 2, "exact")]
    for name, twin in (
        ("memory", client.get(f"/memories/{store}/{mem.id}.json").get_json()),
        ("conversation", conv),
    ):
        Draft202012Validator(
            json.loads(
                (Path(__file__).parent.parent / "docs" / "schemas" / f"{name}.schema.json").read_text()
            )
        ).validate(twin)
    page = client.get("/conversations/conv-r").get_data(as_text=True)
    assert f'data-memory="{store}:{mem.id}" data-match="exact" data-turn="2"' in page
    # agentao saves again under the key: the tie stays, said as "same key"
    agent.save("staging reset", "The staging database is reset on Sundays.", scope=mem.scope)
    prov = client.get(f"/memories/{store}/{mem.id}.json").get_json()["provenance"]
    assert [t["match"] for t in prov["saved_by_agent"]] == ["same key"] and prov["match"] == "by time"


_RECORDING = """
import sys
from pathlib import Path
from agentao.replay import ReplayRecorder, load_replay_config, save_replay_enabled
project = Path(sys.argv[1])
save_replay_enabled(True, project)
config = load_replay_config(project)
rec = ReplayRecorder.create("conv-open", project, capture_flags=dict(config.capture_flags))
rec.record("user_message", turn_id="t1", payload={"content": sys.argv[2]})
print(rec.path, flush=True)
sys.stdin.readline()  # the conversation goes on after the forget
rec.record("user_message", turn_id="t2", payload={"content": "Later words."})
rec.close()
"""


@pytest.mark.parametrize("whole", [False, True])
def test_a_replay_agentao_is_still_writing_is_erased_where_agentao_writes(agent, whole):
    """agentao's recorder keeps its replay open while the conversation goes on; a forget must
    take the text out of the file agentao writes to, not out of a copy put in its place."""
    child = subprocess.Popen(
        [sys.executable, "-c", _RECORDING, str(agent.project_dir), SAID],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        rpath = Path(child.stdout.readline().strip())
        held = os.stat(rpath).st_ino
        texts = [PHONE]
        plans = saved_actions.plan_files(
            sessions.read_saved(agent.project_dir), texts, ["conv-open"] if whole else []
        )
        assert [p.action for p in plans] == ["delete" if whole else "redact"]
        [result] = saved_actions.erase(agent.project_dir, plans, texts)
        assert result.status == "erased"
        fds = Path(f"/proc/{child.pid}/fd")
        [handle] = [fd for fd in fds.iterdir() if os.readlink(fd).startswith(str(rpath))]
        assert PHONE.encode() not in handle.read_bytes()  # what agentao's open handle still reaches
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(30) == 0
    finally:
        child.kill()
    if whole:
        assert not rpath.exists()
        return
    assert os.stat(rpath).st_ino == held  # the file agentao wrote on is the one at the path
    data = rpath.read_bytes()
    assert PHONE.encode() not in data and b"Later words." in data
    assert all(json.loads(line) for line in data.splitlines())  # every line whole
