"""Cheap gates in front of the finding rules (``rules``).

Kept apart from the rules because they are a speed device, not a judgement:
changing a rule in ``rules.py`` may need a fragment here, and the gate tests
in tests/test_findings_rules.py say so when it does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from ..guard.invisible import ANY_HIDDEN


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
    "-----begin",
    "sk-",
    "aiza",
    "gocspx-",
    r"akia[0-9a-z]{16}",
    r"asia[0-9a-z]{16}",
    r"gh[pousr]_",
    "github_pat_",
    r"xox[baprs]-",
    "xapp-",
    r"sk_(?:live|test)_",
    r"rk_(?:live|test)_",
    "whsec_",
    "eyj",
    r"bearer\s",
    r"authorization\s*[:=]",
    r"\?code=",
    "&code=",
    r"\"code\"\s*:",
    *_each(["key", "token", "secret", "passwd", "password", "code_verifier"], r"[\"']?\s*[:=]"),
    *_each(["key", "token", "secret", "password", "passphrase"], r"\s+(?:is|was)\b"),
    "npm_",
    "pypi-age",
    r"gl(?:pat|dt|rt|ptt|ft|cbt)-",
    "hf_",
    r"sg\.",
    r"sk[0-9a-f]{32}",
    "accountkey=",
    "sig=",
    "_v1_",
    r"shp(?:at|ca|pa|ss)_",
    r"hooks\.slack",
    ":aa",
    r"://[^\s/]*@",
    "密码",
    "密钥",
    "秘钥",
    "私钥",
    "口令",
    "令牌",
]
_PERSONAL_FRAGMENTS = [
    r"@[a-z0-9-]+\.[a-z]",
    r"\+[1-9](?:[\s.()-]{0,2}\d){7}",
    r"1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)",
    *_each("23456", r"\d{2}(?:[ -]?\d){10}"),
    *_each("123456789", r"\d{16}[\dx]"),
]
_IBAN_GATE = re.compile(r"[A-Z]{2}\d{2} ?[A-Z0-9]{4}")  # on the original text: IBANs are upper case
_INSTRUCTION_FRAGMENTS = [
    "skip",
    "ignor",
    "bypass",
    "disabl",
    r"turn\s+off",
    "overrid",
    "circumvent",
    "suppress",
    "disregard",
    "forget",
    r"get\s+around",
    r"work\s+around",
    "approv",
    "dangerously",
    "yolo",
    r"say\s+yes",
    r"answer\s+yes",
    *_each(
        [r"do\s+not", r"don'?t", "never", r"no\s+need\s+to", "stop"],
        r"\s+(?:ask|wait|prompt|request|seek|check|confirm|verify)",
    ),
    r"without\s+(?:ask|confirm|approv|permission|consent)",
    "跳过",
    "忽略",
    "绕过",
    "绕开",
    "无视",
    "关闭",
    "禁用",
    "取消",
    "不理会",
    "确认",
    "询问",
    "请示",
    "征求",
    "问我",
    "审批",
    "批准",
    *_each(["自动", "总是", "一律", "全部", "始终"], "同意"),
    "你现在",
    "从现在",
    "系统提示",
    "系统指令",
    r"<\|",
    r"\[/?inst\]",
    r"<<\s*/?sys",
    r"\[/?system\]",
    r"#[ \t]*(?:system|instruction)",
    *_each(["system", "assistant", "developer"], r"[ \t]*:"),
    r"you\s+are\s+now",
    r"from\s+now",
    r"instructions\s*:",
    "pretend",
    r"act\s+as",
    # Possessive (``*+``): \s*(?:/)?\s* let sre split a run of spaces between
    # the two \s* in every way before failing (quadratic); no slash starts
    # with a space, so taking the whole run at once matches the same texts.
    *_each(
        ["<", "&lt;?", "&#0*+60;?", "&#x0*+3c;?", r"\\u003c", r"\\x3c", "%3c"],
        r"\s*+(?:(?:/|\\/|&#0*+47;?|&#x0*+2f;?|%2f)\s*+)?"
        r"(?:memory-stable|memory-context|fact|session|system-reminder)",
    ),
]
_QUANTIFIERS = ("?", "*", "+", "{")


def _head(fragment: str) -> str:
    """The fragment's first character (or escaped punctuation), which must be literal."""
    escaped = fragment[0] == "\\"
    n = 2 if escaped else 1
    class_escape = escaped and fragment[1].isalnum()  # \d, \s, \b...
    if (
        fragment[0] in ".^$*+?{}[]|()" or class_escape or fragment[n : n + 1] in _QUANTIFIERS
    ):  # "x?" makes x optional
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
        groups.setdefault(h, []).append(f[len(h) :])
    return re.compile(
        "|".join(
            h + (tails[0] if len(tails) == 1 else f"(?:{'|'.join(tails)})") for h, tails in groups.items()
        )
    )


