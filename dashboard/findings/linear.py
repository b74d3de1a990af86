"""What makes a text scan quadratic, done in linear time: two secret rules, and the spans kept.

A rule runs over whatever a memory holds, and agentao accepts 4,000
characters of anything (raw SQL: more).  sre tries a pattern at every place
it may start; where each try reads a long stretch of text again, a memory
built of that stretch costs the square of its length (issue 19: 61-239 ms
per row, a scan of 300 such rows a minute).  Most rules were made linear in
place with possessive quantifiers (``rules.py``, ``gates.py``); the two here
re-read a shared run of value characters from each of many starting labels,
which no quantifier prevents, so they are answered from that run once.

Each gives exactly the spans ``finditer`` gives with the pattern it stands
in for (kept in tests/test_findings_redos.py, which compares the two).
``Disjoint`` keeps a scan's findings so that checking each new one is not a
look through all the others.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

# agentao's JWT shape (contract.SECRET_RULES "jwt"):
#   \beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b
# In "eyJ-eyJ-eyJ-…" every "eyJ" starts a try that reads the whole run of
# token characters before failing on the missing ".".  A try from a later
# "eyJ" of the same run reads the same run to the same end and meets the same
# text after it, so it fails too: when the real branch fails, the second one
# takes the run, and the search goes on after it.  ``.`` is not a token
# character, so the runs before each ``\.`` may be taken whole (``{8,}+``).
_JWT = re.compile(
    r"\beyJ(?:([A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}\b)"
    r"|[A-Za-z0-9_-]*+)"
)


def jwt(text: str) -> Iterator[tuple[int, int]]:
    """Spans of agentao's ``jwt`` rule."""
    for m in _JWT.finditer(text):
        if m.group(1) is not None:
            yield m.span()


# The Chinese labelled secret (rules.EXTRA_SECRETS "chinese_secret"):
#   (?:密码|密钥|秘钥|私钥|口令|令牌|访问密钥)\s*(?:是|为|[:：=])\s*["'“]?
#   (?=[^\s"'”，。；,;]*[A-Za-z0-9])[^\s"'”，。；,;]{6,}
# The value is the whole run of value characters after the label (greedy, and
# nothing follows it), if it holds a letter or digit.  In "密码=密码=密码=…"
# the run holds the later labels, and each tried the look-ahead over the rest
# of the run.  Here sre only tries what reads a bounded stretch: six value
# characters (five after a "“", which may begin the value itself) and a letter
# or digit among the first 41 (or 41 of them: the run is long).  A label
# passing that is decided here, once per long run: when it fails, every later
# label whose value lies in the same run fails too; only one whose own
# separator ends the run (it starts at most five characters before its end)
# may still succeed.
_CN_TRY = re.compile(
    r"(?:密码|密钥|秘钥|私钥|口令|令牌|访问密钥)\s*+(?:是|为|[:：=])\s*+"
    r"(?=(?:“(?=[^\s\"'”，。；,;]{5})|[\"']?(?=[^\s\"'”，。；,;]{6}))"
    r"(?:[^\s\"'”，。；,;]{0,40}?[A-Za-z0-9]|[^\s\"'”，。；,;]{41}))"
)
_CN_RUN = re.compile(r"[^\s\"'”，。；,;]*+")
_ALNUM = re.compile(r"[A-Za-z0-9]")


def chinese_secret(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the ``chinese_secret`` pattern above."""
    pos = 0
    while (m := _CN_TRY.search(text, pos)) is not None:
        v = m.end()
        quote = text[v] if v < len(text) and text[v] in "\"'“" else ""
        start = v + len(quote)  # the optional quote is greedy: after it first
        end = _CN_RUN.match(text, start).end()
        if _ALNUM.search(text, start, end) and (end - start >= 6 or quote == "“" and end - v >= 6):
            yield m.start(), end
            pos = end
        else:
            pos = max(m.start() + 1, end - 5)


class Disjoint:
    """Spans that do not overlap, kept in text order, each with a value.

    A memory can hold hundreds of findings (``key=… `` again and again); each
    new span is checked against those kept, and each excerpt shows the kept
    ones in its window.  Looking through all of them each time is quadratic
    in the findings; kept sorted, a look takes a bisection.
    """

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.values: list = []

    def overlaps(self, start: int, end: int) -> bool:
        """Whether some kept span ``(s, e)`` has ``start < e and end > s``."""
        j = bisect_left(self.starts, end) - 1  # the last kept span starting before ``end``
        return j >= 0 and self.ends[j] > start  # (ends rise with starts: no overlaps)

    def add(self, start: int, end: int, value) -> None:
        """Keep ``(start, end)``, which overlaps no kept span."""
        at = bisect_left(self.starts, start)
        self.starts.insert(at, start)
        self.ends.insert(at, end)
        self.values.insert(at, value)

    def within(self, lo: int, hi: int) -> list[tuple[int, int, object]]:
        """The kept spans reaching into ``[lo, hi)``, in text order."""
        a, b = bisect_right(self.ends, lo), bisect_left(self.starts, hi)
        return list(zip(self.starts[a:b], self.ends[a:b], self.values[a:b]))

    def __iter__(self):
        return zip(self.starts, self.ends, self.values)
