"""Cheap gates in front of the finding rules (``rules``).

Kept apart from the rules because they are a speed device, not a judgement:
changing a rule in ``rules.py`` may need a fragment here, and the gate tests
in tests/test_findings_rules.py say so when it does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

# Cheap gates, one per family, searched over the lower-cased text: every rule
# of a family needs one of its gate's fragments, so a text the gate passes
# over cannot hold a finding of that family.  Most rows stop at the union of
# the gates (``rows_to_scan``), which is what makes a 100,000-row scan affordable.  Every fragment
# starts with a literal character: sre then skips, in C, the positions where
# no fragment can start (a class or group first makes it try them all, 6x
# slower).  tests/test_findings_rules.py checks that gated and ungated scans
# agree on every string it uses and on the labelled set.
def _each(heads, tail):
    return [h + tail for h in heads]


_SECRET_FRAGMENTS = [
    "-----begin", "sk-", "aiza", "gocspx-", r"akia[0-9a-z]{16}", r"asia[0-9a-z]{16}",
    r"gh[pousr]_", "github_pat_", r"xox[baprs]-", "xapp-", r"sk_(?:live|test)_",
    r"rk_(?:live|test)_", "whsec_", "eyj", r"bearer\s", r"authorization\s*[:=]", r"\?code=",
    "&code=", r"\"code\"\s*:",
    *_each(["key", "token", "secret", "passwd", "password", "code_verifier"], r"[\"']?\s*[:=]"),
    *_each(["key", "token", "secret", "password", "passphrase"], r"\s+(?:is|was)\b"),
    "npm_", "pypi-age", r"gl(?:pat|dt|rt|ptt|ft|cbt)-", "hf_", r"sg\.", r"sk[0-9a-f]{32}",
    "accountkey=", "sig=", "_v1_", r"shp(?:at|ca|pa|ss)_", r"hooks\.slack", ":aa", r"://[^\s/]*@",
    "密码", "密钥", "秘钥", "私钥", "口令", "令牌",
]
_PERSONAL_FRAGMENTS = [
    r"@[a-z0-9-]+\.[a-z]", r"\+[1-9](?:[\s.()-]{0,2}\d){7}", r"1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)",
    *_each("23456", r"\d{2}(?:[ -]?\d){10}"), *_each("123456789", r"\d{16}[\dx]"),
]
_IBAN_GATE = re.compile(r"[A-Z]{2}\d{2} ?[A-Z0-9]{4}")   # on the original text: IBANs are upper case
_INSTRUCTION_FRAGMENTS = [
    "skip", "ignor", "bypass", "disabl", r"turn\s+off", "overrid", "circumvent", "suppress",
    "disregard", "forget", r"get\s+around", r"work\s+around", "approv", "dangerously", "yolo",
    r"say\s+yes", r"answer\s+yes",
    *_each([r"do\s+not", r"don'?t", "never", r"no\s+need\s+to", "stop"],
           r"\s+(?:ask|wait|prompt|request|seek|check|confirm|verify)"),
    r"without\s+(?:ask|confirm|approv|permission|consent)",
    "跳过", "忽略", "绕过", "绕开", "无视", "关闭", "禁用", "取消", "不理会", "确认", "询问", "请示",
    "征求", "问我", "审批", "批准", *_each(["自动", "总是", "一律", "全部", "始终"], "同意"),
    "你现在", "从现在", "系统提示", "系统指令",
    r"<\|", r"\[/?inst\]", r"<<\s*/?sys", r"\[/?system\]", r"#[ \t]*(?:system|instruction)",
    *_each(["system", "assistant", "developer"], r"[ \t]*:"), r"you\s+are\s+now", r"from\s+now",
    r"instructions\s*:", "pretend", r"act\s+as",
    *_each(["<", "&lt;?", "&#0*60;?", "&#x0*3c;?", r"\\u003c", r"\\x3c", "%3c"],
           r"\s*(?:/|\\/|&#0*47;?|&#x0*2f;?|%2f)?\s*(?:memory-stable|memory-context|fact|session|system-reminder)"),
]
_QUANTIFIERS = ("?", "*", "+", "{")


def _head(fragment: str) -> str:
    """The fragment's first character (or escaped punctuation), which must be literal."""
    escaped = fragment[0] == "\\"
    n = 2 if escaped else 1
    class_escape = escaped and fragment[1].isalnum()        # \d, \s, \b...
    if (fragment[0] in ".^$*+?{}[]|()" or class_escape
            or fragment[n:n + 1] in _QUANTIFIERS):           # "x?" makes x optional
        raise ValueError(f"gate fragment must start with a literal: {fragment!r}")
    return fragment[:n]


def _factored(fragments: list[str]) -> re.Pattern[str]:
    """One alternative per first character: ``s(?:k-|kip|…)|k(?:ey…)``.

    sre tries the top-level alternatives one by one at every position whose
    character may start a fragment; grouping them by that character cuts the
    tries per position from ~150 to ~70 (the whole gate runs 1.6x faster).
    """
    groups: dict[str, list[str]] = {}
    for f in fragments:
        h = _head(f)
        groups.setdefault(h, []).append(f[len(h):])
    return re.compile("|".join(h + (tails[0] if len(tails) == 1 else f"(?:{'|'.join(tails)})")
                               for h, tails in groups.items()))


