"""The "nearly the same as a live memory" warning, through its pre-filter (a few searches
per card), gives exactly what a comparison with every live row gives, on many random stores.

Random, seeded stores (so a failure replays): contents drawn from a small vocabulary
(English words, CJK runs, punctuation and case changes), near copies of live rows as
candidates (one token more, one less, one changed, reordered, under the same key or
another), several rows nearly equal to one candidate (the five named, ties in row order),
and rows in both stores.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from dashboard.actions import warnings
from dashboard.findings.checks import jaccard, token_set
from dashboard.findings.duplicates import DUPLICATE_THRESHOLD, MAX_RELATED, MIN_TOKENS
from dashboard.records import Memory

WORDS = (
    "deploy build test cache port timeout retry config uv pip ruff mypy docker "
    "staging prod branch merge review token limit db sqlite index page Alpha BETA x1 2026"
).split()
CJK = ["部署", "测试", "缓存", "端口", "超时", "配置", "分支", "合并", "数据库", "索", "页"]


def everything(plans: dict, live: list) -> dict:
    """The warning's definition: every live row under another key, compared."""
    found = {}
    for i, plan in plans.items():
        mine = token_set(plan.save.content)
        if len(mine) < MIN_TOKENS:
            continue
        near = sorted(
            (-jaccard(mine, token_set(m.content.lower())), n)
            for n, m in enumerate(live)
            if m.key_normalized != plan.save.key_normalized
        )
        hits = [live[n] for score, n in near if -score >= DUPLICATE_THRESHOLD]
        if hits:
            found[i] = hits[:MAX_RELATED]
    return found


def text(rng: random.Random, size: int) -> str:
    parts = []
    for _ in range(size):
        word = rng.choice(WORDS) if rng.random() < 0.8 else rng.choice(CJK) + rng.choice(CJK)
        parts.append(word.upper() if rng.random() < 0.1 else word)
    return rng.choice([" ", ", ", "; ", "-"]).join(parts)


def near_copy(rng: random.Random, content: str) -> str:
    words = content.split()
    change = rng.choice(["same", "more", "less", "swap", "shuffle"])
    if change == "more":
        words.insert(rng.randrange(len(words) + 1), rng.choice(WORDS + CJK))
    elif change == "less" and len(words) > 1:
        words.pop(rng.randrange(len(words)))
    elif change == "swap":
        words[rng.randrange(len(words))] = rng.choice(WORDS + CJK)
    elif change == "shuffle":
        rng.shuffle(words)
    return " ".join(words)


def store(rng: random.Random, name: str, size: int) -> list[Memory]:
    rows = []
    for n in range(size):
        content = text(rng, rng.choice([1, 2, 3, 5, 9, 10, 11, 19, 20, 30]))
        if rows and rng.random() < 0.3:  # a near copy of an earlier row
            content = near_copy(rng, rng.choice(rows).content)
        key = f"k{rng.randrange(size)}" if rng.random() < 0.2 else f"{name}-{n}"
        rows.append(Memory(f"{name}{n:04x}", name, "note", key, key, content, store=name))
    return rows


def plan(key: str, content: str):
    return SimpleNamespace(save=SimpleNamespace(key_normalized=key, content=content))


@pytest.mark.parametrize("seed", range(40))
def test_the_prefilter_names_exactly_the_rows_a_full_comparison_names(seed):
    rng = random.Random(seed)
    project, user = store(rng, "project", rng.randrange(0, 120)), store(rng, "user", rng.randrange(0, 40))
    live = [*project, *user]
    plans = {}
    for n in range(25):
        if live and rng.random() < 0.8:
            row = rng.choice(live)
            key = row.key_normalized if rng.random() < 0.2 else f"new-{n}"
            plans[f"i{n}"] = plan(key, near_copy(rng, row.content))
        else:
            plans[f"i{n}"] = plan(f"new-{n}", text(rng, rng.randrange(1, 25)))
    assert warnings._duplicated(plans, live) == everything(plans, live)


def test_many_equal_rows_name_the_first_five_in_row_order():
    content = "deploy with uv then run the tests on staging"
    project = [Memory(f"p{n}", "project", "note", f"p{n}", "t", content) for n in range(8)]
    user = [Memory("u0", "user", "note", "u0", "t", content, store="user")]
    found = warnings._duplicated({"a": plan("new", content + " now")}, [*project, *user])
    assert [m.id for m in found["a"]] == ["p0", "p1", "p2", "p3", "p4"]
    assert everything({"a": plan("new", content + " now")}, [*project, *user]) == found
