"""Why a finding was raised, in the reader's language.

A scan's ``Finding.why`` is English, made once when the rows are read: the scan is
kept across requests and may run in a job thread, outside any.  ``why_text`` says
the same sentence again through the catalog each time it is shown, from the
rule code and the numbers the finding carries; in English it is ``Finding.why``
to the letter (tests/test_i18n.py checks this on the hostile corpus).  Machine
tokens (example markers, tags) are placeholders, never part of a message.
"""

from __future__ import annotations

import re

from flask_babel import gettext as _

from .rules import CONTENT_MAX, STALE_DAYS, Finding

# The rules whose why is one fixed sentence (the first line of the rule's docstring).
WHY = {
    "personal.email": lambda: _("E-mail address (personal data the guard never looks for)"),
    "personal.phone": lambda: _(
        "Phone number (%(pattern)s)", pattern="+country code, or a Chinese mobile number 1[3-9]xxxxxxxxx"
    ),
    "personal.prc_id": lambda: _(
        "PRC resident ID number (18 digits: real province, valid birth date, MOD 11-2 check)"
    ),
    "personal.card": lambda: _("Payment card number (known issuer range and length, Luhn check passes)"),
    "personal.iban": lambda: _("IBAN bank account number (country length and mod-97 check pass)"),
    "instruction.override": lambda: _(
        "Instruction aimed at the agent's own rules (skip confirmations, bypass permissions or safety)"
    ),
    "instruction.role_marker": lambda: _(
        "Role or system-prompt marker (%(examples)s)",
        examples="system:, <|im_start|>, ### System, you are now, 你现在扮演…",
    ),
    "instruction.block_tag": lambda: _(
        "Tag of a prompt block agentao renders memory into (%(tags)s, even escaped)",
        tags="</fact>, </memory-stable>, </system-reminder>",
    ),
    "instruction.hidden_characters": lambda: _(
        "Bidirectional control or invisible character (reorders or hides what a reader sees: a "
        "known carrier of prompt injection)"
    ),
    "conflict.same_key": lambda: _(
        "Same key in the user and the project scope: both are injected, the model sees two answers"
    ),
    "conflict.duplicate": lambda: _(
        "Near-identical content under different keys (token Jaccard ≥ 0.9): one of them is redundant"
    ),
    "conflict.contradicted": lambda: _(
        "A live preference on the same subject as an approved candidate, saying something else"
    ),
}

_STALE = re.compile(r"updated (\d+) days ago")


def why_text(f: Finding) -> str:
    """``f.why`` in the current locale (``f.why`` itself for a rule this module does not know)."""
    said = WHY.get(f.rule)
    if said is not None:
        return said()
    if f.rule.startswith("secret.guard_"):
        return _(
            "agentao 0.5.17 refuses to save this today (%(name)s); it got in through an older "
            "version, a hand edit or a path the guard does not check",
            name=f.rule[len("secret.guard_") :],
        )
    if f.rule.startswith("secret."):
        return _(
            "credential format agentao's guard does not detect (%(name)s)", name=f.rule[len("secret.") :]
        )
    n = f.end - f.start
    if f.rule == "upkeep.over_limit":
        return _(
            "%(num)d characters: over agentao's %(limit)d limit, so a hand edit or another tool wrote it",
            num=n,
            limit=CONTENT_MAX,
        )
    if f.rule == "upkeep.near_limit":
        return _(
            "%(num)d characters, near agentao's %(limit)d limit: a pasted document? Only its "
            "first 240 (stable) or 200 (recall) characters ever reach the model",
            num=n,
            limit=CONTENT_MAX,
        )
    found = _STALE.match(f.why) if f.rule == "upkeep.stale" else None
    if found:
        days = int(found.group(1))
        if "<memory-stable>" in f.why:
            return _(
                "updated %(days)d days ago (> %(limit)d): not recall-scored but injected every "
                "turn through %(tag)s — is it still true?",
                days=days,
                limit=STALE_DAYS,
                tag="<memory-stable>",
            )
        return _(
            "updated %(days)d days ago (> %(limit)d): recall scores it −2 (stale_penalty), so "
            "it has mostly stopped being recalled — still true? update or delete it",
            days=days,
            limit=STALE_DAYS,
        )
    return f.why
