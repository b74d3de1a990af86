"""The preview as light as the stores people have (issue 30): the message travels in a POST
body (agentao's 4,000 characters fit), a failed request says so where the answer goes, and
the page sends what a person reads, the rest of the ranked table a request away."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import parse_qs, urlsplit

from agentao_world import Agent, agentao_blocks
from bs4 import BeautifulSoup

HTMX = {"HX-Request": "true", "HX-Target": "preview-result"}
ASOF = "2031-01-01T00:00:00"
WHEN = datetime(2031, 1, 1, tzinfo=timezone.utc)


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def chinese_agent(root) -> Agent:
    agent = Agent(root)
    agent.save("deploy steps 部署流程", "部署前先跑测试，然后发布新版本到服务器。", ["部署"], type="workflow")
    agent.save("db cache 数据库缓存", "数据库查询结果放在缓存里，超时三十秒。", ["数据库"], type="note")
    agent.save("logging 日志配置", "服务的日志写到 logs 目录，按天切分。", ["日志"], type="note")
    agent.save("answer language 回答语言", "用中文回答问题。", type="preference", scope="user")
    for n, topic in enumerate(["缓存", "超时", "服务器", "版本", "测试", "配置"]):  # past the stable three
        agent.save(
            f"note {n} {topic}", f"关于{topic}的第{n}条笔记：数据库和日志都要检查。", ["笔记"], type="note"
        )
    return agent


def test_a_4000_character_chinese_message_posted_previews_exactly_as_agentao(tmp_path):
    agent = chinese_agent(tmp_path)
    client = agent.app().test_client()
    words = "请问我们的数据库缓存超时是多少，部署流程里日志怎么配置？"
    message = (words * (4000 // len(words) + 1))[:4000]
    assert len(message) == 4000
    # In a URL it is 36,000 characters once percent-encoded: over the query string's cap.
    assert client.get("/preview", query_string={"q": message}).status_code == 414
    for headers in ({}, HTMX):
        r = client.post("/preview", data={"q": message, "asof": ASOF}, headers=headers)
        assert r.status_code == 200, r.get_data(as_text=True)[:300]
        page = soup(r)
        stable, context = agentao_blocks(agent, message, None, WHEN)
        assert context, "the message shares words with the memories"
        assert page.select_one("pre#stable-block").text == stable
        assert page.select_one("pre#context-block").text == context
        assert page.select_one("#p-q") is None or page.select_one("#p-q").text == message
    # Too long for a URL: the address bar shows the bare page, not a truncated question.
    assert client.post("/preview", data={"q": message}, headers=HTMX).headers["HX-Push-Url"] == "/preview"


def test_a_short_posted_message_keeps_a_shareable_url(client):
    form = {"q": "which package manager", "session": "session-b", "asof": ASOF, "go": "1"}
    # Without JavaScript: post, then a 303 to the GET address, which answers the same.
    r = client.post("/preview", data=form)
    assert r.status_code == 303
    url = urlsplit(r.headers["Location"])
    assert url.path == "/preview"
    assert parse_qs(url.query) == {"q": ["which package manager"], "session": ["session-b"], "asof": [ASOF]}
    got = soup(client.get(r.headers["Location"]))
    # With htmx: the answer in place, and the same address pushed into the bar.
    posted = client.post("/preview", data=form, headers=HTMX)
    assert posted.headers["HX-Push-Url"] == r.headers["Location"]
    assert soup(posted).select_one("pre#stable-block").text == got.select_one("pre#stable-block").text


def test_a_failed_request_shows_its_error_where_the_answer_goes(tmp_path, monkeypatch):
    agent = chinese_agent(tmp_path)
    app = agent.app(MAX_CONTENT_LENGTH=2000)
    client = app.test_client()
    cases = [
        (400, {"q": "部署", "per_page": "0"}),  # a bad number
        (413, {"q": "部署" * 1000}),  # a body over the server's limit
    ]
    for status, form in cases:
        r = client.post("/preview", data=form, headers=HTMX)
        assert r.status_code == status
        assert "HX-Reswap" not in r.headers  # it is swapped where the answer was
        region = soup(r).select_one("section#preview-result")
        assert region is not None and region["data-failed"] == str(status)
        assert region.select_one('[role="alert"]').get_text(strip=True)

    import dashboard.views.preview as view

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(view, "preview", broken)
    r = client.post("/preview", data={"q": "部署"}, headers=HTMX)
    assert r.status_code == 500
    region = soup(r).select_one("section#preview-result")
    assert region["data-failed"] == "500" and "boom" not in r.get_data(as_text=True)
    # Elsewhere a refusal still goes to the pinned status line only.
    other = client.post("/preview", data={"q": "x", "per_page": "0"}, headers={"HX-Request": "true"})
    assert other.status_code == 400 and other.headers["HX-Reswap"] == "none"
