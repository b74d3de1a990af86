"""The grams of one shape of a hard purge's byte scan (diskscan.py), the tables to find them in,
and the place-by-place lookup of a window of a file.

The lookup is a loop over every place of the window: load the word(s) there, hash, test the
tables.  It runs compiled when the top-level ``dashboard_scan_kernel`` module was built at
install (csrc/scan_kernel.c: gcc and Python's headers), else as numpy's whole-array form of the
same loop, slower.  Both answer with the same (place, start, count) triples (the run of grams a
place's key names: where it begins among them as sorted, how many it holds); what follows, the
grams of each run and the word after them, is shared, and diskscan.py compares the blocks.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    import dashboard_scan_kernel as kernel
except ImportError:  # built without a compiler: numpy's form of the loop runs
    kernel = None  # type: ignore[assignment]

Array = npt.NDArray[Any]
FLAT_BITS = 20  # few grams (under 16,384): one table of 16-bit slots, 2 MiB at most
MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)
M1, M2 = np.uint64(MULTIPLIERS[0]), np.uint64(MULTIPLIERS[1])  # also csrc/scan_kernel.c's M1, M2


def _hash(first: Array, second: Array) -> Array:
    both: Array = first * M1
    both ^= second * M2
    return both


class Grams:
    """The grams of one shape, and tables to find them.

    A shape is (``stride``, ``size``): the file is looked at as the ``size`` bytes at every offset
    ``stride`` divides, and a block, wherever it lies, puts ``size`` of its bytes on such an offset
    at one of its first ``stride`` offsets: those ``stride`` grams of each block are looked for.
    A 16-byte gram is two words, hashed together.  A short gram is common, so with it goes the
    word after it (as much of it as the block holds), which rules out most places before a block
    is compared.  ``rows`` holds each block's bytes, one row a block (a short block's, the bytes
    after it too)."""

    def __init__(self, shape: tuple[int, int], rows: Array, length: Array, blocks: Array) -> None:
        self.stride, self.size = shape
        self.blocks = blocks.astype(np.intp)
        word = min(self.size, 8)
        self.dtype = np.dtype(f"<u{word}")
        # A block's gram at shift s is the word at s of its row, and the word after it the one at
        # s + word: strided views of the rows, read once.
        rows = np.ascontiguousarray(rows)
        first, second = (
            np.ndarray((len(rows), self.stride), self.dtype, rows, at, (rows.strides[0], 1))
            for at in (0, word)
        )
        self.mask: Array | None = None
        if self.size > 8:
            first = _hash(first, second).ravel()  # a new array in the rows' order: ravel is a view
        else:
            first, second = first.ravel(), second.ravel()
            held = (length[:, None] - np.arange(self.stride) - word).ravel()  # bytes held of the next word
            self.mask = np.where(
                held >= 8, ~np.uint64(0), (np.uint64(1) << (8 * np.minimum(held, 7)).astype(np.uint64)) - 1
            ).astype(self.dtype)
            self.second = second & self.mask
        del second
        # Few grams (a short text's, or the texts the rows are searched for): one table of 16-bit
        # slots, about one in sixty set, each naming the run of grams (sorted by slot) that falls
        # there: no search among the grams.  Many (the blocks): two tables of bits, about one in
        # sixteen set each, the second asked only where the first said yes, then a search among
        # the grams sorted by hash.  Stretches of zeros are the commonest word in a store's files:
        # the multiplier leaves their slot clear (unless zero is a gram).
        width = 8 * word
        self.few = len(first).bit_length() + 6 <= FLAT_BITS  # under 2**14 grams: a slot's run fits
        self.bits = min(width, max(10, len(first).bit_length() + (6 if self.few else 4)))
        for m in MULTIPLIERS:
            self.mults = [self.dtype.type(m & ((1 << width) - 1)) for m in (m, (m ^ MULTIPLIERS[-1]) | 1)]
            index = self._index(first, 0 if self.few else 1)
            if not (first == 0).any() or (index != 0).all():
                break
        if self.few:
            self.named = np.argsort(index, kind="stable")
            self._runs(index[self.named])
            self.tables = [np.zeros(1 << self.bits, np.int16)]
            self.tables[0][index[self.named[self.row]]] = np.arange(1, len(self.row) + 1)
            return
        with ThreadPoolExecutor(1) as pool:  # the second table is filled while the grams are sorted
            # (in order when numpy fills it: each page of its byte-a-bit flags written once, in turn)
            second = pool.submit(lambda: _bits(np.sort(index) if kernel is None else index, self.bits))
            # Sorted by hash, each gram's number in the hash's low bits: one sort, nothing to
            # permute.  Grams whose hashes agree above those bits are one run (texts share grams:
            # "pin 1234", "pin 5678"); each is confirmed when its block's bytes compare whole.
            # A lookup finds where its run begins among them (``heads``) and how long it is.
            self.low = np.uint64(max(1, (len(first) - 1).bit_length()))
            named = self._full(first) >> self.low
            named <<= self.low
            named |= np.arange(len(first), dtype=np.uint64)
            named.sort()
            # The first table: the sorted hashes' top bits, in order already.
            first_table = _bits(named, self.bits, 64 - self.bits)
            self.named = _signed(named & ((np.uint64(1) << self.low) - np.uint64(1)))
            named >>= self.low
            self.heads = named
            self.tables = [first_table, second.result()]

    def _full(self, keys: Array) -> Array:
        """A 64-bit hash of each word, one to one: the order the grams are sorted in."""
        return keys if self.size > 8 else keys.astype(np.uint64) * M1

    def _runs(self, keys: Array) -> None:
        """Where each run of equal ``keys`` (sorted) begins and how long it is."""
        self.row = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))).astype(np.int64)
        self.many = np.diff(np.append(self.row, len(keys)))  # int64, as the compiled loop reads them

    def _index(self, keys: Array, k: int = 0) -> Array:
        """Each key's slot in table ``k``, as numpy's own index type (an unsigned index costs
        numpy a checked conversion: several times the lookup itself)."""
        if self.bits == 8 * self.dtype.itemsize:
            return keys.astype(np.intp)  # a 1- or 2-byte word is its own slot
        index = keys * self.mults[k]
        index >>= self.dtype.type(8 * self.dtype.itemsize - self.bits)
        return _signed(index)

    def candidates(self, window: bytes | memoryview) -> tuple[Array, Array]:
        """(offset in ``window``, block) of every place a block's gram is, before the block is compared."""
        word = self.dtype.itemsize
        every = max(self.stride, word)  # bytes between the places one row of words looks at
        step = every // word
        words = np.frombuffer(window, self.dtype, count=len(window) // word)
        j, e = self._grams(
            *(self._look(window, step) if kernel is not None else self._look_numpy(words, step))
        )
        if self.mask is not None:
            same = (words[j * step + 1] & self.mask[e]) == self.second[e]
            j, e = j[same], e[same]
        return j * every - e % self.stride, self.blocks[e // self.stride]

    def _look(self, window: bytes | memoryview, step: int) -> tuple[Array, Array, Array]:
        """(place, start, count) of every place whose key names a run of grams (or, rarely, a hash
        alike): where the run begins among the grams as sorted, and how many it holds.  The
        compiled loop over the places."""
        word, hashed = self.dtype.itemsize, self.size > 8
        mult = 1 if self.bits == 8 * word else int(self.mults[0 if self.few else 1])
        if self.few:
            found = kernel.slots(
                window, word, step, hashed, mult, self.bits, self.tables[0], self.row, self.many
            )
        else:
            tables = (self.tables[0], self.tables[1], self.heads, int(self.low))
            found = kernel.flags(window, word, step, hashed, mult, self.bits, *tables)
        j, start, many = np.frombuffer(found, np.int64).reshape(-1, 3).T
        return j, start, many

    def _look_numpy(self, words: Array, step: int) -> tuple[Array, Array, Array]:
        """What ``_look`` answers, from whole-window arrays: the keys of every place, then
        their slots, then the places whose slots are set."""
        n = (len(words) - 1) // step  # places with a word after them
        keys = words[: n * step : step]
        if self.size > 8:
            keys = _hash(keys, words[1 : n * step + 1 : step])
        if self.few:
            run = self.tables[0][self._index(keys)]
            j = np.flatnonzero(run)
            k = run[j].astype(np.intp) - 1
            return j, self.row[k], self.many[k]
        # The second table asked only where the first said yes.
        full = self._full(keys)
        j = _set(self.tables[0], _signed(full >> np.uint64(64 - self.bits)))
        j = j[_set(self.tables[1], self._index(keys[j], 1))]
        high = full[j] >> self.low
        start = np.searchsorted(self.heads, high)
        hit = self.heads[np.minimum(start, len(self.heads) - 1)] == high
        j, start, high = j[hit], start[hit], high[hit]
        return j, start, np.searchsorted(self.heads, high, "right") - start

    def _grams(self, j: Array, start: Array, many: Array) -> tuple[Array, Array]:
        """(place, gram number): each place once for every gram of its run."""
        if not len(j):
            return j, j
        ends = np.cumsum(many)
        return np.repeat(j, many), self.named[np.repeat(start - ends + many, many) + np.arange(ends[-1])]


def _bits(values: Array, bits: int, shift: int = 0) -> Array:
    """A table of ``1 << bits`` bits, set at ``values >> shift`` (8-byte integers)."""
    if kernel is not None:
        table = np.zeros(max(1, (1 << bits) >> 3), np.uint8)
        kernel.fill(table, np.ascontiguousarray(values), shift)
        return table
    flags = np.zeros(1 << bits, bool)  # a byte a bit, then packed
    flags[_signed(values >> values.dtype.type(shift)) if shift else values] = True
    return np.packbits(flags, bitorder="little")


def _signed(index: Array) -> Array:
    """Slots (under 2**63) as numpy's index type: a view for 64-bit ones, no copy."""
    return index.view(np.int64) if index.dtype.itemsize == 8 else index.astype(np.intp)


def _set(table: Array, index: Array) -> Array:
    """Where the bit of ``table`` at ``index`` is set."""
    return np.flatnonzero((table[index >> 3] >> (index & 7).astype(np.uint8)) & 1)
