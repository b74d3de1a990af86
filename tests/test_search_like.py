"""Wildcard search: agentao's answer exactly, and hostile needles answered.

A needle is in the URL, and any page the browser visits can make it fetch
one (issue 19): ``%_%_%_%_%_%_%_%#`` froze the server while a regex built from
it backtracked.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# --- hostile needles ------------------------------------------------------------------
# Wildcard needles go to SQLite's LIKE (as agentao's own search does), whose work
# grows with the text, not its square; bench/bench_redos.py times them.
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


def test_adversarial_needles_are_answered(agent):
    for i in range(6):
        agent.save(
            f"t{i}", "#" + ("z a " * 1000)[:3998] + "q", [f"tag{i}"], scope="project" if i % 2 else "user"
        )
    client = agent.app().test_client()
    for q in ADVERSARIAL:
        data = client.get("/memories.json", query_string={"q": q}).get_json()
        assert sorted(m["id"] for m in data["items"]) == sorted(m.id for m in agent.manager.search(q)), q
