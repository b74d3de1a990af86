"""Adding a memory by hand, through the dashboard's form, vs. agentao's own save_memory tool.

Each case copies a store built by agentao twice, posts the form on one copy
(as a browser does: the plan is asked for first, then saved with the tokens
it gave) and runs agentao's ``SaveMemoryTool`` with the same arguments on
the other; every row, event and the change counter must be equal, new ids
aside (both clocks are frozen, see ``run_both``).
"""

from __future__ import annotations

from unittest import mock

from agentao.tools.memory import SaveMemoryTool
from agentao_world import Agent, BrowserClient, file_digest
from bs4 import BeautifulSoup
from test_reviews_conformance import LATER, Copy, run_both, snapshot, state

from dashboard import create_app
from dashboard.actions import effects
from dashboard.store import writes

JSON = {"Accept": "application/json"}


def app_for(copy: Copy, **config):
    app = create_app(
        {
            "PROJECT_DIR": copy.project_dir,
            "USER_DB": copy.user_db,
            "TESTING": True,
            "AUTH_TOKEN": False,
            **config,
        }
    )
    app.test_client_class = BrowserClient
    return app


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def save_form(client, **values) -> dict:
    """The hidden fields of the Save form the page offers after "Show what it will write"."""
    # As a browser: the empty form, its "Show what it will write" (a POST that writes nothing),
    # then the Save form that answer carries.
    asks = soup(client.get("/memories/new")).select_one("#new-form")
    assert asks["method"] == "post"
    page = soup(client.post(asks["action"], data=values))
    form = page.select_one("#new-save")
    assert form is not None, page.select_one("#memory-new")
    return {i["name"]: i.get("value", "") for i in form.select("input")}


def through_both(agent: Agent, tmp_path, saves):
    """The same saves through the dashboard's form and through agentao's tool."""

    def ours(copy):
        client, out = app_for(copy).test_client(), []
        for args in saves:
            values = {k: (", ".join(v) if k == "tags" else v) for k, v in args.items() if v is not None}
            r = client.post("/memories/new", data=save_form(client, **values))
            out.append(r.status_code)
        return out

    def theirs(copy, manager):
        tool = SaveMemoryTool(manager)
        return [303 if tool.execute(**args).startswith("Saved memory") else 422 for args in saves]

    out_ours, out_theirs, st_ours, st_theirs = run_both(agent, tmp_path, ours, theirs)
    assert out_ours == out_theirs == [303] * len(saves)
    assert st_ours == st_theirs
    return st_ours


def test_new_memories_in_both_scopes_are_written_as_agentao_writes_them(seeded, tmp_path):
    st = through_both(
        seeded,
        tmp_path,
        [
            dict(key="Test Runner", value="Run the tests with `uv run pytest -q`.", tags=["workflow"]),
            dict(key="user_shell", value="Uses fish, not bash.", tags=[]),  # user_ prefix -> user
            dict(key="Favourite colour", value="Green.", tags=["personal"], scope=None, type="profile"),
            dict(
                key="ci 流水线",
                value="CI runs on GitHub Actions.",
                tags=["ci"],
                scope="project",
                type="decision",
            ),
            # agentao's limit exactly: too long for a query string, so the form POSTs its plan.
            dict(key="runbook", value="step; " * 666 + "done", tags=["ops"]),
        ],
    )
    project = {m["key_normalized"] for m in st["project_db"]["memories"]}
    user = {m["key_normalized"] for m in st["user_db"]["memories"]}
    assert {"test_runner", "ci"} <= project and {"user_shell", "favourite_colour"} <= user


def test_an_existing_key_is_updated_in_place_like_agentao(seeded, tmp_path):
    st = through_both(
        seeded,
        tmp_path,
        [
            dict(key="package manager", value="This project uses pdm now.", tags=["tooling"]),
            dict(key="user language", value="Answer in French.", tags=["user"], scope="user"),
        ],
    )
    rows = {m["key_normalized"]: m for m in st["project_db"]["memories"]}
    assert rows["package_manager"]["content"] == "This project uses pdm now."
    assert not rows["package_manager"]["id"].startswith("new:")  # the same row, updated
    assert st["project_db"]["events"][-1][1] == "update"


def test_the_page_shows_what_an_update_overwrites_before_saving(seeded):
    client = seeded.app().test_client()
    old = next(m for m in seeded.manager.get_all_entries() if m.key_normalized == "package_manager")
    page = soup(client.get("/memories/new", query_string={"key": "Package  MANAGER", "value": "pdm"}))
    plan = page.select_one("#new-plan")
    assert plan["data-action"] == "update"
    assert plan.select_one("[data-field=key_normalized]").get_text() == "package_manager"
    assert old.id in plan.select_one("[data-field=overwrites]").get_text()
    assert plan.select_one("[data-block-effect]") is not None
    twin = client.get(
        "/memories/new.json", query_string={"key": "Package  MANAGER", "value": "pdm"}
    ).get_json()
    assert twin["plan"]["overwrites"]["id"] == old.id and twin["plan"]["store"] == "project"
    assert twin["effect"]["after"].count("pdm") == 1


