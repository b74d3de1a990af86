"""Warnings before approval: what a person should know before saying yes to a candidate.

Each warning is a dict ``{code, text, memories?}``, in ``ORDER``.  ``of_plan`` tells those
the item and its plan tell alone (``refused``, ``overwrites``, ``contradicts_evidence``:
``actions.polarity``); ``with_store`` adds, once per page, those that need the live rows and
the block effect: ``evicts_explicit`` (memories saved with ``save_memory`` leave
``<memory-stable>``, compared by row), ``contradicts_memory`` (the findings rule
``contradicted_preferences``, constraints weighed as preferences) and ``duplicates`` (the
findings near-duplicate measure, under another key).  A warning never blocks approval.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import replace
from itertools import accumulate

from flask_babel import gettext as _

from ..contract import REFUSED_EMPTY_KEY, REFUSED_SECRET
from ..findings.checks import jaccard, token_set, token_sets
from ..findings.corpus import Docs, contradicted_preferences, subject
from ..findings.duplicates import DUPLICATE_THRESHOLD, MAX_RELATED, MIN_TOKENS
from .effects import per_snapshot
from .polarity import contradicts

ORDER = (
    "refused",
    "evicts_explicit",
    "contradicts_evidence",
    "contradicts_memory",
    "overwrites",
    "duplicates",
)


def _named(m) -> dict:
    return {"store": m.store, "id": m.id, "key_normalized": m.key_normalized, "title": m.title}


def _names(memories) -> str:
    from ..words import listing

    return listing(_("“%(title)s” (%(key)s)", title=m.title, key=m.key_normalized) for m in memories)


def refusal_text(refusal: str) -> str:
    """agentao's refusal (kept word for word in the plan and its twin) in the page's language."""
    fixed = {
        REFUSED_SECRET: _("Refused to save: content appears to contain sensitive credentials"),
        REFUSED_EMPTY_KEY: _("Memory key is empty after normalization"),
        "Memory key/title must be single-line": _("Memory key/title must be single-line"),
        "Memory content is empty": _("Memory content is empty"),
    }
    found = re.fullmatch(r"Memory content exceeds max length \((\d+) > (\d+)\)", refusal)
    if found:
        return _("Memory content exceeds max length (%(num)s > %(limit)s)", num=found[1], limit=found[2])
    return fixed.get(refusal, refusal)


def refusal_hint(refusal: str) -> str | None:
    """What to type instead, said after agentao's refusal (whose words stay as they are)."""
    if refusal == REFUSED_EMPTY_KEY:
        return _(
            "Type a key with at least one letter a–z or digit 0–9, such as %(example)s: agentao keeps "
            "only those and _ and drops every other character, Chinese too.",
            example="coffee_order",
        )
    return None


def of_plan(item, refusal: str | None, existing) -> tuple[dict, ...]:
    """The warnings the item and its plan tell by themselves."""
    out = []
    if refusal:
        text = _(
            "agentao would refuse to save this, so approving cannot work and the item stays pending: %(why)s",
            why=refusal_text(refusal),
        )
        out.append({"code": "refused", "text": text})
    if contradicts(item.evidence, item.content):
        text = _(
            "The content may say the opposite of its evidence: a negation (%(words)s) stands on "
            "one side and not on the other. Read the evidence before approving.",
            words="never, don't, not, 不要, 别 …",
        )
        out.append({"code": "contradicts_evidence", "text": text})
    if existing is not None:
        text = _(
            "Approving replaces the live memory %(names)s in the %(store)s store; its old content is not kept.",
            names=_names([existing]),
            store=existing.store,
        )
        out.append({"code": "overwrites", "text": text, "memories": [_named(existing)]})
    return tuple(out)


