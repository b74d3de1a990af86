"""The two path patterns the dashboard shares with agentao find what agentao finds, in time
linear in the text.

agentao's own patterns (keywords from a memory's content; recall hints from the messages)
re-read a long run of path characters from each of its characters when it does not end
in an extension: quadratic.  Ours give the same matches (checked against agentao's own
functions) and cost about what a plain scan of the same text costs.
"""

from __future__ import annotations

import re
import time

from agentao.memory.guards import MemoryGuard
from agentao.prompts.helpers import extract_context_hints
from hypothesis import example, given, settings, strategies as st

from dashboard.contract import extract_keywords
from dashboard.engine import extract_hints

GUARD = MemoryGuard()
PIECES = st.lists(st.sampled_from(["a", "Z", "_", "/", ".", "-", "\\", "py", "toml", "é", "中",
                                   " ", "1", ".md", "x.y", ":"]), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(PIECES)
@example("x" + "/" * 300)
@example("a.bcdefgh/x.yz and src/app.py.bak")
def test_keywords_equal_agentaos(content):
    assert extract_keywords("t", [], content) == GUARD.extract_keywords("t", [], content)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=3))
@example(["." * 300])
@example(["see a/b.py, foo.toolongext and 3.11.2 or C:\\p\\f.txt", "a.bb" + "." * 50])
def test_hints_equal_agentaos(texts):
    messages = [{"role": "user", "content": t} for t in texts]
    assert list(extract_hints(messages)) == extract_context_hints(messages)


def _cost(fn, text, rounds=7):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t)
    return best


ORDINARY = "ordinary text about src/app.py and a few more words "


def test_a_long_run_without_an_extension_costs_what_ordinary_text_does():
    """Runs that agentao's patterns re-read from each position (quadratic: 95 and 147 ms at
    4,000 characters).  Bounds relative to the same call on ordinary text of the same length,
    and on the growth from 1,000 to 4,000 characters (a quadratic cost grows 16x)."""
    for make in (lambda n: "x" + "/" * (n - 1), lambda n: "." * n,
                 lambda n: "a" + "-" * (n - 2) + ".", lambda n: "a/" * (n // 2)):
        for fn in (lambda s: extract_keywords("t", [], s), lambda s: extract_hints([s])):
            long, short = _cost(fn, make(4000)), _cost(fn, make(1000))
            ordinary = _cost(fn, (ORDINARY * 100)[:4000])
            assert long < 10 * ordinary and long < 8 * short, (make(8), long, short, ordinary)
