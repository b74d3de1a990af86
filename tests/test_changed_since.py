"""What changed since a moment, across agentao's ``/memory clear`` (issue 28, item 5).

agentao's ``/memory clear`` (``MemoryManager.wipe_all``) soft-deletes every memory without an
event.  A memory cleared yesterday and restored today is new to the agent today; restored and
cleared again today, the agent had none of it this morning.
"""

from __future__ import annotations

import sqlite3
from datetime import date, datetime, timedelta

from test_activity import _restore, agentao_process


def test_a_memory_cleared_by_agentao_then_restored_is_new_today(agent):
    yesterday = (datetime.now() - timedelta(days=1)).strftime("%Y-%m-%dT")
    agentao_process(
        agent,
        yesterday + "09:00:00",
        'for key in ("back", "kept"):\n'
        '    manager.upsert(SaveMemoryRequest(key=key, value="v", scope="project"))',
    )
    agentao_process(agent, yesterday + "10:00:00", "assert manager.wipe_all().ok")  # /memory clear
    conn = sqlite3.connect(agent.project_db)
    rows = dict(conn.execute("SELECT key_normalized, id FROM memories"))
    conn.close()
    client = agent.app().test_client()
    _restore(client, rows["back"])
    today = {"changed": date.today().isoformat()}
    data = client.get("/activity.json", query_string=today).get_json()["changed"]
    assert [m["id"] for m in data["added"]] == [rows["back"]]
    assert data["changed"] == [] and data["removed"] == [] and data["passing"] == 0
    # The feed tells the clear as agentao's, and the restore as this dashboard's.
    feed = client.get("/activity.json").get_json()["items"]
    told = [(e["kind"], e["actor"]) for e in feed if e["memory_id"] == rows["back"]]
    assert told == [("restore", "dashboard"), ("soft_delete", "agent"), ("create", "agent")]
    agentao_process(agent, datetime.now().strftime("%Y-%m-%dT%H:%M:%S"), "assert manager.wipe_all().ok")
    data = client.get("/activity.json", query_string=today).get_json()["changed"]
    assert data["added"] == [] and data["removed"] == [] and data["passing"] == 1
