"""The preview as the person's agent recalls: its Chinese mode (its jieba, or --cjk), said next
to the answer, and the findings' marks on what it recalls (issue 31, items 1 and 5).

Both stores are written through agentao's own API; each mode is compared with agentao's own
recall run the same way (jieba hidden from it by its one import check, ``_import_jieba``).
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta, timezone

import pytest
from agentao_world import Agent, agent_command, agentao_blocks
from bs4 import BeautifulSoup

ASOF = "2031-01-01T00:00:00"
WHEN = datetime(2031, 1, 1, tzinfo=timezone.utc)
ASK = "我们用什么包管理器跑测试？"


@pytest.fixture
def ticking(monkeypatch):
    """agentao's save clock, one second a save, so the fillers saved last take the stable
    block's incidental places and the Chinese notes are left to recall."""
    import agentao.memory.manager as agentao_manager
    import agentao.memory.storage as agentao_storage

    clock = {"t": datetime(2030, 6, 1)}

    def now():
        clock["t"] += timedelta(seconds=1)
        return clock["t"].strftime("%Y-%m-%dT%H:%M:%S")

    monkeypatch.setattr(agentao_manager, "_now", now)
    monkeypatch.setattr(agentao_storage, "_now_iso", lambda: clock["t"].strftime("%Y-%m-%dT%H:%M:%S"))


@pytest.fixture
def chinese(agent, ticking) -> Agent:
    agent.save("pkg 包管理器", "本项目用 uv 管理依赖，不用 pip。", ["工具"], type="note")
    agent.save("test cmd 测试命令", "跑测试用 uv run pytest -x。", ["测试"], type="note")
    agent.save("merge rule 合并规则", "我们合并前必须跑完测试。", ["流程"], type="note")
    agent.save("logs 日志", "日志写到 logs/app.log。", ["运维"], type="note")
    for n in range(3):  # newer notes take the stable block's incidental places
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    return agent


def agentao_context(agent, monkeypatch, with_jieba: bool) -> str:
    import agentao.memory.retriever as agentao_retriever

    with monkeypatch.context() as mp:
        if not with_jieba:

            def missing():
                raise ImportError("jieba hidden for this test")

            mp.setattr(agentao_retriever, "_import_jieba", missing)
        return agentao_blocks(agent, ASK, now=WHEN)[1]


@pytest.mark.parametrize("with_jieba", [True, False], ids=["agent-with-jieba", "agent-without-jieba"])
def test_the_preview_recalls_chinese_as_the_agents_interpreter_does(
    chinese, monkeypatch, tmp_path, with_jieba
):
    command = agent_command(tmp_path / "bin", with_jieba)
    monkeypatch.setenv("PATH", f"{command.parent}{os.pathsep}/usr/bin:/bin")
    client = chinese.app().test_client()  # --cjk auto, the default
    data = client.get("/preview.json", query_string={"q": ASK, "asof": ASOF}).get_json()
    html = client.get("/preview", query_string={"q": ASK, "asof": ASOF}).get_data(as_text=True)
    line = BeautifulSoup(html, "html.parser").select_one('#answer [data-answer="cjk"]')

    theirs = agentao_context(chinese, monkeypatch, with_jieba)
    assert data["context_block"] == theirs
    assert data["cjk"]["decided_by"] == "agent" and data["cjk"]["agentao"] == str(command)
    assert data["cjk_mode"] == data["cjk"]["mode"] == ("jieba" if with_jieba else "latin-only")
    assert line["data-cjk-mode"] == data["cjk_mode"] and line.text.strip() == data["cjk"]["text"]
    if with_jieba:
        recalled = {c["title"] for c in data["candidates"] if c["mark"] == "in_block"}
        assert recalled == {"pkg 包管理器", "test cmd 测试命令", "merge rule 合并规则"}
        assert "jieba is installed for" in line.text and sys.executable in line.text
        assert "muted" in line["class"]
    else:
        assert theirs == "" and not data["candidates"]
        assert "Your agent has no jieba" in line.text and "我们用什么包管理器跑测试" in line.text
        assert not line.get("class")  # said plainly, not greyed: it is why nothing is recalled


