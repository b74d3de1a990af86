"""One store damaged, the other keeps working: every page, twin and action (issue 18, defect 7).

The audit walks the app's ``url_map``, so a route added later is visited too
(or the walk fails, naming the argument it cannot fill).  Each store is
damaged in each way a user meets — emptied, truncated, overwritten with
random bytes, made unreadable — and then:

* a page about the damaged store answers 503 with that store's problem, in
  the words of the overview and the banners;
* every other page, twin and download answers, with the damaged store named
  in the banner, and the healthy store's rows in it;
* the actions a user of the healthy store takes (edit, move, delete,
  approve, reject, forget, purge) work, or are refused with the damaged
  store's problem when they need it; the damaged file is never written.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from agentao_world import Agent, file_digest, seed_corpus
from bs4 import BeautifulSoup
from flask import url_for

JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true"}
NOBODY = 65534
STORES = ("project", "user")


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def _random_bytes(db: Path) -> None:
    db.write_bytes(random.Random(18).randbytes(db.stat().st_size))


def _truncate(db: Path) -> None:
    with open(db, "r+b") as fh:
        fh.truncate(db.stat().st_size // 3)


# Not a zero-byte file: agentao opens one as an empty store, so the dashboard shows it as a
# store with nothing yet, like a missing one (tests/test_faults.py), not as damage.
DAMAGES = {"truncated": _truncate, "random_bytes": _random_bytes, "unreadable": lambda db: os.chmod(db, 0)}
# What the overview calls each damage (so the test knows the damage is the one it means).
KINDS = {"truncated": "corrupt", "random_bytes": "not_a_database", "unreadable": "unreadable"}


@contextlib.contextmanager
def as_a_user(agent: Agent, how: str):
    """Requests inside the block meet the damage as a user would.

    root reads a file whatever its mode, and the tests run as root in CI: an
    unreadable store is then met with the requests made as ``nobody`` (the
    whole world is handed to that user first).
    """
    if how != "unreadable" or os.geteuid() != 0:
        yield
        return
    root = agent.project_dir.parent
    for p in [root, *root.rglob("*")]:
        os.chown(p, NOBODY, NOBODY, follow_symlinks=False)
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def world():
    # Not tmp_path: its parents are private to root, and the unreadable case runs as nobody.
    root = Path(tempfile.mkdtemp(prefix="other-store-"))
    root.chmod(0o755)
    agent = seed_corpus(Agent(root))
    agent.save("shell", "Uses fish as the login shell.", ["profile"], scope="user")
    agent.crystallize("We always run ruff before every commit.")
    agent.crystallize("We must always sign release tags.")
    yield agent
    shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------- the walk
# What each path argument of a GET route is, for the store a URL is about.
def _path_values(ids: dict, store: str, made: dict) -> dict:
    return {
        "store": store,
        "key": store,
        "memory_id": ids[store][0],
        "table": "memories",
        "row_id": ids[store][0],
        "job_id": made["job"],
        "filename": "app.css",
    }


FILLED = {"store", "key", "memory_id", "table", "row_id", "job_id", "filename"}


def _queries(endpoint: str, items: list[dict], made: dict) -> list[dict]:
    """The query strings a route needs to do its real work (one URL per entry)."""
    per_item = [{"id": i["id"]} for i in items]
    return {
        "findings.check": [{"rule": "secret.api_key", "field": "content"}],
        "forget.plan": [{"cat": "everything"}],
        "memories.edit_effect": [{"value": "An edited value."}],
        "reviews.effect": per_item,
        "reviews.detail": per_item,
        "reviews.erase_confirm": [{"ids": i["id"]} for i in items],
        "reviews.erased": [{"report": made["report"]}],
    }.get(endpoint, [{}])


def get_urls(app, ids: dict, items: list[dict], made: dict) -> list[tuple[str | None, str]]:
    """(the store the URL is about, or None for both; the URL) for every GET route."""
    out = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        given = set(rule.defaults or {})
        unknown = set(rule.arguments) - given - FILLED
        assert not unknown, f"the audit cannot fill {sorted(unknown)} of {rule.rule}: add them"
        # A conversation's page is named by the conversation, not by a store.
        keyed = bool({"store", "key"} & set(rule.arguments)) and rule.endpoint != "conversations.detail"
        # The review queue and the conversations are the project file's, whatever the URL says.
        subjects = (
            STORES
            if keyed
            else ["project" if rule.endpoint.startswith(("reviews.", "conversations.")) else None]
        )
        for subject in subjects:
            values = _path_values(ids, subject or "project", made)
            args = {a: values[a] for a in rule.arguments if a not in given}
            if rule.endpoint == "conversations.detail":
                args["key"] = made["conversation"]
            for query in _queries(rule.endpoint, items, made):
                with app.test_request_context():
                    url = url_for(rule.endpoint, **args, **(rule.defaults or {}), **query)
                out.append((subject, url))
    return sorted(set(out), key=lambda x: (str(x[0]), x[1]))


def message_of(response) -> str:
    if response.is_json:
        return response.get_json()["message"]
    return soup(response).select_one(".error-message").text


def visit(client, subject, url, broken: str, problem: dict, headers=None):
    r = client.get(url, headers=headers)
    body = r.get_data(as_text=True)
    assert r.status_code != 500 and "Traceback" not in body, url
    if subject == broken:
        # A page about the damaged store: its problem, as the overview says it.
        assert r.status_code == 503, (url, r.status_code)
        assert message_of(r) == problem["message"], url
        return r
    assert r.status_code < 400, (url, r.status_code, body[:400])
    if r.status_code >= 300:
        return r  # "/" and the favicon redirect
    if r.is_json:
        r.get_json()
    elif r.mimetype == "text/html" and "<html" in body:
        banner = soup(r).select_one(f'#banners [data-store="{broken}"]')
        assert banner is not None and banner["data-problem"] == problem["kind"], url
    elif url.startswith("/export/"):
        # A download names the store it could not read (Markdown escapes its punctuation).
        assert problem["message"] in body.replace("\\", ""), url
    return r


def forms_of(page) -> dict:
    return {
        f["id"]: {i["name"]: i.get("value", "") for i in f.select("input")}
        for f in page.select("#memory-actions form")
    }


def wait_for(client, job: dict) -> dict:
    deadline = time.monotonic() + 120  # a busy machine; never reached when all works
    while job["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        job = client.get(f"/forget/jobs/{job['id']}.json").get_json()
    return job


# ---------------------------------------------------------------------------- the actions
@dataclass
class Scene:
    """One audit: the app's client, which store is damaged, and what it was seen holding."""

    client: object
    healthy: str
    broken: str
    problem: dict  # the damaged store's problem as the overview gives it, and its path
    live: dict  # store -> live memory ids, before the damage
    items: list  # the pending review items, before the damage

    def tokens(self, item):
        return {"seen": item["plan"]["item_fingerprint"], "target": item["plan"]["target_fingerprint"]}


