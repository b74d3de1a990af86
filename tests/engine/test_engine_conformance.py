"""Our blocks and scores against agentao 0.5.17's own retriever and renderer.

Each corpus is written through agentao's MemoryManager, read back with plain
sqlite3, and compared for many queries with agentao's clock pinned.
"""

from __future__ import annotations

import sqlite3

import pytest
from _conform import check
from _harness import PIN

from dashboard.engine import EngineCache, Tokenizer, preview

ENGLISH_QUERIES = [
    "which package manager do we use?",
    "redis",
    "Redis caches",
    "tests",
    "v3 api",
    "how do I release a new version",
    "deploy to production",
    "postgres v16 settings",
    "the",
    "   ",
    "",
    "?!",
    "python typing style",
    "pyproject.toml",
    "src/app/main.py broke",
    "what did we decide about logging",
    "never push to main",
    "editor keybindings",
    "docker compose ports",
    "ci pipeline stages and caching",
    "memories keywords tags",
    "billing service timeouts",
    "v2",
    "class success",
    "a b c d e",
]

CHINESE_QUERIES = [
    "部署脚本在哪里",
    "用中文回答",
    "数据库版本",
    "PostgreSQL16版本",
    "Python版本管理",
    "我喜欢用中文回答。",
    "缓存 redis 配置",
    "日志",
    "测试覆盖率要求",
    "项目语言",
    "部署 deploy",
    "かな テスト",
    "한국어 메모",
]


def _english(c):
    c.save("Package Manager", "This project uses uv; see pyproject.toml and uv.lock.", ["tooling"])
    c.save("user_language", "Answer in English, code comments too.", ["user"])
    c.save("editor", "Uses Neovim with LazyVim keybindings.", ["profile"])
    c.save("database", "PostgreSQL 16 in production, SQLite in tests.", ["infra"], type="project_fact")
    c.save("release process", "Tag on main, CI builds the wheel, then twine upload.", ["workflow"])
    c.save("logging decision", "We decided to use structlog with JSON output.", ["decision", "logging"])
    c.save("never push main", "Never push directly to main; open a PR.", ["constraint"])
    c.save("redis", "Redis caches sessions for 24h on port 6380.", ["infra", "cache"])
    c.save("billing timeouts", "billing/service.py retries 3 times, timeout 5s.", ["billing"], type="note")
    c.save("docker", "docker compose maps 8080 to the api container.", ["infra"])
    c.save("ci", "CI pipeline: lint, test, build; caching via actions/cache.", ["ci"])
    c.save("api v3", "The v3 API replaces v2 endpoints; v2 sunsets in 2026.", ["api"])
    c.save("typing", "Python typing: use from __future__ import annotations.", ["style"])
    c.save("memories note", "Memories keywords and tags are indexed for recall.", [])
    c.save("class naming", "Success classes end in Result.", ["style"], type="convention")
    c.save("main entry", "src/app/main.py is the entry point.", ["code"], source="auto")


def _chinese(c):
    c.save("部署 deploy", "部署脚本在 scripts/deploy.sh。", ["运维"])
    c.save("user_回答语言", "我喜欢用中文回答。", ["user"])
    c.save("db version", "数据库版本是 PostgreSQL16，测试用 SQLite。", ["数据库"])
    c.save("python版本", "Python版本管理用 uv，锁文件 uv.lock。", ["tooling"])
    c.save("缓存 cache", "缓存使用 redis，过期时间 24 小时。", ["缓存", "redis"])
    c.save("log rules", "日志统一用 structlog 输出 JSON。", ["日志"], type="decision")
    c.save("coverage", "测试覆盖率要求不低于 90%。", ["测试"], type="constraint")
    c.save("kana", "かなのテストです。", ["日本語"])
    c.save("hangul", "한국어 메모 테스트", ["한국어"])


@pytest.mark.parametrize("query", ENGLISH_QUERIES)
def test_english_corpus(make_corpus, query):
    c = make_corpus()
    _english(c)
    check(c, query)


