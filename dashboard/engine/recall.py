"""Recall scoring with every term broken out (contract §10.4).

score = w·tag + 3·title + 2·keyword + 1·content + 2·filepath + 1·recency − 2·stale, summed
in that order so the float is agentao's to the last bit; recency alone never qualifies.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from dashboard.records import Memory

from .cache import Bundle

TOP_K = 5
STALE_DAYS = 90

# Marks for a candidate (a record with a non-zero signal).
IN_BLOCK = "in_block"
CUT_TOP_K = "cut_top5"
CUT_BUDGET = "cut_context_budget"
EXCLUDED_STABLE = "excluded_stable"


def tag_weight(q: int) -> float:
    """Short-query dampening: 4.0 for 3+ query tokens, 2.5 for 2, else 1.5."""
    return 4.0 if q >= 3 else (2.5 if q == 2 else 1.5)


def _parse_us(stamp: str) -> int | None:
    """Microseconds since the epoch of a stamp, naive read as UTC; None if unusable."""
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        since = then - (_NAIVE_EPOCH if then.tzinfo is None else _EPOCH)
    except Exception:  # agentao swallows every error here and calls the age 0
        return None
    # The timedelta's fields in integer arithmetic: the same number as
    # ``since // timedelta(microseconds=1)`` at a third of the cost (a
    # findings scan parses tens of thousands of distinct stamps).
    return (since.days * 86400 + since.seconds) * 1_000_000 + since.microseconds


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_NAIVE_EPOCH = datetime(1970, 1, 1)  # a naive stamp is read as UTC
_US = timedelta(microseconds=1)


class Ages:
    """Days since ``updated_at`` stamps at one ``now``, floored at 0, as agentao's float exactly.

    A stamp without offset is UTC (contract §17.1); one that cannot be parsed is 0 days old.
    ``memo`` (stamp -> microseconds) may be shared so each stamp is parsed once."""

    def __init__(self, now: datetime, memo: dict[str, int | None] | None = None):
        self.now_us = (now - _EPOCH) // _US
        self.memo = {} if memo is None else memo

    def __call__(self, stamp: str) -> float:
        memo = self.memo
        if stamp in memo:
            then = memo[stamp]
        else:
            then = memo[stamp] = _parse_us(stamp)
        return self._since(then)

    def once(self, stamp: str) -> float:
        """The same age, for a stamp asked about once: parsed, not memoised
        (the stamps of a findings scan are nearly all distinct)."""
        return self._since(_parse_us(stamp))

    def _since(self, then: int | None) -> float:
        if then is None:
            return 0.0
        return max(0.0, (self.now_us - then) / 10**6 / 86400)


@dataclass(frozen=True)
class Term:
    """One score term: its value, weight, contribution and the matched tokens."""

    name: str
    value: float
    weight: float
    contribution: float
    matched: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain form for the JSON twin."""
        return {  # written out: a twin page makes 700 of these
            "name": self.name,
            "value": self.value,
            "weight": self.weight,
            "contribution": self.contribution,
            "matched": list(self.matched),
        }


class Scored:
    """A record's score and unweighted signal (the hot loop); terms and reasons on demand."""

    __slots__ = ("memory", "score", "signal", "days", "_w", "_values", "_hits", "_terms")

    def __init__(
        self,
        memory: Memory,
        score: float,
        signal: float,
        days: float,
        w: float,
        values: tuple[float, ...],
        hits: tuple[Any, ...],
    ):
        self.memory, self.score, self.signal, self.days = memory, score, signal, days
        self._w, self._values, self._hits = w, values, hits
        self._terms: tuple[Term, ...] | None = None

    @property
    def terms(self) -> tuple[Term, ...]:
        """The seven terms in formula order, each with its matched tokens (made once: the
        answer, the picture and the table each read the same few rows)."""
        if self._terms is None:
            self._terms = self._make_terms()
        return self._terms

    def _make_terms(self) -> tuple[Term, ...]:
        tag, title, kw, content, fp, recency, stale = self._values
        hit = [tuple(sorted(h)) for h in self._hits]
        w = self._w
        return (
            Term("tag", tag, w, w * tag, hit[0]),
            Term("title", title, 3.0, 3.0 * title, hit[1]),
            Term("keyword", kw, 2.0, 2.0 * kw, hit[2]),
            Term("content", content, 1.0, 1.0 * content, hit[3]),
            Term("filepath_hint", fp, 2.0, 2.0 * fp, hit[4]),
            Term("recency", recency, 1.0, 1.0 * recency),
            Term("stale", stale, -2.0, -2.0 * stale),
        )

    @property
    def reasons(self) -> tuple[str, ...]:
        """agentao's reason names, in agentao's order."""
        tag, title, kw, content, fp, _, stale = self._values
        return tuple(
            name
            for name, on in (
                ("tag_match", tag > 0),
                ("title_overlap", title > 0),
                ("keyword_match", kw > 0),
                ("content_match", content > 0),
                ("filepath_hint", fp == 1.0),
                ("stale_penalty", stale == 1.0),
                ("explicit", self.memory.confidence == "explicit_user"),
            )
            if on
        )


def score(
    memory: Memory,
    bundle: Bundle,
    query: frozenset[str],
    hints: frozenset[str],
    now: datetime | Ages,
    skip_silent: bool = False,
) -> Scored | None:
    """Score one record against query and hint tokens; ``now`` a clock or :class:`Ages`. With ``skip_silent``
    a record without signal gives None (the hot loop drops those anyway and need not pay for their age)."""
    q = len(query)
    per = max(q, 1)
    w = tag_weight(q)
    hits = (
        query.intersection(bundle.tags),
        query.intersection(bundle.title),
        query.intersection(bundle.keywords),
        query.intersection(bundle.content),
        hints.intersection(bundle.keywords),
    )
    if skip_silent and not (hits[0] or hits[1] or hits[2] or hits[3] or hits[4]):
        return None
    tag = len(hits[0]) / per
    # |Q ∪ T| from the sizes: the same integer without building the union.
    title = len(hits[1]) / (q + len(bundle.title) - len(hits[1])) if query and bundle.title else 0.0
    kw = len(hits[2]) / per
    content = len(hits[3]) / per
    fp = 1.0 if hits[4] else 0.0
    days = (now if isinstance(now, Ages) else Ages(now))(memory.updated_at)
    recency = 1.0 / (1.0 + days / 30)
    stale = 1.0 if days > STALE_DAYS else 0.0
    # Written out in agentao's order: float addition is not associative.
    total = w * tag + 3.0 * title + 2.0 * kw + 1.0 * content + 2.0 * fp + 1.0 * recency - 2.0 * stale
    return Scored(
        memory,
        total,
        tag + title + kw + content + fp,
        days,
        w,
        (tag, title, kw, content, fp, recency, stale),
        # Kept as tuples: the collector stops tracking a tuple of strings, never a frozenset,
        # and a preview holds thousands of these while it renders.
        tuple(map(tuple, hits)),
    )


def order(scored: list[Scored]) -> list[Scored]:
    """Deterministic ranking: score desc, then updated_at desc, then id asc. agentao leaves equal scores in
    hash-set order (it differs per process); this fixed order is one of the orders agentao can produce."""
    out = sorted(scored, key=lambda s: s.memory.id)
    out.sort(key=lambda s: s.memory.updated_at, reverse=True)
    out.sort(key=lambda s: s.score, reverse=True)
    return out
