"""Every 403 the dashboard can give reads as one sentence: one full stop, never two (issue 18).

The refusals are collected by walking the app's ``url_map``: every POST route
is sent cross-site, and as a user would send it to a dashboard started
read-only, to a store of a newer schema and to a damaged store; every page is
asked for without the token and with a wrong one, and under a foreign Host.
Each is asked for as JSON, as a page without JavaScript and as an htmx fragment.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time

from agentao_world import Agent, seed_corpus
from bs4 import BeautifulSoup

JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true"}
TOKEN = "refusals-token-0123456789"
# POST routes that never refuse with 403, and why.
NEVER_403 = {
    "login.login": "it writes no store; a wrong token is refused by the visitor walk's check",
    "projects.select": "it only remembers which project to show; no store is written",
    "language.choose": "it only remembers the pages' language; no store is written",
    "preview.ask": "the preview twin for a POSTed JSON body: it only reads, like its GET",
    "preview.ask_page": "the preview's form, POSTed for messages too long for a URL: it only reads",
    "preview.ranked": "more rows of the preview's ranked table, the form's fields in the body: it only reads",
    "memories.plan_new": "what adding would write, for values too long for a query string: it only reads",
    "memories.bulk_plan": "a bulk action's dry run only reads; on a read-only store it says why, without Apply",
    "checks.create": "it writes the dashboard's own checks file, never a store (--read-only refuses it: test_checks)",
    "checks.delete": "it writes the dashboard's own checks file, never a store (--read-only refuses it: test_checks)",
    "findings.full_scan": "the full findings scan only reads the stores, as the page does",
    "reviews.erase_retry": "only a report that found text left behind can be retried, and "
    "its refusal is reviews.erase's own (_not_writable)",
}
TWO_STOPS = re.compile(r"(?<!\.)\.\.(?!\.)")  # ".." but not an ellipsis "..."


def messages_of(response) -> list[str]:
    """The sentences a 403 shows: the JSON message(s), or the page's message elements."""
    if response.is_json:
        data = response.get_json()
        found = [o["message"] for o in data.get("outcomes", []) if o["status"] == 403]
        return found or [data["message"]]
    if response.mimetype == "text/plain":
        return [response.get_data(as_text=True).strip()]
    return list(page_messages(response.get_data(as_text=True)))


@functools.cache
def page_messages(html: str) -> tuple[str, ...]:
    """The message elements of a page, parsed once per distinct page (most refusals repeat one)."""
    page = BeautifulSoup(html, "html.parser")
    return tuple(
        e.get_text(" ", strip=True)
        for e in page.select(
            ".error-message, [data-field=message], [data-http-status='403'].outcome,"
            " [data-http-status='403'] .outcome"
        )
    )


def check(response, where: str) -> list[str]:
    status = response.status_code  # htmx fragments too: base.html's htmx-config swaps 4xx
    assert status == 403, (where, status, response.get_data(as_text=True)[:300])
    found = messages_of(response)
    assert found, (where, response.get_data(as_text=True)[:500])
    for message in found:
        assert not TWO_STOPS.search(message), (where, message)
        assert message.endswith(".") and not message.endswith(".."), (where, message)
    return found


def world(root) -> Agent:
    agent = seed_corpus(Agent(root))
    agent.crystallize("We always run ruff before every commit.")
    return agent


def post_requests(app, client) -> list[tuple[str, str, dict]]:
    """(endpoint, URL, form) for every POST route, filled as the dashboard's own forms fill them."""
    memories = client.get("/memories.json").get_json()["items"]
    memory = next(m for m in memories if m["store"] == "project")
    items = client.get("/reviews.json").get_json()["items"]
    item = items[0]
    tokens = {"change": "none", "updated_at": memory["updated_at"], "value": "x", "target": "none"}
    review = {
        "seen": item["plan"]["item_fingerprint"],
        "target": item["plan"]["target_fingerprint"],
        "ids": item["id"],
        f"seen-{item['id']}": item["plan"]["item_fingerprint"],
    }
    plan = client.get("/forget/plan/project.json?cat=soft_deleted").get_json()
    purge = {"cat": "soft_deleted", "confirm": plan["name"], "fingerprint": plan["fingerprint"]}
    about = client.get("/forget/about.json").get_json()
    about_me = {
        "store": [s["store"] for s in about["stores"]],
        "confirm": about["phrase"],
        **{f"fingerprint-{s['store']}": s["fingerprint"] for s in about["stores"]},
        **{f"cat-{s['store']}": s["categories"] for s in about["stores"]},
    }
    conv = client.get("/conversations/session-a.json").get_json()["forget"]
    conversation = dict(conv["fields"], confirm=conv["phrase"])
    fill = {
        "store": ["project"],
        "key": ["project"],
        "memory_id": [memory["id"]],
        "item_id": [item["id"]],
        "job_id": [app.extensions["refusals_job"]],
        "token": ["none"],
    }
    forms = {
        "memories.curate": tokens,
        "reviews.decide_one": review,
        "reviews.decide_many": review,
        "reviews.erase": dict(review, confirm="1"),
        "forget.wipe": {"confirm": "yes"},
        "forget.everything": {"confirm": "forget everything"},
        "forget.purge_store": purge,
        "forget.erase_about": about_me,
        "forget.erase_conversation": conversation,
        "forget.retry": {},
        "memories.add": {"key": "hand note", "value": "x"},
        "memories.bulk": {"action": "delete", "rows": f"project:{memory['id']}:none"},
    }
    actions = {
        "memories.curate": ["delete", "edit", "move", "restore"],
        "reviews.decide_one": ["approve", "reject"],
        "reviews.decide_many": ["approve", "reject"],
    }
    out = []
    for rule in app.url_map.iter_rules():
        if "POST" not in rule.methods or rule.endpoint in NEVER_403:
            continue
        values = [{}]
        for arg in rule.arguments:
            choices = actions.get(rule.endpoint) if arg == "action" else fill.get(arg)
            assert choices, f"the walk cannot fill {arg!r} of POST {rule.rule}: add it"
            values = [dict(v, **{arg: c}) for v in values for c in choices]
        for v in values:
            url = rule.build(v, append_unknown=False)[1]
            if rule.endpoint == "forget.forget_memory":
                out += [
                    (rule.endpoint, url, {"mode": "soft"}),
                    (rule.endpoint, url, {"mode": "purge", "confirm": plan["name"]}),
                ]
                continue
            form = forms.get(rule.endpoint)
            assert form is not None, f"the walk has no form for POST {rule.rule}: add one"
            out.append((rule.endpoint, url, form))
    return out


