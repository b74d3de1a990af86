"""Recall scoring with every term broken out (contract §10.4).

score = w·tag + 3·title + 2·keyword + 1·content + 2·filepath + 1·recency − 2·stale,
summed left to right in that order so the float is agentao's to the last bit
(subtracting 2·stale equals adding its negation exactly in IEEE arithmetic).
A record is a candidate only when tag + title + keyword + content + filepath
> 0; recency alone never qualifies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

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


def days_since(stamp: str, now: datetime) -> float:
    """Age in days of an ``updated_at`` stamp, floored at 0.

    A stamp without offset is read as UTC (agentao's behaviour even though
    it writes local time, contract §17.1); anything that cannot be parsed or
    subtracted is "0 days old", as agentao swallows every error here.
    """
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if then.tzinfo is None:
            then = then.replace(tzinfo=timezone.utc)
        return max(0.0, (now - then).total_seconds() / 86400)
    except Exception:
        return 0.0


@dataclass(frozen=True)
class Term:
    """One score term: its value, weight, contribution and the matched tokens."""

    name: str
    value: float
    weight: float
    contribution: float
    matched: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """Plain form for the JSON twin."""
        return {"name": self.name, "value": self.value, "weight": self.weight,
                "contribution": self.contribution, "matched": list(self.matched)}


@dataclass(frozen=True)
class Scored:
    """A record's score, terms, reasons and unweighted signal."""

    memory: Memory
    score: float
    terms: tuple[Term, ...]
    reasons: tuple[str, ...]
    signal: float
    days: float


def score(memory: Memory, bundle: Bundle, query: frozenset[str],
          hints: frozenset[str], now: datetime) -> Scored:
    """Score one record against query tokens and hint tokens at time ``now``."""
    q = len(query)
    per = max(q, 1)
    w = tag_weight(q)
    tag_hit = query & bundle.tags
    title_hit = query & bundle.title
    kw_hit = query & bundle.keywords
    content_hit = query & bundle.content
    fp_hit = hints & bundle.keywords
    tag = len(tag_hit) / per
    union = len(query | bundle.title)
    title = len(title_hit) / union if query and bundle.title else 0.0
    kw = len(kw_hit) / per
    content = len(content_hit) / per
    fp = 1.0 if fp_hit else 0.0
    days = days_since(memory.updated_at, now)
    recency = 1.0 / (1.0 + days / 30)
    stale = 1.0 if days > STALE_DAYS else 0.0
    terms = (
        Term("tag", tag, w, w * tag, tuple(sorted(tag_hit))),
        Term("title", title, 3.0, 3.0 * title, tuple(sorted(title_hit))),
        Term("keyword", kw, 2.0, 2.0 * kw, tuple(sorted(kw_hit))),
        Term("content", content, 1.0, 1.0 * content, tuple(sorted(content_hit))),
        Term("filepath_hint", fp, 2.0, 2.0 * fp, tuple(sorted(fp_hit))),
        Term("recency", recency, 1.0, 1.0 * recency),
        Term("stale", stale, -2.0, -2.0 * stale),
    )
    # Written out in agentao's order: float addition is not associative.
    total = (w * tag + 3.0 * title + 2.0 * kw + 1.0 * content + 2.0 * fp
             + 1.0 * recency - 2.0 * stale)
    reasons = [name for name, on in (
        ("tag_match", tag > 0), ("title_overlap", title > 0),
        ("keyword_match", kw > 0), ("content_match", content > 0),
        ("filepath_hint", fp == 1.0), ("stale_penalty", stale == 1.0),
        ("explicit", memory.confidence == "explicit_user")) if on]
    return Scored(memory, total, terms, tuple(reasons),
                  tag + title + kw + content + fp, days)


def order(scored: list[Scored]) -> list[Scored]:
    """Deterministic ranking: score desc, then updated_at desc, then id asc.

    agentao leaves equal scores in hash-set order (it differs per process);
    this fixed order is one of the orders agentao can produce.
    """
    out = sorted(scored, key=lambda s: s.memory.id)
    out.sort(key=lambda s: s.memory.updated_at, reverse=True)
    out.sort(key=lambda s: s.score, reverse=True)
    return out