def _by_head(fragments: list[str]) -> list[tuple[str, re.Pattern[str]]]:
    """One pattern per first character, with that character, for searching a
    long text (``rows_to_scan``).

    A pattern that starts with one literal character makes sre jump from one
    occurrence of it to the next in C; over a whole store joined, tens of
    such passes cost less than one pass of the union, which tries its ~70
    alternatives at nearly every character.
    """
    groups: dict[str, list[str]] = {}
    for f in fragments:
        groups.setdefault(_head(f), []).append(f)
    return [(h[-1], _factored(fs)) for h, fs in groups.items()]


FAMILY_GATES = {
    "secret": _factored(_SECRET_FRAGMENTS),
    "personal": _factored(_PERSONAL_FRAGMENTS),
    "instruction": _factored(_INSTRUCTION_FRAGMENTS),
}
_HEAD_GATES = _by_head(_SECRET_FRAGMENTS + _PERSONAL_FRAGMENTS + _INSTRUCTION_FRAGMENTS)
_NON_DIGIT_HEAD_GATES = [g for g in _HEAD_GATES if not "0" <= g[0] <= "9"]
_WORD_HEAD_GATES = [g for g in _NON_DIGIT_HEAD_GATES if g[0].isascii()]
_CJK_HEAD_GATES = [g for g in _NON_DIGIT_HEAD_GATES if not g[0].isascii()]

# Digits can be a quarter of a store's characters (versions, hashes, ids: the
# bench corpus), and the digit fragments start at every one.  In an ASCII text with each letter
# A-Z made "A" and each digit "0", their shapes start with literals, which sre
# jumps to in C: the IBAN gate becomes exactly IBAN_SHAPE, and every match of a
# card, PRC ID or mobile rule (three digits, then eight or more, each after
# at most one separator) holds DIGIT_SHAPE, so only texts with it get the digit
# rules themselves.  The mapping keeps every offset.  DIGIT_SHAPE spells its
# eight steps out: a repeated group costs sre a frame per step (1.3x slower).
_SHAPES = str.maketrans("BCDEFGHIJKLMNOPQRSTUVWXYZ123456789", "A" * 25 + "0" * 9)
_IBAN_SHAPE = re.compile(r"AA00 ?[A0]{4}")
_DIGIT_SHAPE = re.compile("000" + r"[\s-]?0" * 8)

# The rules ignore case as sre does, where "İ", "ı", "ſ" and "K" (Kelvin) match
# "i", "i", "s" and "k"; str.lower() leaves "ı" and "ſ" as they are and makes
# "İ" two characters ("i̇"), so the gates fold the four first.
_FOLD = str.maketrans("\u0130\u0131\u017f\u212a", "iisk")

# In a non-ASCII text each non-ASCII character is made "?" (offsets kept), so it
# joins the ASCII ones, except where that could hide a match: a non-ASCII digit
# or space (\d, \s match it, "?" is neither), or one of the four _FOLD makes
# ASCII.  Otherwise "?", like the character it stands for, matches no class of
# a fragment or digit rule but [^\s/] and no literal but "\?", and where it
# stands for a letter, \b may see a word's edge the letter hides: a gate on
# the "?" text passes a superset.  _ORDINARY matches up to the first character
# "?" could not stand for, in one sre loop.
_ORDINARY = re.compile(
    r"[^\d\s\u0130\u0131\u017f\u212a]*+"
    r"(?:[\x00-\x7f]+[^\d\s\u0130\u0131\u017f\u212a]*+)*+"
)


def rows_to_scan(texts: list[str], digit_rules) -> set[int]:
    """Indexes of the texts some secret, personal-data or instruction rule may match.

    ``digit_rules`` are ``(pattern, check, run)`` triples for the rules whose
    matches start with an ASCII digit and hold ``run`` digits in a row
    (``rules.DIGIT_RULES``).  A text is in the set when a family gate's
    fragment that does not start with a digit passes it, or one of those rules
    matches it with its check passing (build and order numbers pass the digit
    fragments, not the Luhn or date checks).  The texts are searched joined by
    newlines, so a match may also run across two of them and add a text no
    rule matches: harmless, as ``scan_text`` checks each field again.
    """
    out: set[int] = set()
    plain = list(map(str.isascii, texts))
    rows = [i for i, p in enumerate(plain) if p]
    others = [i for i, p in enumerate(plain) if not p]
    # ASCII texts join into a one-byte-per-character string, which sre walks
    # twice as fast; the other texts join it with their non-ASCII characters
    # made "?", after the CJK fragments have been looked for in them.
    other_joined, other_starts = _joined([texts[i] for i in others])
    _search_heads(_CJK_HEAD_GATES, other_joined, other_starts, others, out)
    # rules.hidden_characters: bidi controls and invisible characters, none of them ASCII.
    _search_rows([ANY_HIDDEN], other_joined, other_starts, others, out)
    odd = _odd_rows(other_joined, other_starts, others)
    joined, starts = _concat(
        _joined([texts[i] for i in rows]),
        (other_joined.encode("ascii", "replace").decode("ascii"), other_starts),
    )
    rows += others
    low, shape = joined.lower(), joined.translate(_SHAPES)
    _search_heads(_WORD_HEAD_GATES, low, starts, rows, out)
    _search_rows([_IBAN_SHAPE], shape, starts, rows, out)
    digits: set[int] = set()
    _search_rows([_DIGIT_SHAPE], shape, starts, range(len(rows)), digits)
    at = sorted(digits)
    _search_digit_rules(
        digit_rules, [joined[starts[k] : starts[k + 1] - 1] for k in at], [rows[k] for k in at], out
    )
    # The texts "?" could hide a match in are also searched as they are, folded
    # and lower-cased one by one: lower() may change their length.  No shapes
    # (translating such text costs more than it saves): the digit rules run on
    # it whole, their look-behinds failing fast inside digit runs.
    _search_heads(_WORD_HEAD_GATES, *_joined([texts[i].translate(_FOLD).lower() for i in odd]), odd, out)
    joined, starts = _joined([texts[i] for i in odd])
    _search_rows([_IBAN_GATE], joined, starts, odd, out)
    for pattern, check, _run in digit_rules:
        _search_rows([pattern], joined, starts, odd, out, check)
    return out


