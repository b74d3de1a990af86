"""Characters that reorder or hide text: which they are, where they are, what they are called.

Memory text is hostile (STYLE.md §9), and some of its characters show nothing
at all or change how the rest is shown: U+202E makes ``invoice ‮fdp.exe`` read
"invoice exe.pdf", a zero-width space splits a word a filter looks for, and
the Unicode "tag" characters spell out ASCII text no screen shows (a known
way of smuggling instructions to a model).  The pages show each one as a
visible, named mark (``dashboard.guard.textmarks``) and the findings flag them
(``findings.rules.hidden_characters``); both use ``hidden_spans`` below, so
what the page marks and what the findings flag cannot drift apart.

A few of these characters have honest uses inside words of other scripts:
ZWJ and ZWNJ shape emoji sequences and Indic or Persian words, and a single
variation selector picks an emoji's or an ideograph's form.  Those are left
alone there; they are marked where they touch ASCII (ZWJ, ZWNJ) or come in
runs (selectors; a run of them is how bytes are hidden in an emoji).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# Reorder text: embeddings, overrides, isolates and the marks.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Show nothing: zero-width and format characters, fillers, tags.
INVISIBLE = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u2028\u2029\u2060-\u2064"
    "\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"
)
JOINERS = "\u200c\u200d"
SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
# C0 and C1 controls but TAB, LF and CR: shown marked, not a finding (ANSI colour codes
# pasted from a terminal are common and harmless in a prompt).  And lone surrogates: not
# characters at all, so no UTF-8 can carry them, yet agentao stores one from a model's tool
# call as the JSON escape "\ud800" (in tags, keywords), which reads back as that str.
CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff"

_SELECTOR = re.compile(f"[{SELECTORS}]")  # .match(ch): is ch one
_JOINER = frozenset("\u200c\u200d")
# Scripts that never use a joiner (CJK, kana, Hangul, full-width forms): one there only
# splits a word, e.g. "密\u200d码" past a rule that looks for "密码".
_NO_JOINERS = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]")
_RUNS = {
    True: re.compile(f"[{BIDI}{INVISIBLE}{JOINERS}{SELECTORS}{CONTROLS}]+"),
    False: re.compile(f"[{BIDI}{INVISIBLE}{JOINERS}{SELECTORS}]+"),
}
# Every character ``hidden_spans(text, controls=False)`` may report (and the honest
# joiners and selectors too): a superset, for the findings gates.  None is ASCII.
ANY_HIDDEN = re.compile(f"[{BIDI}{INVISIBLE}{JOINERS}{SELECTORS}]")
_CONTROL_NAMES = {
    0x00: "NULL",
    0x07: "BELL",
    0x08: "BACKSPACE",
    0x0B: "LINE TABULATION",
    0x0C: "FORM FEED",
    0x1B: "ESCAPE",
    0x7F: "DELETE",
}


def _honest(text: str, start: int, end: int) -> bool:
    """Whether the run ``text[start:end]`` is a selector and/or joiner used as its script
    uses it: one selector after a visible character (an emoji, an ideograph, a keycap
    digit), or one joiner, perhaps after a selector, inside a word of a script that uses
    joiners or an emoji sequence (both neighbours non-ASCII, neither CJK)."""
    run = text[start:end]
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if not before or before.isspace():
        return False
    if len(run) == 1 and _SELECTOR.match(run):
        return True
    if run[-1] not in _JOINER or len(run) > 2 or (len(run) == 2 and not _SELECTOR.match(run[0])):
        return False
    return (
        bool(after)
        and not before.isascii()
        and not after.isascii()
        and not after.isspace()
        and not _NO_JOINERS.match(before)
        and not _NO_JOINERS.match(after)
    )


def hidden_spans(text: str, controls: bool = True) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each run of characters that reorder or hide text, in order.

    ``controls`` includes the C0/C1 control characters (but TAB, LF, CR).  An
    ASCII text without controls costs one O(1) check; others one regex pass.
    """
    if not text or (text.isascii() and not controls):
        return
    for m in _RUNS[controls].finditer(text):
        start, end = m.span()
        if end - start <= 2 and _honest(text, start, end):
            continue
        yield start, end


def may_hide(text: str) -> bool:
    """Whether ``text`` holds any character ``hidden_spans`` may report: one regex search,
    for the many short strings a page prints (True can still mean none: see ``_honest``)."""
    if text.isascii() and text.isprintable():  # both O(1) or a C loop: most of a page
        return False
    return _RUNS[True].search(text) is not None


_SURROGATE = re.compile("[\ud800-\udfff]")


def holds_surrogate(value) -> bool:
    """Whether a parsed JSON value (a request body) holds a lone surrogate in any key or
    string: ``"\\ud800"`` parses to one, and no UTF-8 text (no file, no page) can hold it."""
    stack = [value]
    while stack:  # a loop, not recursion: the body may nest as deep as the parser allowed
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def hidden_prefix(text: str) -> int:
    """How many characters at the start of ``text`` show nothing or reorder (every kind
    ``hidden_spans`` knows, honest or not): a spreadsheet skips them before a formula."""
    found = _RUNS[True].match(text)
    return found.end() if found else 0


def escaped(text) -> str:
    """``text`` for a terminal: each character that is not printable or that hides or
    reorders text (ESC, BEL, a line break, U+202E, a surrogate from an undecodable file
    name...) written as its Python escape (``\\x1b``, ``\\n``, ``\\u202e``), so a name
    cannot retitle the terminal, colour it or forge a line of its own."""
    text = str(text)
    if text.isascii() and text.isprintable():
        return text
    hidden = set(hidden_chars(text))
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if i in hidden or not (ch.isprintable() or ch == " ")
        else ch
        for i, ch in enumerate(text)
    )


def hidden_chars(text: str) -> Iterator[int]:
    """The index of each character ``hidden_spans`` covers."""
    for start, end in hidden_spans(text):
        yield from range(start, end)


def describe(ch: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: the code point and its Unicode name."""
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X} LONE SURROGATE"
    name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(code, "CONTROL CHARACTER")
    return f"U+{code:04X} {name}"


def code_point(ch: str) -> str:
    """``U+202E``."""
    return f"U+{ord(ch):04X}"
