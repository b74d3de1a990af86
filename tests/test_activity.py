"""The activity feed and the live pulse, over a history written by the real agentao 0.5.17.

agentao's clock is pinned to a ticking one (one second per stamp it takes), so the order of
its writes is in the stamps themselves; the dashboard's own writes use the real clock, later.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timedelta
from unittest import mock

import pytest
from agentao_world import Agent, file_digest
from bs4 import BeautifulSoup

from dashboard.actions.purge import forget_memory
from dashboard.store.registry import StoreRef

HTMX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


class Clock:
    """agentao's ``_now_iso``, one second later at every call, from 2026-05-01 10:00."""

    def __init__(self):
        self.at = datetime(2026, 5, 1, 10, 0, 0)

    def __call__(self):
        self.at += timedelta(seconds=1)
        return self.at.strftime("%Y-%m-%dT%H:%M:%S")


@pytest.fixture
def history(tmp_path):
    """save, update, a user save, soft delete, crystallize + approve + reject, a clear of
    the user store (agentao), then a restore through the dashboard."""
    clock = Clock()
    with (
        mock.patch("agentao.memory.storage._now_iso", clock),
        mock.patch("agentao.memory.crystallizer._now_iso", clock),
        mock.patch("agentao.memory.manager._now", clock),
    ):
        agent = Agent(tmp_path)
        build = agent.save("build tool", "make", ["tooling"], scope="project")
        agent.save("build tool", "ninja", ["tooling"], scope="project")
        agent.save("editor", "Uses Helix.", ["profile"], scope="user")
        agent.manager.delete(build.id)
        tabs, main = agent.crystallize("I prefer tabs over spaces. We must never push to main.")
        approved = agent.manager.approve_review_item(tabs.id)
        agent.manager.reject_review_item(main.id)
        agent.manager.clear(scope="user")  # /memory clear of the user store: no events
    client = agent.app().test_client()
    page = soup(client.get(f"/memories/project/{build.id}"))
    form = {i["name"]: i.get("value", "") for i in page.select("#restore-form input")}
    assert client.post(f"/memories/project/{build.id}/restore", data=form).status_code == 303
    return (
        agent,
        client,
        {
            "build": build.id,
            "tabs": tabs.id,
            "main": main.id,
            "approved": approved.id,
            "approved_title": approved.title,
        },
    )


def listed(client, **query):
    data = client.get("/activity.json", query_string=query).get_json()
    return data, [
        (i["kind"], i["store"], i["actor"], i["memory_id"] or i["review_id"] or i["count"])
        for i in data["items"]
    ]


def test_the_feed_lists_exactly_what_happened_newest_first_with_who_did_it(history):
    agent, client, ids = history
    data, rows = listed(client)
    editor = next(i["memory_id"] for i in data["items"] if i["title"] == "editor")
    assert rows == [
        ("restore", "project", "dashboard", ids["build"]),  # only a dashboard brings one back
        ("wiped", "user", "agent", 2),  # the clear: editor and the approval
        ("rejected", "project", "review", ids["main"]),
        ("approved", "project", "review", ids["tabs"]),
        ("create", "user", "approval", ids["approved"]),  # approving saved it, then marked it
        ("soft_delete", "project", "agent", ids["build"]),
        ("create", "user", "agent", editor),
        ("update", "project", "agent", ids["build"]),
        ("create", "project", "agent", ids["build"]),
    ]
    assert data["total"] == 9
    wipe = data["items"][1]
    assert sorted(wipe["titles"]) == sorted(["editor", ids["approved_title"]])
    # The page says it in words, one row per entry, as phone cards.
    page = soup(client.get("/activity"))
    table = page.select_one("#activity-feed table.rows")
    first = table.select("tbody tr")[0]
    assert first["data-kind"] == "restore" and "restored" in first.select_one("td.lead").get_text()
    assert "this dashboard" in first.get_text() and first.select_one("td.lead a")["href"].endswith(
        ids["build"]
    )
    assert all(td.has_attr("data-label") for td in table.select("tbody td:not(.lead)"))
    assert "2 memories" in table.select("tbody tr")[1].get_text()
    assert "9 things happened" in page.select_one("#activity-feed h2").get_text()


