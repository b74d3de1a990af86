"""A word index over the search haystacks, so a search need not read them all.

Reading every haystack (40 MB at 100,000 memories) costs tens of milliseconds
per new search term.  But a needle holding no whitespace, ``_`` or ``%`` lies,
wherever it occurs in a haystack, inside one *word*: a maximal run of
characters that are none of those.  So the rows whose haystack contains it
are exactly the rows holding a word that contains it.  Searching the distinct
words (0.6 MB there) and joining their rows gives the same answer as
``needle in haystack`` on every row, with nothing left to check.  A needle
with ``_`` or ``%`` is a LIKE wildcard and never comes here; one with spaces
uses a word index answer only to pick the haystacks it then reads.

A word's rows ("posting") are an ``array`` of rids, kept sorted for free: the
copy gives a new row a rid above every rid it holds.  A word in more than a
quarter of the rows is kept instead as an int with bit ``8 * rid`` set per
row: no bigger than its array, joined to others with one ``|``, and already
in the shape of the one-byte-per-rid bitmap the list query reads
(``int.to_bytes``).  Which rows each file holds, and which of them are live,
are kept the same way, so a search's count needs no SQL.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from functools import cached_property
from itertools import accumulate, filterfalse, repeat


def words(text: str) -> set[str]:
    """The distinct words of a haystack: split at whitespace, ``_`` and ``%``."""
    text = text.replace("_", " ")
    return set((text.replace("%", " ") if "%" in text else text).split())


def _posting() -> array:
    return array("I")


def mark(marks: bytearray, rids) -> None:
    """Set ``marks[rid] = 1`` for every rid (looped in C: tens of thousands at a time)."""
    deque(map(marks.__setitem__, rids, repeat(1)), 0)


def byte_marks(mask: int, rids, size: int) -> bytearray:
    """One byte per rid below ``size``: 1 for the rows of ``mask`` and for ``rids``."""
    marks = bytearray(mask.to_bytes(size, "little"))
    mark(marks, rids)
    return marks


def as_mask(rids) -> int:
    """Sorted rids (or a posting) as an int with bit ``8 * rid`` set for each."""
    if isinstance(rids, int):
        return rids
    if len(rids) < 8:   # int.from_bytes below costs ~0.1 ms per 100,000 rids of length
        mask = 0
        for rid in rids:
            mask |= 1 << 8 * rid
        return mask
    marks = bytearray(rids[-1] + 1 if rids else 0)
    mark(marks, rids)
    return int.from_bytes(marks, "little")


class _Gone:
    """Sorted rids leaving a posting; as a set or a mask when asked."""

    def __init__(self, rids: list[int]) -> None:
        self.rids = rids

    @cached_property
    def set(self) -> set[int]:
        return set(self.rids)

    @cached_property
    def mask(self) -> int:
        return as_mask(self.rids)


def _without(posting, gone: _Gone):
    """``posting`` less the rows ``gone``; None once it is empty."""
    if isinstance(posting, int):
        return posting & ~gone.mask or None
    if len(gone.rids) * 16 < len(posting):
        for rid in gone.rids:
            at = bisect_left(posting, rid)
            if at < len(posting) and posting[at] == rid:
                del posting[at]
        return posting or None
    return array("I", filterfalse(gone.set.__contains__, posting)) or None


class TermIndex:
    """Words -> rows, and file -> rows / live rows; callers hold the mirror's lock."""

    def __init__(self) -> None:
        self._post: dict[str, array | int] = {}
        self._files: dict[tuple[str, bool], array | int] = {}   # (path, live only) -> rows
        # The words, joined by newlines (which no word holds), for str.find;
        # ``_starts`` their offsets.  Words new since the last packing wait in
        # ``_fresh``; words whose last row went stay listed until the next one.
        self._joined, self._starts, self._listed = "", array("I", [0]), []
        self._fresh: list[str] = []
        self._stale = 0
        self._count = 0   # rows held
        self.top = 0   # above every rid ever added: the length of a bitmap

    def add(self, rows) -> None:
        """Index new rows, each ``(rid, haystack, file path, live)``, in rising rid order.

        Taken in batches: a dense posting (an int) is rewritten whole on each change.
        """
        new: dict = defaultdict(_posting)
        rid = n = -1
        for n, (rid, hay, path, live) in enumerate(rows):
            for word in words(hay):
                new[word].append(rid)
            new[(path, False)].append(rid)
            if live:
                new[(path, True)].append(rid)
        self.top = max(self.top, rid + 1)
        self._count += n + 1
        for key, rids in new.items():
            held = self._files if isinstance(key, tuple) else self._post
            posting = held.get(key)
            if isinstance(posting, int):
                held[key] = posting | as_mask(rids)
                continue
            if posting is None:
                posting = rids
                if isinstance(key, str):
                    self._fresh.append(key)
            else:
                posting.extend(rids)
            held[key] = as_mask(posting) if 4 * len(posting) > self.top else posting
        if len(self._fresh) + self._stale > 1024 + len(self._listed) // 8:
            self._listed = list(self._post)
            self._joined = "\n".join(self._listed)
            self._starts = array("I", accumulate((len(w) + 1 for w in self._listed), initial=0))
            self._fresh, self._stale = [], 0

    def remove(self, rows: dict[int, str]) -> None:
        """Forget rows leaving the copy: rid -> the haystack they were added with."""
        everything = _Gone(sorted(rows))
        self._count -= len(rows)
        if len(rows) > self._count:
            # Most rows leave (a file is reloaded): filtering every posting once
            # is far cheaper than splitting every leaving haystack again.
            changes = dict.fromkeys(self._post, everything)
        else:
            by_word: dict = defaultdict(list)
            for rid in everything.rids:
                for word in words(rows[rid]):
                    by_word[word].append(rid)
            changes = {word: _Gone(rids) for word, rids in by_word.items()}
        changes.update(dict.fromkeys(self._files, everything))
        for key, gone in changes.items():
            held = self._files if isinstance(key, tuple) else self._post
            posting = _without(held[key], gone)
            if posting is not None:
                held[key] = posting
            else:
                del held[key]
                self._stale += isinstance(key, str)

    def rows_with(self, needle: str) -> tuple[int, list[array]]:
        """The rows whose haystack contains ``needle`` (one word, see ``words``).

        Returned as the union of the dense postings (a mask) and the sparse
        ones (arrays, which may share rows).
        """
        found = []
        joined, starts, listed = self._joined, self._starts, self._listed
        at = joined.find(needle)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            found.append(listed[i])
            at = joined.find(needle, starts[i + 1])
        found += [w for w in self._fresh if needle in w]
        mask, sparse = 0, []
        for word in dict.fromkeys(found):
            posting = self._post.get(word)
            if isinstance(posting, int):
                mask |= posting
            elif posting:
                sparse.append(posting)
        return mask, sparse

    def rows_of(self, paths, live_only: bool) -> int:
        """The rows of these files (only their live ones, with ``live_only``), as a mask."""
        mask = 0
        for path in paths:
            mask |= as_mask(self._files.get((path, live_only), []))
        return mask
