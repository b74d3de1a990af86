"""One conformance check: our preview against agentao's own prompt path."""

from __future__ import annotations

from collections import defaultdict

from _harness import PIN, AgentaoAnswer, Corpus
from agentao.memory import RecallCandidate

from dashboard.engine import IN_BLOCK, preview


def _by_score(items):
    groups = defaultdict(set)
    for score, rid in items:
        groups[score].add(rid)
    return groups


def check(
    corpus: Corpus,
    query: str,
    messages=(),
    session_id=None,
    *,
    tokenizer=None,
    cache=None,
    now=PIN,
    retriever=None,
):
    """Assert our preview is one of the outputs agentao can produce; return it.

    Blocks must be byte-identical whenever no tie reorders the top 5; with
    ties, the scores must match in order, each tied group above the cut
    must match as a set, and our context block must be what agentao's
    renderer makes of our (agentao-scored) top 5.
    """
    project, user, summaries = corpus.rows()
    ours = preview(
        project,
        user,
        summaries,
        query=query,
        messages=messages,
        session_id=session_id,
        now=now,
        tokenizer=tokenizer,
        cache=cache,
    )
    theirs = AgentaoAnswer(corpus, query, messages, session_id, retriever)
    r = theirs.retriever

    assert ours.session_tail == theirs.tail
    assert ours.stable_block == theirs.stable_block
    assert {s.memory.id for s in ours.stable_entries if s.shown} == {m.id for m in theirs.shown}
    assert [s.memory.id for s in ours.stable_entries] == [m.id for m in theirs.stable_entries]
    assert list(ours.hints) == theirs.hints
    q_tokens = r.tokenize(query)
    h_tokens = r.tokenize(" ".join(theirs.hints))
    assert {t.token for t in ours.query_tokens} == q_tokens
    assert set(ours.hint_tokens) == h_tokens

    # Every record, scored by agentao directly, against our candidate list.
    mine = {c.memory.id: c for c in ours.candidates}
    records = corpus.manager.get_all_entries()
    if query.strip() and (q_tokens or h_tokens):
        for rec in records:
            total, reasons, signal = r.score(rec, q_tokens, h_tokens)
            if signal > 0:
                c = mine[rec.id]
                assert (c.score, list(c.reasons), c.scored.signal) == (total, reasons, signal), rec
            else:
                assert rec.id not in mine, rec
    else:
        assert not ours.candidates

    ranked = [c for c in ours.candidates if c.rank is not None]
    top = ranked[:5]
    assert [c.score for c in top] == [c.score for c in theirs.candidates]
    ours_all = _by_score((c.score, c.memory.id) for c in ranked)
    ours_top = _by_score((c.score, c.memory.id) for c in top)
    for score, ids in _by_score((c.score, c.memory_id) for c in theirs.candidates).items():
        assert ids <= ours_all[score] and len(ids) == len(ours_top[score])
        if ours_all[score] == ours_top[score]:
            assert ids == ours_top[score]

    by_id = {rec.id: rec for rec in records}
    expected = []
    for c in top:
        total, reasons, _ = r.score(by_id[c.memory.id], q_tokens, h_tokens)
        m = c.memory
        expected.append(RecallCandidate(m.id, m.scope, m.type, m.title, m.content[:200], total, reasons))
    assert ours.context_block == theirs.renderer.render_dynamic_block(expected)
    if [c.memory.id for c in top] == [c.memory_id for c in theirs.candidates]:
        assert ours.context_block == theirs.context_block
    # agentao's block is a prefix of its top 5 (the fill stops at the first fact that does not fit):
    # each of its facts is one we recall or mark as tied (may be recalled instead), and each we
    # recall unmarked is in it; a different block is only ever one the ties allow.
    theirs_in = {c.memory_id for c in theirs.candidates[: theirs.context_block.count("<fact ")]}
    ours_in = {c.memory.id for c in ours.candidates if c.mark == IN_BLOCK}
    assert theirs_in <= ours_in | ours.recall.varies
    assert ours_in - ours.recall.varies <= theirs_in
    if ours.context_block != theirs.context_block:
        assert ours.recall.varies or ours.recall.order_varies
    shown = sum(1 for c in ours.candidates if c.mark == IN_BLOCK)
    assert ours.context_block.count("<fact ") == shown
    assert ours.stable_budget.used == len(theirs.stable_block)
    return ours
