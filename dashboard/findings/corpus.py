"""Rules that need the whole corpus: conflicts and duplicates.

Each rule takes ``Docs``, the rows as columns (a row is its position), and
yields ``(position, Finding)`` with the related rows' positions in
``Finding.related``; the caller names them.  Columns rather than one object
per row: a scan hands every live row of both stores to these rules, and most
rows have nothing to report.  Nothing here is quadratic in the number of
rows: duplicates are found with prefix filtering (the AllPairs set-similarity
join), which only compares rows that share one of their rarest tokens.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import compress, count, repeat
from operator import ne, or_, sub
from typing import Iterator, NamedTuple

from ..contract import SaveRefused, normalize_key
from .checks import jaccard, token_set, token_sets
from .rules import Finding

DUPLICATE_THRESHOLD = 0.9
MIN_TOKENS = 3          # "ok", "uv" under two keys is not worth a finding
MAX_RELATED = 5


class Docs(NamedTuple):
    """Rows as the corpus rules see them: one list per column, in the same row order."""

    keys: list[str]     # key_normalized
    scopes: list[str]
    types: list[str]
    texts: list[str]    # content

    @classmethod
    def of(cls, rows) -> "Docs":
        """From ``(key, scope, type, text)`` tuples."""
        return cls(*(list(column) for column in zip(*rows))) if rows else cls([], [], [], [])


def same_key_both_scopes(docs: Docs) -> Iterator[tuple[int, Finding]]:
    """Same key in the user and the project scope: both are injected, the model sees two answers"""
    keys, scopes = docs.keys, docs.scopes
    # The keys of each scope as a set, built in C: a Python loop over every row cost more.
    seen: set[str] = set()
    both: set[str] = set()
    for scope in set(scopes):
        in_scope = set(compress(keys, map(scope.__eq__, scopes)))
        both |= seen & in_scope
        seen |= in_scope
    by_key: dict[str, list[int]] = defaultdict(list)
    for n in compress(count(), map(both.__contains__, keys)):
        by_key[keys[n]].append(n)
    why = same_key_both_scopes.__doc__.splitlines()[0]
    for key, group in by_key.items():
        for n in group:
            others = tuple(m for m in group if m != n)[:MAX_RELATED]
            yield n, Finding("conflict.same_key", "conflict", "key_normalized", 0, len(key), key,
                             why, others)


def near_duplicates(docs: Docs, threshold: float = DUPLICATE_THRESHOLD
                    ) -> Iterator[tuple[int, Finding]]:
    """Near-identical content under different keys (token Jaccard ≥ 0.9): one of them is redundant"""
    return duplicate_findings(docs, duplicate_pairs(docs.keys, docs.texts, threshold))


def duplicate_findings(docs: Docs, pairs: dict[int, dict[int, float]]
                       ) -> Iterator[tuple[int, Finding]]:
    """``near_duplicates``'s findings from ``duplicate_pairs`` of the same docs, in the same order."""
    why = near_duplicates.__doc__.splitlines()[0]
    for n, others in pairs.items():
        if others:
            yield n, Finding("conflict.duplicate", "conflict", "content", 0, len(docs.texts[n]),
                             f"{len(others)} near-identical (Jaccard {max(others.values()):.2f})",
                             why, tuple(others))


def duplicate_pairs(keys: list[str], texts: list[str], threshold: float = DUPLICATE_THRESHOLD
                    ) -> dict[int, dict[int, float]]:
    """For each text (by position), the texts under another key it nearly equals, with the score.

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
    sets = token_sets(texts)
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
    by_sum: dict[int, list[frozenset[str]]] = defaultdict(list)
    for tokens, total in zip(near, sums):
        if len(tokens) < join_min:
            by_sum[total].append(tokens)
    smaller_sums = by_sum.keys()
    for tokens, total, token_hashes in zip(near, sums, hashes):
        if len(tokens) >= subset_min and not smaller_sums.isdisjoint(
                map(sub, repeat(total), token_hashes)):
            for t in tokens:
                for smaller in by_sum.get(total - hash(t), ()):
                    if len(smaller) == len(tokens) - 1 and smaller < tokens:
                        _link(pairs, keys, rows_of(tokens), rows_of(smaller),
                              (len(tokens) - 1) / len(tokens))
    _prefix_join([(tokens, rows_of(tokens)) for tokens in last if len(tokens) >= join_min],
                 threshold, keys, pairs)
    return pairs


def _prefix_join(reps, threshold, keys, pairs) -> None:
    """AllPairs: two sets with Jaccard ≥ t share a token among their rarest
    |x| − ⌈t·|x|⌉ + 1 tokens, so only sets sharing such a token are compared."""
    reps.sort(key=lambda kv: len(kv[0]))
    df: Counter[str] = Counter()
    for tokens, _g in reps:
        df.update(tokens)
    # One global order, rarest first (ties by the token itself), as the filter requires.
    rank = {t: n for n, t in enumerate(sorted(df, key=lambda t: (df[t], t)))}
    index: dict[str, list[int]] = defaultdict(list)
    for i, (tokens, group) in enumerate(reps):
        ranked = sorted(tokens, key=rank.__getitem__)
        seen: set[int] = set()
        for t in ranked[:len(ranked) - math.ceil(threshold * len(ranked)) + 1]:
            for j in index[t]:
                other = reps[j][0]
                if j in seen or len(other) < threshold * len(tokens):
                    continue
                seen.add(j)
                score = jaccard(tokens, other)
                if score >= threshold:
                    _link(pairs, keys, group, reps[j][1], score)
            index[t].append(i)


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


# Words that say how, not what: skipped when finding a key's subject.
_NOT_SUBJECT = frozenset(
    "preference user profile constraint decision workflow use uses using prefer prefers like "
    "likes want wants always never the a an to i my of for with".split())


def subject(key: str) -> str:
    """The first word of a key that names a topic, e.g. ``preference_tabs_over_spaces`` -> ``tabs``."""
    for word in key.split("_"):
        if len(word) > 1 and word not in _NOT_SUBJECT and not word.isdigit():
            return word
    return ""


def contradicted_preferences(memories: Docs, approved: Docs) -> Iterator[tuple[int, Finding]]:
    """A live preference on the same subject as an approved candidate, saying something else

    Heuristic: the candidate and the preference (type preference, or user scope)
    share the key's subject word (``subject``), the preference is not the
    memory the approval itself wrote (its key is not the candidate's
    normalised key), and the two contents differ as token sets.  ``related``
    holds positions in ``approved``.
    """
    why = contradicted_preferences.__doc__.splitlines()[0]
    by_subject: dict[str, list[int]] = defaultdict(list)
    for c, (key, kind) in enumerate(zip(approved.keys, approved.types)):
        if kind == "preference" and subject(key):
            by_subject[subject(key)].append(c)
    if not by_subject:
        return
    preferences = map(or_, map("preference".__eq__, memories.types), map("user".__eq__, memories.scopes))
    for n in compress(count(), preferences):
        key, text = memories.keys[n], memories.texts[n]
        clashing = []
        for c in by_subject.get(subject(key), ()):
            try:
                written = normalize_key(approved.keys[c])
            except SaveRefused:
                written = ""
            if key != written and token_set(text) != token_set(approved.texts[c]):
                clashing.append(c)
        if clashing:
            yield n, Finding("conflict.contradicted", "conflict", "content", 0, len(text),
                             f"subject '{subject(key)}'", why, tuple(clashing[:MAX_RELATED]))
