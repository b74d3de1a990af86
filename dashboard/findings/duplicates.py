"""The near-duplicate join: which texts have nearly the same token set.

Kept apart from the rules in ``corpus`` because it is the one costly step of
a scan; it needs only ``checks`` and the standard library.  Prefix filtering
(the AllPairs set-similarity join) only compares rows that share one of their
rarest tokens; but when even a row's rarest words are common (a team's notes
over a ~2,000-word vocabulary), that is nearly every pair: 43-55 s at 100,000
rows.  So the work is bounded, and the result says when it was cut: a word
in more than ``COMMON_ROWS`` rows carries no signal and is never compared on,
a row looks at most at ``MAX_VISITED`` others, and the join stops at
a deadline.  Below those bounds (every realistic store measured: 10,000 rows
cut nothing) the answer is exact.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import partial
from itertools import compress, count, repeat
from operator import ne, sub

from flask_babel import gettext as _
from flask_babel import ngettext

from .. import words
from .checks import jaccard
from .said import Said

DUPLICATE_THRESHOLD = 0.9
MIN_TOKENS = 3  # "ok", "uv" under two keys is not worth a finding
MAX_RELATED = 5
COMMON_ROWS = 1000  # a word in more rows than this is never a prefix token compared on
MAX_VISITED = 150  # rows looked at (in the prefix tokens' lists) per row, at most


class Cut:
    """What the bounds left out; empty when the join is exact."""

    def __init__(self) -> None:
        self.common_rows = 0  # rows whose prefix held a word too common to compare on
        self.capped_rows = 0  # rows that reached MAX_VISITED
        self.stopped_at: tuple[int, int] | None = None  # (rows joined, rows to join) at the deadline

    def __bool__(self) -> bool:
        return bool(self.common_rows or self.capped_rows or self.stopped_at)

    def notes(self) -> list[Said]:
        out = []
        if self.stopped_at:
            done, total = self.stopped_at
            out.append(
                Said(
                    lambda: _(
                        "the near-duplicate check stopped at the time limit after "
                        "%(done)s of %(total)s long memories",
                        done=words.count(done),
                        total=words.count(total),
                    )
                )
            )
        # The plural notes, each made from its count when read (``n`` bound per note).
        plural = (
            (
                self.common_rows,
                lambda n: ngettext(
                    "the near-duplicate check skipped words found in more than %(common)s memories "
                    "(too common to tell duplicates apart): %(count)s memory was compared on its "
                    "rarer words only",
                    "the near-duplicate check skipped words found in more than %(common)s memories "
                    "(too common to tell duplicates apart): %(count)s memories were compared on their "
                    "rarer words only",
                    n,
                    common=words.count(COMMON_ROWS),
                    count=words.count(n),
                ),
            ),
            (
                self.capped_rows,
                lambda n: ngettext(
                    "%(count)s memory was compared with only %(max)s others each",
                    "%(count)s memories were compared with only %(max)s others each",
                    n,
                    count=words.count(n),
                    max=words.count(MAX_VISITED),
                ),
            ),
        )
        out.extend(Said(partial(say, n)) for n, say in plural if n)
        return out


def pairs_of_sets(
    keys: list[str],
    sets: list[frozenset[str] | None],
    threshold: float = DUPLICATE_THRESHOLD,
    deadline: float | None = None,
) -> tuple[dict[int, dict[int, float]], Cut]:
    """For each token set (by position; None: a row left out), the sets under another key it
    nearly equals, with the score; and what was cut.

    Three exact steps, none pairwise over the corpus.  With a = |A−B|, b = |B−A|
    and m = |A∩B|, Jaccard ≥ t means a + b ≤ m·(1−t)/t, so: (1) a + b = 0 —
    identical sets, grouped by hashing; (2) a + b = 1 — one set is the other
    plus one token, found by looking up each set minus one token (needed only
    up to size 2t/(1−t), 18 at t = 0.9); (3) a + b ≥ 2 needs m ≥ 2t/(1−t), so
    only sets that large enter the prefix-filtering join.  At most MAX_RELATED
    others per text.
    """
    # Rows are their positions here: a handle per row would be built and hashed
    # for every row, and only a few percent of rows have a duplicate.
    subset_min = math.ceil(1 / (1 - threshold) - 1e-9)
    join_min = math.ceil(2 * threshold / (1 - threshold) - 1e-9)
    sets = [s if s is not None else frozenset() for s in sets]
    rows = list(compress(count(), map(MIN_TOKENS.__le__, map(len, sets))))
    kept = list(map(sets.__getitem__, rows))
    # Group in C: a dict keeps each set where it first came (the groups' order)
    # with its last row, so a row that is not its set's last names a shared set,
    # and only those few rows are grouped in Python.
    last = dict(zip(kept, rows))
    shared: dict[frozenset[str], list[int]] = {}
    repeated = set(compress(kept, map(ne, map(last.__getitem__, kept), rows)))
    for n in compress(rows, map(repeated.__contains__, kept)):
        shared.setdefault(sets[n], []).append(n)

    def rows_of(tokens: frozenset[str]) -> list[int]:
        return shared.get(tokens) or [last[tokens]]

    pairs: dict[int, dict[int, float]] = defaultdict(dict)
    for same in shared.values():
        _link(pairs, keys, same, same, 1.0)
    # "One token more": a set's hash-sum minus one token's hash names the smaller
    # set without building it; a hit is confirmed on the real sets.  The sums are
    # exact integers, so the differences for a whole set are tested against the
    # smaller sets' sums in C, and only the few sets with a hit loop in Python.
    # Each set's hashes are listed once, for its sum and its differences: a
    # hash() per token and per pass cost more than the lists.
    near = [tokens for tokens in last if subset_min - 1 <= len(tokens) <= join_min]
    hashes = list(map(list, map(map, repeat(hash), near)))
    sums = list(map(sum, hashes))
    # The smaller sets by their sums, each in a 1-tuple, built in C; only when two
    # sets share a sum (a clash of hash sums, rare) is it built again in Python.
    is_smaller = list(map(join_min.__gt__, map(len, near)))
    small_sums = list(compress(sums, is_smaller))
    small_sets = list(compress(near, is_smaller))
    by_sum: dict[int, Sequence[frozenset[str]]] = dict(zip(small_sums, zip(small_sets)))
    if len(by_sum) < len(small_sums):
        by_sum = defaultdict(list)
        for total, tokens in zip(small_sums, small_sets):
            by_sum[total].append(tokens)
    smaller_sums = by_sum.keys()
    for tokens, total, token_hashes in zip(near, sums, hashes):
        if len(tokens) >= subset_min and not smaller_sums.isdisjoint(map(sub, repeat(total), token_hashes)):
            smaller = [
                s
                for t in tokens
                for s in by_sum.get(total - hash(t), ())
                if len(s) == len(tokens) - 1 and s < tokens
            ]
            # Linked in row order, not in the order of this set's tokens: set order
            # follows the process's string hashing, and which MAX_RELATED rows a
            # row names must not.
            for s in sorted(smaller, key=lambda s: rows_of(s)[0]):
                _link(pairs, keys, rows_of(tokens), rows_of(s), (len(tokens) - 1) / len(tokens))
    cut = Cut()
    _prefix_join(
        [(tokens, rows_of(tokens)) for tokens in last if len(tokens) >= join_min],
        threshold,
        keys,
        pairs,
        cut,
        deadline,
    )
    return pairs, cut


def _prefix_join(reps, threshold, keys, pairs, cut: Cut, deadline: float | None) -> None:
    """AllPairs: two sets with Jaccard ≥ t share a token among their rarest
    |x| − ⌈t·|x|⌉ + 1 tokens, so only sets sharing such a token are compared
    (within the bounds in the module's docstring, which ``cut`` counts)."""
    reps.sort(key=lambda kv: len(kv[0]))
    df: Counter[str] = Counter()
    for tokens, _g in reps:
        df.update(tokens)
    # One global order, rarest first (ties by the token itself), as the filter requires.
    rank = {t: n for n, t in enumerate(sorted(df, key=lambda t: (df[t], t)))}
    index: dict[str, list[int]] = defaultdict(list)
    for i, (tokens, group) in enumerate(reps):
        if deadline is not None and not i % 64 and time.monotonic() > deadline:
            cut.stopped_at = (i, len(reps))
            return
        ranked = sorted(tokens, key=rank.__getitem__)
        seen: set[int] = set()
        common = capped = False
        visited = 0
        for t in ranked[: len(ranked) - math.ceil(threshold * len(ranked)) + 1]:
            if df[t] > COMMON_ROWS:
                common = True
                continue
            posting = index[t]
            if visited + len(posting) > MAX_VISITED:
                capped, posting = True, posting[: max(0, MAX_VISITED - visited)]
            visited += len(posting)
            for j in posting:
                other = reps[j][0]
                if j in seen or len(other) < threshold * len(tokens):
                    continue
                seen.add(j)
                score = jaccard(tokens, other)
                if score >= threshold:
                    _link(pairs, keys, group, reps[j][1], score)
            index[t].append(i)
        cut.common_rows += common
        cut.capped_rows += capped


def _link(pairs, keys, group_a, group_b, score) -> None:
    """Record a–b both ways, at most MAX_RELATED per row, so a thousand copies stay linear."""
    _fill(pairs, keys, group_a, group_b, score)
    if group_b is not group_a:
        _fill(pairs, keys, group_b, group_a, score)


def _fill(pairs, keys, rows, others, score) -> None:
    for a in rows:
        mine = pairs[a]
        for b in others:
            if len(mine) >= MAX_RELATED:
                break
            if b != a and keys[b] != keys[a]:
                mine[b] = score
