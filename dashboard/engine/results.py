"""What a preview returns: the two blocks, their budgets and every explanation."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from dashboard.records import Memory

from .recall import Scored, Term
from .stable import Selected
from .tokenize import TokenOrigin


@dataclass(frozen=True)
class Candidate:
    """A record with a non-zero recall signal and what became of it.

    ``mark`` is one of ``in_block``, ``cut_top5``, ``cut_context_budget`` or
    ``excluded_stable`` (shown in the stable block, so agentao never scores
    it; we still do, to explain).  ``rank`` is the 1-based place among the
    records agentao ranks (None when excluded).  ``tied`` counts ranked
    records with exactly this score: agentao orders those arbitrarily.
    """

    scored: Scored
    mark: str
    rank: int | None
    tied: int
    cost: int | None = None  # characters its fact takes in the context block

    @property
    def memory(self) -> Memory:
        """The scored record."""
        return self.scored.memory

    @property
    def score(self) -> float:
        """The total, bit-identical to agentao's."""
        return self.scored.score

    @property
    def terms(self) -> tuple[Term, ...]:
        """The seven terms in formula order."""
        return self.scored.terms

    @property
    def reasons(self) -> tuple[str, ...]:
        """agentao's reason names, in agentao's order."""
        return self.scored.reasons

    def to_dict(self) -> dict:
        """Plain form for the JSON twin."""
        m = self.memory
        return {"id": m.id, "title": m.title, "scope": m.scope, "type": m.type,
                "store": m.store, "updated_at": m.updated_at,
                "score": self.score, "score_text": f"{self.score:.2f}",
                "signal": self.scored.signal, "days": self.scored.days,
                "reasons": list(self.reasons), "mark": self.mark,
                "rank": self.rank, "tied": self.tied, "cost": self.cost,
                "terms": [t.to_dict() for t in self.terms]}


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
    candidates: tuple[Candidate, ...]
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

    @cached_property
    def never_recalled(self) -> tuple[Memory, ...]:
        """Records with no signal for this query (all of them if recall did not run).

        Built on first access: with 10,000 records it is the one big list.
        """
        hit = {c.memory.id for c in self.candidates}
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