@pytest.mark.parametrize("query", CHINESE_QUERIES + ["redis", "uv.lock"])
def test_chinese_and_mixed_corpus_both_cjk_modes(make_corpus, cjk, query):
    c = make_corpus()
    _chinese(c)
    _english(c)
    check(c, query, tokenizer=cjk)


def test_hints_from_recent_messages(make_corpus):
    c = make_corpus()
    _english(c)
    msgs = [
        "see billing/service.py and C:\\proj\\file.txt",
        "old.toolongext",
        "3.11.2",
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "edit src/app/main.py"}, {"type": "image", "text": "x.png"}],
        },
    ]
    for query in ("retries", "the", "main", "uv"):
        ours = check(c, query, msgs)
    assert "billing/service.py" in ours.hints
    # Only the last 10 messages count.
    check(c, "retries", ["billing/service.py"] + ["nothing here"] * 10)


def test_stale_fresh_future_and_odd_stamps(make_corpus):
    c = make_corpus()
    c.save("old note", "Redis was on port 6379 long ago.", ["infra"], at="2024-11-01T00:00:00")
    c.save("edge note", "Redis edge at exactly ninety days.", ["infra"], at="2025-03-03T12:00:00")
    c.save("fresh note", "Redis fresh setting.", ["infra"], at="2025-05-31T12:00:00")
    c.save("future note", "Redis future setting.", ["infra"], at="2025-07-01T00:00:00")
    for n in range(4):
        c.save(f"filler {n}", f"filler number {n}", type="decision")
    odd = c.save("odd stamp", "Redis odd stamp.", ["infra"])
    with sqlite3.connect(c.project_db) as conn:  # hand-edited stamps agentao must tolerate
        for stamp in (
            "2025-01-01 00:00:00Z",
            "garbage",
            "2025-01-01T00:00:00+08:00",
            "2025-02-01T00:00:00.123456",
        ):
            conn.execute("UPDATE memories SET updated_at=? WHERE id=?", (stamp, odd.id))
            conn.commit()
            check(c, "redis setting")
    for query in ("setting", "redis", "redis port"):
        ours = check(c, query)
    marks = {cand.memory.title: cand.reasons for cand in ours.candidates}
    assert "stale_penalty" in marks.get("old note", ())


def test_age_of_any_stamp_is_agentaos(monkeypatch):
    # agentao's own age function with its clock frozen at our `now`, on stamps
    # agentao writes, hand-edited ones, ones it cannot parse and extreme ones.
    import random
    from datetime import datetime, timezone

    from agentao.memory import retriever

    from dashboard.engine.recall import Ages

    now = datetime(2025, 6, 1, 9, 30, 15, 654321, tzinfo=timezone.utc)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return now.astimezone(tz) if tz else now.replace(tzinfo=None)

    monkeypatch.setattr(retriever, "datetime", Frozen)
    rng = random.Random(7)
    stamps = [
        "2025-03-03T09:30:15",
        "2025-03-03T09:30:16",
        "2025-03-03 09:30:15Z",
        "2025-01-01T00:00:00+08:00",
        "2025-02-01T00:00:00.123456",
        "2025-06-01T09:30:15.654321",
        "2025-06-01T09:30:15.654322",
        "2025-02-30T00:00:00",
        "2025-01-01T25:00:00",
        "garbage",
        "",
        "2025-01-01",
        "2025-01-01T10+05:00",
        "0001-01-01T00:00:00",
        "9999-12-31T23:59:59",
        "0001-01-01T00:00:00+14:00",
        "2025-01-01T00:00:00-23:59",
        "2025-13-01T00:00:00",
    ]
    stamps += [
        f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        for _ in range(2000)
    ]
    for stamp in stamps:
        assert Ages(now)(stamp) == retriever._days_since(stamp), stamp


