"""Corpora written through agentao's own API, and agentao's answer for a query.

Used by the conformance tests and by bench/bench_preview.py.  agentao reads
its clock in two places: ``manager._now`` (stamps on save) and the
retriever's ``datetime.now`` (recency); both are pinned here.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import agentao.memory.manager as agentao_manager
import agentao.memory.retriever as agentao_retriever
import agentao.memory.storage as agentao_storage
from _rows import read_memories, read_summaries
from agentao.memory import (
    MemoryManager,
    MemoryPromptRenderer,
    MemoryRetriever,
    SaveMemoryRequest,
    SQLiteMemoryStore,
)
from agentao.prompts.helpers import extract_context_hints

PIN = datetime(2025, 6, 1, 12, 0, 0, tzinfo=timezone.utc)


class PinnedDatetime(datetime):
    """Stand-in for ``datetime`` inside agentao's retriever: ``now`` is ``PIN``."""

    pin = PIN

    @classmethod
    def now(cls, tz=None):
        return cls.pin.astimezone(tz) if tz else cls.pin.replace(tzinfo=None)


def pin_agentao_clock(monkeypatch, when: datetime = PIN) -> None:
    """Make agentao's recency computation see ``when`` as the current time."""
    pinned = type("Pinned", (PinnedDatetime,), {"pin": when})
    monkeypatch.setattr(agentao_retriever, "datetime", pinned)


def agentao_without_jieba(monkeypatch) -> None:
    """Make agentao behave as if its ``i18n`` extra were not installed."""

    def missing():
        raise ImportError("jieba hidden for this test")

    monkeypatch.setattr(agentao_retriever, "_import_jieba", missing)


class Corpus:
    """A project store and an optional user store, filled via MemoryManager.

    Every save is stamped by a fake clock that advances one second per call
    unless ``at`` is given, so stamps are distinct unless a test wants ties.
    """

    def __init__(
        self,
        root: Path,
        monkeypatch,
        with_user_store: bool = True,
        start: datetime = datetime(2025, 5, 1, 9, 0, 0),
    ):
        self.project_db = root / "project" / ".agentao" / "memory.db"
        self.user_db = root / "home" / ".agentao" / "memory.db" if with_user_store else None
        self.manager = MemoryManager(
            SQLiteMemoryStore.open(self.project_db),
            SQLiteMemoryStore.open(self.user_db) if with_user_store else None,
        )
        self.clock = start
        self._fixed: str | None = None
        # The manager stamps created_at, the storage layer stamps updated_at.
        monkeypatch.setattr(agentao_manager, "_now", self._now)
        monkeypatch.setattr(agentao_storage, "_now_iso", self._same)

    def _now(self) -> str:
        if self._fixed is not None:
            return self._fixed
        self.clock += timedelta(seconds=1)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S")

    def _same(self) -> str:
        # Same second as the manager's stamp of this write, unless fixed.
        return self._fixed or self.clock.strftime("%Y-%m-%dT%H:%M:%S")

    def save(self, key, value, tags=(), scope=None, type=None, source="explicit", at=None):
        """Save through agentao's upsert; ``at`` fixes the stamp (a string)."""
        self._fixed = at
        try:
            return self.manager.upsert(
                SaveMemoryRequest(
                    key=key, value=value, tags=list(tags), scope=scope, type=type, source=source
                )
            )
        finally:
            self._fixed = None

    def summary(self, session_id: str, text: str, at=None) -> None:
        """Write a compaction summary under ``session_id``."""
        self.manager.archive_session(session_id)
        self._fixed = at
        try:
            self.manager.save_session_summary(text, 1000, 10)
        finally:
            self._fixed = None

    # -- reading back, as the dashboard will -------------------------------
    def rows(self):
        """(project rows, user rows, summaries) read with plain sqlite3."""
        return (
            read_memories(self.project_db, "project"),
            read_memories(self.user_db, "user"),
            read_summaries(self.project_db),
        )


class AgentaoAnswer:
    """What agentao's own prompt path produces for one query."""

    def __init__(
        self,
        corpus: Corpus,
        query: str,
        messages=(),
        session_id=None,
        retriever: MemoryRetriever | None = None,
    ):
        mgr = corpus.manager
        # A fresh random id is agentao's view of a brand-new session.
        mgr.archive_session(session_id)
        renderer = MemoryPromptRenderer()
        self.retriever = retriever or MemoryRetriever(mgr)
        self.stable_entries = mgr.get_stable_entries()
        self.tail = mgr.get_cross_session_tail()
        self.shown = renderer.fit_stable_records(self.stable_entries, session_tail=self.tail)
        self.stable_block = renderer.render_stable_block(self.shown, session_tail=self.tail)
        msgs = [m if isinstance(m, dict) else {"role": "user", "content": m} for m in messages]
        self.hints = extract_context_hints(msgs)
        self.candidates = self.retriever.recall_candidates(
            query=query, context_hints=self.hints, exclude_ids={r.id for r in self.shown}
        )
        self.context_block = renderer.render_dynamic_block(self.candidates)
        self.renderer = renderer
