"""Token bundles and the stable selection, built once per pair of row lists.

Built whole, never patched; published states are immutable, builds locked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dashboard.records import Memory

from .stable import FactCosts, all_entries, select
from .tokenize import Tokenizer

CONTENT_INDEXED = 500  # agentao tokenizes only this prefix of the content


@dataclass(frozen=True)
class Bundle:
    """The token sets one record is scored with (contract §10.3), as tuples of shared strings
    (a tenth of the memory of frozensets; queries are the sets)."""

    title: tuple[str, ...]
    content: tuple[str, ...]
    keywords: tuple[str, ...]
    tags: tuple[str, ...]

    def meets(self, tokens: frozenset[str]) -> bool:
        """Whether the record is indexed under any of ``tokens`` (a recall candidate)."""
        return not (
            tokens.isdisjoint(self.title)
            and tokens.isdisjoint(self.content)
            and tokens.isdisjoint(self.keywords)
            and tokens.isdisjoint(self.tags)
        )


class _Builder:
    """Tokenizes records, remembering keyword tokens: keywords repeat a lot."""

    def __init__(self, tokenizer: Tokenizer):
        self.tok = tokenizer
        self.kw_memo: dict[str, frozenset[str]] = {}
        self.words: dict[str, str] = {}  # one string per distinct token

    def _held(self, tokens: Iterable[str]) -> tuple[str, ...]:
        words = self.words
        return tuple(words.setdefault(t, t) for t in tokens)

    def bundle(self, m: Memory) -> Bundle:
        kw: set[str] = set()
        for k in m.keywords:
            kw.add(k.lower())
            toks = self.kw_memo.get(k)
            if toks is None:
                toks = self.kw_memo[k] = self.tok.tokens(k)
            kw |= toks
        return Bundle(
            self._held(self.tok.tokens(m.title)),
            self._held(self.tok.tokens(m.content[:CONTENT_INDEXED])),
            self._held(kw),
            self._held({t.lower() for t in m.tags}),
        )


@dataclass
class IndexState:
    """One published index: entries, records by id, their bundles (no inverted index: testing
    every bundle costs a few ms at 10,000 records, building one a third of the bundles)."""

    entries: list[Memory]
    records: dict[str, Memory]
    bundles: dict[str, Bundle]
    # Per-state memo (query-independent): parsed updated_at stamps.
    stamps: dict[str, int | None] = field(default_factory=dict)
    ranks: dict[str, int] | None = None  # updated_at -> place; set whole, never filled in


def build_state(entries: Sequence[Memory], tokenizer: Tokenizer) -> IndexState:
    """Index ``entries`` (all-entries order). A repeated id keeps its *last* row, as agentao's id-keyed index
    does."""
    records: dict[str, Memory] = {}
    for m in entries:
        records[m.id] = m
    builder = _Builder(tokenizer)
    bundles = {rid: builder.bundle(m) for rid, m in records.items()}
    return IndexState(list(entries), records, bundles)


class EngineCache:
    """The stable selection and token index of one pair of row lists, each built once, when first
    asked (``store.held`` keeps one per state of the files: a new state is a new cache, so there is
    no version to check here).  One lock: safe to share between threads."""

    def __init__(self, project: list[Memory], user: list[Memory]) -> None:
        self.project, self.user = project, user
        self._lock = threading.Lock()
        self._stable: tuple[list[tuple[Memory, str]], list[int]] | None = None
        self._states: dict[str, IndexState] = {}  # tokenizer mode -> index
        self.builds = 0  # how many times the index was built; tests read it
        self.costs = FactCosts()  # stable fact lengths, per row object

    def stable(self) -> tuple[list[tuple[Memory, str]], list[int]]:
        """``select`` over the rows and each selected fact's length."""
        with self._lock:
            if self._stable is None:
                picked = select(all_entries(self.project, self.user))
                self._stable = (picked, [self.costs(m) for m, _ in picked])
            return self._stable

    def state(self, tokenizer: Tokenizer) -> IndexState:
        """The token index of the rows, split as ``tokenizer`` splits."""
        with self._lock:
            state = self._states.get(tokenizer.mode)
            if state is None:
                state = self._states[tokenizer.mode] = build_state(
                    all_entries(self.project, self.user), tokenizer
                )
                self.builds += 1
            return state


def uncached_state(project: Sequence[Memory], user: Sequence[Memory], tokenizer: Tokenizer) -> IndexState:
    """A throw-away index, for callers that pass no cache."""
    return build_state(all_entries(project, user), tokenizer)