def test_filters_by_store_and_date_and_refuses_a_bad_date(history):
    agent, client, ids = history
    _, user_rows = listed(client, store="user")
    assert [r[0] for r in user_rows] == ["wiped", "create", "create"]
    today = datetime.now().date().isoformat()
    _, today_rows = listed(client, **{"from": today})
    assert today_rows == [("restore", "project", "dashboard", ids["build"])]
    _, may = listed(client, **{"from": "2026-05-01", "to": "2026-05-01"})
    assert len(may) == 8 and ("restore", "project", "dashboard", ids["build"]) not in may
    _, words = listed(client, q="BUILD")
    assert words == [
        (k, "project", a, ids["build"])
        for k, a in (
            ("restore", "dashboard"),
            ("soft_delete", "agent"),
            ("update", "agent"),
            ("create", "agent"),
        )
    ]
    _, cleared = listed(client, q="edit", store="user")
    assert cleared == [("wiped", "user", "agent", 1), ("create", "user", "agent", cleared[1][3])]
    before = file_digest(agent.project_db, agent.user_db)
    bad = client.get("/activity?from=yesterday")
    assert bad.status_code == 400 and "must be a date" in bad.get_data(as_text=True)
    assert client.get("/activity?store=both").status_code == 400
    assert file_digest(agent.project_db, agent.user_db) == before


def test_pages_hold_every_entry_once(agent):
    for n in range(120):
        agent.save(f"note {n:03d}", f"Note number {n}.", ["n"], scope="project")
    client = agent.app().test_client()
    seen = []
    for page_no in (1, 2, 3):
        data = client.get("/activity.json", query_string={"page": page_no}).get_json()
        assert data["pages"] == 3 and data["total"] == 120
        seen += [i["event_id"] for i in data["items"]]
    assert seen == list(range(120, 0, -1))
    page2 = soup(client.get("/activity?page=2"))
    assert page2.select_one("a[rel=next]")["href"].endswith("page=3")


def test_what_changed_since_a_date_and_what_cannot_be_told(history):
    agent, client, ids = history
    data = client.get("/activity.json", query_string={"changed": "2026-05-01"}).get_json()["changed"]
    # Everything here was written on 2026-05-01 or later: all of it is new or came and went.
    assert [m["id"] for m in data["added"]] == [ids["build"]]
    assert data["counts"] == {"added": 1, "changed": 0, "removed": 0} and data["passing"] == 2
    later = client.get("/activity.json", query_string={"changed": "2026-05-02"}).get_json()["changed"]
    # Deleted on 2026-05-01, restored today: new to the agent since 2026-05-02, not changed.
    assert [m["id"] for m in later["added"]] == [ids["build"]] and later["changed"] == []
    assert {(limit["code"], limit["store"]) for limit in later["limits"]} == set()
    # Purge the approved memory (with its events): the log now misses what happened to it.
    forget_memory(StoreRef("user", "user", agent.user_db, "user"), ids["approved"])
    early = client.get("/activity.json", query_string={"changed": "2026-04-01"}).get_json()["changed"]
    assert {"code": "erased", "store": "user", "count": 1} in early["limits"]
    assert {(limit["code"], limit["store"]) for limit in early["limits"]} >= {
        ("log_starts_later", "project"),
        ("log_starts_later", "user"),
    }
    page = soup(client.get("/activity?changed=2026-04-01"))
    limits = page.select_one("#activity-changes .limits").get_text(" ", strip=True)
    assert "1 change in your user store was erased from the log with a purged memory" in limits
    assert "what a changed memory said then cannot be shown" in limits
    data, rows = listed(client)
    assert ("create", "user", "approval", ids["approved"]) not in rows  # gone with its row