def _search_digit_rules(digit_rules, texts: list[str], rows: list[int], out: set[int]) -> None:
    # The digit rules on the ASCII texts holding DIGIT_SHAPE.  A rule whose
    # matches hold a run of more than eleven digits (PRC IDs: 17), far rarer
    # than DIGIT_SHAPE, runs only on the texts with one: sre finds that literal
    # run in their shapes faster than it tries the rule at every digit.
    joined, starts = _joined(texts)
    shape = None
    for pattern, check, run in digit_rules:
        if run > 11:
            shape = shape or joined.translate(_SHAPES)
            held: set[int] = set()
            _search_rows([re.compile("0" * run)], shape, starts, range(len(rows)), held)
            at = sorted(held)
            _search_rows([pattern], *_joined([texts[k] for k in at]), [rows[k] for k in at], out, check)
        else:
            _search_rows([pattern], joined, starts, rows, out, check)


def _joined(texts: list[str]) -> tuple[str, list[int]]:
    # The texts joined by newlines, and where each starts (plus one past the end).
    return "\n".join(texts), [0, *accumulate(len(t) + 1 for t in texts)]


def _concat(a: tuple[str, list[int]], b: tuple[str, list[int]]) -> tuple[str, list[int]]:
    # Two _joined results as one.
    if len(a[1]) == 1 or len(b[1]) == 1:
        return b if len(a[1]) == 1 else a
    return a[0] + "\n" + b[0], a[1][:-1] + [a[1][-1] + s for s in b[1]]


def _odd_rows(joined: str, starts: list[int], rows) -> list[int]:
    # The rows holding a character _ORDINARY stops at.
    out, match, pos = [], _ORDINARY.match, 0
    while (pos := match(joined, pos).end()) < len(joined):
        n = bisect_right(starts, pos) - 1
        out.append(rows[n])
        pos = starts[n + 1]
    return out


def _search_heads(gates, joined: str, starts: list[int], rows, out: set[int]) -> None:
    # _search_rows for (head, pattern) pairs, but a head occurring rarely is
    # found by str.find, which jumps to a character with memchr 30x faster
    # than sre's scan; sre's search takes over past a budget of finds, or at
    # once when the head is frequent in the text's first 64K characters.
    budget, sample = len(joined) // 4096 + 16, min(len(joined), 1 << 16)
    for head, pattern in gates:
        if joined.count(head, 0, sample) * len(joined) > budget * sample:
            _search_rows([pattern], joined, starts, rows, out)
            continue
        find, match, pos, left = joined.find, pattern.match, 0, budget
        while (pos := find(head, pos)) >= 0:
            left -= 1
            if not left:
                _search_rows([pattern], joined, starts, rows, out, pos=pos)
                break
            if match(joined, pos) is None:
                pos += 1
                continue
            n = bisect_right(starts, pos) - 1
            out.add(rows[n])
            pos = starts[n + 1]


def _search_rows(
    patterns, joined: str, starts: list[int], rows, out: set[int], check=None, pos: int = 0
) -> None:
    # After a hit, the search goes on at the next text: a text is in or out, and
    # texts holding a fragment many times do not cost a match object each.  A
    # match its check refuses lets the search go on after it, as finditer would.
    for pattern in patterns:
        search, at = pattern.search, pos
        while (m := search(joined, at)) is not None:
            if check is not None and not check(m.group()):
                at = m.end()
                continue
            n = bisect_right(starts, m.start()) - 1
            out.add(rows[n])
            at = starts[n + 1]


def open_families(text: str) -> dict[str, bool]:
    """For each family, whether its gate lets ``text`` through to the full rules."""
    low = (text if text.isascii() else text.translate(_FOLD)).lower()
    out = {fam: g.search(low) is not None for fam, g in FAMILY_GATES.items()}
    out["personal"] = out["personal"] or _IBAN_GATE.search(text) is not None
    # rules.hidden_characters (never ASCII, so an ASCII text costs nothing more).
    out["instruction"] = out["instruction"] or (not text.isascii() and ANY_HIDDEN.search(text) is not None)
    return out
