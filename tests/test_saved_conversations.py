"""agentao's saved conversations, read as agentao writes them (its own save_session and replay
recorder), tolerating what is not agentao's, and never changing a byte."""

from __future__ import annotations

import json

from agentao.embedding.sessions import list_sessions
from agentao_world import file_digest
from saved_world import PHONE, conversation, replay

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
    assert {m.role for m in r.messages if PHONE in m.text} == {"user_message", "memory_write"}
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
    rpath = replay(agent.project_dir, sid)
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