class Lookups:
    """What the warnings look up in every live row, made once per snapshot of the files
    (``lookups``) instead of once per page: the contents lower-cased and joined (the search
    for near copies), the rows the preference rule may pair by subject, each row's token set
    once tokenised, and each candidate's near copies once found.  The rows never change
    under it: a write gives a new snapshot, and with it new lookups."""

    KEPT = 2048  # candidates' answers kept per snapshot (an edit's preview is one more)

    def __init__(self, live: list) -> None:
        self.live = live
        texts = [m.content.lower() for m in live]
        self.joined = "\0".join(texts)  # the only copy held: row n is text(n), a slice of it
        self.ends = list(accumulate(len(t) + 1 for t in texts))  # each row's end, plus one
        self.starts = [0, *self.ends[:-1]]
        self._subjects: dict[str, list[int]] | None = None
        self._sets: dict[int, frozenset[str]] = {}
        self.near: dict[tuple[str, str], list] = {}

    def text(self, n: int) -> str:
        """Row ``n``'s content, lower-cased."""
        return self.joined[self.starts[n] : self.ends[n] - 1]

    def by_subject(self) -> dict[str, list[int]]:
        """subject -> the rows the preference rule weighs (a preference or constraint, or
        user scope), in row order."""
        if self._subjects is None:
            found: dict[str, list[int]] = {}
            for n, m in enumerate(self.live):
                if _ruled(m.type) == "preference" or m.scope == "user":
                    found.setdefault(subject(m.key_normalized), []).append(n)
            self._subjects = found
        return self._subjects

    def sets(self, rows: list[int]) -> list[frozenset[str]]:
        """``token_set`` of the contents of ``rows`` (tokenised once per snapshot)."""
        todo = [n for n in rows if n not in self._sets]
        if todo:
            self._sets.update(zip(todo, token_sets([self.live[n].content for n in todo])))
        return [self._sets[n] for n in rows]


def lookups(snap) -> Lookups:
    """The ``Lookups`` of the snapshot's live rows, once per state of the files."""
    return per_snapshot(
        snap, "warnings", lambda: Lookups([m for m in (*snap.project, *snap.user) if m.deleted_at is None])
    )


def with_store(plans: dict, block_effects: dict, snap) -> dict:
    """``plans`` with the warnings that need the store's live rows added (same keys)."""
    ready = {i: p for i, p in plans.items() if p.approvable}
    if not ready:
        return plans
    live = lookups(snap)
    extra: dict[str, list[dict]] = {i: [] for i in ready}

    def add(i: str, code: str, text: str, found: list) -> None:
        extra[i].append({"code": code, "text": text, "memories": [_named(m) for m in found]})

    for i, found in _evicted(ready, block_effects).items():
        text = _(
            "Approving pushes memories you saved yourself out of the always-on %(tag)s block, "
            "so a new session no longer sees them: %(names)s.",
            tag="<memory-stable>",
            names=_names(found),
        )
        add(i, "evicts_explicit", text, found)
    for i, found in _contradicted(ready, live).items():
        text = _(
            "It may contradict a live preference or constraint on the same subject (%(subject)s): %(names)s.",
            subject=subject(ready[i].save.key_normalized),
            names=_names(found),
        )
        add(i, "contradicts_memory", text, found)
    for i, found in _duplicated(ready, live).items():
        text = _("It is nearly the same as a live memory under another key: %(names)s.", names=_names(found))
        add(i, "duplicates", text, found)
    out = dict(plans)
    for i, more in extra.items():
        if more:
            merged = sorted((*plans[i].warnings, *more), key=lambda w: ORDER.index(w["code"]))
            out[i] = replace(plans[i], warnings=tuple(merged))
    return out


def _evicted(plans: dict, block_effects: dict) -> dict:
    """item id -> explicit memories shown in the block now and not after approving it."""
    found: dict[str, list] = {}
    for i, plan in plans.items():
        if not ((effect := block_effects.get(i)) and effect.changed):
            continue
        explicit = {(m.store, m.id): m for m in effect.before_shown if m.source == "explicit"}
        after = {(m.store, m.id) for m in effect.after_shown}
        target = (plan.existing.store, plan.existing.id) if plan.existing else None
        gone = [m for k, m in explicit.items() if k not in after and k != target]
        if gone:
            found[i] = gone
    return found


