"""Cheap gates in front of the finding rules (``rules``).

Kept apart from the rules because they are a speed device, not a judgement:
changing a rule in ``rules.py`` may need a fragment here, and the gate tests
in tests/test_findings_rules.py say so when it does.
"""

from __future__ import annotations

import re

from ..guard.invisible import ANY_HIDDEN


# Cheap gates, one per family, searched over the lower-cased text: every rule
# of a family needs one of its gate's fragments, so a text the gate passes
# over cannot hold a finding of that family.  Most fields stop at the gates: a
# scan without them costs 3.5x (bench/results/caches-round5.txt).  Every fragment
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


FAMILY_GATES = {
    "secret": _factored(_SECRET_FRAGMENTS),
    "personal": _factored(_PERSONAL_FRAGMENTS),
    "instruction": _factored(_INSTRUCTION_FRAGMENTS),
}

# The rules ignore case as sre does, where "İ", "ı", "ſ" and "K" (Kelvin) match
# "i", "i", "s" and "k"; str.lower() leaves "ı" and "ſ" as they are and makes
# "İ" two characters ("i̇"), so the gates fold the four first.
_FOLD = str.maketrans("\u0130\u0131\u017f\u212a", "iisk")


def open_families(text: str) -> dict[str, bool]:
    """For each family, whether its gate lets ``text`` through to the full rules."""
    low = (text if text.isascii() else text.translate(_FOLD)).lower()
    out = {fam: g.search(low) is not None for fam, g in FAMILY_GATES.items()}
    out["personal"] = out["personal"] or _IBAN_GATE.search(text) is not None
    # rules.hidden_characters (never ASCII, so an ASCII text costs nothing more).
    out["instruction"] = out["instruction"] or (not text.isascii() and ANY_HIDDEN.search(text) is not None)
    return out