def curate_the_healthy_store(sc: Scene) -> None:
    """Its memory page and offers, then an edit, a move towards the damaged store
    (refused, as JSON and in place with htmx) and a delete."""
    client, healthy, problem = sc.client, sc.healthy, sc.problem
    listed = client.get("/memories.json").get_json()
    assert {m["store"] for m in listed["items"]} == {healthy}
    assert [p["store"] for p in listed["problems"]] == [sc.broken]
    memory_id = sc.live[healthy][0]
    page = soup(client.get(f"/memories/{healthy}/{memory_id}"))
    shown = client.get(f"/memories/{healthy}/{memory_id}.json").get_json()["memory"]
    assert page.select_one('[data-field="content"]').text == shown["content"]
    assert problem["message"] in page.select_one('[data-field="move-problem"]').text
    forms = forms_of(page)
    assert "target" not in forms["move-form"]  # no move button towards a damaged store

    r = client.post(
        f"/memories/{healthy}/{memory_id}/edit",
        data=dict(forms["edit-form"], value="Edited while the other file is broken."),
    )
    assert r.status_code == 303, r.get_data(as_text=True)
    after = client.get(f"/memories/{healthy}/{memory_id}.json").get_json()["memory"]
    assert after["content"] == "Edited while the other file is broken."
    forms = forms_of(soup(client.get(f"/memories/{healthy}/{memory_id}")))
    r = client.post(
        f"/memories/{healthy}/{memory_id}/move", data=dict(forms["edit-form"], target="none"), headers=JSON
    )
    assert r.status_code in (403, 409, 503) and problem["message"] in r.get_json()["message"]
    fragment = soup(
        client.post(
            f"/memories/{healthy}/{memory_id}/move",
            headers=HTMX,
            data=dict(forms["edit-form"], target="none"),
        )
    )
    assert problem["message"] in fragment.select_one("[data-outcome]").text
    assert problem["message"] in fragment.select_one('[data-field="move-problem"]').text
    assert fragment.select_one("#edit-form") is not None
    assert client.get(f"/memories/{healthy}/{memory_id}.json").get_json()["memory"] == after

    other = sc.live[healthy][1]
    forms = forms_of(soup(client.get(f"/memories/{healthy}/{other}")))
    assert client.post(f"/memories/{healthy}/{other}/delete", data=forms["delete-form"]).status_code == 303
    assert client.get(f"/memories/{healthy}/{other}.json").get_json()["memory"]["deleted_at"]


