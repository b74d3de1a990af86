"""Looking at a store's files as bytes: the WAL header and frames, copies beside it,
and a search of raw bytes for texts that should be gone.

Every text is looked for at once, in one read of each file: the place-by-place
lookup is a compiled loop (grams.py, built at install; numpy's form of it where
there was no compiler), what follows it numpy's array operations.  A text is cut
into *blocks*: a short one (under BLOCK bytes) is one block, itself; a longer
one has a BLOCK-byte block every STRIDE bytes and one at its end, so every piece
of it at least STRIDE + BLOCK - 1 bytes long (a text longer than a page lies in
page-sized pieces over overflow pages) holds a whole block.  A block is looked
for in one of a few *shapes* (SHAPES): the file is looked at only at the offsets
a stride divides, and a block, wherever it lies, puts one of its grams there
(the bytes at one of its first ``stride`` offsets). A whole block is a 16-byte
gram every 16 bytes; a short text, an 8-byte word every 8 bytes, or a 4-byte
word every 4 (2, 1 for texts under 7 bytes), with the word after it.  Each
place's gram is looked up in a table of bits, then among the grams, and a block
is counted only after its bytes are compared whole.  So what the scan reports
found is there byte for byte; a fragment is a block, and a text is found whole
after its bytes are read again where its first block sits.
The search can only look for texts it is given.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from ..store.descriptors import KeptReader
from .grams import Grams
from .sidefiles import size_of

BLOCK = 31  # bytes a block: two 8-byte words at an offset 16 divides, wherever it lies
STRIDE = 256  # a long text has a block every STRIDE bytes: a 286-byte piece holds one
PIECE = 1 << 20  # bytes read and searched at a time: fewer numpy calls a MB; arrays ~5x it at the peak
TAIL = 32  # bytes of the previous piece searched again with the next: a block across the cut
# (stride, size): a block of stride + size - 1 bytes or more puts a size-byte gram on an offset
# stride divides; each block takes the first that fits it (the fewest places to look at).
SHAPES = ((16, 16), (8, 8), (4, 4), (2, 2), (1, 1))
THREADS = 2  # parts of a piece searched at most at once, when the cores are free (parts_at_once)
PAD = bytes(TAIL)  # after each piece: the words a text ending on the last byte needs


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
        joined = np.frombuffer(b"".join([*self.raw, bytes(2 * BLOCK)]), np.uint8)
        self.bytes = np.lib.stride_tricks.sliding_window_view(joined, BLOCK)[at]  # one row a block
        # The widest shape a block fits: the fewest places of a file to look at.
        fits = self.length[:, None] >= np.array([stride + size - 1 for stride, size in SHAPES])
        shape = fits.argmax(axis=1)
        self.grams = [
            Grams(SHAPES[k], self.bytes[mine], self.length[mine], np.flatnonzero(mine))
            for k in np.unique(shape)
            if (mine := shape == k).any()
        ]
        self.live: set[int] = set()  # texts a remaining row still holds whole
        self._ignored, self._judged = Found(), set()  # what the rows that stay hold, of which texts

    def search(self, chunks) -> Found:
        """The blocks in ``chunks`` (one file or buffer, in order), and where first blocks sit.

        Each piece is cut in parts (each with the TAIL bytes before it), one a free core, searched
        at once: the loops let go of the interpreter, so the parts run side by side, in the
        memory of one piece (the parts are views of it).  The next piece is read and handed out while they run: no core
        waits for the slower part of a piece.  A part that fails (or a progress that raises) ends
        the search, and the parts not begun are dropped."""
        found, tail, start, threads = Found(), b"", 0, parts_at_once()
        running: deque[list[Future]] = deque()  # the parts of the pieces handed out, in order
        with ThreadPoolExecutor(threads) as pool:
            try:
                for chunk in chunks:
                    # One copy a piece, with zeros after it: each part is a view of it, and the
                    # bytes after a part (the next part's, or the zeros) give every place of the
                    # part a word to read, to its last byte.
                    window = memoryview(b"".join((tail, chunk, PAD)))
                    end = len(window) - len(PAD)
                    part = -(-len(chunk) // threads)
                    running.append(
                        [
                            pool.submit(
                                self._search,
                                window[max(0, c - TAIL) : c + part + len(PAD)],
                                min(c + part, end) - max(0, c - TAIL),
                                start - len(tail) + max(0, c - TAIL),
                            )
                            for c in range(len(tail), end, part)
                        ]
                    )
                    start += len(chunk)
                    tail = bytes(window[max(0, end - TAIL) : end])
                    while len(running) > 1:
                        _collect(running.popleft(), found)
                while running:
                    _collect(running.popleft(), found)
            finally:
                for parts in running:
                    for f in parts:
                        f.cancel()
        return found

    def _search(self, window: memoryview, size: int, start: int) -> list:
        """(blocks, their texts, whether first, file offsets) in the first ``size`` bytes of
        ``window``, for each shape that has any.  ``window`` goes on for at least len(PAD) bytes
        more; a block counts only when all its bytes are in the ``size`` and the same."""
        data = np.frombuffer(window, np.uint8)
        columns = np.arange(BLOCK)
        hits = []
        for g in self.grams:
            at, block = g.candidates(window)
            length = self.length[block]
            fits = (at >= 0) & (at + length <= size)
            at, block, length = at[fits], block[fits], length[fits]
            if not len(at):
                continue
            got = data[at[:, None] + columns]
            same = ((got == self.bytes[block]) | (columns >= length[:, None])).all(axis=1)
            at, block = at[same], block[same]
            if len(at):
                hits.append((block, self.text[block], self.first[block], at + start))
        return hits

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


def _collect(parts: list[Future], found: Found) -> None:
    for f in parts:
        for args in f.result():
            found.add(*args)


def parts_at_once() -> int:
    """Parts of a piece searched side by side: up to THREADS, one a core the load leaves free (on a
    crowded machine two threads only wait for each other: bench/results/verify-100mb-round5.txt)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average (Windows): count the cores as free
        load = 0.0
    free = (os.cpu_count() or 1) - load
    return max(1, min(THREADS, round(free)))


def _at(fh, offset: int, size: int) -> bytes:
    fh.seek(offset)
    return fh.read(size)


def _chunks(data: bytes):
    view = memoryview(data)  # pieces without a copy: search copies each once
    return (view[i : i + PIECE] for i in range(0, len(data), PIECE))


def _read(fh, on_chunk):
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