def _by_head(fragments: list[str]) -> list[re.Pattern[str]]:
    """One pattern per first character, for searching a long text (``rows_to_scan``).

    A pattern that starts with one literal character makes sre jump from one
    occurrence of it to the next in C; over a whole store joined, tens of
    such passes cost less than one pass of the union, which tries its ~70
    alternatives at nearly every character.
    """
    groups: dict[str, list[str]] = {}
    for f in fragments:
        groups.setdefault(_head(f), []).append(f)
    return [_factored(fs) for fs in groups.values()]


FAMILY_GATES = {"secret": _factored(_SECRET_FRAGMENTS),
                "personal": _factored(_PERSONAL_FRAGMENTS),
                "instruction": _factored(_INSTRUCTION_FRAGMENTS)}
_HEAD_GATES = _by_head(_SECRET_FRAGMENTS + _PERSONAL_FRAGMENTS + _INSTRUCTION_FRAGMENTS)
_NON_DIGIT_HEAD_GATES = [p for p in _HEAD_GATES if not "0" <= p.pattern[0] <= "9"]
_WORD_HEAD_GATES = [p for p in _NON_DIGIT_HEAD_GATES if p.pattern[0].isascii()]

# Digits can be a quarter of a store's characters (versions, hashes, ids: the
# bench corpus), and the digit fragments start at every one.  In an ASCII text with each letter
# A-Z made "A" and each digit "0", their shapes start with literals, which sre
# jumps to in C: the IBAN gate becomes exactly IBAN_SHAPE, and every match of a
# card, PRC ID or mobile rule (three digits, then eight or more, each after
# at most one separator) holds DIGIT_SHAPE, so only texts with it get the digit
# rules themselves.  The mapping keeps every offset.
_SHAPES = str.maketrans("BCDEFGHIJKLMNOPQRSTUVWXYZ123456789", "A" * 25 + "0" * 9)
_IBAN_SHAPE = re.compile(r"AA00 ?[A0]{4}")
_DIGIT_SHAPE = re.compile(r"000(?:[\s-]?0){8}")


def rows_to_scan(texts: list[str], digit_rules) -> set[int]:
    """Indexes of the texts some secret, personal-data or instruction rule may match.

    ``digit_rules`` are ``(pattern, check)`` pairs for the rules whose matches
    start with an ASCII digit (``rules.DIGIT_RULES``).  A text is in the set
    when a family gate's fragment that does not start with a digit passes it,
    or one of those rules matches it with its check passing (build and order
    numbers pass the digit fragments, not the Luhn or date checks).  The texts
    are searched joined by newlines, so a match may also run across two of
    them and add a text no rule matches: harmless, as ``scan_text`` checks
    each field again.
    """
    out: set[int] = set()
    plain = list(map(str.isascii, texts))
    # ASCII texts join into a one-byte-per-character string, which sre walks
    # twice as fast, and skip the fragments that start with a CJK character.
    rows = [i for i, p in enumerate(plain) if p]
    joined, starts = _joined([texts[i] for i in rows])
    low, shape = joined.lower(), joined.translate(_SHAPES)
    _search_rows(_WORD_HEAD_GATES, low, starts, rows, out)
    _search_rows([_IBAN_SHAPE], shape, starts, rows, out)
    digits: set[int] = set()
    _search_rows([_DIGIT_SHAPE], shape, starts, range(len(rows)), digits)
    digits_at = sorted(digits)
    digit_joined, digit_starts = _joined([texts[rows[k]] for k in digits_at])
    for pattern, check in digit_rules:
        _search_rows([pattern], digit_joined, digit_starts, [rows[k] for k in digits_at], out, check)
    # The rest (Chinese text, Unicode digits and spaces) gets the CJK fragments
    # too, lower-cased one by one: lower() may change their length ("İ" -> "i̇").
    # No shapes (translating such text costs more than it saves): the digit
    # rules run on it whole, their look-behinds failing fast inside digit runs.
    rows = [i for i, p in enumerate(plain) if not p]
    _search_rows(_NON_DIGIT_HEAD_GATES, *_joined([texts[i].lower() for i in rows]), rows, out)
    joined, starts = _joined([texts[i] for i in rows])
    _search_rows([_IBAN_GATE], joined, starts, rows, out)
    for pattern, check in digit_rules:
        _search_rows([pattern], joined, starts, rows, out, check)
    return out


def _joined(texts: list[str]) -> tuple[str, list[int]]:
    # The texts joined by newlines, and where each starts (plus one past the end).
    return "\n".join(texts), [0, *accumulate(len(t) + 1 for t in texts)]


def _search_rows(patterns, joined: str, starts: list[int], rows, out: set[int],
                 check=None) -> None:
    # After a hit, the search goes on at the next text: a text is in or out, and
    # texts holding a fragment many times do not cost a match object each.  A
    # match its check refuses lets the search go on after it, as finditer would.
    for pattern in patterns:
        search, pos = pattern.search, 0
        while (m := search(joined, pos)) is not None:
            if check is not None and not check(m.group()):
                pos = m.end()
                continue
            n = bisect_right(starts, m.start()) - 1
            out.add(rows[n])
            pos = starts[n + 1]


def open_families(text: str) -> dict[str, bool]:
    """For each family, whether its gate lets ``text`` through to the full rules."""
    low = text.lower()
    out = {fam: g.search(low) is not None for fam, g in FAMILY_GATES.items()}
    out["personal"] = out["personal"] or _IBAN_GATE.search(text) is not None
    return out
