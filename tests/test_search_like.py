"""Wildcard search: SQLite's LIKE exactly, in time a plain scan of the rows would take.

A needle is in the URL, and any page the browser visits can make it fetch
one (issue 19): ``%_%_%_%_%_%_%_%#`` froze the server while a regex built from
it backtracked.  The matcher (``dashboard/store/like.py``) is checked against
SQLite itself, then the search against agentao's, then its cost (counted in
steps, not timed) against a plain scan of the same rows.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from steps import OverBudget, lines

from dashboard.store import like
from dashboard.store.like import Like
from dashboard.store.search import ascii_lower, matching

# Case pairs (SQLite folds ASCII only: not É/é, not the Kelvin sign), "?" (what
# non-Latin-1 text is encoded to before the bitmasks), a CJK character, LIKE's
# wildcards, NUL (where SQLite's LIKE stops reading) and the haystack separator.
CHARS = "aAbBéÉ部\u212ak?_%\n\x00\x1f "
_SQL = sqlite3.connect(":memory:")


def sqlite_like(text: str, pattern: str) -> bool:
    return bool(_SQL.execute("SELECT ? LIKE ?", (text, pattern)).fetchone()[0])


def ours(text: str, pattern: str) -> bool:
    return Like(ascii_lower(pattern)).matches(ascii_lower(text))


def both_ways(text: str, pattern: str) -> list[bool]:
    """Our answer with the default strategy and with the bitmasks from the first candidate."""
    answers = [ours(text, pattern)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(like, "_MIN_CANDIDATES", 0)
        answers.append(ours(text, pattern))
    return answers


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=CHARS, max_size=24), pattern=st.text(alphabet=CHARS, max_size=8))
def test_like_answers_as_sqlite_does(text, pattern):
    assert both_ways(text, pattern) == [sqlite_like(text, pattern)] * 2


# Long texts of few letters: many candidates for each piece, so the bitmasks
# take over part-way, with and without characters past Latin-1 in the text.
@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab?部", min_size=20, max_size=300),
    pattern=st.text(alphabet="ab?部__%", min_size=1, max_size=12),
)
def test_like_answers_as_sqlite_does_on_long_texts(text, pattern):
    pattern = f"%{pattern}%"
    assert both_ways(text, pattern) == [sqlite_like(text, pattern)] * 2
    found = Like(pattern).search(text)
    assert (found is not None) == sqlite_like(text, pattern)
    if found:  # the span the search reports holds a match itself
        assert sqlite_like(text[found[0] : found[1]], pattern)


# Pieces repeated ("%z%z%z%…" is placed with one split) and "_" beside them.
@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab", max_size=60),
    unit=st.sampled_from(["a", "ab", "a_b", "_a", "b_", "ba", "aa"]),
    times=st.integers(1, 7),
)
def test_repeated_pieces_answer_as_sqlite_does(text, unit, times):
    pattern = "%" + "%".join([unit] * times) + "%"
    assert both_ways(text, pattern) == [sqlite_like(text, pattern)] * 2


def test_a_piece_of_more_characters_than_bytes_answers_as_sqlite_does():
    # 300 distinct characters past Latin-1: no byte left for each, so no bitmasks.
    chars = [chr(0x4E00 + i) for i in range(300)]
    pattern = "%" + "_".join(chars) + "%"
    whole = "".join(ch + "y" for ch in chars)[:-1]
    for text in [
        "",
        chars[0] * 600,
        whole,
        "x" + whole + "x",
        whole.replace(chars[150], "z"),
        (chars[0] + "y") * 200 + whole,
    ]:
        assert both_ways(text, pattern) == [sqlite_like(text, pattern)] * 2


# --- the memories search against agentao's -----------------------------------
ROWS = [  # (key, content, tags): fields that meet at a join, newlines, NUL, the separator
    ("ab", "cd\nef", ["gh"]),
    ("a", "b_c%d", ["e f"]),
    ("Deploy Script", "Run DEPLOY.sh\n\nafter a build", ["Ops"]),
    ("nul row", "before\x00after zz", ["tail"]),
    ("sep row", "one\x1ftwo", []),
    ("é row", "Écrire à Étienne", ["été"]),
    ("kelvin", "\u212a and k", ["K"]),
    ("long", "z a " * 60 + "#", ["z"]),
    ("empty tags", "x", []),
    ("b", "cb", ["bc", "c"]),
    ("bushu 部署", "部署脚本_在%这里", ["运维"]),
    ("tab\trow", "a\tb\tc", ["a_b"]),
]
QUERY = st.text(alphabet="abcdefz#_%\n\x00\x1f ké部", min_size=1, max_size=6)


@pytest.fixture
def odd_corpus(agent):
    for n, (key, content, tags) in enumerate(ROWS):
        agent.save(key, content, tags, scope="user" if n % 2 else "project")
    return agent


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=QUERY)
def test_wildcard_search_is_agentaos_search(odd_corpus, q):
    client = odd_corpus.app().test_client()
    q = q.strip()  # as the page does
    if not q:
        return
    data = client.get("/memories.json", query_string={"q": q, "per_page": 200}).get_json()
    assert sorted(m["id"] for m in data["items"]) == sorted(m.id for m in odd_corpus.manager.search(q))


@pytest.mark.parametrize(
    "q",
    [
        "%",
        "_",
        "b%d",
        "b_c",
        "d\nef",
        "b\nc",
        "f%g",
        "\x00",
        "a\x00",
        "zz\x00x",
        "before",
        "after",
        "e\x1ft",
        "one",
        "o%t",
        "é",
        "É",
        "k",
        "%\u212a%",
        "a_b",
        "z_#",
        "b%c",
        "b_c",
        "c%b",
        "%b%c%",
        "z%z%z%#",
        "_" * 9,
        "__ _",
    ],
)
def test_wildcard_search_edges_are_agentaos(odd_corpus, q):
    client = odd_corpus.app().test_client()
    data = client.get("/memories.json", query_string={"q": q, "per_page": 200}).get_json()
    assert sorted(m["id"] for m in data["items"]) == sorted(m.id for m in odd_corpus.manager.search(q))


# --- cost, in steps ----------------------------------------------------------------
# Rows holding every needle's words, so that no needle is answered by the word
# index alone: each is matched on every row.  The "#" opens the content, after a
# title of at most four characters, so "%_%_%_%_%_%_%_%#" (seven characters before
# a "#", in one field) matches nowhere.  Each needle is counted in lines of the
# dashboard's Python run (tests/steps.py) over a row of 1,000 and of 4,000
# characters: a matcher that retries from each position grows with the square of
# the row (16x), ours stays within 8x; over that the count stops the search, so a
# backtracking matcher fails at once instead of running for minutes.  The matcher
# builds no regex (like.py imports no ``re``); what each of its ``str.find`` calls
# does is linear.  Its CPU time against a plain scan is bench/bench_redos.py's (a).
ADVERSARIAL = [
    "%_%_%_%_%_%_%_%#",
    "%zz%",
    "%z%z%z%z%z%z%z%z%z%z%z%z%z%z%z%z%z%z%z%zzz",
    "%z_z_z_z_z_z_z_z_z_z_z_z_z_z_z_z_q%",
    "%a_z%",
    "z%a%#",
    "% %_#",
    "z_a z_a z_q",
]
GROWTH = 8


def _row(n: int) -> str:
    """A row's haystack as search.haystack joins it: title, content, tags."""
    return "t1\x1f#" + ("z a " * n)[: n - 2] + "q\x1ftag1"


@pytest.mark.parametrize("q", ADVERSARIAL)
def test_no_needle_costs_more_than_linear_in_the_row(q):
    short = lines(matching, [_row(1000)], {}, q)
    try:
        lines(matching, [_row(4000)], {}, q, budget=GROWTH * short)
    except OverBudget:
        pytest.fail(f"{q!r}: {short:,} lines on a row of 1,000 characters, more than {GROWTH}x on 4,000")


def test_adversarial_needles_are_answered(agent):
    for i in range(6):
        agent.save(
            f"t{i}", "#" + ("z a " * 1000)[:3998] + "q", [f"tag{i}"], scope="project" if i % 2 else "user"
        )
    client = agent.app().test_client()
    for q in ADVERSARIAL:
        data = client.get("/memories.json", query_string={"q": q}).get_json()
        assert sorted(m["id"] for m in data["items"]) == sorted(m.id for m in agent.manager.search(q)), q