def test_since_my_last_visit_is_remembered_per_port_in_a_signed_cookie(history):
    agent, client, _ids = history
    first = client.get("/activity")
    cookie = first.headers["Set-Cookie"]
    assert cookie.startswith("agentao_memory_activity_") and "HttpOnly" in cookie
    assert soup(first).select_one("[data-last-visit]") is None  # nothing to compare with yet
    assert soup(client.get("/activity")).select_one("[data-last-visit]") is None  # same visit
    name = cookie.partition("=")[0]
    # A visit that ended two hours ago, signed by this dashboard: the next visit compares with it.
    two_hours = (datetime.now() - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S")
    with client.application.test_request_context():
        from dashboard.guard.access import sign_preference

        signed = sign_preference(f"{two_hours}|{two_hours}")
    client.set_cookie(name, signed)
    page = soup(client.get("/activity"))
    said = page.select_one("[data-last-visit]")
    assert said["data-last-visit"] == two_hours
    assert "1 new memory, 0 changed" in said.get_text()  # the restore: deleted at that visit
    diff = soup(client.get("/activity?changed=last")).select_one("#activity-changes")
    assert "Since your last visit" in diff.get_text()
    assert [li["data-memory"] for li in diff.select("[data-group=added] li[data-memory]")] == [_ids["build"]]
    # A first visit that ended two hours ago (no baseline of its own): compared with its end.
    with client.application.test_request_context():
        client.set_cookie(name, sign_preference(f"|{two_hours}"))
    assert soup(client.get("/activity")).select_one("[data-last-visit]")["data-last-visit"] == two_hours
    # The same value unsigned (a page on another port can set a cookie of this name): ignored.
    client.set_cookie(name, f"{two_hours}|{two_hours}")
    assert soup(client.get("/activity")).select_one("[data-last-visit]") is None


def _pulse_url(client, path="/activity"):
    html = client.get(path).get_data(as_text=True)
    return re.search(r'id="pulse"[^>]*hx-get="([^"]+)"', html).group(1).replace("&amp;", "&")


def test_the_pulse_says_what_the_agent_just_wrote_and_nothing_while_nothing_moved(agent):
    agent.save("editor", "Uses Helix.", ["profile"])
    client = agent.app().test_client()
    url = _pulse_url(client, "/overview")
    before = file_digest(agent.project_db, agent.user_db)
    quiet = client.get(url, headers=HTMX)
    assert quiet.status_code == 204 and quiet.get_data() == b""
    agent.save("build tool", "Uses ninja.", ["tooling"], scope="project")
    told = client.get(url, headers=HTMX)
    assert told.status_code == 200
    said = soup(told).select_one("[hx-swap-oob] [data-said=live]")
    assert said.get_text() == "The agent just saved 'build tool'."
    assert '"regions": ["activity", "memories"]' in told.headers["HX-Trigger"]
    fresh = soup(told).select_one("#pulse")["hx-get"]
    assert client.get(fresh, headers=HTMX).status_code == 204  # the new token holds
    agent.save("build tool", "Uses meson.", ["tooling"], scope="project")
    agent.save("linter", "Uses ruff.", ["tooling"], scope="project")
    two = soup(client.get(fresh, headers=HTMX)).select_one("[data-said=live]").get_text()
    assert two == "The agent just saved 'linter'. 1 more change."
    agent.save("editor", "Uses Zed.", ["profile"])
    agent.manager.delete(agent.manager.project_store.get_memory_by_scope_key("project", "linter").id)
    three = client.get(soup(client.get(fresh, headers=HTMX)).select_one("#pulse")["hx-get"], headers=HTMX)
    assert three.status_code == 204
    assert file_digest(agent.project_db, agent.user_db) != before  # (the agent wrote)
    still = file_digest(agent.project_db, agent.user_db)
    for _ in range(3):
        client.get(fresh, headers=HTMX)
        client.get("/activity")
    assert file_digest(agent.project_db, agent.user_db) == still  # browsing writes nothing


def test_the_pulse_is_quiet_about_the_dashboards_own_writes_and_odd_tokens(history):
    agent, client, ids = history
    url = _pulse_url(client)
    page = soup(client.get(f"/memories/project/{ids['build']}"))
    form = page.select_one("#delete-form") or page.select_one("form[action$='/delete']")
    fields = {i["name"]: i.get("value", "") for i in form.select("input")}
    assert client.post(form["action"], data=fields).status_code in (200, 303)
    own = client.get(url, headers=HTMX)
    assert own.status_code == 200 and soup(own).select_one("[data-said]") is None
    assert "HX-Trigger" not in own.headers
    odd = client.get("/activity/pulse?since=not-a-token", headers=HTMX)
    assert odd.status_code == 400 and "the token the page was given" in odd.get_data(as_text=True)
    opened = client.get(url)  # a person opening the address, not htmx: the Activity page
    assert opened.status_code == 303 and opened.headers["Location"].endswith("/activity")


def test_crafted_pulse_tokens_and_the_last_day_answer_without_an_error(history):
    """A token nested 2,900 deep, or holding numbers past SQLite's, is refused with a
    message (it was a 500); the last day there is, as 'to', lists everything."""
    import base64
    import json

    agent, client, ids = history

    def token(text):
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    pid = json.loads(base64.urlsafe_b64decode(_pulse_url(client).split("since=")[1] + "==="))["project"][0]
    for crafted in (
        "[" * 2900,
        json.dumps({"project": [pid, 10**30, 0, ""]}),
        json.dumps({"project": [pid, 0, -1, ""]}),
        json.dumps({"project": [pid, True, 0, ""]}),
    ):
        r = client.get("/activity/pulse", query_string={"since": token(crafted)}, headers=HTMX)
        assert r.status_code == 400 and "token" in r.get_data(as_text=True), crafted[:40]
    everything = client.get("/activity.json").get_json()["total"]
    last = client.get("/activity.json?to=9999-12-31")
    assert last.status_code == 200 and last.get_json()["total"] == everything


_AGENTAO = """
import sys
from unittest import mock
from agentao.memory import MemoryManager, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
stamp = lambda: sys.argv[3]
with mock.patch("agentao.memory.storage._now_iso", stamp), \\
        mock.patch("agentao.memory.crystallizer._now_iso", stamp), \\
        mock.patch("agentao.memory.manager._now", stamp):
    manager = MemoryManager(SQLiteMemoryStore.open(sys.argv[1]), SQLiteMemoryStore.open(sys.argv[2]))
    exec(sys.argv[4])
"""


def agentao_process(agent, at: str, code: str) -> None:
    """``code`` run by agentao in a process of its own (``manager`` at hand), its clock at ``at``."""
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-c", _AGENTAO, str(agent.project_db), str(agent.user_db), at, code],
        check=True,
        timeout=60,
    )


