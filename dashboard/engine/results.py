"""What a preview returns: the two blocks, their budgets and every explanation."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from dashboard.records import Memory

from .ranking import Candidate, Recall
from .stable import Selected
from .tokenize import TokenOrigin


@dataclass(frozen=True)
class Budget:
    """Characters used by a block against its budget."""

    used: int
    limit: int

    @property
    def fraction(self) -> float:
        """used / limit, for meters (may exceed 1 when a huge tail overflows)."""
        return self.used / self.limit if self.limit else 0.0

    def to_dict(self) -> dict:
        """Plain form for the JSON twin."""
        return {"used": self.used, "limit": self.limit}


@dataclass(frozen=True)
class Preview:
    """Everything agentao would inject for one query, and why."""

    stable_block: str
    context_block: str
    stable_budget: Budget
    context_budget: Budget
    session_tail: str
    stable_entries: tuple[Selected, ...]
    query: str
    query_tokens: tuple[TokenOrigin, ...]
    hints: tuple[str, ...]
    hint_tokens: tuple[str, ...]
    recall: Recall = field(repr=False)
    recall_note: str          # "" when recall ran; else why agentao recalls nothing
    cjk_mode: str
    now: datetime
    hidden_ids: frozenset[str]
    # The live, unhidden records, for the lazily built never-recalled list.
    pool: tuple[Memory, ...] = field(repr=False, default=())

    @property
    def stable_ids(self) -> frozenset[str]:
        """Ids of the entries shown in ``<memory-stable>`` (excluded from recall)."""
        return frozenset(s.memory.id for s in self.stable_entries if s.shown)

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        """Every record with a signal, ranked and marked (built on first access)."""
        return self.recall.candidates

    @cached_property
    def never_recalled(self) -> tuple[Memory, ...]:
        """Records with no signal for this query (all of them if recall did not run).

        Built on first access: with 10,000 records it is the one big list.
        """
        hit = {s.memory.id for s in (*self.recall.eligible, *self.recall.excluded)}
        return tuple(m for m in self.pool if m.id not in hit)

    @property
    def never_recalled_reason(self) -> str:
        """Why the records in :attr:`never_recalled` are not candidates."""
        return self.recall_note or "no signal"

    def to_dict(self, include_never: bool = True) -> dict:
        """Plain form for the JSON twin."""
        out = {
            "stable_block": self.stable_block, "context_block": self.context_block,
            "budgets": {"stable": self.stable_budget.to_dict(),
                        "context": self.context_budget.to_dict()},
            "session_tail": self.session_tail,
            "stable_entries": [s.to_dict() for s in self.stable_entries],
            "query": self.query,
            "query_tokens": [t.to_dict() for t in self.query_tokens],
            "hints": list(self.hints), "hint_tokens": list(self.hint_tokens),
            "candidates": [c.to_dict() for c in self.candidates],
            "recall_note": self.recall_note, "cjk_mode": self.cjk_mode,
            "now": self.now.isoformat(), "hidden_ids": sorted(self.hidden_ids),
        }
        if include_never:
            out["never_recalled"] = {
                "reason": self.never_recalled_reason,
                "records": [{"id": m.id, "title": m.title, "store": m.store}
                            for m in self.never_recalled]}
        return out
