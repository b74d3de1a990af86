"""agentao's reject landing on an approval well after the answer's read-back (issue 28, item 4).

agentao's ``reject_review_item`` checks that the item is pending, then writes "rejected" in a
second transaction.  When its process is held up between the two (a busy machine), its write
lands after the dashboard approved the item and after the answer's read-back.  The answer says
the approval may still be undone; the live pulse of the open page then says it was, with the
soft delete of the memory the approval left live one click away.
"""

from __future__ import annotations

import multiprocessing as mp
import re

from bs4 import BeautifulSoup

FORK = mp.get_context("fork")
JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true"}


def _agent_rejects_held_up(project_db, user_db, item_id, read, go, done):
    from agentao.memory import MemoryManager, SQLiteMemoryStore

    manager = MemoryManager(SQLiteMemoryStore.open(project_db), SQLiteMemoryStore.open(user_db))
    write = manager.project_store.update_review_status

    def held_up(*args):  # agentao's process stalls between its check and its write
        read.set()
        go.wait(30)
        return write(*args)

    manager.project_store.update_review_status = held_up
    done.put(manager.reject_review_item(item_id))


def _pulse_url(client) -> str:
    html = client.get("/reviews").get_data(as_text=True)
    return re.search(r'id="pulse"[^>]*hx-get="([^"]+)"', html).group(1).replace("&amp;", "&")


def test_a_reject_landing_after_the_read_back_is_told_by_the_pulse_with_its_fix(agent):
    agent.crystallize("I prefer tabs over spaces.")
    [item] = [i for i in agent.manager.list_review_items() if i.scope == "user"]
    client = agent.app().test_client()
    plan = client.get("/reviews.json").get_json()["items"][0]["plan"]
    read, go, done = FORK.Event(), FORK.Event(), FORK.Queue()
    proc = FORK.Process(
        target=_agent_rejects_held_up,
        args=(agent.project_db, agent.user_db, item.id, read, go, done),
        daemon=True,
    )
    proc.start()
    try:
        assert read.wait(30), "agentao never checked the item"
        r = client.post(
            f"/reviews/{item.id}/approve",
            headers=JSON,
            data={"seen": plan["item_fingerprint"], "target": plan["target_fingerprint"]},
        )
        said = r.get_json()["outcomes"][0]
        assert said["outcome"] == "approved"
        assert "If agentao rejects it later" in said["message"]  # the answer does not claim more
        url = _pulse_url(client)  # the page open after the approval
        assert client.get(url, headers=HTMX).status_code == 204
        go.set()  # agentao's write lands now, long after the read-back
        assert done.get(timeout=30) is True
    finally:
        go.set()
        proc.join(30)
    assert agent.manager.project_store.get_review_item(item.id).status == "rejected"
    told = client.get(url, headers=HTMX)
    page = BeautifulSoup(told.get_data(as_text=True), "html.parser")
    words = page.select_one("[hx-swap-oob] [data-said=bad]")
    assert words is not None, told.get_data(as_text=True)
    assert "Not approved after all" in words.get_text() and item.title in words.get_text()
    fix = page.select_one("form.said-undo")
    assert fix.select_one("button[data-action=fix-overridden]") is not None
    fields = {i["name"]: i["value"] for i in fix.select("input")}
    assert client.post(fix["action"], headers=JSON, data=fields).status_code == 200
    assert agent.manager.user_store.get_memory_by_scope_key("user", item.key_normalized) is None