def test_the_pulse_tells_a_suggestion_made_in_the_same_second_as_the_one_before(agent):
    """The agent suggests, the page learns it, and a second suggestion lands in the same
    second: the pulse still tells it (it compared one-second stamps: 204, and 204 again)."""
    at = "2026-05-01T10:00:00"
    crystallize = "manager.crystallize_user_messages([{'role': 'user', 'content': %r}])"
    agentao_process(agent, at, crystallize % "I prefer tabs over spaces.")
    client = agent.app().test_client()
    url = _pulse_url(client, "/overview")
    assert client.get(url, headers=HTMX).status_code == 204
    agentao_process(agent, at, crystallize % "We must never push to main.")
    told = client.get(url, headers=HTMX)
    assert told.status_code == 200, "the second suggestion went unnoticed"
    said = soup(told).select_one("[data-said=live]").get_text()
    assert said.startswith("The agent just suggested") and "main" in said and "more" not in said
    assert "reviews" in told.headers["HX-Trigger"]
    fresh = soup(told).select_one("#pulse")["hx-get"]
    assert client.get(fresh, headers=HTMX).status_code == 204
    # The agent rejects that suggestion in the same second: told too.
    item = next(
        i for i in agent.manager.project_store.list_review_items(status="pending") if "main" in i.content
    )
    agentao_process(agent, at, f"manager.reject_review_item({item.id!r})")
    again = client.get(fresh, headers=HTMX)
    assert again.status_code == 200
    assert "was just rejected" in soup(again).select_one("[data-said=live]").get_text()