def decide_the_queue(sc: Scene) -> None:
    """The review queue: refused with the reason when its file is damaged; otherwise
    usable, with only the cards that would write into the damaged store blocked."""
    client, problem = sc.client, sc.problem
    if sc.broken == "project":  # the queue itself is in the damaged file
        for item in sc.items:
            r = client.post(f"/reviews/{item['id']}/approve", data=sc.tokens(item), headers=JSON)
            # Every write to a store that cannot be changed is one 403 sentence with its reason.
            assert r.status_code == 403, r.get_json()
            assert problem["message"].rstrip(".") in str(r.get_json()), r.get_json()
        return
    plans = {i["id"]: i["plan"] for i in client.get("/reviews.json").get_json()["items"]}
    to_user = [i for i in sc.items if i["plan"]["store"] == "user"]
    to_project = [i for i in sc.items if i["plan"]["store"] == "project"]
    assert to_user and len(to_project) >= 2
    for item in to_user:
        assert problem["message"] in plans[item["id"]]["blocked"]
        r = client.post(f"/reviews/{item['id']}/approve", data=sc.tokens(item), headers=JSON)
        assert r.status_code == 403
        assert problem["message"] in r.get_json()["outcomes"][0]["message"]
        card = soup(
            client.post(f"/reviews/{item['id']}/approve", data=sc.tokens(item), headers=HTMX)
        ).select_one(f"#review-{item['id']}")
        assert card["data-http-status"] == "403" and card["data-status"] == "pending"
        assert problem["message"] in card.select_one('[data-consequence="blocked"]').text
        r = client.post(f"/reviews/{item['id']}/reject", data=sc.tokens(item), headers=JSON)
        assert r.status_code == 200, r.get_json()
    first, *rest = to_project
    r = client.post(
        "/reviews/erase",
        headers=JSON,
        data={"ids": first["id"], "confirm": "1", f"seen-{first['id']}": sc.tokens(first)["seen"]},
    )
    assert r.status_code == 200 and r.get_json()["ok"], r.get_json()
    data = {"ids": [i["id"] for i in rest]}
    for i in rest:
        data.update({f"seen-{i['id']}": sc.tokens(i)["seen"], f"target-{i['id']}": sc.tokens(i)["target"]})
    assert client.post("/reviews/approve", data=data).status_code == 303
    assert client.get("/reviews.json").get_json()["counts"]["pending"] == 0


