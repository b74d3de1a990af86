"""Every read of a store is bounded (as Datasette's sql_time_limit_ms): SQLite calls back every
``READ_STEPS`` steps and a read past ``READ_TIME_LIMIT_S`` stops, and the page says its answer
was cut instead of holding a thread.  Counted in steps here, not timed."""

from __future__ import annotations

from agentao_world import Agent

from dashboard.store import connection


def test_a_read_past_its_limit_is_stopped_and_the_page_says_the_answer_is_cut(tmp_path, monkeypatch):
    agent = Agent(tmp_path)
    agent.save("deploy", "We deploy with make release.")
    client = agent.app().test_client()
    assert client.get("/memories.json").get_json()["total"] == 1
    monkeypatch.setattr(connection, "READ_TIME_LIMIT_S", 0)
    monkeypatch.setattr(connection, "READ_STEPS", 1)
    agent.save("deploy", "We deploy with make ship.")  # the file moves: nothing held is shown
    data = client.get("/memories.json").get_json()
    assert data["items"] == [] and {p["kind"] for p in data["problems"]} == {"time_limit"}
    assert "cut short" in client.get("/memories").get_data(as_text=True)
    monkeypatch.undo()
    assert client.get("/memories.json").get_json()["items"][0]["content"] == "We deploy with make ship."
