"""The preview as the person's agent recalls (#31, items 1 and 5), walked in Chromium at
1280×900 and 390×844, in English and in Chinese.

Two servers over the same memories, written through agentao: one whose ``agentao`` command
(first on PATH) runs an interpreter with jieba, one whose interpreter has none.  A Chinese
message recalls what agentao itself recalls in each mode, and the page says which mode in
one line under the answer.  A recalled memory that Findings lists as a secret carries the
Findings mark, leading to it, and its "because" names the words that matched.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta
from urllib.parse import quote

import pytest
from agentao.memory import MemoryPromptRenderer, MemoryRetriever
from selenium.webdriver.common.by import By

from .conftest import (
    DESKTOP,
    PHONE,
    Agent,
    Server,
    close_agent,
    htmx_settled,
    in_viewport,
    login,
    screenshot,
    set_size,
    wait_for,
)

ASK = "我们用什么包管理器跑测试？"
SECRET_ASK = "what is the staging db url?"
CHINESE_TITLES = {"pkg 包管理器", "test cmd 测试命令", "merge rule 合并规则"}


def seed(agent: Agent) -> None:
    agent.save(
        "db_url_staging",
        "Staging database: postgresql://deploy:s3cretPa55word@staging-db.internal:5432/app",
        ["database"],
        type="note",
    )
    agent.save("pkg 包管理器", "本项目用 uv 管理依赖，不用 pip。", ["工具"], type="note")
    agent.save("test cmd 测试命令", "跑测试用 uv run pytest -x。", ["测试"], type="note")
    agent.save("merge rule 合并规则", "我们合并前必须跑完测试。", ["流程"], type="note")
    for n in range(3):  # saved last: they take the always-on block's three incidental places
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")


def agentao_recalls(agent: Agent, query: str, with_jieba: bool) -> set[str]:
    """Titles agentao puts in <memory-context> for ``query`` in a new session, in a mode."""
    import agentao.memory.retriever as agentao_retriever

    mgr, renderer = agent.manager, MemoryPromptRenderer()
    with pytest.MonkeyPatch.context() as mp:
        if not with_jieba:

            def missing():
                raise ImportError("jieba hidden for this test")

            mp.setattr(agentao_retriever, "_import_jieba", missing)
        tail = mgr.get_cross_session_tail()
        shown = renderer.fit_stable_records(mgr.get_stable_entries(), session_tail=tail)
        found = MemoryRetriever(mgr).recall_candidates(query, exclude_ids={r.id for r in shown})
    kept = renderer.render_dynamic_block(found).count("<fact ")
    titles = {r.id: r.title for r in mgr.project_store.list_memories()}
    return {titles[c.memory_id] for c in found[:kept]}


def start(root, with_jieba: bool) -> Server:
    agent = Agent(root)
    clock = {"t": datetime(2030, 6, 1)}

    def now():
        clock["t"] += timedelta(seconds=1)
        return clock["t"].strftime("%Y-%m-%dT%H:%M:%S")

    import agentao.memory.manager as agentao_manager
    import agentao.memory.storage as agentao_storage
    from agentao_world import agent_command

    with pytest.MonkeyPatch.context() as mp:  # one second a save: a fixed stable block
        mp.setattr(agentao_manager, "_now", now)
        mp.setattr(agentao_storage, "_now_iso", lambda: clock["t"].strftime("%Y-%m-%dT%H:%M:%S"))
        seed(agent)
    recalled = {q: agentao_recalls(agent, q, with_jieba) for q in (ASK, SECRET_ASK)}
    close_agent(agent)
    command = agent_command(root / "bin", with_jieba)
    with pytest.MonkeyPatch.context() as mp:  # the server finds this agentao first on PATH
        mp.setenv("PATH", f"{command.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
        srv = Server([agent.project_dir], agent.user_db)
    srv.agent, srv.recalled, srv.command = agent, recalled, command
    return srv


@pytest.fixture(scope="module")
def servers(tmp_path_factory, browser):
    found = {}
    try:
        for name, with_jieba in (("jieba", True), ("latin", False)):
            found[name] = start(tmp_path_factory.mktemp(f"agent-{name}"), with_jieba)
        yield found
    finally:
        for srv in found.values():
            srv.stop()


def visit(browser, srv: Server, path: str) -> None:
    """Open ``path`` on ``srv``, logging in first when the browser was on the other server."""
    if getattr(browser, "agent_server", None) is not srv:
        browser.get("about:blank")  # the other server's page stops polling
        browser.agent_server = srv
    logins = browser.__dict__.setdefault("agent_logins", set())
    if srv.base not in logins:  # each server's cookie is named after its port: both stay
        size = getattr(browser, "size_now", DESKTOP)
        login(browser, srv)
        set_size(browser, size)
        logins.add(srv.base)
    browser.get(srv.url(path))
    wait_for(browser, htmx_settled, f"htmx never settled on {path}")


def ask(browser, message: str) -> None:
    """Type the message and press Preview, as a person does; wait for the answer's focus."""
    box = browser.find_element(By.ID, "p-q")
    box.clear()
    box.send_keys(message)
    browser.find_element(By.CSS_SELECTOR, "#preview-form button[name=go]").click()
    wait_for(
        browser,
        lambda d: d.switch_to.active_element.get_attribute("id") == "answer-title",
        "the answer did not take the focus after Preview",
    )
    wait_for(browser, htmx_settled)


def recalled_titles(browser) -> set[str]:
    rows = browser.find_elements(By.CSS_SELECTOR, '#answer [data-answer="recalled"] li[data-memory-id]')
    return {r.find_element(By.CSS_SELECTOR, "a").text for r in rows}