def forget_in_the_healthy_store(sc: Scene) -> None:
    """A soft forget, a purge of the deleted rows and a one-memory purge work; the
    actions over both files (wipe, forget everything) name the damaged one."""
    client, healthy, problem = sc.client, sc.healthy, sc.problem
    r = client.post(f"/forget/memory/{healthy}/{sc.live[healthy][2]}", data={"mode": "soft"}, headers=JSON)
    assert r.status_code == 200 and r.get_json()["soft_deleted"]
    plan = client.get(f"/forget/plan/{healthy}.json?cat=soft_deleted").get_json()
    assert plan["rows"]
    r = client.post(
        f"/forget/purge/{healthy}",
        headers=JSON,
        data={"cat": "soft_deleted", "confirm": plan["name"], "fingerprint": plan["fingerprint"]},
    )
    assert r.status_code in (200, 202), r.get_data(as_text=True)
    done = wait_for(client, r.get_json())
    assert done["state"] == "done" and not done["error"], done
    memory_id = sc.live[healthy][0]
    asked = client.get(f"/forget/memory/{healthy}/{memory_id}.json").get_json()["confirm"]
    r = client.post(
        f"/forget/memory/{healthy}/{memory_id}",
        headers=JSON,
        data={"mode": "purge", "confirm": asked["phrase"]},
    )
    assert r.status_code in (200, 202), r.get_data(as_text=True)
    done = wait_for(client, r.get_json())
    assert done["state"] == "done" and not done["error"], done
    assert client.get(f"/memories/{healthy}/{memory_id}.json").status_code == 404
    for url, data in (
        ("/forget/wipe", {"confirm": "yes"}),
        ("/forget/everything", {"confirm": "forget everything"}),
    ):
        r = client.post(url, data=data, headers=JSON)
        assert r.status_code == 403 and problem["message"] in r.get_json()["message"], url
    assert client.post("/projects/select", data={"project": "0"}).status_code == 303


# ---------------------------------------------------------------------------- the audit
@pytest.mark.parametrize("how", sorted(DAMAGES))
@pytest.mark.parametrize("broken", STORES)
def test_every_page_and_action_of_the_other_store_works(world, broken, how):
    healthy = "user" if broken == "project" else "project"
    app = world.app()
    client = app.test_client()
    live = {s: [m["id"] for m in client.get(f"/memories.json?scope={s}").get_json()["items"]] for s in STORES}
    items = client.get("/reviews.json").get_json()["items"]
    # What the walk visits needs to exist before the damage: a forget job, an erase report.
    job = client.post(
        f"/forget/memory/{broken}/{live[broken][-1]}", data={"mode": "soft"}, headers=JSON
    ).get_json()
    gone = next(i for i in items if i["plan"]["store"] == "project")
    erased = client.post(
        "/reviews/erase",
        headers=JSON,
        data={"ids": gone["id"], "confirm": "1", f"seen-{gone['id']}": gone["plan"]["item_fingerprint"]},
    )
    conversations = client.get("/conversations.json").get_json()["conversations"]
    made = {"job": job["id"], "report": erased.get_json()["token"], "conversation": conversations[0]["key"]}
    items = client.get("/reviews.json").get_json()["items"]
    db = {"project": world.project_db, "user": world.user_db}

    DAMAGES[how](db[broken])
    before = file_digest(db[broken])
    with as_a_user(world, how):
        stores = {s["store"]: s for s in client.get("/overview.json").get_json()["stores"]}
        problem = dict(stores[broken]["problem"], path=str(db[broken]))
        assert problem["kind"] == KINDS[how] and stores[healthy]["problem"] is None
        for subject, url in get_urls(app, live, items, made):
            visit(client, subject, url, broken, problem)
            visit(client, subject, url, broken, problem, HTMX)  # the fragment, where there is one
        scene = Scene(client, healthy, broken, problem, live, items)
        curate_the_healthy_store(scene)
        decide_the_queue(scene)
        forget_in_the_healthy_store(scene)
    assert file_digest(db[broken]) == before