def test_the_pulse_is_quiet_when_the_dashboard_erases_a_suggestion_of_the_same_second(agent):
    """Erasing a suggestion (forget me, "reject and erase") deletes its row: the ones left,
    stamped in the same second, did not change and are not news (it said "just suggested")."""
    from dashboard.actions.purge import purge_review_items

    at = "2026-05-01T10:00:00"
    crystallize = "manager.crystallize_user_messages([{'role': 'user', 'content': %r}])"
    agentao_process(agent, at, crystallize % "I prefer tabs over spaces.")
    agentao_process(agent, at, crystallize % "We must never push to main.")
    client = agent.app().test_client()
    url = _pulse_url(client, "/overview")
    item = next(i for i in agent.manager.project_store.list_review_items() if "main" in i.content)
    ref = StoreRef("project", "project", agent.project_db, "project")
    assert purge_review_items(ref, [item.id]).status == "verified erased"
    own = client.get(url, headers=HTMX)
    assert soup(own).select_one("[data-said]") is None, soup(own).get_text()
    assert "HX-Trigger" not in own.headers


def _restore(client, memory_id):
    page = soup(client.get(f"/memories/project/{memory_id}"))
    form = {i["name"]: i.get("value", "") for i in page.select("#restore-form input")}
    assert client.post(f"/memories/project/{memory_id}/restore", data=form).status_code == 303


def test_what_changed_today_knows_what_the_agent_had_this_morning(agent):
    """Deleted yesterday and restored today: new to the agent today (not 'changed');
    restored and deleted again today: it had none of it this morning (not 'removed')."""
    from datetime import date

    today = date.today()
    yesterday = (datetime.now() - timedelta(days=1)).strftime("%Y-%m-%dT09:00:00")
    agentao_process(
        agent,
        yesterday,
        """
for key in ("back", "again", "kept"):
    record = manager.upsert(SaveMemoryRequest(key=key, value="v", scope="project"))
    if key != "kept":
        manager.delete(record.id)
""",
    )
    conn = sqlite3.connect(agent.project_db)
    rows = dict(conn.execute("SELECT key_normalized, id FROM memories"))
    conn.close()
    client = agent.app().test_client()
    _restore(client, rows["back"])
    _restore(client, rows["again"])
    agentao_process(agent, datetime.now().strftime("%Y-%m-%dT%H:%M:%S"), f"manager.delete({rows['again']!r})")
    data = client.get("/activity.json", query_string={"changed": today.isoformat()}).get_json()["changed"]
    assert [m["id"] for m in data["added"]] == [rows["back"]]
    assert data["changed"] == [] and data["removed"] == [] and data["passing"] == 1


def test_the_pulse_is_quiet_after_the_dashboards_own_purge_but_tells_the_agents_clear(agent):
    # A hard purge deletes the memory with its events: the change counter moves with no
    # event to explain it, as agentao's own `clear` does.  Only the agent's is news.
    kept = agent.save("editor", "Uses Helix.", ["profile"], scope="project")
    gone = agent.save("build tool", "Uses ninja.", ["tooling"], scope="project")
    client = agent.app().test_client()
    url = _pulse_url(client, "/overview")
    ref = StoreRef("project", "project", agent.project_db, "project")
    assert forget_memory(ref, gone.id).deleted.get("memory") == 1
    own = client.get(url, headers=HTMX)
    assert soup(own).select_one("[data-said]") is None and "HX-Trigger" not in own.headers
    url = soup(own).select_one("#pulse")["hx-get"]
    assert agent.manager.clear("project") == 1 and kept.id
    told = soup(client.get(url, headers=HTMX)).select_one("[data-said=live]")
    assert told is not None and "cleared or removed" in told.get_text()


def test_the_pulse_reads_no_rows_while_nothing_moved(agent, monkeypatch):
    agent.save("editor", "Uses Helix.", ["profile"])
    client = agent.app().test_client()
    url = _pulse_url(client)
    from dashboard.store import events

    calls = []
    monkeypatch.setattr(events, "read", lambda *a, **k: calls.append(a) or pytest.fail("read"))
    for _ in range(5):
        assert client.get(url, headers=HTMX).status_code == 204
    assert calls == []
