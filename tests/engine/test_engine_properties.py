"""Property-based conformance: random corpora written through agentao.

Hypothesis draws memories (English, Chinese, mixed; many tags; stale,
fresh and future stamps), summaries from several sessions, recent messages
and queries; each draw is checked against agentao's own prompt path with
``_conform.check`` (ties compared as sets).
"""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from _conform import check
from _harness import PIN, Corpus, agentao_without_jieba, pin_agentao_clock
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dashboard.engine import Tokenizer

WORDS = [
    "redis",
    "cache",
    "caches",
    "tests",
    "test",
    "class",
    "v3",
    "v16",
    "api",
    "deploy",
    "the",
    "is",
    "of",
    "python",
    "uv.lock",
    "src/app.py",
    "billing/service.py",
    "memories",
    "keyword",
    "Docker",
    "PostgreSQL16",
    "部署",
    "数据库",
    "版本",
    "中文回答",
    "Python版本",
    "缓存",
    "测试覆盖率",
    "かな",
    "한국어",
    "x&y",
    "<tag>",
    "foo_bar",
    "a-b",
    "README.md",
    "3.11.2",
    "success",
    "note",
]
TAGS = [
    "user",
    "preference",
    "decision",
    "constraint",
    "workflow",
    "profile",
    "infra",
    "redis",
    "缓存",
    "build-system",
    "Cache",
    "project_fact",
]
TYPES = [None, None, "note", "project_fact", "decision", "custom_type"]
SEPS = [" ", " ", ", ", "/", "_", "-", "。", "\n"]

word_runs = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPS)), min_size=1, max_size=14).map(
    lambda ws: "".join(w + s for w, s in ws)
)
memories = st.lists(
    st.fixed_dictionaries(
        {
            "key": word_runs,
            "value": word_runs,
            "tags": st.lists(st.sampled_from(TAGS), max_size=6),
            "type": st.sampled_from(TYPES),
            "scope": st.sampled_from([None, None, "user", "project"]),
            "age": st.one_of(st.none(), st.integers(-10, 200)),
        }
    ),
    min_size=1,
    max_size=14,
)
summaries = st.lists(
    st.tuples(
        st.sampled_from(["s1", "s2", "s3"]), st.lists(word_runs, min_size=1, max_size=30).map("\n".join)
    ),
    max_size=5,
)
queries = st.lists(word_runs | st.just(""), min_size=1, max_size=3)
messages = st.lists(word_runs, max_size=3)


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mems=memories,
    sums=summaries,
    qs=queries,
    msgs=messages,
    user_store=st.booleans(),
    jieba=st.booleans(),
    session=st.sampled_from([None, "s1", "s2"]),
)
def test_random_corpora_conform(mems, sums, qs, msgs, user_store, jieba, session):
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        pin_agentao_clock(mp)
        if not jieba:
            agentao_without_jieba(mp)
        corpus = Corpus(Path(tmp), mp, with_user_store=user_store)
        for n, m in enumerate(mems):
            at = (
                None
                if m["age"] is None
                else (PIN.replace(tzinfo=None) - timedelta(days=m["age"])).strftime("%Y-%m-%dT%H:%M:%S")
            )
            corpus.save(
                f"k{n} {m['key']}"[:100].replace("\n", " "),
                m["value"],
                m["tags"],
                scope=m["scope"],
                type=m["type"],
                at=at,
            )
        for sid, text in sums:
            corpus.summary(sid, text)
        tok = Tokenizer(use_jieba=jieba)
        for q in qs:
            ours = check(corpus, q, msgs, session, tokenizer=tok)
            event(f"candidates={min(len(ours.candidates), 6)}")
            event(f"evicted={any(s.evicted for s in ours.stable_entries)}")
            event(f"tail={bool(ours.session_tail)}")
