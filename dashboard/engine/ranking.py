"""Ranking recall candidates: the top 5 by heap now, the full explained table on demand.

Order: score descending, ``updated_at`` descending (its place among all stamps), id ascending.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import groupby
from operator import attrgetter
from typing import Any

from dashboard.records import Memory

from . import recall as rc
from .lazy import MadeOnRead
from .recall import Scored, Term
from .render import EXCERPT_CHARS, context_fact, context_room

SortKey = Callable[[rc.Scored], tuple[float, int, str]]


@dataclass(frozen=True)
class Candidate:
    """A record with a non-zero recall signal and what became of it. ``mark``: ``in_block``, ``cut_top5``,
    ``cut_context_budget`` or ``excluded_stable``; ``rank``: 1-based among ranked records (None if excluded);
    ``tied``: ranked records with exactly this score (agentao orders those arbitrarily); ``varies``: whether
    it reaches ``<memory-context>`` depends on that order (see :attr:`Recall.varies`)."""

    scored: Scored
    mark: str
    rank: int | None
    tied: int
    cost: int | None = None  # characters its fact takes in the context block
    varies: bool = False

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

    def to_dict(self) -> dict[str, Any]:
        """Plain form for the JSON twin."""
        m = self.memory
        return {
            "id": m.id,
            "title": m.title,
            "scope": m.scope,
            "type": m.type,
            "store": m.store,
            "updated_at": m.updated_at,
            "excerpt": m.content[:EXCERPT_CHARS],  # agentao's RecallCandidate.excerpt
            "score": self.score,
            "score_text": f"{self.score:.2f}",
            "signal": self.scored.signal,
            "days": self.scored.days,
            "reasons": list(self.reasons),
            "mark": self.mark,
            "rank": self.rank,
            "tied": self.tied,
            "tie_varies": self.varies,
            "cost": self.cost,
            "terms": [t.to_dict() for t in self.terms],
        }


def stamp_ranks(stamps: Iterable[str]) -> dict[str, int]:
    """Each distinct ``updated_at`` string -> its place in ascending string order."""
    return {s: n for n, s in enumerate(sorted(set(stamps)))}


def order_key(ranks: dict[str, int]) -> SortKey:
    """Sort key giving the documented tie order (ascending = best first)."""

    def key(s: rc.Scored) -> tuple[float, int, str]:
        return (-s.score, -ranks[s.memory.updated_at], s.memory.id)

    return key


@dataclass
class Sorting:
    """The part of a recall's ranking read so far (see :class:`Ranked`)."""

    head: list[rc.Scored] = field(default_factory=list)  # the first len(head) eligible, in order
    ties: Counter[float] | None = None  # eligible records per score
    excluded: list[rc.Scored] | None = None  # the stable-shown records, in order


@dataclass
class Recall:
    """One recall run: the block's facts now, every candidate's mark on demand."""

    eligible: list[rc.Scored]  # ranked by agentao (not shown in the stable block)
    excluded: list[rc.Scored]  # shown in the stable block: agentao never scores them
    top: list[rc.Scored]  # the first TOP_K of ``eligible`` in order
    costs: list[int]  # context-fact cost of each of ``top``
    kept: int  # how many of ``top`` the budget let in
    facts: list[str]  # their rendered facts
    key: SortKey  # the sort key (see :func:`order_key`)
    # What reading ``candidates`` sorted so far, kept here and not on the Ranked view: a view
    # cached on the recall it points back to is a reference cycle, which refcounting cannot
    # free, so every request's recall (thousands of Scored at 10,000 memories) waited for a
    # full collection of the server's heap, which then landed inside some later request.
    sorting: Sorting = field(default_factory=Sorting, repr=False, compare=False)

    @cached_property
    def contenders(self) -> list[rc.Scored]:
        """The records that can reach ``<memory-context>`` under some order of equal scores: the
        first TOP_K and every record tied with the last of them, in the documented order."""
        if len(self.top) < rc.TOP_K:
            return sorted(self.eligible, key=self.key)
        last = self.top[-1].score
        return sorted((s for s in self.eligible if s.score >= last), key=self.key)

    @cached_property
    def varies(self) -> frozenset[str]:
        """Ids whose place in ``<memory-context>`` (in it or not) depends on agentao's order among equal
        scores, which changes from one agentao process to the next (contract §10.4).

        A record can be in the block when fewer than 5 score higher and the facts of those, then its
        own, fit; it is always in when its whole equal-score group is within the 5 and the facts of the
        group and of everything above it fit (the fill stops at the first fact that does not)."""
        room, above, above_cost, out = context_room(), 0, 0, []
        # Equal scores are often copies of one text: each distinct fact is measured once.
        memo: dict[tuple[Any, ...], int] = {}

        def cost(s: rc.Scored) -> int:
            m = s.memory
            key = (m.scope, m.type, m.title, m.content[:EXCERPT_CHARS], m.confidence, s._values)
            found = memo.get(key)
            if found is None:
                found = memo[key] = len(context_fact(m, s.score, s.reasons)) + 1
            return found

        for _score, group in groupby(self.contenders, key=attrgetter("score")):
            if above >= rc.TOP_K:
                break
            members = list(group)
            costs = [cost(s) for s in members]
            always = above + len(members) <= rc.TOP_K and above_cost + sum(costs) <= room
            if not always:
                out += [s.memory.id for s, c in zip(members, costs) if above_cost + c <= room]
            above, above_cost = above + len(members), above_cost + sum(costs)
        return frozenset(out)

    @property
    def order_varies(self) -> bool:
        """Two facts in the block have equal scores: agentao's order of them changes per process."""
        kept = [s.score for s in self.top[: self.kept]]
        return len(set(kept)) < len(kept)

    @property
    def candidates(self) -> Ranked:
        """Every record with a signal, ranked, each with its mark (a row is made when read)."""
        return Ranked(self)


