"""Memory checks (#33): saved questions run through the preview engine, on stores agentao wrote."""

from __future__ import annotations

import json

import pytest
from agentao_world import Agent, agentao_blocks

from dashboard.actions import checks as ck
from dashboard.cli import main


def _post(client, **check):
    return client.post("/checks", json=check, headers={"Accept": "application/json"})


def _results(client):
    return {c["name"]: c for c in client.get("/checks.json").get_json()["checks"]}


@pytest.fixture
def ticking(monkeypatch):
    """agentao's save clock, one second a save (an hour ago): newer notes push older ones out
    of the stable block's three incidental places, whatever second the test runs in."""
    from datetime import datetime, timedelta, timezone

    import agentao.memory.manager as agentao_manager
    import agentao.memory.storage as agentao_storage

    clock = {"t": datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(hours=1)}

    def tick():
        clock["t"] += timedelta(seconds=1)
        return clock["t"].strftime("%Y-%m-%dT%H:%M:%S")

    monkeypatch.setattr(agentao_manager, "_now", tick)
    monkeypatch.setattr(agentao_storage, "_now_iso", lambda: clock["t"].strftime("%Y-%m-%dT%H:%M:%S"))


@pytest.fixture
def phone(agent):
    agent.save("package manager", "This project uses uv for every install.", ["tooling"], type="project_fact")
    agent.save("release process", "Tag on main, CI builds the wheel.", ["releases"], type="note")
    return agent


def test_a_check_passes_then_fails_when_agentao_deletes_the_memory(phone):
    client = phone.app().test_client()
    r = _post(
        client, name="tooling", message="which package manager do we use?", must_recall=["package_manager"]
    )
    assert r.status_code == 201, r.get_data(as_text=True)
    assert r.get_json()["check"]["passed"] is True
    saved = json.loads((phone.project_dir / ".agentao" / "memory-checks.json").read_text())
    assert saved["checks"][0]["last_pass"]["stable_block"] or saved["checks"][0]["last_pass"]["context_block"]

    target = next(
        m for m in phone.manager.project_store.list_memories() if m.key_normalized == "package_manager"
    )
    phone.manager.delete(target.id)  # agentao's own API

    got = _results(client)["tooling"]
    assert got["passed"] is False
    assert got["reasons"][0]["code"] == "no_such_memory"
    assert "package_manager" in got["why"][0]
    removed = [line for line in got["diff"]["stable"] + got["diff"]["context"] if line.startswith("-")]
    assert any("uv for every install" in line for line in removed)
    page = client.get("/checks").get_data(as_text=True)
    assert 'data-passed="0"' in page and "uv for every install" in page


def test_a_forbidden_text_the_message_recalls_fails_the_check(phone):
    client = phone.app().test_client()
    assert _post(
        client, name="my phone", message="how do I reach the release manager?", must_not_contain=["555 0199"]
    ).get_json()["check"]["passed"]
    phone.save("release manager", "Call the release manager Ann on 555 0199.", ["workflow"])
    got = _results(client)["my phone"]
    assert not got["passed"]
    assert {r["code"] for r in got["reasons"]} & {"text_in_context", "text_in_stable"}
    assert got["reasons"][0]["memory"] == "release_manager"