def test_the_setting_overrides_the_agent_and_no_agent_is_said(chinese, monkeypatch, tmp_path):
    from dashboard import agent_cjk

    command = agent_command(tmp_path / "bin", with_jieba=False)
    monkeypatch.setenv("PATH", str(command.parent))
    on = chinese.app(CJK="on").test_client().get("/preview.json", query_string={"q": ASK, "asof": ASOF})
    assert on.get_json()["cjk"]["decided_by"] == "setting" and on.get_json()["cjk_mode"] == "jieba"
    assert on.get_json()["context_block"] == agentao_context(chinese, monkeypatch, True)

    monkeypatch.setattr(agent_cjk, "find_agentao", lambda: None)
    data = chinese.app().test_client().get("/preview.json", query_string={"q": ASK}).get_json()
    assert data["cjk"]["decided_by"] == "default" and data["cjk"]["problem"] == "not_found"
    assert data["cjk_mode"] == "jieba" and "no agentao command was found" in data["cjk"]["text"]


def test_a_command_whose_interpreter_cannot_be_told(tmp_path):
    from dashboard.agent_cjk import agent_cjk, interpreter_of

    trampoline = tmp_path / "trampoline"
    trampoline.write_text("#!/bin/sh\n'''exec' \"/opt/my env/bin/python3\" \"$0\" \"$@\"\n' '''\nimport x\n")
    assert interpreter_of(trampoline) == "/opt/my env/bin/python3"
    assert interpreter_of(tmp_path / "missing") is None
    env = tmp_path / "env-style"
    env.write_text("#!/usr/bin/env -S sh\n")
    assert interpreter_of(env).endswith("/sh")
    assert agent_cjk("off").mode == "latin-only" and agent_cjk("on").use == "on"
    silent = tmp_path / "bin" / "agentao"
    silent.parent.mkdir()
    silent.write_text("#!/bin/false\n")
    silent.chmod(0o755)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", str(silent.parent))
        found = agent_cjk("auto")
    assert (found.decided_by, found.problem, found.mode) == ("default", "no_answer", "jieba")
    assert found.text() == (
        f"Chinese words are recalled as with jieba: the interpreter of {silent} did not answer. "
        "Start with --cjk off if your agent runs without jieba."
    )


# -- item 5: what Findings lists, marked on what the preview recalls ------------------------
@pytest.fixture
def secret_store(agent, ticking) -> Agent:
    agent.save(
        "db_url_staging",
        "Staging database: postgresql://deploy:s3cretPa55word@staging-db.internal:5432/app",
        ["database"],
        type="note",
    )
    agent.save("db_backup", "Backups of the staging database run nightly.", ["database"], type="note")
    for n in range(3):
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    return agent


def test_a_recalled_secret_carries_the_findings_mark_and_the_matched_words(secret_store):
    client = secret_store.app().test_client()
    listed = client.get("/findings.json", query_string={"category": "secret"}).get_json()["items"]
    flagged = {i["row_id"] for i in listed if i["table"] == "memories"}
    query = {"q": "what is the staging db url?", "asof": ASOF}
    data = client.get("/preview.json", query_string=query).get_json()
    page = BeautifulSoup(client.get("/preview", query_string=query).get_data(as_text=True), "html.parser")

    secret = next(c for c in data["candidates"] if c["title"] == "db_url_staging")
    assert secret["mark"] == "in_block" and secret["id"] in flagged
    assert [f["category"] for f in secret["flags"]] == ["secret"]
    assert "staging" in secret["text"] and "(db, staging, url)" in secret["text"]
    backup = next(c for c in data["candidates"] if c["title"] == "db_backup")
    assert backup["flags"] == [] and backup["id"] not in flagged
    assert any("db_url_staging" in s and "Findings lists it as secret" in s for s in data["text"])

    row = page.select_one(f'#answer [data-answer="recalled"] li[data-memory-id="{secret["id"]}"]')
    mark = row.select_one('a.badge.flag[data-category="secret"]')
    assert mark.text == "secret" and "category=secret" in mark["href"]
    title_words = row.select_one('li[data-reason="title_overlap"] [data-words]')
    assert title_words.text == "db, staging, url"
    other = page.select_one(f'#answer [data-answer="recalled"] li[data-memory-id="{backup["id"]}"]')
    assert other.select_one("a.badge.flag") is None
