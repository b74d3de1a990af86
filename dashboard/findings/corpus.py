"""Rules that need the whole corpus: conflicts and duplicates.

Each rule takes plain ``Doc`` tuples (the caller's handle for the row plus
the few columns the rule reads) and yields ``(handle, Finding)``.  Nothing
here is quadratic in the number of rows: duplicates are found with prefix
filtering (the AllPairs set-similarity join), which only compares rows that
share one of their rarest tokens.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import compress, count, repeat
from operator import attrgetter, itemgetter, ne, sub
from typing import Hashable, Iterable, Iterator, NamedTuple

from ..contract import SaveRefused, normalize_key
from .checks import jaccard, token_set, token_sets
from .rules import Finding

DUPLICATE_THRESHOLD = 0.9
MIN_TOKENS = 3          # "ok", "uv" under two keys is not worth a finding
MAX_RELATED = 5


class Doc(NamedTuple):
    """One row as the corpus rules see it."""

    handle: Hashable    # the caller's name for the row, e.g. "project/memories/1a2b"; echoed in ``related``
    key: str            # key_normalized
    scope: str
    type: str
    text: str           # content


def same_key_both_scopes(docs: Iterable[Doc]) -> Iterator[tuple[str, Finding]]:
    """Same key in the user and the project scope: both are injected, the model sees two answers"""
    docs = list(docs)
    # Find the few keys in two scopes first, from the distinct (key, scope) pairs
    # and in C: grouping every row by key, or a Python loop over them, cost more.
    keys = list(map(attrgetter("key"), docs))
    pairs = set(zip(keys, map(attrgetter("scope"), docs)))
    if len(pairs) == len(set(keys)):
        return
    both = {key for key, n in Counter(map(itemgetter(0), pairs)).items() if n > 1}
    by_key: dict[str, list[Doc]] = defaultdict(list)
    for d in compress(docs, map(both.__contains__, keys)):
        by_key[d.key].append(d)
    why = same_key_both_scopes.__doc__.splitlines()[0]
    for key, group in by_key.items():
        for d in group:
            others = tuple(o.handle for o in group if o is not d)[:MAX_RELATED]
            yield d.handle, Finding("conflict.same_key", "conflict", "key_normalized", 0,
                                    len(key), key, why, others)


def near_duplicates(docs: Iterable[Doc], threshold: float = DUPLICATE_THRESHOLD
                    ) -> Iterator[tuple[str, Finding]]:
    """Near-identical content under different keys (token Jaccard ≥ 0.9): one of them is redundant"""
    docs = list(docs)
    return duplicate_findings(docs, duplicate_pairs([d.key for d in docs], [d.text for d in docs],
                                                    threshold))


def duplicate_findings(docs: list[Doc], pairs: dict[int, dict[int, float]]
                       ) -> Iterator[tuple[str, Finding]]:
    """``near_duplicates``'s findings from ``duplicate_pairs`` of the same docs, in the same order."""
    why = near_duplicates.__doc__.splitlines()[0]
    for n, others in pairs.items():
        if others:
            d = docs[n]
            yield d.handle, Finding("conflict.duplicate", "conflict", "content", 0, len(d.text),
                                    f"{len(others)} near-identical (Jaccard {max(others.values()):.2f})",
                                    why, tuple(docs[m].handle for m in others))


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


def contradicted_preferences(memories: Iterable[Doc], approved: Iterable[Doc]
                             ) -> Iterator[tuple[str, Finding]]:
    """A live preference on the same subject as an approved candidate, saying something else

    Heuristic: the candidate and the preference (type preference, or user scope)
    share the key's subject word (``subject``), the preference is not the
    memory the approval itself wrote (its key is not the candidate's
    normalised key), and the two contents differ as token sets.
    """
    why = contradicted_preferences.__doc__.splitlines()[0]
    by_subject: dict[str, list[Doc]] = defaultdict(list)
    for c in approved:
        if c.type == "preference" and subject(c.key):
            by_subject[subject(c.key)].append(c)
    if not by_subject:
        return
    for m in memories:
        if m.type != "preference" and m.scope != "user":
            continue
        candidates = by_subject.get(subject(m.key), ())
        clashing = []
        for c in candidates:
            try:
                written = normalize_key(c.key)
            except SaveRefused:
                written = ""
            if m.key != written and token_set(m.text) != token_set(c.text):
                clashing.append(c.handle)
        if clashing:
            yield m.handle, Finding("conflict.contradicted", "conflict", "content", 0,
                                    len(m.text), f"subject '{subject(m.key)}'", why,
                                    tuple(clashing[:MAX_RELATED]))
