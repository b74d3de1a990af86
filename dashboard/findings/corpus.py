"""Rules that need the whole corpus: conflicts and duplicates.

Each rule takes ``Docs``, the rows as columns (a row is its position), and
yields ``(position, Finding)`` with the related rows' positions in
``Finding.related``; the caller names them.  Columns rather than one object
per row: a scan hands every live row of both stores to these rules, and most
rows have nothing to report.  The near-duplicate join itself is in
``findings.duplicates``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from itertools import compress, count
from operator import or_
from typing import NamedTuple

from ..contract import SaveRefused, normalize_key
from .checks import token_sets
from .duplicates import DUPLICATE_THRESHOLD, MAX_RELATED, pairs_of_sets
from .rules import Finding


class Docs(NamedTuple):
    """Rows as the corpus rules see them: one list per column, in the same row order.

    A scan does not keep the texts (it reads rows in batches and holds only each
    row's token set and length); rules built from texts (``of``) get both.
    """

    keys: list[str]  # key_normalized
    scopes: list[str]
    types: list[str]
    texts: list[str]  # content; a scan's Docs hold ``lengths`` and ``sets`` instead
    sets: list[frozenset[str] | None] | None = None  # token_set of each text (None: left out)
    lengths: list[int] | None = None  # len of each text

    @classmethod
    def of(cls, rows) -> Docs:
        """From ``(key, scope, type, text)`` tuples."""
        if not rows:
            return cls([], [], [], [], [], [])
        keys, scopes, types, texts = (list(column) for column in zip(*rows))
        return cls(keys, scopes, types, texts, token_sets(texts), list(map(len, texts)))


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
            yield n, Finding("conflict.same_key", "conflict", "key_normalized", 0, len(key), key, why, others)


def near_duplicates(docs: Docs, threshold: float = DUPLICATE_THRESHOLD) -> Iterator[tuple[int, Finding]]:
    """Near-identical content under different keys (token Jaccard ≥ 0.9): one of them is redundant"""
    return duplicate_findings(docs, pairs_of_sets(docs.keys, docs.sets, threshold)[0])


def duplicate_findings(docs: Docs, pairs: dict[int, dict[int, float]]) -> Iterator[tuple[int, Finding]]:
    """``near_duplicates``'s findings from ``pairs_of_sets`` of the same docs, in the same order."""
    why = near_duplicates.__doc__.splitlines()[0]
    for n, others in pairs.items():
        if others:
            yield (
                n,
                Finding(
                    "conflict.duplicate",
                    "conflict",
                    "content",
                    0,
                    docs.lengths[n],
                    f"{len(others)} near-identical (Jaccard {max(others.values()):.2f})",
                    why,
                    tuple(others),
                ),
            )


# Words that say how, not what: skipped when finding a key's subject.
_NOT_SUBJECT = frozenset(
    "preference user profile constraint decision workflow use uses using prefer prefers like "
    "likes want wants always never the a an to i my of for with".split()
)


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
        key, tokens = memories.keys[n], memories.sets[n]
        if tokens is None:
            continue  # a row the scan kept no token set of (its memory bound)
        clashing = []
        for c in by_subject.get(subject(key), ()):
            try:
                written = normalize_key(approved.keys[c])
            except SaveRefused:
                written = ""
            if key != written and tokens != approved.sets[c]:
                clashing.append(c)
        if clashing:
            yield (
                n,
                Finding(
                    "conflict.contradicted",
                    "conflict",
                    "content",
                    0,
                    memories.lengths[n],
                    f"subject '{subject(key)}'",
                    why,
                    tuple(clashing[:MAX_RELATED]),
                ),
            )