def test_a_secret_is_refused_on_both_sides_and_nothing_is_written(seeded, tmp_path):
    secret = dict(key="deploy token", value="token: ghp_" + "a" * 36, tags=["ops"])
    ours, theirs = Copy(seeded, tmp_path / "ours"), Copy(seeded, tmp_path / "theirs")
    before, original = file_digest(ours.project_db, ours.user_db), snapshot(seeded)
    client = app_for(ours).test_client()
    page = soup(client.get("/memories/new", query_string=secret))
    assert page.select_one("[data-field=new-refusal]")["data-error-type"] == "SensitiveMemoryError"
    assert page.select_one("#new-save") is None  # no Save button for a refused save
    r = client.post("/memories/new", data=secret, headers=JSON)
    assert r.status_code == 422 and r.get_json()["error_type"] == "SensitiveMemoryError"
    html = client.post("/memories/new", data=secret)
    assert html.status_code == 422
    assert "sensitive credentials" in soup(html).select_one("[data-outcome=refused]").get_text()
    said = SaveMemoryTool(theirs.manager()).execute(**secret)
    assert "sensitive credentials" in said
    # The dashboard's copy is byte for byte as it was; agentao's (which its open may
    # reformat) holds the same rows, events and counter as an untouched copy.
    assert file_digest(ours.project_db, ours.user_db) == before
    assert state(theirs, original) == state(Copy(seeded, tmp_path / "untouched"), original)


def test_too_long_and_empty_values_are_refused_with_agentaos_words(seeded):
    client = seeded.app().test_client()
    r = client.post("/memories/new", data={"key": "notes", "value": "x" * 4001}, headers=JSON)
    assert (r.status_code, r.get_json()["error_type"]) == (422, "ValueError")
    assert "exceeds max length (4001 > 4000)" in r.get_json()["message"]
    r = client.post("/memories/new", data={"key": "!!!", "value": "x"}, headers=JSON)
    assert r.status_code == 422 and "empty after normalization" in r.get_json()["message"]


def test_a_row_the_agent_changed_after_the_plan_is_not_overwritten(seeded):
    client = seeded.app().test_client()
    form = save_form(client, key="database", value="MySQL.")
    seeded.save("database", "PostgreSQL 17 now.", ["infra"])  # the agent, meanwhile
    r = client.post("/memories/new", data=form, headers=JSON)
    assert r.status_code == 409 and r.get_json()["outcome"] == "conflict"
    assert seeded.manager.search("database")[0].content == "PostgreSQL 17 now."
    # Values other than the ones planned are refused too: the plan shown was for those.
    form = save_form(client, key="brand_new", value="One.")
    r = client.post("/memories/new", data=dict(form, value="Two."), headers=JSON)
    assert r.status_code == 409 and not seeded.manager.search("brand_new")


def test_htmx_and_json_paths(seeded):
    client = seeded.app().test_client()
    form = save_form(client, key="lint", value="Run ruff before committing.", tags="workflow")
    r = client.post("/memories/new", data=form, headers={"HX-Request": "true"})
    assert r.status_code == 200 and "/memories/project/" in r.headers["HX-Redirect"]
    shown = soup(client.get(r.headers["HX-Redirect"]))
    assert shown.select_one("[data-field=done]")["data-done"] == "added"
    assert shown.select_one("#status [data-said]").get_text() == "Saved 'lint'."
    # The effect the page showed is the block the save produced (one clock for both:
    # see test_restore's twin of this check).
    with (
        mock.patch.object(writes, "now", lambda: LATER),
        mock.patch.object(effects, "agentao_now", lambda: LATER),
    ):
        form = save_form(client, key="lint", value="Run ruff and mypy.", tags="workflow")
        r = client.post("/memories/new", data=form, headers=JSON)
    body = r.get_json()
    assert (r.status_code, body["event"], body["effect_as_shown"]) == (200, "update", True)
    # A failure answers inside the fragment, with its status (htmx swaps a 422: base.html).
    r = client.post("/memories/new", data={"key": "k", "value": "  "}, headers={"HX-Request": "true"})
    assert r.status_code == 422 and soup(r).select_one("#memory-new [data-outcome=refused]")


def test_read_only_stores_refuse_and_write_nothing(seeded):
    before = file_digest(seeded.project_db, seeded.user_db)
    client = seeded.app(READ_ONLY=True).test_client()
    r = client.post("/memories/new", data={"key": "k", "value": "v"}, headers=JSON)
    assert r.status_code == 403 and "cannot be changed" in r.get_json()["message"]
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_without_a_user_store_a_user_save_lands_in_the_project_store(tmp_path):
    agent = Agent(tmp_path / "a", with_user_store=False)
    agent.save("database", "SQLite.", ["infra"])
    st = through_both(
        agent, tmp_path, [dict(key="user_editor", value="Helix.", tags=["profile"], scope="user")]
    )
    assert {m["scope"] for m in st["project_db"]["memories"]} == {"project"}


def test_no_store_file_yet_is_said_before_saving_and_nothing_is_created(agent):
    agent.project_db.unlink()
    client = agent.app().test_client()
    page = soup(client.get("/memories/new", query_string={"key": "k", "value": "v"}))
    assert "no project store file yet" in page.select_one("[data-field=new-problem]").get_text()
    assert page.select_one("#new-save") is None
    r = client.post("/memories/new", data={"key": "k", "value": "v"}, headers=JSON)
    assert r.status_code == 403 and not agent.project_db.exists()
