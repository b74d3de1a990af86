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
from typing import Iterator

# agentao's JWT shape (contract.SECRET_RULES "jwt"):
#   \beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b
# In "eyJ-eyJ-eyJ-…" every "eyJ" starts a try that reads the whole run of
# token characters before failing on the missing ".".  A try from a later
# "eyJ" of the same run reads the same run to the same end and meets the same
# text after it, so it fails too: when the real branch fails, the second one
# takes the run, and the search goes on after it.  ``.`` is not a token
# character, so the runs before each ``\.`` may be taken whole (``{8,}+``).
_JWT = re.compile(r"\beyJ(?:([A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}\b)"
                  r"|[A-Za-z0-9_-]*+)")


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
# the run holds the later labels: each tried the look-ahead over the rest of
# the run.  Here each run's end and last letter or digit are found once.
_CN_LABEL = re.compile(r"(?:密码|密钥|秘钥|私钥|口令|令牌|访问密钥)\s*+(?:是|为|[:：=])\s*+")
_CN_RUN = re.compile(r"[^\s\"'”，。；,;]*+")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_QUOTES = "\"'“"


def chinese_secret(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the ``chinese_secret`` pattern above."""
    run = (0, -1, -1)   # the last run read: start, end, index of its last letter or digit

    def value(at: int) -> tuple[int, int]:
        # (end of the run of value characters from ``at``, its last letter or digit or -1)
        nonlocal run
        start, end, last = run
        if not start <= at < end:
            end = _CN_RUN.match(text, at).end()
            found = _ALNUM.search(text[at:end][::-1])
            start, last = at, (end - 1 - found.start() if found else -1)
            run = (start, end, last)
        return end, last

    pos = 0
    while (m := _CN_LABEL.search(text, pos)) is not None:
        v = m.end()
        # With an opening quote first, as the optional quote is greedy; without
        # it, "“" (a value character too) may still begin the value.
        for at in ((v + 1, v) if v < len(text) and text[v] in _QUOTES else (v,)):
            end, last = value(at)
            if end - at >= 6 and last >= at:
                yield m.start(), end
                pos = end
                break
        else:
            pos = m.start() + 1


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
        j = bisect_left(self.starts, end) - 1   # the last kept span starting before ``end``
        return j >= 0 and self.ends[j] > start   # (ends rise with starts: no overlaps)

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
