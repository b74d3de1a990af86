"""What a preview returns: the two blocks, their budgets and every explanation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from itertools import islice
from typing import Any

from dashboard.records import Memory

from .lazy import MadeOnRead
from .ranking import Ranked, Recall
from .stable import Fitted
from .tokenize import TokenOrigin

CANDIDATES_PER_PAGE = 100  # the twin's first page: the block, its cuts and the near misses
EVICTED_SHOWN = 100  # stable entries left out by the budget, listed after the shown ones


@dataclass(frozen=True)
class Budget:
    """Characters used by a block against its budget."""

    used: int
    limit: int

    @property
    def fraction(self) -> float:
        """used / limit, for meters (may exceed 1 when a huge tail overflows)."""
        return self.used / self.limit if self.limit else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain form for the JSON twin, of a size that does not grow with the store: candidates
        paged by rank, the shown stable entries plus ``EVICTED_SHOWN`` left out, never-recalled counted."""
        return {"used": self.used, "limit": self.limit}


class Unmatched(MadeOnRead[Memory]):
    """The records of ``pool`` that ``recall`` gave no signal: every scored record is one of the
    pool (hidden ones are in neither), so they are counted without being listed; a slice walks
    the pool only as far as it needs (a page lists 50 of 100,000)."""

    def __init__(self, pool: Sequence[Memory], recall: Recall):
        self._pool, self._recall = pool, recall
        self._hit: set[str] | None = None

    def __len__(self) -> int:
        return len(self._pool) - len(self._recall.eligible) - len(self._recall.excluded)

    def _found(self) -> Iterator[Memory]:
        if self._hit is None:
            self._hit = {s.memory.id for s in (*self._recall.eligible, *self._recall.excluded)}
        hit = self._hit
        return (m for m in self._pool if m.id not in hit)

    def _rows(self, start: int, stop: int) -> list[Memory]:
        return list(islice(self._found(), start, stop))

    def __iter__(self) -> Iterator[Memory]:
        return self._found()


@dataclass(frozen=True)
class Preview:
    """Everything agentao would inject for one query, and why."""

    stable_block: str
    context_block: str
    stable_budget: Budget
    context_budget: Budget
    session_tail: str
    stable_entries: Fitted  # every entry chosen, made on access (thousands at 10,000 memories)
    query: str
    query_tokens: tuple[TokenOrigin, ...]
    hints: tuple[str, ...]
    hint_tokens: tuple[str, ...]
    recall: Recall = field(repr=False)
    recall_note: str  # "" when recall ran; else why agentao recalls nothing
    cjk_mode: str
    now: datetime
    hidden_ids: frozenset[str]
    # The live, unhidden records, for the lazily built never-recalled list.
    pool: tuple[Memory, ...] = field(repr=False, default=())

    @property
    def candidates(self) -> Ranked:
        """Every record with a signal, ranked and marked (each row made when read)."""
        return self.recall.candidates

    @cached_property
    def never_recalled(self) -> Unmatched:
        """Records with no signal for this query (all of them if recall did not run), in the
        pool's order: counted without a list, the first few found when read."""
        return Unmatched(self.pool, self.recall)

    @property
    def never_recalled_reason(self) -> str:
        """Why the records in :attr:`never_recalled` are not candidates."""
        return self.recall_note or "no signal"

    def to_dict(self, page: int = 1, per_page: int = CANDIDATES_PER_PAGE) -> dict[str, Any]:
        """Plain form for the JSON twin, of a size that does not grow with the store. Candidates are paged in
        rank order (page 1: the block, the cuts and the nearest misses); stable entries are the shown ones
        plus the first ``EVICTED_SHOWN`` left out; never-recalled records are only counted."""
        ranked = self.candidates
        start = (page - 1) * per_page
        shown = self.stable_entries.shown()
        evicted = [s for _, s in self.stable_entries.listed(EVICTED_SHOWN) if not s.shown]
        return {
            "stable_block": self.stable_block,
            "context_block": self.context_block,
            "budgets": {"stable": self.stable_budget.to_dict(), "context": self.context_budget.to_dict()},
            "session_tail": self.session_tail,
            "stable_entries": [s.to_dict() for s in shown + evicted],
            "stable_entries_total": len(self.stable_entries),
            "query": self.query,
            "query_tokens": [t.to_dict() for t in self.query_tokens],
            "context_hints": list(self.hints),
            "hint_tokens": list(self.hint_tokens),
            "candidates": [c.to_dict() for c in ranked[start : start + per_page]],
            "candidates_total": len(ranked),
            "candidates_page": page,
            "per_page": per_page,
            "candidates_pages": max(1, -(-len(ranked) // per_page)),
            "marks": ranked.marks(),
            "recall_note": self.recall_note,
            "cjk_mode": self.cjk_mode,
            "now": self.now.isoformat(),
            "hidden_ids": sorted(self.hidden_ids),
            "never_recalled": {"reason": self.never_recalled_reason, "count": len(self.never_recalled)},
        }
