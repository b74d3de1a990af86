"""Saved conversations written by agentao 0.5.17 itself: its ``save_session`` checkpoint and its
replay recorder, with replay switched on through the project's ``.agentao/settings.json``."""

from __future__ import annotations

from pathlib import Path

from agentao.embedding.sessions import save_session
from agentao.replay import ReplayRecorder, load_replay_config, save_replay_enabled

from dashboard.demo import saved_memory_turn

PHONE = "+49 170 5550199"
SAID = f"Hi, I'm Robin. Call me on {PHONE} if the deploy breaks."


def conversation(project: Path, said: str = SAID, session_id: str | None = None) -> tuple[Path, str]:
    """A conversation agentao checkpointed: the person's words, an explicit save of them, a reply."""
    messages = [
        {"role": "system", "content": "You are agentao."},
        {"role": "user", "content": said},
        *saved_memory_turn("contact", said),
        {"role": "user", "content": [{"type": "text", "text": "Thanks, and use tabs please."}]},
        {"role": "assistant", "content": "Noted: tabs."},
    ]
    return save_session(messages, "test-model", session_id=session_id, project_root=project)


def replay(project: Path, session_id: str, said: str = SAID) -> Path:
    """A replay instance as agentao records one, with replay enabled in the settings file: its
    session start, then through its transport adapter a turn in which the save_memory tool saves
    ``said`` (the ``memory_write`` event carries only the memory versions, as agentao's does)
    and a second turn."""
    from agentao.replay.adapter import ReplayAdapter
    from agentao.transport import AgentEvent, EventType
    from agentao.transport.null import NullTransport

    save_replay_enabled(True, project)
    config = load_replay_config(project)
    assert config.enabled
    rec = ReplayRecorder.create(session_id, project, capture_flags=dict(config.capture_flags))
    rec.record(
        "session_started", payload={"session_id": session_id, "cwd": str(project), "model": "test-model"}
    )
    adapter = ReplayAdapter(NullTransport(), rec)
    adapter.begin_turn(said)
    args = {"key": "contact", "value": said, "scope": "user"}
    adapter.emit(AgentEvent(EventType.TOOL_START, {"tool": "save_memory", "args": args, "call_id": "c1"}))
    adapter.emit(
        AgentEvent(EventType.TOOL_COMPLETE, {"tool": "save_memory", "call_id": "c1", "status": "ok"})
    )
    adapter.emit(
        AgentEvent(EventType.MEMORY_WRITE, {"version_before": 0, "version_after": 1, "total_entries": 1})
    )
    adapter.end_turn("Saved.")
    adapter.begin_turn("Thanks, and use tabs please.")
    adapter.end_turn("Noted: tabs.")
    rec.close()
    return rec.path


def agent_saves(agent, session_id: str, key: str, value: str) -> Path:
    """A replay as agentao's own recorder writes it through its transport adapter: a first turn,
    then a turn in which agentao's save_memory tool saves ``value`` and the memory version moves."""
    from agentao.replay.adapter import ReplayAdapter
    from agentao.tools.memory import SaveMemoryTool
    from agentao.transport import AgentEvent, EventType
    from agentao.transport.null import NullTransport

    save_replay_enabled(True, agent.project_dir)
    config = load_replay_config(agent.project_dir)
    rec = ReplayRecorder.create(session_id, agent.project_dir, capture_flags=dict(config.capture_flags))
    adapter = ReplayAdapter(NullTransport(), rec)
    adapter.begin_turn("Hello.")
    adapter.end_turn("Hi.")
    adapter.begin_turn(f"Remember this: {value}")
    manager = agent.manager
    before = manager.write_version
    args = {"key": key, "value": value}
    adapter.emit(AgentEvent(EventType.TOOL_START, {"tool": "save_memory", "args": args, "call_id": "c1"}))
    SaveMemoryTool(manager).execute(**args)
    adapter.emit(
        AgentEvent(EventType.TOOL_COMPLETE, {"tool": "save_memory", "call_id": "c1", "status": "ok"})
    )
    adapter.emit(
        AgentEvent(
            EventType.MEMORY_WRITE,
            {
                "version_before": before,
                "version_after": manager.write_version,
                "total_entries": len(manager.get_all_entries()),
            },
        )
    )
    adapter.end_turn("Saved.")
    rec.close()
    return rec.path
