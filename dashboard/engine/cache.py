"""Token bundles and the inverted index, cached across previews.

agentao rebuilds its recall index whenever a store's change counter
(``schema_meta.memories_change``) moves.  We key on the same thing: the
caller passes ``version=(project counter, user counter)``.  While the key and
the tokenizer mode hold, the previous index is reused without looking at the
records at all (the warm path).  When the key moves, records whose indexed
fields are unchanged keep their bundle and only the changed ones are
tokenized again, so the first preview after one edit stays cheap.  Without a
version every call takes that diff path, which is still correct.

States are immutable once published, so waitress threads can read one while
another thread builds the next; building is serialised by a lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Hashable, Sequence

from dashboard.records import Memory

from .selection import Selection, FullWalk
from .stable import FactCosts, all_entries
from .tokenize import Tokenizer

CONTENT_INDEXED = 500  # agentao tokenizes only this prefix of the content


@dataclass(frozen=True)
class Bundle:
    """The token sets one record is scored with (contract §10.3)."""

    title: frozenset[str]
    content: frozenset[str]
    keywords: frozenset[str]
    tags: frozenset[str]

    @property
    def every(self) -> frozenset[str]:
        """All tokens under which the record is indexed."""
        return self.title | self.content | self.keywords | self.tags


def _same_fields(a: Memory, b: Memory) -> bool:
    return (a is b or (a.title == b.title and a.keywords == b.keywords
                       and a.tags == b.tags
                       and a.content[:CONTENT_INDEXED] == b.content[:CONTENT_INDEXED]))


class _Builder:
    """Tokenizes records, remembering keyword tokens: keywords repeat a lot."""

    def __init__(self, tokenizer: Tokenizer):
        self.tok = tokenizer
        self.kw_memo: dict[str, frozenset[str]] = {}

    def bundle(self, m: Memory) -> Bundle:
        kw: set[str] = set()
        for k in m.keywords:
            kw.add(k.lower())
            toks = self.kw_memo.get(k)
            if toks is None:
                toks = self.kw_memo[k] = self.tok.tokens(k)
            kw |= toks
        return Bundle(self.tok.tokens(m.title),
                      self.tok.tokens(m.content[:CONTENT_INDEXED]),
                      frozenset(kw), frozenset(t.lower() for t in m.tags))


@dataclass
class IndexState:
    """One published index: entries, records by id, bundles, token -> ids."""

    key: Hashable
    entries: list[Memory]
    records: dict[str, Memory]
    bundles: dict[str, Bundle]
    inverted: dict[str, frozenset[str]]
    # Per-state memo (query-independent): parsed updated_at stamps.
    stamps: dict[str, int | None] = field(default_factory=dict)
    ranks: dict[str, int] | None = None  # updated_at -> place; set whole, never filled in


def build_state(entries: Sequence[Memory], key: Hashable, tokenizer: Tokenizer,
                previous: IndexState | None = None) -> IndexState:
    """Index ``entries`` (all-entries order), reusing what ``previous`` still holds.

    A repeated id keeps its *last* row, as agentao's id-keyed index does.
    """
    records: dict[str, Memory] = {}
    for m in entries:
        records[m.id] = m
    builder = _Builder(tokenizer)
    old_records = previous.records if previous else {}
    old_bundles = previous.bundles if previous else {}
    bundles: dict[str, Bundle] = {}
    changed: list[str] = []
    for rid, m in records.items():
        old = old_records.get(rid)
        if old is not None and _same_fields(old, m):
            bundles[rid] = old_bundles[rid]
        else:
            bundles[rid] = builder.bundle(m)
            changed.append(rid)
    gone = [rid for rid in old_records if rid not in records]
    if previous is None or len(changed) + len(gone) > len(records) // 2:
        inverted = _full_index(bundles)
    else:
        inverted = _patch_index(previous.inverted, old_bundles, bundles, changed, gone)
    return IndexState(key, list(entries), records, bundles, inverted)


def _full_index(bundles: dict[str, Bundle]) -> dict[str, frozenset[str]]:
    grow: dict[str, set[str]] = {}
    for rid, b in bundles.items():
        for tok in b.every:
            grow.setdefault(tok, set()).add(rid)
    return {tok: frozenset(ids) for tok, ids in grow.items()}


def _patch_index(old: dict[str, frozenset[str]], old_bundles: dict[str, Bundle],
                 bundles: dict[str, Bundle], changed: list[str],
                 gone: list[str]) -> dict[str, frozenset[str]]:
    # Copy-on-write: the old state's sets stay untouched for concurrent readers.
    inverted = dict(old)
    drop: dict[str, set[str]] = {}
    add: dict[str, set[str]] = {}
    for rid in (*changed, *gone):
        if rid in old_bundles:
            for tok in old_bundles[rid].every:
                drop.setdefault(tok, set()).add(rid)
    for rid in changed:
        for tok in bundles[rid].every:
            add.setdefault(tok, set()).add(rid)
    for tok in drop.keys() | add.keys():
        ids = (inverted.get(tok, frozenset()) - drop.get(tok, set())) | add.get(tok, set())
        if ids:
            inverted[tok] = frozenset(ids)
        else:
            inverted.pop(tok, None)
    return inverted


class EngineCache:
    """Holds the latest :class:`IndexState`; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: IndexState | None = None
        self.builds = 0  # how many times the index was (re)built; tests read it
        # Stable-only answers (no tokenizing needed) per (version, tail, hidden):
        # see preview.stable_view.  Small, cleared when it grows.
        self.stable_memo: dict = {}
        self.costs = FactCosts()   # stable fact lengths, kept across versions
        self._selection: tuple | None = None   # (version, Selection)

    def selection(self, project: Sequence[Memory], user: Sequence[Memory],
                  version: Hashable | None) -> Selection | FullWalk:
        """The stable candidates for ``version``, patched from the last version asked for.

        ``version=None`` ("unknown") builds them afresh and keeps nothing.
        """
        if version is None:
            return Selection.build(project, user, self.costs)
        held = self._selection
        if held is not None and held[0] == version:
            return held[1]
        with self._lock:
            held = self._selection
            if held is not None and held[0] == version:
                return held[1]
            fresh = (held[1].moved_to(project, user) if held
                     else Selection.build(project, user, self.costs))
            self._selection = (version, fresh)
            return fresh

    def state(self, project: Sequence[Memory], user: Sequence[Memory],
              version: Hashable | None, tokenizer: Tokenizer) -> IndexState:
        """The index for these records, rebuilt only when ``version`` moved.

        ``version=None`` means "unknown": the records are diffed every time.
        """
        key = (version, tokenizer.mode)
        state = self._state
        if version is not None and state is not None and state.key == key:
            return state
        with self._lock:
            state = self._state
            if version is not None and state is not None and state.key == key:
                return state
            # Bundles from another tokenizer mode are worthless: start afresh.
            previous = state if state is not None and state.key[1] == tokenizer.mode else None
            fresh = build_state(all_entries(project, user), key, tokenizer, previous)
            self._state = fresh
            self.builds += 1
            return fresh


def uncached_state(project: Sequence[Memory], user: Sequence[Memory],
                   tokenizer: Tokenizer) -> IndexState:
    """A throw-away index, for callers that pass no cache."""
    return build_state(all_entries(project, user), (None, tokenizer.mode), tokenizer)
