"""The two path patterns the dashboard shares with agentao find what agentao finds, in work
linear in the text.

agentao's own patterns (keywords from a memory's content; recall hints from the messages)
re-read a long run of path characters from each of its characters when it does not end
in an extension: quadratic.  Ours give the same matches (checked against agentao's own
functions) and never retry inside a run (counted, not timed; bench/bench_redos.py (d)
times agentao's keyword extraction over adversarial contents).
"""

from __future__ import annotations

import re

import pytest
from agentao.memory.guards import MemoryGuard
from agentao.prompts.helpers import extract_context_hints
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dashboard import contract
from dashboard.contract import extract_keywords
from dashboard.engine import extract_hints, hints

GUARD = MemoryGuard()
PIECES = st.lists(
    st.sampled_from(
        ["a", "Z", "_", "/", ".", "-", "\\", "py", "toml", "é", "中", " ", "1", ".md", "x.y", ":"]
    ),
    max_size=40,
).map("".join)


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


# A search tries the pattern at each position not inside an earlier match.  agentao's
# patterns, at each start inside a long run of path characters without an
# extension, read the run to its end and fail: quadratic.  Ours never fail there:
# the possessive branch takes the run whole, so every position is either inside a
# match (read once, plus a backtrack over the match) or one character where the
# try fails at once.  Counted on the texts that cost agentao 95 and 147 ms.
RUNS = [
    lambda n: "x" + "/" * (n - 1),
    lambda n: "." * n,
    lambda n: "a" + "-" * (n - 2) + ".",
    lambda n: "a/" * (n // 2),
    lambda n: "see a/b.py, " + "x." * (n // 2),
]


def failed_tries_inside_a_run(pattern: re.Pattern, text: str, run_class: str) -> int:
    """Positions holding a path character where the search tries the pattern and finds nothing."""
    covered = [False] * len(text)
    for m in pattern.finditer(text):
        covered[m.start() : m.end()] = [True] * (m.end() - m.start())
    in_run = re.compile(run_class)
    return sum(1 for i, ch in enumerate(text) if not covered[i] and in_run.fullmatch(ch))


@pytest.mark.parametrize("make", RUNS)
def test_a_long_run_without_an_extension_is_read_once(make):
    text = make(4000)
    assert failed_tries_inside_a_run(contract._PATH_LIKE, text, r"[\w/]") == 0
    assert failed_tries_inside_a_run(hints._PATHLIKE, text, r"[\w./\\-]") == 0


def test_agentaos_patterns_fail_inside_the_run():
    # What the count above stands for: agentao's own patterns retry inside the run.
    assert failed_tries_inside_a_run(re.compile(r"[\w/]+\.\w{2,4}"), "x" + "/" * 99, r"[\w/]") == 100
    assert failed_tries_inside_a_run(re.compile(r"[\w./\\-]+\.\w{2,6}"), "." * 100, r"[\w./\\-]") == 100