class Ranked(MadeOnRead[Candidate]):
    """Every record with a signal in rank order, marked: the eligible ranked, then those shown in
    the stable block.  Rows are made when read, the first ``k`` by a heap: a page that reads 15
    rows of 50,000 candidates sorts none of the rest (reading them all sorts once)."""

    def __init__(self, recall: Recall):
        self._r, self._s = recall, recall.sorting  # a view: what it sorts stays on the recall

    def __len__(self) -> int:
        return len(self._r.eligible) + len(self._r.excluded)

    def marks(self) -> dict[str, int]:
        """How many candidates carry each mark (those carried), without making a row."""
        r = self._r
        counts = {
            rc.IN_BLOCK: r.kept,
            rc.CUT_BUDGET: len(r.top) - r.kept,
            rc.CUT_TOP_K: len(r.eligible) - len(r.top),
            rc.EXCLUDED_STABLE: len(r.excluded),
        }
        return {mark: n for mark, n in counts.items() if n}

    def _ranked(self, k: int) -> list[rc.Scored]:
        eligible, made = self._r.eligible, self._s
        if len(made.head) < min(k, len(eligible)):
            if k * 8 >= len(eligible):  # most of them: one sort is cheaper than a heap
                made.head = sorted(eligible, key=self._r.key)
            else:
                made.head = heapq.nsmallest(k, eligible, key=self._r.key)
        return made.head

    def _row(self, n: int, s: rc.Scored) -> Candidate:
        """The candidate ranked ``n`` (1-based) among the eligible."""
        if self._s.ties is None:
            self._s.ties = Counter(x.score for x in self._r.eligible)
        tied = self._s.ties[s.score]
        moves = s.memory.id in self._r.varies
        if n > rc.TOP_K:
            return Candidate(s, rc.CUT_TOP_K, n, tied, varies=moves)
        mark = rc.IN_BLOCK if n <= self._r.kept else rc.CUT_BUDGET
        return Candidate(s, mark, n, tied, self._r.costs[n - 1], moves)

    def _excluded_rows(self) -> list[rc.Scored]:
        if self._s.excluded is None:
            self._s.excluded = sorted(self._r.excluded, key=self._r.key)
        return self._s.excluded

    def _rows(self, start: int, stop: int) -> list[Candidate]:
        ranked = len(self._r.eligible)
        out = [self._row(n + 1, s) for n, s in enumerate(self._ranked(stop)[start:stop], start)]
        if stop > ranked:
            out += [
                Candidate(s, rc.EXCLUDED_STABLE, None, 0)
                for s in self._excluded_rows()[max(0, start - ranked) : stop - ranked]
            ]
        return out

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self._rows(0, len(self)))


EMPTY = Recall([], [], [], [], 0, [], order_key({}))


def rank(scored: list[rc.Scored], shown: frozenset[str], ranks: dict[str, int]) -> Recall:
    """Split off the stable-shown records, take the top 5 and fit the context block. The fill stops at the
    first fact that does not fit (unlike the stable block); later, smaller candidates are not tried."""
    key = order_key(ranks)
    eligible = [s for s in scored if s.memory.id not in shown]
    excluded = [s for s in scored if s.memory.id in shown] if shown else []
    top = heapq.nsmallest(rc.TOP_K, eligible, key=key)
    room, facts, costs, stopped = context_room(), [], [], False
    for s in top:
        text = context_fact(s.memory, s.score, s.reasons)
        costs.append(len(text) + 1)
        if stopped or room - costs[-1] < 0:
            stopped = True
            continue
        room -= costs[-1]
        facts.append(text)
    return Recall(eligible, excluded, top, costs, len(facts), facts, key)