def finished_purge(client) -> str:
    """A purge job that ran to the end (what "retry" needs), made while the store is writable."""
    plan = client.get("/forget/plan/project.json?cat=soft_deleted").get_json()
    job = client.post(
        "/forget/purge/project",
        headers=JSON,
        data={"cat": "soft_deleted", "confirm": plan["name"], "fingerprint": plan["fingerprint"]},
    ).get_json()
    deadline = time.monotonic() + 120  # a busy machine; never reached when all works
    while job["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        job = client.get(f"/forget/jobs/{job['id']}.json").get_json()
    assert job["state"] == "done", job
    return job["id"]


def newer_schema(db):
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_meta SET value = '4' WHERE key = 'version'")
    conn.close()


def damaged(db):
    db.write_bytes(b"these are my notes, not a database\n" * 200)


def refused_writes(world, why: str) -> None:
    """Every POST route, refused because the store cannot be changed (``why``)."""
    app = world.app()
    client = app.test_client()
    app.extensions["refusals_job"] = finished_purge(client)
    if why == "read_only":
        app.config["READ_ONLY"] = True  # as if started with --read-only
    elif why == "newer_schema":
        newer_schema(world.project_db)
    requests = post_requests(app, client)  # filled from the healthy store, before any damage
    if why == "damaged_store":
        damaged(world.project_db)
    seen = {}
    for endpoint, url, form in requests:
        for name, headers in (("json", JSON), ("page", {}), ("htmx", HTMX)):
            r = client.post(url, data=form, headers=headers)
            if why == "damaged_store" and r.status_code == 503:
                continue  # the review queue is in the damaged file: its problem, not a 403
            seen.setdefault(endpoint, []).extend(check(r, f"{why}: POST {url} as {name}"))
    walked = {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if "POST" in rule.methods and rule.endpoint not in NEVER_403
    }
    must = walked if why != "damaged_store" else {e for e in walked if not e.startswith("reviews.")}
    assert must <= set(seen), f"these POST routes gave no 403: {sorted(must - set(seen))}"


def refused_visitors(world) -> None:
    """Every route, refused to a visitor without the token, with a wrong one, under a
    foreign Host, and every POST route sent from another site."""
    app = world.app(AUTH_TOKEN=TOKEN)
    client = app.test_client()
    check(client.post("/login", data={"token": "wrong-but-long-enough-0123"}), "login, wrong token")
    for rule in app.url_map.iter_rules():
        if rule.endpoint in ("login.login", "favicon") or rule.rule.endswith("favicon.svg"):
            continue  # answer without a cookie by design; the login page's own 403 is below
        # (app.css, the login page's stylesheet, is served without a cookie like the icon)
        url = rule.rule.replace("<path:filename>", "htmx-2.0.11.min.js")
        url = re.sub(r"<[^>]+>", "x", url)
        method = "GET" if "GET" in rule.methods else "POST"
        for headers in (JSON, {}, HTMX):
            check(client.open(url, method=method, headers=headers), f"no token: {method} {url}")
            check(
                client.open(url + "?token=wrong", method=method, headers=headers),
                f"wrong token: {method} {url}",
            )
            check(
                client.open(url, method=method, headers=headers, base_url="http://evil.example"),
                f"foreign host: {method} {url}",
            )
    check(client.get("/login?code=used-or-never-issued"), "login with a dead code")
    authed = app.test_client()
    assert authed.post("/login", data={"token": TOKEN}).status_code == 303
    for rule in app.url_map.iter_rules():
        if "POST" in rule.methods:
            url = re.sub(r"<[^>]+>", "x", rule.rule)
            for headers in (JSON, {}, HTMX):
                check(
                    authed.post(url, headers=dict(headers, **{"Sec-Fetch-Site": "cross-site"})),
                    f"cross-site: POST {url}",
                )


def test_every_403_is_one_sentence(tmp_path):
    refused_visitors(world(tmp_path / "visitors"))
    for why in ("read_only", "newer_schema", "damaged_store"):
        refused_writes(world(tmp_path / why), why)
