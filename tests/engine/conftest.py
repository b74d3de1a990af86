"""Fixtures for the engine tests: corpora built through agentao, clocks pinned."""

from __future__ import annotations

import pytest
from _harness import Corpus, agentao_without_jieba, pin_agentao_clock

from dashboard.engine import Tokenizer


@pytest.fixture
def make_corpus(tmp_path, monkeypatch):
    """Factory: ``make_corpus(with_user_store=True)`` -> a fresh :class:`Corpus`."""
    pin_agentao_clock(monkeypatch)
    made = []

    def make(with_user_store: bool = True, **kw) -> Corpus:
        corpus = Corpus(tmp_path / f"c{len(made)}", monkeypatch, with_user_store, **kw)
        made.append(corpus)
        return corpus

    return make


@pytest.fixture
def corpus(make_corpus) -> Corpus:
    """An empty corpus with both stores."""
    return make_corpus()


@pytest.fixture(params=["jieba", "latin-only"])
def cjk(request, monkeypatch):
    """Both CJK modes: ours and agentao's switched together."""
    if request.param == "latin-only":
        agentao_without_jieba(monkeypatch)
        return Tokenizer(use_jieba=False)
    return Tokenizer(use_jieba=True)