def _ruled(kind: str) -> str:
    # The corpus rule weighs preferences; a constraint is weighed the same way (a rule
    # the user set, which a candidate on the same subject may say otherwise).
    return "preference" if kind == "constraint" else kind


def _contradicted(plans: dict, live: Lookups) -> dict:
    """item id -> live preferences or constraints the corpus rule says its candidate contradicts."""
    ids = list(plans)
    saves = [plans[i].save for i in ids]
    # The rule pairs a memory only with a candidate preference on its subject: the others
    # are not tokenised.
    subjects = {subject(s.key_normalized) for s in saves if _ruled(s.type) == "preference"} - {""}
    by_subject = live.by_subject()
    rows = sorted(n for s in subjects for n in by_subject.get(s, ()))
    if not rows:
        return {}
    prefs = [live.live[n] for n in rows]
    memories = Docs(
        [m.key_normalized for m in prefs],
        [m.scope for m in prefs],
        [_ruled(m.type) for m in prefs],
        [m.content for m in prefs],
        list(live.sets(rows)),
        [len(m.content) for m in prefs],
    )
    approved = Docs.of([(s.key_normalized, s.scope, _ruled(s.type), s.content) for s in saves])
    found: dict[str, list] = {}
    for n, finding in contradicted_preferences(memories, approved):
        for c in finding.related:
            found.setdefault(ids[c], []).append(prefs[n])
    return {i: ms[:MAX_RELATED] for i, ms in found.items()}


def _duplicated(plans: dict, live: Lookups | list) -> dict:
    """item id -> live memories under another key whose content nearly equals its candidate's.

    Jaccard ≥ 0.9 needs a row to hold all but ⌊k/10⌋ of the candidate's k tokens, so only rows
    holding one of its ⌊k/10⌋ + 1 longest tokens (``str.find`` in the joined contents) are
    tokenised and compared: a card costs a few searches, not a pass over every row, and
    once per snapshot (``Lookups.near``).
    """
    rows = live if isinstance(live, Lookups) else Lookups(live)
    found: dict[str, list] = {}
    for i, plan in plans.items():
        asked = (plan.save.content, plan.save.key_normalized)
        hits = rows.near.get(asked)
        if hits is None:
            hits = _near(rows, *asked)
            if len(rows.near) < Lookups.KEPT:
                rows.near[asked] = hits
        if hits:
            found[i] = hits
    return found


def _near(rows: Lookups, content: str, key: str) -> list:
    """The first ``MAX_RELATED`` live rows under a key other than ``key`` whose content nearly
    equals ``content``, nearest first (``_duplicated``)."""
    mine = token_set(content)
    if len(mine) < MIN_TOKENS or not rows.live:
        return []
    joined, starts, ends = rows.joined, rows.starts, rows.ends
    need = len(mine) - math.ceil(DUPLICATE_THRESHOLD * len(mine) - 1e-9) + 1
    longest = sorted(mine, key=lambda t: (-len(t), t))
    # A row may miss at most need - 1 tokens, so of the 3 * need longest it holds
    # (as substrings) all but need - 1: a test that drops most rows before tokenising.
    probe = longest[: 3 * need]
    floor = len(probe) - need + 1
    found: set[int] = set()
    for token in longest[:need]:
        at = joined.find(token)
        while at != -1:
            n = bisect_right(starts, at) - 1
            found.add(n)
            at = joined.find(token, ends[n])  # the next row
    found = {n for n in found if sum(joined.find(t, starts[n], ends[n] - 1) >= 0 for t in probe) >= floor}
    near = sorted(
        (-jaccard(mine, token_set(rows.text(n))), n) for n in found if rows.live[n].key_normalized != key
    )
    return [rows.live[n] for score, n in near if -score >= DUPLICATE_THRESHOLD][:MAX_RELATED]
