"""The preview as light as the stores people have (issue 30): the message travels in a POST
body (agentao's 4,000 characters fit), a failed request says so where the answer goes, and
the page sends what a person reads, the rest of the ranked table a request away."""

from __future__ import annotations

import itertools
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import pytest
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
    topics = ["缓存", "超时", "部署", "日志", "配置", "数据库"]
    for n in range(6):  # past the stable three; titles overlap the message more and more (no ties)
        agent.save(
            f"note {n} " + " ".join(topics[: n + 1]), f"第{n}条笔记：上线前检查。", ["笔记"], type="note"
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
        assert page.select_one("#make-check") is None  # its address would not fit in a URL (414)
    # Too long for a URL: the address bar shows the bare page, not a truncated question.
    assert client.post("/preview", data={"q": message}, headers=HTMX).headers["HX-Push-Url"] == "/preview"


def test_a_long_message_is_sent_once_not_echoed_by_the_token_list(tmp_path, monkeypatch):
    """A whole Chinese run is one query token: the page shows it cut, with its length, instead
    of sending the 4,000-character message two more times (text and attribute); the twin
    keeps it whole.  Nor does the ranked table link to a twin URL the message cannot fit in."""
    import dashboard.views.preview as view

    monkeypatch.setattr(view, "RANKED_FIRST", 1)  # the small store's matches, folded
    monkeypatch.setattr(view, "MAX_RANKED", 2)  # past it the page points to the twin
    agent = chinese_agent(tmp_path)
    client = agent.app(CJK="on").test_client()  # jieba's words, whatever the agent on this machine
    words = "请问我们的数据库缓存超时是多少，部署流程里日志怎么配置？"
    message = (words * (4000 // len(words) + 1))[:4000]
    for headers, times in (({}, 1), (HTMX, 0)):  # the page's form has it; the fragment, no copy
        r = client.post("/preview", data={"q": message, "asof": ASOF}, headers=headers)
        assert r.status_code == 200
        assert r.get_data(as_text=True).count(message) == times
        page = soup(r)
        cut = page.select_one("#query-tokens [data-token-chars]")
        assert cut["data-token-chars"] == "4000" and "4,000" in cut.select_one("small[data-cut]").text
        assert message.startswith(cut.get_text().split("…")[0]) and len(cut.get_text()) < 200
        assert page.select_one("#query-tokens [data-token]") is not None  # jieba's words, whole
        more = page.select_one("p.ranked-more")
        assert "The JSON twin lists them all" in more.text and more.select_one("a") is None
    twin = client.post("/preview.json", json={"q": message, "asof": ASOF}).get_json()
    assert message in [t["token"] for t in twin["query_tokens"]]
    short = soup(client.get("/preview", query_string={"q": "部署 日志 数据库", "asof": ASOF}))
    assert short.select_one("p.ranked-more a")["href"].startswith("/preview.json?")


def test_a_short_posted_message_keeps_a_shareable_url(client):
    form = {"q": "which package manager", "session": "session-b", "asof": ASOF, "go": "1"}
    # Without JavaScript: post, then a 303 to the GET address, which answers the same.
    r = client.post("/preview", data=form)
    assert r.status_code == 303
    url = urlsplit(r.headers["Location"])
    assert url.path == "/preview"
    assert parse_qs(url.query) == {
        "q": ["which package manager"],
        "session": ["session-b"],
        "asof": [ASOF],
        "go": ["1"],
    }
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


# --------------------------------------------------------------------------- a store people have

WORDS = (
    "the default server timeout error config value request response cache database deploy release "
    "build test python package module import function class method return string list file path "
    "user project session memory agent prompt block budget score title content keyword tag note "
    "rule decision workflow version branch commit merge review docs api client token retry queue "
    "worker job schedule log level format style lint type check index query schema migrate backup "
    "restore disk network port host proxy header cookie login access read write lock thread pool"
).split()


def thousand(root) -> Agent:
    """1,000 memories written through agentao's own store API (upsert_memory, as its manager
    calls it), words drawn on a Zipf curve so a three-word message matches hundreds."""
    import random
    import tempfile

    from agentao.memory import MemoryGuard

    shm = Path("/dev/shm")  # each save commits on its own connection: tmpfs keeps it quick
    root = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() else root
    agent = Agent(root)
    guard, rng = MemoryGuard(), random.Random(30)
    weights = [1 / (n + 1) for n in range(len(WORDS))]

    def text(n: int) -> str:
        return " ".join(rng.choices(WORDS, weights, k=n))

    # One second per row through agentao's own clock: rows of one second tie on created_at, and
    # the order of such ties is a separate question from this page's weight.
    seconds = itertools.count()
    stamp = lambda: (datetime(2030, 1, 1) + timedelta(seconds=next(seconds))).strftime("%Y-%m-%dT%H:%M:%S")  # noqa: E731
    with mock.patch("agentao.memory.storage._now_iso", stamp):
        _fill(agent, guard, rng, text)
    return agent


def _fill(agent, guard, rng, text) -> None:
    import uuid

    from agentao.memory.models import MemoryRecord

    for i in range(1000):
        scope = "user" if i % 5 == 0 else "project"
        store = agent.user_store if scope == "user" else agent.project_store
        title, content, tags = text(rng.randint(3, 8)), text(rng.randint(8, 60)), rng.sample(WORDS[:30], 1)
        store.upsert_memory(
            MemoryRecord(
                id=uuid.UUID(int=rng.getrandbits(128)).hex[:8],
                scope=scope,
                type=rng.choice(["note", "note", "note", "project_fact"])
                if scope == "project"
                else "profile",
                key_normalized=guard.normalize_key(f"{title} {i}"),
                title=title,
                content=content,
                tags=tags,
                keywords=guard.extract_keywords(title, tags, content),
            )
        )


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    agent = thousand(tmp_path_factory.mktemp("thousand"))
    # jieba's words, as agentao splits them in this process, whatever `agentao` the PATH finds
    yield agent, agent.app(CJK="on").test_client()
    if str(agent.project_dir).startswith("/dev/shm/"):
        shutil.rmtree(agent.project_dir.parent, ignore_errors=True)


def test_the_three_word_preview_at_1000_memories_is_at_most_100_kb_and_shows_the_recalled(big):
    agent, client = big
    message = "default server timeout"
    r = client.get("/preview", query_string={"q": message, "asof": ASOF})
    assert r.status_code == 200
    assert len(r.data) <= 100 * 1024, len(r.data)
    page = soup(r)
    stable, context = agentao_blocks(agent, message, None, WHEN)
    assert page.select_one("pre#context-block").text == context
    recalled = [
        li.select_one("strong").get_text() for li in page.select('#answer [data-answer="recalled"] ol > li')
    ]
    said = [line[len("title: ") :] for line in context.splitlines() if line.startswith("title: ")]
    assert recalled and sorted(recalled) == sorted(said)
    twin = client.get("/preview.json", query_string={"q": message, "asof": ASOF}).get_json()
    assert twin["candidates_total"] > 100  # the store matches hundreds: the twin keeps them all
    rows = page.select("tr.candidate")
    assert [row["data-memory-id"] for row in rows] == [c["id"] for c in twin["candidates"][: len(rows)]]
    assert {c["id"] for c in twin["candidates"] if c["mark"] == "in_block"} <= {
        r["data-memory-id"] for r in rows
    }


def test_the_folded_ranked_rows_are_a_request_away(big):
    _, client = big
    form = {"q": "default server timeout", "asof": ASOF}
    page = soup(client.post("/preview", data=form, headers=HTMX))
    shown = len(page.select("tr.candidate"))
    more = page.select_one("button[data-ranked-next]")
    assert more["hx-post"] == "/preview/ranked" and more["hx-target"] == "#recall"
    assert more["formaction"] == "/preview"  # without JavaScript the whole page, with the rows
    twin = client.get("/preview.json", query_string=dict(form, per_page=200)).get_json()
    # The button's request: the form's fields and its own name=value, as htmx sends them.
    fragment = soup(
        client.post("/preview/ranked", data=dict(form, ranked=more["value"]), headers={"HX-Request": "true"})
    )
    assert fragment.find("html") is None and fragment.select_one("section#recall")
    ids = [row["data-memory-id"] for row in fragment.select("tr.candidate")]
    assert len(ids) == int(more["value"]) == shown + 50
    assert ids == [c["id"] for c in twin["candidates"][: len(ids)]]  # the next rows, in rank order
    without_js = client.post("/preview", data=dict(form, ranked=more["value"]))
    assert without_js.status_code == 303 and "ranked=" + more["value"] in without_js.headers["Location"]
    everything = soup(client.get(without_js.headers["Location"]))
    assert [row["data-memory-id"] for row in everything.select("tr.candidate")] == ids


def test_every_list_screen_at_1000_memories_is_at_most_100_kb(big):
    _, client = big
    for url in ("/memories", "/memories?q=default", "/findings", "/about", "/overview", "/reviews"):
        r = client.get(url)
        assert r.status_code == 200 and len(r.data) <= 100 * 1024, (url, len(r.data))
    from dashboard.store.memories import PER_PAGE

    assert len(soup(client.get("/memories")).select("tr.memory")) == PER_PAGE  # the rest a link away


def test_the_always_on_entries_left_unlisted_cost_the_page_nothing(big):
    """200 memories about you are all chosen for the always-on block and most are left out by
    its budget: the page lists the first few, and the rest add no bytes (at 10,000 memories
    they were 50 KB of blank lines)."""
    _, client = big
    raw = client.get("/preview", query_string={"q": "default server timeout", "asof": ASOF}).get_data(
        as_text=True
    )
    start = raw.index('<section id="stable-entries"')
    section = raw[start : raw.index("</section>", start)]
    twin = client.get("/preview.json", query_string={"q": "default server timeout", "asof": ASOF}).get_json()
    listed = section.count("<tr data-memory-id=")
    assert twin["stable_entries_total"] > listed + 100  # many are chosen and not listed
    assert section.count("\n") < 12 * listed + 40, (section.count("\n"), listed)
