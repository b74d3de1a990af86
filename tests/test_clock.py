"""One clock: ``CLOCK`` in the app's config is what every write stamps and every page
compares with, written in agentao's own format (local wall clock, whole seconds, no zone)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from agentao.memory import manager as agentao_manager
from agentao.memory import storage as agentao_storage
from agentao_world import Agent
from bs4 import BeautifulSoup
from test_adding import save_form

PINNED = datetime(2031, 2, 3, 4, 5, 6, 789000, tzinfo=timezone.utc)


def agentao_at(agent: Agent, moment: datetime, monkeypatch, **save):
    """agentao saves with its own clock stopped at ``moment``; returns the row it wrote."""

    class Pinned(datetime):
        @classmethod
        def now(cls, tz=None):
            return moment.astimezone(tz) if tz else moment.astimezone().replace(tzinfo=None)

    for module in (agentao_manager, agentao_storage):
        monkeypatch.setattr(module, "datetime", Pinned)
    agent.save(**save)
    monkeypatch.undo()


def row(db, key):
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return dict(conn.execute("SELECT * FROM memories WHERE key_normalized = ?", (key,)).fetchone())
    finally:
        conn.close()


def test_a_pinned_clock_is_the_stamp_written_as_agentao_writes_it_and_the_now_shown(tmp_path, monkeypatch):
    agent = Agent(tmp_path)
    agentao_at(agent, PINNED, monkeypatch, key="written by agentao", value="its own stamp")
    theirs = row(agent.project_db, "written_by_agentao")
    client = agent.app(CLOCK=lambda: PINNED).test_client()
    client.post("/memories/new", data=save_form(client, key="written here", value="our stamp"))
    ours = row(agent.project_db, "written_here")
    # The same moment, stamped by both: the same text, to the character.
    assert ours["created_at"] == ours["updated_at"] == theirs["created_at"] == theirs["updated_at"]
    detail = client.get(f"/memories/project/{ours['id']}.json").get_json()
    assert detail["memory"]["updated_at"] == ours["updated_at"]
    # "How long ago" is measured from the pinned clock: written this second, not in years.
    page = BeautifulSoup(client.get(f"/memories/project/{ours['id']}").get_data(as_text=True), "html.parser")
    shown = page.select_one(f'time[datetime="{ours["updated_at"]}"]')
    assert shown is not None and "year" not in shown.get_text()
    # The preview's "now" is the same clock.
    assert client.get("/preview.json").get_json()["now"] == "2031-02-03T04:05:06+00:00"
