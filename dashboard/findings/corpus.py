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
from typing import Iterable, Iterator, NamedTuple

from ..contract import SaveRefused, normalize_key
from .checks import jaccard, token_set
from .rules import Finding

DUPLICATE_THRESHOLD = 0.9
MIN_TOKENS = 3          # "ok", "uv" under two keys is not worth a finding
MAX_RELATED = 5


class Doc(NamedTuple):
    """One row as the corpus rules see it."""

    handle: str         # e.g. "project/memories/1a2b3c4d"; echoed in ``related``
    key: str            # key_normalized
    scope: str
    type: str
    text: str           # content


def same_key_both_scopes(docs: Iterable[Doc]) -> Iterator[tuple[str, Finding]]:
    """Same key in the user and the project scope: both are injected, the model sees two answers"""
    by_key: dict[str, list[Doc]] = defaultdict(list)
    for d in docs:
        by_key[d.key].append(d)
    why = same_key_both_scopes.__doc__.splitlines()[0]
    for key, group in by_key.items():
        if len({d.scope for d in group}) < 2:
            continue
        for d in group:
            others = tuple(o.handle for o in group if o is not d)[:MAX_RELATED]
            yield d.handle, Finding("conflict.same_key", "conflict", "key_normalized", 0,
                                    len(key), key, why, others)


def near_duplicates(docs: Iterable[Doc], threshold: float = DUPLICATE_THRESHOLD
                    ) -> Iterator[tuple[str, Finding]]:
    """Near-identical content under different keys (token Jaccard ≥ 0.9): one of them is redundant"""
    why = near_duplicates.__doc__.splitlines()[0]
    # Identical token sets collapse to one representative first, so a thousand
    # copies cost a thousand steps, not a million comparisons.
    groups: dict[frozenset[str], list[Doc]] = defaultdict(list)
    for d in docs:
        tokens = token_set(d.text)
        if len(tokens) >= MIN_TOKENS:
            groups[tokens].append(d)
    pairs: dict[str, dict[str, float]] = defaultdict(dict)
    for group in groups.values():
        for d in group:
            for o in group:
                if o is not d and o.key != d.key and len(pairs[d.handle]) < MAX_RELATED:
                    pairs[d.handle][o.handle] = 1.0
    reps = sorted(groups.items(), key=lambda kv: len(kv[0]))
    df = Counter(t for tokens, _g in reps for t in tokens)
    index: dict[str, list[int]] = defaultdict(list)
    ordered = []
    for i, (tokens, group) in enumerate(reps):
        ranked = sorted(tokens, key=lambda t: (df[t], t))
        ordered.append(tokens)
        prefix = ranked[:len(ranked) - math.ceil(threshold * len(ranked)) + 1]
        seen: set[int] = set()
        for t in prefix:
            for j in index[t]:
                if j in seen or len(ordered[j]) < threshold * len(tokens):
                    continue
                seen.add(j)
                score = jaccard(tokens, ordered[j])
                if score >= threshold:
                    _link(pairs, group, reps[j][1], score)
            index[t].append(i)
    by_handle = {d.handle: d for _t, g in reps for d in g}
    for handle, others in pairs.items():
        if others:
            best = max(others.values())
            d = by_handle[handle]
            yield handle, Finding("conflict.duplicate", "conflict", "content", 0, len(d.text),
                                  f"{len(others)} near-identical (Jaccard {best:.2f})", why,
                                  tuple(others))


def _link(pairs, group_a, group_b, score):
    for a in group_a:
        for b in group_b:
            if a.key == b.key:
                continue
            for x, y in ((a, b), (b, a)):
                if len(pairs[x.handle]) < MAX_RELATED:
                    pairs[x.handle][y.handle] = score


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