def test_the_command_line_says_the_same(phone, capsys):
    client = phone.app().test_client()
    _post(client, name="tooling", message="which package manager do we use?", must_recall=["package_manager"])
    args = ["check", "--project", str(phone.project_dir), "--user-db", str(phone.user_db)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "tooling" in out and "pass" in out
    phone.manager.delete(
        next(
            m for m in phone.manager.project_store.list_memories() if m.key_normalized == "package_manager"
        ).id
    )
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "package_manager" in out
    assert main(args + ["--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["failed"] == 1 and not _results(client)["tooling"]["passed"]


def test_the_builtin_check_flags_a_secret_in_the_always_on_block(agent):
    client = agent.app().test_client()
    assert all(c["passed"] for c in client.get("/checks.json").get_json()["checks"])
    # A token format agentao's guard lets through, saved in user scope: in every prompt.
    token = "npm_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    agent.save("publish", "Publish with " + token + " from the laptop.", ["user"], scope="user")
    assert "npm_" in agent_stable(agent)
    (builtin,) = [c for c in client.get("/checks.json").get_json()["checks"] if c["builtin"]]
    assert not builtin["passed"]
    assert builtin["reasons"][0]["memory"] == "publish"
    assert builtin["reasons"][0]["category"] == "secret"
    assert token not in json.dumps(builtin["reasons"])  # the words show it masked


def agent_stable(agent):
    from datetime import datetime, timezone

    return agentao_blocks(agent, "", now=datetime.now(timezone.utc))[0]


@pytest.mark.parametrize("cjk", ["on", "off"])
def test_chinese_messages_agree_with_agentao(tmp_path, cjk, monkeypatch, ticking):
    """A Chinese message: with jieba the check passes, latin-only it fails, as agentao recalls."""
    from datetime import datetime, timezone

    import agentao.memory.retriever as agentao_retriever

    agent = Agent(tmp_path)
    agent.save("部署 deploy", "部署脚本在 scripts/deploy.sh。", ["运维"], type="note")
    for n in range(3):  # newer notes take the stable block's incidental places
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    client = agent.app(CJK=cjk).test_client()
    _post(client, name="部署脚本", message="脚本", must_recall=["部署 deploy"])
    got = _results(client)["部署脚本"]
    if cjk == "off":

        def missing():
            raise ImportError("jieba hidden for this test")

        monkeypatch.setattr(agentao_retriever, "_import_jieba", missing)
    stable, context = agentao_blocks(agent, "脚本", now=datetime.now(timezone.utc))
    assert (got["stable_block"], got["context_block"]) == (stable, context)
    assert got["passed"] is (cjk == "on")
    if cjk == "off":
        assert got["reasons"] == [
            {"code": "not_recalled", "memory": "部署 deploy", "text_words": got["why"][0]}
        ]


def test_bad_checks_change_nothing(phone):
    client = phone.app().test_client()
    path = phone.project_dir / ".agentao" / "memory-checks.json"
    assert _post(client, name="x", message="hi").status_code == 400
    assert _post(client, name="", message="hi", must_recall=["a"]).status_code == 400
    assert not path.exists()
    client.get("/checks")
    client.get("/checks.json")
    assert not path.exists()  # browsing writes nothing
    path.write_text("{not json")
    data = client.get("/checks.json").get_json()
    assert "not valid JSON" in data["problems"]["project"]
    assert path.read_text() == "{not json"


def test_delete_and_the_make_a_check_form(phone):
    client = phone.app().test_client()
    cid = _post(client, name="t", message="uv?", must_recall=["package_manager"]).get_json()["check"]["id"]
    page = client.get("/checks/new?message=hello&must_not_contain=555+0199").get_data(as_text=True)
    assert "hello" in page and "555 0199" in page
    assert client.post(f"/checks/{cid}/delete", data={"store": "project"}).status_code == 303
    assert "t" not in _results(client)
    assert client.post(f"/checks/{cid}/delete", data={"store": "project"}).status_code == 404


def test_a_dashboard_write_says_which_checks_it_changed(phone):
    client = phone.app().test_client()
    _post(client, name="tooling", message="which package manager do we use?", must_recall=["package_manager"])
    target = next(
        m for m in phone.manager.project_store.list_memories() if m.key_normalized == "package_manager"
    )
    r = client.post(
        f"/memories/project/{target.id}/delete",
        headers={"Accept": "application/json"},
        data={"updated_at": target.updated_at},
    )
    assert r.status_code < 400, r.get_data(as_text=True)[:300]
    moved = json.loads(r.headers["X-Checks-Changed"])
    assert [(m["name"], m["passed"]) for m in moved] == [("tooling", False)]
    assert moved[0]["text"] == "Check “tooling” now fails."
    saved = json.loads((phone.project_dir / ".agentao" / "memory-checks.json").read_text())
    assert saved["checks"][0]["last_result"] == "fail"


def test_the_checks_file_matches_its_schema(phone):
    from pathlib import Path

    from jsonschema import Draft202012Validator

    client = phone.app().test_client()
    _post(
        client,
        name="tooling",
        message="which package manager?",
        must_recall=["package_manager"],
        messages=["see pyproject.toml"],
        must_not_contain=["hunter2"],
    )
    schema = json.loads(
        (Path(__file__).parent.parent / "docs/schemas/files/memory-checks.schema.json").read_text()
    )
    data = json.loads((phone.project_dir / ".agentao" / "memory-checks.json").read_text())
    assert not list(Draft202012Validator(schema).iter_errors(data))
    assert ck.load(phone.project_dir / ".agentao" / "memory-checks.json")[0]["messages"] == [
        "see pyproject.toml"
    ]


def test_make_a_check_from_the_preview_and_from_the_forget_page(agent, ticking):
    from urllib.parse import parse_qs, urlsplit

    from bs4 import BeautifulSoup

    phone = agent
    agent.save("release process", "Tag on main, CI builds the wheel.", ["releases"], type="note")
    for n in range(3):  # newer: they take the stable block's incidental places
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    agent.save("package manager", "This project uses uv for every install.", ["tooling"], type="project_fact")
    client = phone.app().test_client()
    q = "how does the release process work"
    recalled = [
        c["title"]
        for c in client.get("/preview.json", query_string={"q": q}).get_json()["candidates"]
        if c["mark"] == "in_block"
    ]
    assert recalled == ["release process"]
    page = BeautifulSoup(client.get("/preview", query_string={"q": q}).get_data(as_text=True), "html.parser")
    query = parse_qs(urlsplit(page.select_one("a#make-check")["href"]).query)
    assert query["message"] == [q] and query["must_recall"] == ["release_process"]
    target = next(
        m for m in phone.manager.project_store.list_memories() if m.key_normalized == "package_manager"
    )
    page = BeautifulSoup(
        client.get(f"/forget/memory/project/{target.id}").get_data(as_text=True), "html.parser"
    )
    query = parse_qs(urlsplit(page.select_one("a#make-check")["href"]).query)
    assert query["must_not_recall"] == ["package_manager"]
    assert query["must_not_contain"] == ["This project uses uv for every install."]
    form = client.get(page.select_one("a#make-check")["href"]).get_data(as_text=True)
    assert "This project uses uv for every install." in form


def test_saving_a_check_follows_the_post_rules(phone):
    path = phone.project_dir / ".agentao" / "memory-checks.json"
    check = {"name": "t", "message": "uv?", "must_recall": ["package_manager"]}
    client = phone.app().test_client()
    r = client.post(
        "/checks", json=check, headers={"Sec-Fetch-Site": "cross-site", "Accept": "application/json"}
    )
    assert r.status_code == 403 and not path.exists()
    ro = phone.app(READ_ONLY=True).test_client()
    assert ro.post("/checks", json=check, headers={"Accept": "application/json"}).status_code == 403
    assert not path.exists()
    guarded = phone.app(AUTH_TOKEN="a-long-enough-token-1234").test_client()
    assert guarded.post("/checks", json=check, headers={"Accept": "application/json"}).status_code in (
        401,
        403,
    )
    assert not path.exists()


def test_the_live_pulse_says_a_check_now_fails_when_the_agent_writes(phone):
    import re

    htmx = {"HX-Request": "true"}
    client = phone.app().test_client()
    _post(
        client, name="my phone", message="how do I reach the release manager?", must_not_contain=["555 0199"]
    )
    path = phone.project_dir / ".agentao" / "memory-checks.json"
    kept = path.read_bytes()
    html = client.get("/overview").get_data(as_text=True)
    url = re.search(r'id="pulse"[^>]*hx-get="([^"]+)"', html).group(1).replace("&amp;", "&")
    phone.save("release manager", "Call the release manager Ann on 555 0199.", ["workflow"])
    told = client.get(url, headers=htmx).get_data(as_text=True)
    assert "The agent just saved &#39;release manager&#39;. Check “my phone” now fails." in told
    assert path.read_bytes() == kept  # the pulse records nothing


def test_a_post_that_only_reads_records_nothing(phone):
    client = phone.app().test_client()
    _post(client, name="tooling", message="which package manager?", must_recall=["package_manager"])
    path = phone.project_dir / ".agentao" / "memory-checks.json"
    kept = path.read_bytes()
    phone.manager.delete(
        next(
            m for m in phone.manager.project_store.list_memories() if m.key_normalized == "package_manager"
        ).id
    )  # the agent, meanwhile
    r = client.post("/preview.json", json={"q": "uv"})
    assert r.status_code == 200 and "X-Checks-Changed" not in r.headers
    assert path.read_bytes() == kept


def test_a_forbidden_text_in_a_session_summary_is_named_as_such(agent):
    agent.summary("We agreed the staging password rotates on Fridays.", session_id="s-1")
    agent.save("editor", "Uses Neovim.", ["profile"])
    client = agent.app().test_client()
    got = _post(
        client, name="fridays", message="editor?", must_not_contain=["rotates on fridays"]
    ).get_json()["check"]
    stable = agent_stable(agent)
    assert "rotates on Fridays" in stable and not got["passed"]  # agentao sends the tail too
    assert got["why"] == [
        "“rotates on fridays” must never appear, but the always-on block holds it "
        "(in the session summaries it carries)."
    ]


def test_the_page_is_bounded_and_the_command_runs_every_check(phone, capsys):
    client = phone.app().test_client()
    _post(client, name="tooling", message="which package manager?", must_recall=["package_manager"])
    data = phone.app(CHECKS_TIME_LIMIT_MS=0).test_client().get("/checks.json").get_json()
    (mine,) = [c for c in data["checks"] if c["name"] == "tooling"]
    assert data["not_run"] == 1 and mine["ran"] is False and data["failed"] == 0
    assert "time budget" in mine["why"][0]
    assert main(["check", "--project", str(phone.project_dir), "--user-db", str(phone.user_db)]) == 0
    assert "tooling" in capsys.readouterr().out


def test_the_command_line_table_lines_up_chinese_names(phone, capsys):
    import unicodedata

    client = phone.app().test_client()
    _post(client, name="包管理器检查", message="which package manager?", must_recall=["package_manager"])
    _post(client, name="tooling", message="which package manager?", must_recall=["package_manager"])
    assert main(["check", "--project", str(phone.project_dir), "--user-db", str(phone.user_db)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "包管理器检查" in line or "tooling" in line]
    assert len(lines) == 2

    def column_of_why(line: str) -> int:  # where the reason starts, in terminal columns
        head = line[: line.index("Passes")]
        return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in head)

    assert column_of_why(lines[0]) == column_of_why(lines[1])


def test_the_results_the_pulse_compares_with_are_kept_for_the_latest_stores_only():
    """A long-running dashboard switched between many projects keeps the last results of the
    most recent SEEN_KEPT only (each threaded request reads and writes them under one lock)."""
    from dashboard.views import checks

    kept = dict(checks._seen)
    try:
        for n in range(checks.SEEN_KEPT + 3):
            checks._remember((f"/p{n}/memory-checks.json",), {"c": n % 2 == 0})
        assert checks._recall(("/p3/memory-checks.json",)) == {"c": False}  # now the most recent
        checks._remember(("/new/memory-checks.json",), {"c": True})
        assert len(checks._seen) == checks.SEEN_KEPT
        assert checks._recall(("/p0/memory-checks.json",)) is None  # the oldest: the files' results
        assert checks._recall(("/p3/memory-checks.json",)) == {"c": False}
    finally:
        checks._seen.clear()
        checks._seen.update(kept)


def test_the_page_names_the_store_of_each_checks_file(agent):
    """Two paths in a row said nothing of which store each belongs to: each is named now."""
    from bs4 import BeautifulSoup

    page = BeautifulSoup(agent.app().test_client().get("/checks").get_data(as_text=True), "html.parser")
    files = page.select_one('[data-field="check-files"]')
    named = dict(
        zip(
            [dt.get_text(strip=True) for dt in files.select("dt")],
            [dd.get_text(strip=True) for dd in files.select("dd")],
        )
    )
    assert named == {
        "Project store": str(agent.project_dir / ".agentao" / "memory-checks.json"),
        "User store": str(agent.user_db.parent / "memory-checks.json"),
    }, named


def test_a_check_that_would_make_the_file_too_big_to_read_is_not_saved(phone, monkeypatch):
    """The dashboard reads a checks file only up to MAX_FILE_BYTES: it never writes one
    larger, so the checks saved before stay readable and can still be deleted."""
    client = phone.app().test_client()
    path = phone.project_dir / ".agentao" / "memory-checks.json"
    long = "which package manager do we use here? " * 100
    first = _post(client, name="first", message=long[:4000], must_recall=["package_manager"])
    assert first.status_code == 201
    size = path.stat().st_size
    monkeypatch.setattr(ck, "MAX_FILE_BYTES", size + 2000)  # room for a small check, not a long one
    kept = path.read_bytes()
    r = _post(client, name="second", message=long[:4000], must_recall=["package_manager"])
    assert r.status_code == 400 and "The check was not saved" in r.get_json()["message"]
    assert path.read_bytes() == kept
    data = client.get("/checks.json").get_json()
    assert not data["problems"] and {"first"} <= {c["name"] for c in data["checks"]}
    cid = first.get_json()["check"]["id"]
    assert client.post(f"/checks/{cid}/delete", data={"store": "project"}).status_code == 303


def test_a_check_whose_results_would_overflow_the_file_is_saved_without_them(phone, monkeypatch):
    """Recording a passing check's blocks (``last_pass``) may not grow the file past what the
    dashboard reads: the check is saved and the file stays readable, without the blocks."""
    client = phone.app().test_client()
    path = phone.project_dir / ".agentao" / "memory-checks.json"
    check = {"name": "tooling", "message": "which package manager?", "must_recall": ["package_manager"]}
    assert _post(client, **check).status_code == 201
    stored = json.loads(path.read_text())
    with_blocks = len(path.read_bytes())
    for c in stored["checks"]:
        c.pop("last_pass", None)
    without = len((json.dumps(stored, ensure_ascii=False, indent=2) + "\n").encode())
    assert with_blocks - without > 100
    path.unlink()
    monkeypatch.setattr(ck, "MAX_FILE_BYTES", (with_blocks + without) // 2)
    r = _post(client, **check)
    assert r.status_code == 201 and r.get_json()["check"]["passed"] is True
    assert path.stat().st_size <= ck.MAX_FILE_BYTES
    assert not client.get("/checks.json").get_json()["problems"]
