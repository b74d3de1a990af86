"""Looking at a store's files as bytes: the WAL header and frames, copies beside it,
and a search of raw bytes for texts that should be gone.

Every text is looked for at once, in one read of each file, by numpy at the
speed of its C loops.  A text is cut into *blocks*: a short one (under BLOCK
bytes) is one block, itself; a longer one has a BLOCK-byte block every STRIDE
bytes and one at its end, so every piece of it at least STRIDE + BLOCK - 1
bytes long (a text longer than a page lies in page-sized pieces over overflow
pages) holds a whole block.  The file is looked at as words (8 bytes for
whole blocks; 4, or 2, 1 for texts under 7 bytes, for shorter ones) at the
offsets the word size divides, and a block is wherever it lies bound to put
one of its ``size`` grams (two words, or one and what the block holds of the
next, at its first ``size`` offsets) on such an offset: each gram is hashed
and looked up in a bit table (or, for few grams, one table that also names
the gram), and a block is counted only after its bytes are compared whole.  So what the scan
reports found is there byte for byte; a fragment is a block, and a text is
found whole after its bytes are read again where its first block sits.
The search can only look for texts it is given.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from ..store.descriptors import KeptReader
from .sidefiles import size_of

BLOCK = 23  # bytes a block: two 8-byte words at an offset 8 divides, wherever it lies
STRIDE = 256  # a long text has a block every STRIDE bytes: a 279-byte piece holds one
PIECE = 1 << 18  # bytes read and searched at a time
FLAT_BITS = 20  # the one table of few keys (under 16,384): 2 MiB at most
TAIL = 32  # bytes of the previous piece searched again with the next: a block across the cut
SHAPES = ((8, 2), (4, 1), (2, 1), (1, 1))  # (word size, words a gram): a text under 23 bytes, 4-byte words
M1, M2, NO_SALT = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0)


@dataclass
class TextHits:
    """Where one text was seen: per file path, ``whole`` and the pieces found."""

    sha256: str
    bytes: int
    files: dict = field(default_factory=dict)  # path -> {"whole": bool, "fragments": n}
    still_stored: bool = False  # a remaining row holds the same text: not residue
    saved_again: bool = False  # ... a row that was saved while the scan ran

    @property
    def found(self) -> bool:
        return bool(self.files)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _hash(first, second=None, salt=NO_SALT):
    h = (first ^ salt) * M1
    return h if second is None else h ^ (second * M2)


def _words(buffer: np.ndarray, at: np.ndarray, size: int) -> np.ndarray:
    """The little-endian ``size``-byte words of ``buffer`` starting at each offset in ``at``."""
    rows = np.lib.stride_tricks.sliding_window_view(buffer, size)[at]  # one contiguous row a word
    return rows.view(f"<u{size}").ravel().astype(np.uint64)


@dataclass
class Found:
    """What one buffer (a file, the rows' text) holds: blocks by number, and where first blocks sit."""

    blocks: set = field(default_factory=set)
    starts: dict = field(default_factory=dict)  # text index -> offsets where its first block sits

    def add(self, blocks: np.ndarray, texts: np.ndarray, first: np.ndarray, offsets: np.ndarray) -> None:
        self.blocks.update(np.unique(blocks).tolist())
        for i, at in zip(texts[first].tolist(), offsets[first].tolist()):
            held = self.starts.setdefault(i, set())
            if len(held) < 64:
                held.add(at)


class _Grams:
    """The grams of one shape (``n`` words of ``size`` bytes), sorted by hash, and a bit table of them.

    With each gram, the word after it (as much of it as the block holds): a one-word gram
    is common, and the next word rules out most places it matches before a block is compared."""

    def __init__(
        self,
        shape: tuple[int, int],
        joined: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        blocks: np.ndarray,
    ) -> None:
        self.size, self.n = shape
        # Each block puts one of its grams at its first ``size`` offsets on a word boundary.
        shift = np.tile(np.arange(self.size, dtype=np.uint8), len(starts))
        at = np.repeat(starts, self.size) + shift
        first = _words(joined, at, self.size)
        second = _words(joined, at + self.size, self.size)
        self.mask = None
        if self.n == 1:
            after = np.clip(np.repeat(ends, self.size) - at - self.size, 0, self.size)  # next word's bytes
            self.mask = np.where(
                after >= 8, ~np.uint64(0), (np.uint64(1) << (8 * after).astype(np.uint64)) - 1
            )
            second &= self.mask
            del after
        del at
        # Stretches of zeros are the commonest gram in a store's files: salt the hash until
        # theirs falls on a bit no gram of the texts set (unless one of them is zeros).
        zero = np.zeros(1, np.uint64)
        for salt in range(16):
            self.salt = np.uint64(salt * 0x5851F42D4C957F2D)
            h = _hash(first, second if self.n == 2 else None, self.salt)
            bits = max(12, len(h).bit_length() + 4)  # about 1 in 16 bits set
            self.top = np.uint64(64 - bits)
            nil = _hash(zero, zero if self.n == 2 else None, self.salt)[0] >> self.top
            if not ((h >> self.top) == nil).any() or not first.all():
                break
        order = np.argsort(h)
        h, self.first, self.second = h[order], first[order], second[order]
        del first, second
        self.mask = self.mask[order] if self.mask is not None else None
        self.block = np.repeat(blocks.astype(np.int32), self.size)[order]
        self.shift = shift[order]
        del order, shift
        # Texts share grams ("pin 1234", "pin 5678"): each hash once, with where its rows start.
        self.row = np.flatnonzero(np.concatenate(([True], h[1:] != h[:-1])))
        self.keys, self.many = h[self.row], np.diff(np.append(self.row, len(h)))
        # Two bit tables, one on the hash's top bits and one on its middle bits: a place passes
        # both about once in a thousand unless its gram is one of the texts'.
        # A few keys (a short text's grams, or the texts the rows are searched for) fit one table
        # instead, a sixtieth of it set, holding where its keys start in ``keys``: one look-up a
        # place, and no search for the key after it.
        self.tables, self.flat = [], None
        wide = len(self.keys).bit_length() + 6
        if wide <= FLAT_BITS:
            self.top = np.uint64(64 - max(wide, bits))  # finer than the zeros' bit: still not set
            slot = (self.keys >> self.top).view(np.int64)
            first = np.flatnonzero(np.concatenate(([True], slot[1:] != slot[:-1])))
            self.flat = np.zeros(1 << (64 - int(self.top)), np.int16)
            self.flat[slot[first]] = first + 1
            count = np.diff(np.append(first, len(slot)))
            self.shared = np.repeat(count > 1, count)  # keys whose slot holds another key too
            return
        for k in range(2):
            flags = np.zeros(1 << bits, bool)
            flags[self._index(self.keys, k).view(np.int64)] = True
            self.tables.append(np.packbits(flags, bitorder="little"))

    def _index(self, h: np.ndarray, k: int) -> np.ndarray:
        if k == 0:
            return h >> self.top
        return (h >> np.uint64(8)) & ((np.uint64(1) << (np.uint64(64) - self.top)) - np.uint64(1))

    def _passes(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The places whose hash may be a key, and (from the one table) the key it would be."""
        if self.flat is not None:
            at = self.flat[(h >> self.top).view(np.int64)]
            j = np.flatnonzero(at)
            return j, at[j] - 1
        j = np.arange(0)
        for k, table in enumerate(self.tables):
            index = self._index(h, k)
            here = np.flatnonzero(
                (table[index >> np.uint64(3)] >> (index & np.uint64(7)).astype(np.uint8)) & 1
            )
            j, h = (here if k == 0 else j[here]), h[here]
            if not len(j):
                break
        return j, None

    def candidates(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(byte offset, block) of every gram found among ``words``, compared word for word."""
        h = _hash(words[:-1], words[1:], self.salt) if self.n == 2 else _hash(words, salt=self.salt)
        j, k = self._passes(h)
        if not len(j):
            return j, j
        h = h[j]
        if k is None:
            k = np.minimum(np.searchsorted(self.keys, h), len(self.keys) - 1)
        elif len(redo := np.flatnonzero(self.shared[k] & (self.keys[k] != h))):
            k[redo] = np.minimum(np.searchsorted(self.keys, h[redo]), len(self.keys) - 1)
        hit = self.keys[k] == h
        j, k = j[hit], k[hit]
        if not len(j):
            return j, j
        many = self.many[k]
        ends = np.cumsum(many)
        e = np.repeat(self.row[k] - ends + many, many) + np.arange(ends[-1])
        j = np.repeat(j, many)
        following = words[np.minimum(j + 1, len(words) - 1)]
        same = self.first[e] == words[j]
        same &= (following if self.mask is None else following & self.mask[e]) == self.second[e]
        return j[same] * self.size - self.shift[e[same]], self.block[e[same]]


class Needles:
    """The texts to look for, cut into blocks once, searched for in every file and in the rows' text."""

    def __init__(self, texts) -> None:
        self.raw = [
            t if isinstance(t, bytes) else t.encode("utf-8", "surrogatepass")
            for t in dict.fromkeys(texts)
            if t
        ]
        # A text's blocks: one every STRIDE bytes and one ending where it ends (a short text: itself).
        size = np.array([len(r) for r in self.raw], np.int64)
        self.count = np.where(size <= BLOCK, 1, (size - BLOCK) // STRIDE + 1 + ((size - BLOCK) % STRIDE > 0))
        self.base = np.cumsum(self.count) - self.count  # its first block's number
        self.text = np.repeat(np.arange(len(size), dtype=np.int32), self.count)
        k = np.arange(len(self.text)) - self.base[self.text]
        self.first = k == 0
        offset = np.where(k == self.count[self.text] - 1, np.maximum(size - BLOCK, 0)[self.text], k * STRIDE)
        at = (np.cumsum(size) - size)[self.text] + offset
        self.length = np.minimum(size, BLOCK)[self.text]
        joined = np.frombuffer(b"".join(self.raw) + bytes(2 * BLOCK), np.uint8)
        self.bytes = np.lib.stride_tricks.sliding_window_view(joined, BLOCK)[at]  # one row a block
        # The longest gram a block always puts on an offset its word size divides.
        shape = np.searchsorted(-np.array([size * n + size - 1 for size, n in SHAPES]), -self.length)
        grams = [
            _Grams(SHAPES[k], joined, at[mine], (at + self.length)[mine], np.flatnonzero(mine))
            for k in np.unique(shape)
            if (mine := shape == k).any()
        ]
        self.by_size = [(size, [g for g in grams if g.size == size]) for size in (8, 4, 2, 1)]
        self.live: set[int] = set()  # texts a remaining row still holds whole
        self._ignored, self._judged = Found(), set()  # what the rows that stay hold, of which texts

    def search(self, chunks) -> Found:
        """The blocks in ``chunks`` (one file or buffer, in order), and where first blocks sit."""
        found, tail, start = Found(), b"", 0
        for chunk in chunks:
            window = tail + chunk
            self._search(window, start - len(tail), found)
            start += len(chunk)
            tail = window[-TAIL:]
        return found

    def _search(self, window: bytes, start: int, found: Found) -> None:
        data = np.frombuffer(window, np.uint8)
        columns = np.arange(BLOCK)
        for size, grams in self.by_size:
            if not grams:
                continue
            words = np.frombuffer(window, f"<u{size}", count=len(window) // size).astype(np.uint64)
            for g in grams:
                at, block = g.candidates(words)
                if not len(at):
                    continue
                # A candidate counts only when its block's bytes are all there.
                length = self.length[block]
                fits = (at >= 0) & (at + length <= len(window))
                at, block, length = at[fits], block[fits], length[fits]
                got = data[np.minimum(at[:, None] + columns, len(window) - 1)]
                same = ((got == self.bytes[block]) | (columns >= length[:, None])).all(axis=1)
                at, block = at[same], block[same]
                if len(at):
                    found.add(block, self.text[block], self.first[block], at + start)

    def _whole(self, i: int, found: Found, read) -> bool:
        blocks = self._blocks(i)
        return blocks <= found.blocks and any(
            read(at, len(self.raw[i])) == self.raw[i] for at in found.starts.get(i, ())
        )

    def _blocks(self, i: int) -> set:
        return set(range(int(self.base[i]), int(self.base[i] + self.count[i])))

    def held_by(self, texts, buffer: bytes, found: Found) -> None:
        """Add to ``found`` what ``buffer`` holds of ``texts``: one pass for only those texts."""
        texts = list(texts)
        if not texts or not buffer:
            return
        sub = Needles([self.raw[i] for i in texts])
        there = sub.search(_chunks(buffer))
        for b in there.blocks:
            j = int(sub.text[b])
            found.blocks.add(int(self.base[texts[j]]) + b - int(sub.base[j]))
        for j, at in there.starts.items():
            found.starts[texts[j]] = at

    def residue(self, here: Found, fh, ignore: bytes) -> dict[int, dict]:
        """For each text seen in the open file ``fh``: whether whole, and the blocks no remaining row holds."""
        if not here.blocks:
            return {}
        mine: dict[int, set] = {}
        for b in here.blocks:
            mine.setdefault(int(self.text[b]), set()).add(b)
        self.held_by(mine.keys() - self._judged, ignore, self._ignored)
        self._judged |= mine.keys()
        live = self._ignored
        seen = {}
        for i, blocks in mine.items():
            left = blocks - live.blocks
            if not left:
                if i not in self.live and self._whole(i, live, lambda at, n: ignore[at : at + n]):
                    self.live.add(i)
                continue
            whole = len(blocks) == int(self.count[i]) and self._whole(i, here, partial(_at, fh))
            seen[i] = {"whole": whole, "fragments": len(left), "blocks": left}
        return seen


def _at(fh, offset: int, size: int) -> bytes:
    fh.seek(offset)
    return fh.read(size)


def _chunks(data: bytes):
    return (data[i : i + PIECE] for i in range(0, len(data), PIECE))


def _read(fh, on_chunk=lambda chunk: None):
    """The file a piece at a time, each piece also handed to ``on_chunk`` (the progress)."""
    fh.seek(0)
    for chunk in iter(partial(fh.read, PIECE), b""):
        on_chunk(chunk)
        yield chunk


def scan(paths, texts, ignore: bytes = b"", progress=lambda done, total: None, live_again=None):
    """Search every file in ``paths`` for every text, in one read of each.

    ``ignore`` is the text of the rows that stay, read before the scan.  An
    agent saving meanwhile can write a purged text again into a new row: if
    anything was found, ``live_again()`` (when given) reads the rows' text once
    more, and a text whose every block found is held by it is reported as
    ``saved_again`` (and ``still_stored``), not as residue.
    Returns ({sha256: TextHits}, [(path, size) of the files actually read]);
    a side file that vanished before it could be read is simply not listed.
    """
    paths = [Path(p) for p in paths]
    needles = Needles(texts)
    keys = [hashlib.sha256(r).hexdigest() for r in needles.raw]
    hits = {k: TextHits(k, len(r)) for k, r in zip(keys, needles.raw)}
    total = sum(size_of(p) or 0 for p in paths) or 1
    done, scanned, found = 0, [], {}

    def moved(n: int) -> None:
        nonlocal done
        done += n
        progress(min(done, total), total)

    for p in paths:
        try:
            fh = KeptReader(p)  # never open()/close(): see store/descriptors.py
        except FileNotFoundError:
            continue
        start = done
        with fh:
            size = fh.seek(0, 2)
            scanned.append((p, size))
            here = needles.search(_read(fh, lambda chunk: moved(len(chunk))))
            for i, hit in needles.residue(here, fh, ignore).items():
                found[i, str(p)] = hit
        done = max(done, start + size)
        progress(min(done, total), total)
    progress(total, total)
    later = live_again() if found and live_again is not None else b""
    held = Found()
    needles.held_by({i for i, _ in found}, later, held)
    again = {i for i, _ in found}
    for (i, path), hit in found.items():
        if later and hit["blocks"] <= held.blocks:
            continue
        again.discard(i)
        hits[keys[i]].files[path] = {"whole": hit["whole"], "fragments": hit["fragments"]}
    for i in needles.live | (again if later else set()):
        hits[keys[i]].still_stored = not hits[keys[i]].files
    for i in again if later else ():
        hits[keys[i]].saved_again = True
    return hits, scanned
