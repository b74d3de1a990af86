"""Every JSON twin's fields are documented in docs/schemas/ (JSON Schema, draft 2020-12),
and every twin answers what its schema says, on the demo data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from dashboard import create_app
from dashboard.demo import build_demo

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Each twin's answers on the demo (several per twin where the shape varies)."""
    project_dir, user_db = build_demo(tmp_path_factory.mktemp("demo"))
    others = sorted(
        p
        for p in project_dir.parent.iterdir()
        if p.is_dir() and p not in (project_dir, user_db.parent.parent) and (p / ".agentao").is_dir()
    )
    client = create_app(
        {"PROJECT_DIR": [project_dir, *others], "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False}
    ).test_client()
    out: dict[str, list] = {}

    def get(name, url, **query):
        r = client.get(url, query_string=query)
        assert r.status_code == 200, (url, r.get_data(as_text=True)[:300])
        out.setdefault(name, []).append(r.get_json())
        return out[name][-1]

    get("overview", "/overview.json")
    get("about", "/about.json")
    first = get("memories", "/memories.json")["items"][0]
    gone = get("memories", "/memories.json", deleted="1", q="api")["items"][0]
    for m in (first, gone):
        get("memory", f"/memories/{m['store']}/{m['id']}.json")
    pending = get("reviews", "/reviews.json")["items"][0]
    for status in ("approved", "rejected", "all"):
        get("reviews", "/reviews.json", status=status)
    get("review_effect", "/reviews/effect.json", id=pending["id"])
    get("review_detail", "/reviews/detail.json", id=pending["id"])
    get("memory_new", "/memories/new.json")
    get("memory_new", "/memories/new.json", key="Build tool", value="make", tags="workflow")
    get("memory_new", "/memories/new.json", key=first["title"], value="replaced", scope=first["scope"])
    get("memory_new", "/memories/new.json", key="token", value="password=hunter22hunter22")
    edited = get(
        "review_effect",
        "/reviews/effect.json",
        id=pending["id"],
        value="Edited on the card.",
        tags="a, b",
        scope="user",
        type="note",
    )
    assert edited["plan"]["edits"]["tags"] == ["a", "b"]
    get("preview", "/preview.json")
    asked = get(
        "preview",
        "/preview.json",
        q="which package manager do we use for tests",
        messages="see pyproject.toml",
    )
    get("preview", "/preview.json", q="deploy 部署", hide=asked["stable_entries"][0]["id"])
    get("preview", "/preview.json", q="tests", candidates_page=2, per_page=1)
    posted = client.post(
        "/preview.json",
        json={
            "q": "tests",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "see\ntests/conftest.py"}]}],
        },
        headers={"Sec-Fetch-Site": "same-origin"},
    )
    assert posted.status_code == 200, posted.get_data(as_text=True)[:300]
    out["preview"].append(posted.get_json())
    get("summaries", "/summaries.json")
    for c in get("conversations", "/conversations.json")["conversations"][:3]:
        get("conversation", c["url"] + ".json")
    get("projects", "/projects.json")
    get("export", "/export.json")
    get("forget", "/forget.json")
    get("forget_residue", "/forget/residue/project.json")
    get("forget_plan", "/forget/plan/project.json", cat=["soft_deleted", "summaries"])
    get("forget_memory", f"/forget/memory/{first['store']}/{first['id']}.json")
    get("forget_about", "/forget/about.json")
    get("findings", "/findings.json")
    get("check_new", "/checks/new.json", message="deploy 部署", must_recall=["deploy"])
    saved = client.post(
        "/checks",
        json={
            "name": "deploy",
            "message": "deploy 部署",
            "must_recall": ["deploy"],
            "must_not_contain": ["hunter2"],
        },
        headers={"Sec-Fetch-Site": "same-origin", "Accept": "application/json"},
    )
    assert saved.status_code == 201, saved.get_data(as_text=True)[:300]
    get("checks", "/checks.json")
    get("activity", "/activity.json")
    get("activity", "/activity.json", store="user", page=1)
    get("activity", "/activity.json", changed="2000-01-01")
    # Bulk actions (last: Apply writes): dry runs, then Apply done, conflict and refused.
    picks = [f"{m['store']}:{m['id']}" for m in out["memories"][0]["items"][:3]]

    def plan(**form):
        r = client.post("/memories/bulk/plan.json", data=form, headers={"Sec-Fetch-Site": "same-origin"})
        assert r.status_code == 200, r.get_data(as_text=True)[:300]
        out.setdefault("bulk_plan", []).append(r.get_json())
        return r.get_json()

    plan(action="purge", ids=picks)
    plan(action="move-user", all="1")
    tagging = plan(action="tag", add_tag="checked", ids=picks)
    form = {
        "action": "tag",
        "add_tag": "checked",
        "effect": tagging["effect"]["token"],
        "rows": [r["token"] for r in tagging["rows"] if r["changes"]],
    }
    for status in (200, 409):
        r = client.post("/memories/bulk.json", data=form, headers={"Sec-Fetch-Site": "same-origin"})
        assert r.status_code == status, r.get_data(as_text=True)[:300]
        out.setdefault("bulk", []).append(r.get_json())
    r = client.post(
        "/memories/bulk.json", data={"action": "delete"}, headers={"Sec-Fetch-Site": "same-origin"}
    )
    assert r.status_code == 400
    out["bulk"].append(r.get_json())
    return out


def _schemas():
    return {
        p.name.removesuffix(".schema.json"): json.loads(p.read_text("utf-8"))
        for p in sorted(SCHEMAS.glob("*.schema.json"))
    }


def test_every_twin_has_a_schema_and_every_schema_a_twin(twins):
    assert set(_schemas()) == set(twins)


@pytest.mark.parametrize("name", sorted(_schemas()))
def test_twin_matches_its_schema(twins, name):
    schema = _schemas()[name]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # Documented: every top-level field says what it is, and no field goes undocumented.
    assert schema["additionalProperties"] is False
    assert all("description" in field for field in schema["properties"].values()), name
    validator = Draft202012Validator(schema)
    for answer in twins[name]:
        errors = [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(answer)
        ]
        assert not errors, errors[:5]
