"""One preview: both blocks agentao would inject, with every decision explained (contract §12).

Stable entries are selected, fitted and rendered; recall then excludes the shown ones,
keeps the top 5 and fits ``<memory-context>``.  Hidden ids count as deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from dashboard.records import Memory, Summary

from . import recall as rc
from .cache import EngineCache, IndexState, uncached_state
from .hints import extract_hints
from .ranking import EMPTY, Recall, rank, stamp_ranks
from .render import CONTEXT_BUDGET, STABLE_BUDGET, render_context
from .results import Budget, Preview
from .stable import FactCosts, Fitted, all_entries, fit, select, session_tail
from .tokenize import Tokenizer, default_tokenizer


def _aware(now: datetime) -> datetime:
    # A naive clock is taken as UTC, the same reading agentao gives stamps.
    return now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)


def stable_view(
    project_memories: Sequence[Memory],
    user_memories: Sequence[Memory],
    summaries: Iterable[Summary],
    *,
    session_id: str | None = None,
    hidden_ids: Iterable[str] = frozenset(),
    cache: EngineCache | None = None,
) -> tuple[str, Fitted]:
    """The ``<memory-stable>`` block and its fitted entries, without the token index ``preview``
    builds (for the overview's size, a memory's reach, an action's effect); ``cache``, when
    given, is the one over these very rows."""
    summaries = list(summaries)
    hidden = frozenset(hidden_ids)
    tail = session_tail(summaries, session_id)
    if hidden or cache is None:
        costs = cache.costs if cache is not None else FactCosts()
        entries = [m for m in all_entries(project_memories, user_memories) if m.id not in hidden]
        fitted = fit(select(entries), tail, costs)
    else:
        picked, lengths = cache.stable()
        fitted = fit(picked, tail, costs=lengths)
    return fitted.block(tail), fitted


def _recall(
    state: IndexState,
    query: str,
    q: frozenset[str],
    h: frozenset[str],
    hidden: frozenset[str],
    shown: frozenset[str],
    now: datetime,
) -> tuple[Recall, str]:
    """The ranked recall run over the message's tokens ``q`` and the hints' ``h``, or an empty
    one with a note saying why none."""
    if not query.strip():
        return EMPTY, "empty query: agentao recalls nothing"
    if not q and not h:
        return EMPTY, "no query or hint tokens"
    wanted = q | h
    ids = {i for i, b in state.bundles.items() if b.meets(wanted)}
    ids -= hidden
    ages = rc.Ages(now, state.stamps)
    records, bundles = state.records, state.bundles
    scored = [
        s
        for s in (rc.score(records[i], bundles[i], q, h, ages, True) for i in ids)
        if s is not None and s.signal > 0
    ]
    if state.ranks is None:
        state.ranks = stamp_ranks(m.updated_at for m in records.values())
    return rank(scored, shown, state.ranks), ""


def warm(state: IndexState) -> None:
    """Work out now what the first query over ``state`` would: every stamp parsed and placed
    (a background build does this, so the first answer at 100,000 memories need not)."""
    ages = rc.Ages(datetime(1970, 1, 1, tzinfo=timezone.utc), state.stamps)
    for m in state.records.values():
        ages(m.updated_at)
    if state.ranks is None:
        state.ranks = stamp_ranks(m.updated_at for m in state.records.values())


def preview(
    project_memories: Sequence[Memory],
    user_memories: Sequence[Memory],
    summaries: Iterable[Summary],
    *,
    query: str,
    messages: Iterable[Any] = (),
    session_id: str | None = None,
    now: datetime,
    hidden_ids: Iterable[str] = frozenset(),
    cache: EngineCache | None = None,
    tokenizer: Tokenizer | None = None,
    context_hints: Sequence[str] | None = None,
) -> Preview:
    """Compute both blocks and every explanation for one query.

    Each file's rows in ``ORDER BY created_at`` order; ``summaries`` in rowid order or newest
    first (the 10 newest at least); ``messages`` (oldest first) give file-path hints unless
    ``context_hints`` gives them; ``session_id`` None is a new session; ``now`` naive = UTC;
    ``cache`` (an ``EngineCache`` over these very rows) reuses the token index."""
    tok = tokenizer or default_tokenizer()
    now = _aware(now)
    hidden = frozenset(hidden_ids)
    if cache is None:
        state = uncached_state(project_memories, user_memories, tok)
    else:
        state = cache.state(tok)
    summaries = list(summaries)
    tail = session_tail(summaries, session_id)
    block, fitted = stable_view(
        project_memories,
        user_memories,
        summaries,
        session_id=session_id,
        hidden_ids=hidden,
        cache=cache,
    )
    shown = frozenset(s.memory.id for s in fitted.shown())
    hints = tuple(context_hints) if context_hints is not None else extract_hints(messages)
    # The message is split once (a 4,000-character one costs): its tokens are the explained ones.
    query_tokens = tok.explain(query)
    hint_tokens = tok.tokens(" ".join(hints))
    q = frozenset(t.token for t in query_tokens)
    recall, note = _recall(state, query, q, hint_tokens, hidden, shown, now)
    context = render_context(recall.facts)
    pool = (
        tuple(m for m in state.records.values() if m.id not in hidden)
        if hidden
        else tuple(state.records.values())
    )
    return Preview(
        stable_block=block,
        context_block=context,
        stable_budget=Budget(len(block), STABLE_BUDGET),
        context_budget=Budget(len(context), CONTEXT_BUDGET),
        session_tail=tail,
        stable_entries=fitted,
        query=query,
        query_tokens=query_tokens,
        hints=hints,
        hint_tokens=tuple(sorted(hint_tokens)),
        recall=recall,
        recall_note=note,
        cjk_mode=tok.mode,
        now=now,
        hidden_ids=hidden,
        pool=pool,
    )