def mode_line(browser):
    return browser.find_element(By.CSS_SELECTOR, '#answer [data-answer="cjk"]')


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_chinese_message_recalls_as_the_agent_with_jieba(browser, servers, size):
    srv = servers["jieba"]
    assert srv.recalled[ASK] == CHINESE_TITLES  # agentao with jieba recalls the three
    set_size(browser, size)
    visit(browser, srv, "/preview")
    ask(browser, ASK)
    assert recalled_titles(browser) == srv.recalled[ASK]
    line = mode_line(browser)
    assert line.text == f"Chinese words recalled as your agent does: jieba is installed for {sys.executable}."
    assert line.get_attribute("data-cjk-mode") == "jieba" and "muted" in line.get_attribute("class")
    first = browser.find_element(By.CSS_SELECTOR, '#answer [data-answer="recalled"] li[data-memory-id] a')
    assert in_viewport(browser, first), f"the first recalled memory is not in view at {size}"
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0] + 2
    screenshot(browser, f"preview-agent-jieba-{size[0]}", sizes=[size], restore=False)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_agent_without_jieba_is_said_where_nothing_is_recalled(browser, servers, size):
    srv = servers["latin"]
    assert srv.recalled[ASK] == set()  # agentao without jieba recalls nothing
    set_size(browser, size)
    visit(browser, srv, "/preview")
    ask(browser, ASK)
    assert recalled_titles(browser) == set()
    lead = browser.find_element(By.CSS_SELECTOR, '#answer [data-answer="recalled"]')
    assert lead.text.startswith("Nothing is recalled")
    line = mode_line(browser)
    assert line.text.startswith("Your agent has no jieba (")
    assert "“我们用什么包管理器跑测试” recalls nothing by its Chinese words" in line.text
    assert "Install agentao[i18n] there" in line.text
    assert str(srv.command.parent / "python-without-jieba") in line.text
    assert "muted" not in (line.get_attribute("class") or "")  # said plainly: it is the why
    # The why comes first and is in view; on a phone the lead follows just under it.
    for element in (line,) if size == PHONE else (lead, line):
        assert in_viewport(browser, element), f"not in view at {size}: {element.text!r}"
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0] + 2
    screenshot(browser, f"preview-agent-latin-{size[0]}", sizes=[size], restore=False)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_recalled_secret_carries_the_findings_mark(browser, servers, size):
    srv = servers["jieba"]
    assert "db_url_staging" in srv.recalled[SECRET_ASK]
    set_size(browser, size)
    visit(browser, srv, "/preview")
    ask(browser, SECRET_ASK)
    assert recalled_titles(browser) == srv.recalled[SECRET_ASK]
    row = browser.find_element(
        By.XPATH, '//*[@id="answer"]//li[@data-memory-id][a[normalize-space()="db_url_staging"]]'
    )
    mark = row.find_element(By.CSS_SELECTOR, 'a.badge.flag[data-category="secret"]')
    assert mark.text == "secret" and in_viewport(browser, mark), f"the mark is not in view at {size}"
    title = row.find_element(By.CSS_SELECTOR, 'li[data-reason="title_overlap"]')
    assert title.text == "words of its title are in your message: db, staging, url"
    others = browser.find_elements(
        By.CSS_SELECTOR, '#answer [data-answer="recalled"] li:not([data-flags]) a.badge'
    )
    assert others == []  # only the flagged memory is marked
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0] + 2
    screenshot(browser, f"preview-agent-secret-{size[0]}", sizes=[size], restore=False)
    # The mark leads to the finding itself.
    mark.click()
    wait_for(browser, lambda d: "/findings" in d.current_url, "the mark did not lead to Findings")
    wait_for(browser, htmx_settled)
    found = browser.find_elements(
        By.CSS_SELECTOR, 'tr.finding[data-category="secret"][data-table="memories"]'
    )
    assert found and all(f.get_attribute("data-category") == "secret" for f in found)
    assert any("db_url_staging" in f.text for f in found)


def test_in_chinese(browser, servers):
    srv = servers["jieba"]
    set_size(browser, DESKTOP)
    visit(browser, srv, "/preview")
    browser.find_element(By.CSS_SELECTOR, "#language-switch option[value='zh_Hans_CN']").click()
    browser.find_element(By.CSS_SELECTOR, "#language-switcher button").click()
    wait_for(browser, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-Hans-CN")
    try:
        for size in (DESKTOP, PHONE):
            set_size(browser, size)
            browser.get(srv.url(f"/preview?q={quote(ASK)}&go=1"))
            wait_for(browser, htmx_settled)
            assert recalled_titles(browser) == CHINESE_TITLES
            line = mode_line(browser)
            assert line.text.startswith("中文词按你的智能体的方式召回：") and "装有 jieba" in line.text
            assert line.find_element(By.TAG_NAME, "code").text == sys.executable
            browser.get(srv.url(f"/preview?q={quote(SECRET_ASK)}&go=1"))
            wait_for(browser, htmx_settled)
            mark = browser.find_element(By.CSS_SELECTOR, '#answer a.badge.flag[data-category="secret"]')
            assert mark.text == "密钥" and in_viewport(browser, mark)
            words = browser.find_element(By.CSS_SELECTOR, '#answer li[data-reason="title_overlap"]')
            assert words.text == "它标题中的词出现在你的消息中：db, staging, url"
            screenshot(browser, f"preview-agent-zh-{size[0]}", sizes=[size], restore=False)
    finally:
        browser.delete_all_cookies()  # the next visitor starts in English
        browser.agent_server, browser.agent_logins = None, set()
        set_size(browser, DESKTOP)
