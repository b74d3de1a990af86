"""The preview's answer in words, before any number: "why did the agent bring this up?"

Three parts, in the order a person asks them: what is in the always-on block (every
prompt, whatever the message), what this message recalls and why, and what matched but
was not recalled and why not.  Built from the engine's result without changing a number
of it; the page renders it with links and lists, the JSON twin adds its sentences as
``text`` next to the codes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flask_babel import gettext as _
from flask_babel import ngettext

from ...engine import recall as rc
from ...records import Memory
from ...words import count, explain, label, term

# The reasons that say why it matched; "explicit" (how it was saved) and "stale_penalty"
# (what counts against it) are agentao's reasons too, listed in the ranking's table.
BECAUSE = ("tag_match", "title_overlap", "keyword_match", "content_match", "filepath_hint")
# The score term (engine/recall.py ``Term``) whose matched tokens each reason names.
REASON_TERM = {
    "tag_match": "tag",
    "title_overlap": "title",
    "keyword_match": "keyword",
    "content_match": "content",
    "filepath_hint": "filepath_hint",
}
MISSED_SHOWN = 5  # matches not recalled that the answer names; the table has them all


@dataclass(frozen=True)
class Why:
    """One memory in the answer: what became of it (a recall mark) and why, in words."""

    memory: Memory
    mark: str
    reasons: tuple[str, ...]  # agentao's reason codes, in agentao's order
    why: str  # why it was / was not recalled, one clause
    matched: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (reason, the words that matched)
    flags: tuple[dict, ...] = ()  # what Findings lists on it (views/memories/marks.flags)


@dataclass(frozen=True)
class Answer:
    always_on: int  # memories shown in <memory-stable>
    left_out: int  # selected for it, left out by the 2,000-character budget
    summaries: bool  # the block carries the recent session summaries
    recalled: tuple[Why, ...]
    missed: tuple[Why, ...]  # the first MISSED_SHOWN matches not recalled
    missed_more: int
    unmatched: int  # memories sharing nothing with the message
    nothing: str  # why nothing is recalled ("" when something is)
    empty: bool  # no message typed yet
    ties: str = ""  # what agentao's order among equal scores may change, in words ("" when nothing)

    def sentences(self) -> list[str]:
        """The answer as plain sentences, in reading order (the twin's ``text``)."""
        out = [always_on_sentence(self)]
        if self.recalled:
            out.append(
                _(
                    "Recalled for this message: %(list)s.",
                    list="; ".join(recalled_text(w) for w in self.recalled),
                )
            )
        else:
            out.append(self.nothing)
        if self.ties:
            out.append(self.ties)
        if self.missed:
            out.append(
                _(
                    "Not recalled: %(list)s.",
                    list="; ".join(
                        _("%(title)s — %(why)s", title=w.memory.title, why=w.why) for w in self.missed
                    ),
                )
            )
        if self.unmatched and not self.empty:
            out.append(unmatched_sentence(self.unmatched))
        return out


def recalled_text(w: Why) -> str:
    """One recalled memory, why, and the marks Findings gives it, for the twin's sentences."""
    if not w.flags:
        return _("%(title)s (because: %(why)s)", title=w.memory.title, why=w.why)
    return _(
        "%(title)s (because: %(why)s; Findings lists it as %(flags)s)",
        title=w.memory.title,
        why=w.why,
        flags=", ".join(label("flag", f["category"]) for f in w.flags),
    )


def always_on_sentence(a: Answer) -> str:
    text = ngettext(
        "In the always-on block (every prompt): %(num)d memory.",
        "In the always-on block (every prompt): %(num)d memories.",
        a.always_on,
    )
    if a.left_out:
        text += " " + ngettext(
            "%(num)d more is left out by its 2,000-character budget.",
            "%(num)d more are left out by its 2,000-character budget.",
            a.left_out,
        )
    return text


def unmatched_sentence(n: int) -> str:
    return ngettext(
        "%(num)d other memory shares no word with your message.",
        "%(num)d other memories share no word with your message.",
        n,
    )


def matched_words(reasons, terms) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each reason that says why it matched, with the words that matched (from the score
    terms: ``(name, matched)`` pairs)."""
    words = dict(terms)
    return tuple((r, tuple(words.get(REASON_TERM[r], ()))) for r in reasons if r in BECAUSE)


def reasons_text(reasons, terms=()) -> str:
    """The reasons in words, each naming the words that matched when ``terms`` are given."""
    return "; ".join(
        _("%(reason)s (%(words)s)", reason=label("reason", r), words=", ".join(words))
        if words
        else label("reason", r)
        for r, words in matched_words(reasons, terms)
    )


def why_text(
    mark: str, reasons, rank: int | None, cost: int | None, limit: int, terms=(), varies: bool = False
) -> str:
    """Why a candidate was or was not recalled, from its twin fields (codes and numbers);
    a recalled one names the words that matched (``terms``: ``(name, matched)`` pairs);
    ``varies``: agentao's order among equal scores decides (``tie_varies``)."""
    if mark == rc.IN_BLOCK:
        return reasons_text(reasons, terms)
    if varies and mark != rc.EXCLUDED_STABLE:
        return _(
            "it may be recalled instead: it ranks %(rank)d here, but agentao orders equal scores "
            "in no fixed order",
            rank=rank or 0,
        )
    if mark == rc.CUT_TOP_K:
        return _("score below the cut: it ranks %(rank)d and only the 5 best are recalled", rank=rank or 0)
    if mark == rc.CUT_BUDGET:
        return _(
            "over the %(limit)s-character budget: the recall block was full before it (it needs %(cost)s)",
            limit=count(limit),
            cost=count(cost or 0),
        )
    return _("already in the always-on block, so it is not recalled again")


def because_text(because: str) -> str:
    """The stable-selection rule (engine/stable.py ``because``) in words."""
    if because == "user scope":
        return _("it is about you (user store)")
    found = re.fullmatch(r"type (\S+)", because)
    if found:
        return _("it is a %(type)s", type=label("type", found.group(1)))
    found = re.fullmatch(r"recent incidental (\d+)/(\d+)", because)
    if found:
        return _("one of the %(num)s most recently updated other memories", num=found.group(2))
    return because


def ties_text(p) -> str:
    """What agentao's order among equal scores may change here, in words ("" when nothing): it sorts
    them in hash-set order, which changes from one agentao process to the next (contract §10.4)."""
    head = p.candidates[: len(p.recall.contenders)]  # every tie and the block are among these
    moving = [c for c in head if c.varies]
    come = [c for c in moving if c.mark != rc.IN_BLOCK]
    go = [c.memory.title for c in moving if c.mark == rc.IN_BLOCK]
    kept = [c for c in head if c.mark == rc.IN_BLOCK]
    if come and go and all(c.score == kept[-1].score for c in come):
        return ngettext(
            "%(num)d more memory has the same score as the last one recalled; agentao picks among equal "
            "scores in no fixed order, so it may be recalled instead of %(list)s.",
            "%(num)d more memories have the same score as the last one recalled; agentao picks among equal "
            "scores in no fixed order, so any of them may be recalled instead of %(list)s.",
            len(come),
            list="; ".join(go),
        )
    if come:
        return ngettext(
            "%(num)d more memory may be recalled as well or instead: agentao orders equal scores in no "
            "fixed order, and the recall block takes them in that order until it is full.",
            "%(num)d more memories may be recalled as well or instead: agentao orders equal scores in no "
            "fixed order, and the recall block takes them in that order until it is full.",
            len(come),
        )
    if go:
        return _(
            "agentao orders equal scores in no fixed order, so it may leave out %(list)s.", list="; ".join(go)
        )
    if p.recall.order_varies:
        return _(
            "The order among equal scores varies: agentao sorts them in no fixed order, which changes "
            "each time it starts."
        )
    return ""


def _nothing(p, query: str) -> str:
    if not query.strip():
        return _("Nothing is recalled: type a message first.")
    if p.recall_note:
        return _("Nothing is recalled: your message has no word agentao can match.")
    if p.recall.eligible:
        return _(
            "Nothing is recalled: the best match does not fit the %(limit)s-character budget.",
            limit=count(p.context_budget.limit),
        )
    if p.recall.excluded:
        return _("Nothing new is recalled: every memory that matches is in the always-on block already.")
    return _("Nothing is recalled: no memory shares a word with your message.")


def _why(c, limit: int, flags_of=None) -> Why:
    terms = [(t.name, t.matched) for t in c.terms]
    return Why(
        c.memory,
        c.mark,
        c.reasons,
        why_text(c.mark, c.reasons, c.rank, c.cost, limit, terms, c.varies),
        matched_words(c.reasons, terms),
        tuple(flags_of(c.memory.store, c.memory.id)) if flags_of else (),
    )


def answer(p, flags_of=None) -> Answer:
    """The answer for one preview (an ``engine.Preview``); ``flags_of(store, id)`` gives what
    Findings lists on a recalled memory."""
    limit = p.context_budget.limit
    shown = len(p.stable_entries.shown())
    cands, kept = p.candidates, p.recall.kept
    # The recalled are the first ranked; the rest, in rank order, are the nearest misses: the
    # budget's, then the ranked ones, then those always on.
    recalled = tuple(_why(c, limit, flags_of) for c in cands[:kept])
    missed = cands[kept : kept + MISSED_SHOWN]
    empty = not p.query.strip()
    return Answer(
        always_on=shown,
        left_out=len(p.stable_entries) - shown,
        summaries=bool(p.session_tail),
        recalled=recalled,
        missed=tuple(_why(c, limit, flags_of) for c in missed),
        missed_more=max(0, len(cands) - kept - MISSED_SHOWN),
        unmatched=0 if empty else len(p.never_recalled),
        nothing="" if recalled else _nothing(p, p.query),
        empty=empty,
        ties=ties_text(p),
    )


def note_text(recall_note: str) -> str:
    """Why recall did not run (engine.preview's notes), in the page's language."""
    if recall_note == "empty query: agentao recalls nothing":
        return _("empty query: agentao recalls nothing")
    if recall_note == "no query or hint tokens":
        return _("no query or hint tokens")
    return recall_note


class Words:
    """Labels, terms and rules in words, each looked up once per page: the ranked table says
    the same few words on hundreds of rows, and every lookup goes through gettext."""

    def __init__(self):
        self._memo: dict = {}

    def _once(self, key, make):
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = make()
        return found

    def term(self, kind: str, code):
        return self._once(("term", kind, code), lambda: term(kind, code))

    @staticmethod
    def note(recall_note: str) -> str:
        """The engine's ``recall_note`` (kept as it is in the JSON twin) in words."""
        return note_text(recall_note)

    def label(self, kind: str, code):
        return self._once(("label", kind, code), lambda: label(kind, code))

    def because(self, because: str):
        return self._once(("because", because), lambda: because_text(because))

    def reason(self, code: str) -> tuple[str, str]:
        """One reason's (hover text, words): its explanation and agentao's code, and its label."""

        def make():
            why = explain("reason", code)
            return (f"{why} ({code})" if why else code), label("reason", code)

        return self._once(("reason", code), make)