def test_budget_overflow_both_blocks(make_corpus):
    c = make_corpus()
    big = "x&<>" * 100
    for n in range(12):
        c.save(
            f"constraint {n} " + "k" * 60,
            f"Constraint {n}: {big}",
            ["constraint"] + [f"tag{i}" for i in range(n * 3)],
        )
    c.save("huge tags", "tiny", ["constraint"] + [f"t{i:04d}" for i in range(400)])
    c.save("small old", "small", ["decision"], at="2025-01-01T00:00:00")
    for n in range(8):
        c.save(
            f"long title recall {n} " + "z" * 90, f"recall target {n} " + "<&>" * 80, ["recall"], type="note"
        )
    c.save("short recall", "recall target short", ["recall"], type="note")
    for query in ("recall target", "constraint", "tiny small", "recall"):
        ours = check(c, query)
    assert any(s.evicted for s in ours.stable_entries)


def test_several_sessions_and_tail(make_corpus):
    c = make_corpus()
    _english(c)
    long = "\n".join(f"line {i}: did things & <stuff>" for i in range(40))
    c.summary("s1", "first session summary")
    c.summary("s2", long)
    c.summary("s3", "third & <last>")
    c.summary("s3", "third again, no newline " + "w" * 900)
    # Equal stamps across sessions: SQLite's rowid order decides, we follow it.
    for n in range(12):
        c.summary(f"tie{n % 3}", f"tied summary {n}", at="2025-05-20T00:00:00")
    for session in (None, "s1", "s2", "s3", "tie0", "tie1", "unknown"):
        check(c, "redis", session_id=session)


def test_current_session_owns_newest_ten(make_corpus):
    c = make_corpus()
    _english(c)
    c.summary("old", "older session text")
    for n in range(10):
        c.summary("cur", f"current {n}")
    assert check(c, "ci", session_id="cur").session_tail == ""
    assert check(c, "ci", session_id=None).session_tail != ""


def test_no_user_store(make_corpus):
    c = make_corpus(with_user_store=False)
    _english(c)
    _chinese(c)
    for query in ("user language", "editor", "redis", "回答"):
        check(c, query)


def test_only_tail_no_facts_and_empty(make_corpus):
    c = make_corpus()
    assert check(c, "anything").stable_block == ""
    c.summary("s1", "a summary & more")
    assert check(c, "anything").stable_block.startswith("<memory-stable>")
    c.save("huge", "v", ["constraint"] + [f"t{i:04d}" for i in range(400)])
    assert "<fact" not in check(c, "huge").stable_block


def test_ties_compare_as_sets(make_corpus):
    c = make_corpus()
    for n in range(9):
        c.save(f"dup {n}", "same words here", ["same"], type="note", at="2025-05-01T00:00:00")
    for query in ("same words", "same", "here words"):
        ours = check(c, query)
    assert max(cand.tied for cand in ours.candidates) >= 5


def test_hidden_equals_deleted(make_corpus):
    c = make_corpus()
    _english(c)
    project, user, summaries = c.rows()
    victims = [m.id for m in project + user if m.title in ("redis", "release process", "user_language")]
    hidden = preview(project, user, summaries, query="redis release english", now=PIN, hidden_ids=victims)
    for vid in victims:
        c.manager.delete(vid)
    deleted = check(c, "redis release english")
    assert hidden.stable_block == deleted.stable_block
    assert hidden.context_block == deleted.context_block
    assert not {m.id for m in hidden.never_recalled} & set(victims)


def test_a_cache_over_each_state_of_the_files_answers_as_agentao(make_corpus):
    """The server holds one cache per state of the files; each answers exactly."""
    c = make_corpus()
    _english(c)
    tok = Tokenizer()

    def fresh():
        project, user, _ = c.rows()
        return EngineCache(project, user)

    cache = fresh()
    check(c, "redis", cache=cache, tokenizer=tok)
    check(c, "release", cache=cache, tokenizer=tok)
    assert cache.builds == 1
    c.save("redis", "Redis now on port 7000 with TLS.", ["infra", "tls"])
    gone = c.save("temp", "temporary redis note", ["infra"])
    check(c, "redis tls", cache=fresh(), tokenizer=tok)
    c.manager.delete(gone.id)
    check(c, "redis temporary", cache=fresh(), tokenizer=tok)
