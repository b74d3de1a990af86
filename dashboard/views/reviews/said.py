"""What a suggestion's approval does, and what a decision did, in a person's words.

A card opens with one line saying what approving does ("will enter every prompt",
"replaces “X”", "pushes 3 memories you saved yourself out of the always-on block: …").
Nothing here computes: the lines are read off the plan that approves
(``actions.approval.plan_approval``: its warnings and refusal) and the block effect
the same page computed for that plan (``views.block_effects``), so the words
cannot disagree with what the button does.  The JSON twin carries the same lines
beside their codes (``consequences``), the codes staying what scripts match on.
"""

from __future__ import annotations

from flask_babel import gettext as _
from flask_babel import ngettext

from ...contract import SaveRefused
from ...words import listing

QUOTE_CHARS = 120  # a quoted evidence or title is cut here (the card shows it whole)
TITLE_CHARS = 80

# The reading order of a card's lines: what stops approval, then what is lost, then
# what it overwrites or repeats, then where the memory will show.
BAD = ("refused", "blocked", "evicts_explicit", "contradicts_evidence")
# Lines about the card's own save, kept on it even when every card says the same: two
# Chinese preferences both replacing ``preference`` is the news on each of them.
OWN = ("refused", "overwrites")


def short(text, limit: int = QUOTE_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _names(memories) -> str:
    return listing(f"“{short(m['title'], TITLE_CHARS)}”" for m in memories)


def reach(plan, effect) -> str | None:
    """ "stable" when the approved memory is in the always-on block after approving,
    "recalled" when it is not (it can only be recalled by a matching message), None
    when this page did not compute the effect or approving cannot write."""
    if effect is None or plan is None or not plan.approvable:
        return None
    s = plan.save
    shown = any(m.store == s.store and m.key_normalized == s.key_normalized for m in effect.after_shown)
    return "stable" if shown else "recalled"


def _reach_line(where: str | None) -> str:
    if where == "stable":
        return _("Will enter every prompt: it joins the always-on block every new session starts with.")
    if where == "recalled":
        return _(
            "Will be recalled when relevant: it is not in the always-on block, "
            "so the agent sees it only when a message matches it."
        )
    return _(
        "Will be saved as a memory; what it does to the always-on block is worked out "
        "when the card comes into view."
    )


def _warning_line(w: dict, plan, where: str | None) -> str:
    code, memories = w["code"], w.get("memories") or []
    if code == "refused":
        if SaveRefused.error_for(plan.refusal) == "SensitiveMemoryError":
            return _("Would be refused: it contains a secret (agentao never saves one).")
        return _("Would be refused: %(why)s", why=plan.refusal)
    if code == "evicts_explicit":
        return ngettext(
            "Pushes %(num)d memory you saved yourself out of the always-on block: %(names)s.",
            "Pushes %(num)d memories you saved yourself out of the always-on block: %(names)s.",
            len(memories),
            names=_names(memories),
        )
    if code == "contradicts_evidence":
        return _("Contradicts its evidence: you wrote “%(words)s”.", words=short(plan.item.evidence))
    if code == "contradicts_memory":
        return _("Contradicts what you already have: %(names)s.", names=_names(memories))
    if code == "overwrites":
        # The key as agentao saves it and the words it replaces: "Preference: 用中文写注释"
        # and "Preference: 用中文回答问题" both land on ``preference``.
        key, old = plan.save.key_normalized, short(plan.existing.content)
        if where == "stable":
            return _("Saved as “%(key)s”, replacing “%(old)s”; will enter every prompt.", key=key, old=old)
        if where == "recalled":
            return _(
                "Saved as “%(key)s”, replacing “%(old)s”; will be recalled when relevant.", key=key, old=old
            )
        return _("Saved as “%(key)s”, replacing “%(old)s”.", key=key, old=old)
    if code == "duplicates":
        return _("Nearly repeats %(names)s, kept under another key.", names=_names(memories))
    return w.get("text") or code  # a code a later version adds still reads


def consequences(plan, effect) -> list[dict]:
    """The card's lines, the one to read first first: ``{code, kind, text, memories}``.

    ``code`` is a warning code (actions.warnings), ``blocked``, or where the memory
    will show: ``enters_prompt``, ``recalled`` or ``effect_later``.  ``kind`` is
    bad / warn / ok, as the #status region colours a result.
    """
    if plan is None:
        return []
    if plan.blocked:
        return [
            {
                "code": "blocked",
                "kind": "bad",
                "memories": [],
                "text": _("Cannot be approved now: %(why)s", why=plan.blocked),
            }
        ]
    where = reach(plan, effect)
    lines = [
        {
            "code": w["code"],
            "kind": "bad" if w["code"] in BAD else "warn",
            "memories": w.get("memories") or [],
            "text": _warning_line(w, plan, where),
        }
        for w in plan.warnings
    ]
    told = {line["code"] for line in lines}
    if plan.approvable and not told & {"evicts_explicit", "overwrites"}:
        lines.append(_reach(where))
    # What is lost first: a replaced memory ("saved as `preference`, replacing …") leads
    # unless approving cannot work at all.
    lines.sort(key=lambda line: 0 if line["code"] == "refused" else 1 if line["code"] == "overwrites" else 2)
    return lines


def _reach(where: str | None) -> dict:
    code = {"stable": "enters_prompt", "recalled": "recalled"}.get(where or "", "effect_later")
    return {"code": code, "kind": "ok", "memories": [], "text": _reach_line(where)}


def shared(plans: dict, effects: dict) -> list[dict]:
    """The warnings every waiting card on the page would say (each card's approval, alone,
    pushes out the same memories…), said once above the list instead of on every card
    (but what the card's own save replaces or why it is refused: ``OWN``).

    Only when the page worked out every card's effect (else a card's lines are not all
    known yet) and there are at least two cards."""
    if len(plans) < 2 or any(i not in effects for i in plans):
        return []
    each = [{(line["code"], line["text"]) for line in consequences(p, effects[i])} for i, p in plans.items()]
    common = set.intersection(*each)
    first = next(iter(plans))
    return [
        line
        for line in consequences(plans[first], effects[first])
        if line["kind"] != "ok" and line["code"] not in OWN and (line["code"], line["text"]) in common
    ]


def card_lines(plan, effect, said_above: list[dict]) -> list[dict]:
    """The card's own lines: ``consequences`` without those said above the list; a card
    left with none says where its memory will show."""
    lines = consequences(plan, effect)
    above = {(line["code"], line["text"]) for line in said_above}
    kept = [line for line in lines if (line["code"], line["text"]) not in above]
    if lines and not kept and plan.approvable:
        kept = [_reach(reach(plan, effect))]
    return kept


def to_json(lines: list[dict]) -> list[dict]:
    return [{"code": line["code"], "text": line["text"]} for line in lines]


# ------------------------------------------------------------------ after a decision
def decided(
    outcomes, titles: dict, shown: frozenset | None = None, edited: bool = False
) -> tuple[str, str] | None:
    """What the decision(s) did, for the #status region: (text, ok | warn | bad).

    ``titles``: item id -> its title; ``shown``: (store, id) of the memories in the
    always-on block as the files are now (read back after the write).
    """
    if not outcomes:
        return None
    done = [o for o in outcomes if o.ok]
    failed = len(outcomes) - len(done)
    if len(outcomes) == 1:
        o = outcomes[0]
        title = short(titles.get(o.id) or o.id, TITLE_CHARS)
        if not o.ok:
            return o.message, "bad"
        if o.outcome == "rejected":
            return _("Rejected “%(title)s” — it will not be saved.", title=title), "ok"
        stays = shown is not None and (o.memory_store, o.memory_id) in shown
        if edited:
            text = (
                _("Approved “%(title)s” with your edits — it now enters every prompt.", title=title)
                if stays
                else _(
                    "Approved “%(title)s” with your edits — it will be recalled when relevant.", title=title
                )
            )
        else:
            text = (
                _("Approved “%(title)s” — it now enters every prompt.", title=title)
                if stays
                else _("Approved “%(title)s” — it will be recalled when relevant.", title=title)
            )
        return text, "ok"
    action = next((o.outcome for o in done), None)
    parts = []
    if action == "approved":
        parts.append(ngettext("Approved %(num)d suggestion.", "Approved %(num)d suggestions.", len(done)))
    elif action == "rejected":
        parts.append(ngettext("Rejected %(num)d suggestion.", "Rejected %(num)d suggestions.", len(done)))
    if failed:
        parts.append(
            ngettext(
                "%(num)d could not be decided: the reason is on the page.",
                "%(num)d could not be decided: the reasons are on the page.",
                failed,
            )
        )
    return " ".join(parts), "ok" if not failed else ("warn" if done else "bad")


def done_counted(action: str, n: int) -> str:
    """The no-JavaScript answer's words when only the count is known (a bulk decision)."""
    if action == "approved":
        return ngettext("Approved %(num)d suggestion.", "Approved %(num)d suggestions.", n)
    return ngettext("Rejected %(num)d suggestion.", "Rejected %(num)d suggestions.", n)
