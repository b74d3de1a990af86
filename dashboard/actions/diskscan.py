"""Looking at a store's files as bytes: the WAL header and frames, copies beside it,
and a search of raw bytes for texts that should be gone.

The search is built for "1,000 texts in a 100 MB file" without a C extension.
Text longer than a page is split over overflow pages, so a text is looked for
as pieces, not only as one string.  The pieces are content-defined: both the
texts and the file are ``split`` on an "anchor" byte value (frequent enough
in the texts, as rare as can be in the file: the cost is one bytes object per
run), in C.  A run of a text between two anchors is then found in the file by
a set intersection wherever it sits, with no per-offset Python loop; a run of
MIN_KEY bytes or more counts as a fragment.  The file is read and split a
piece (PIECE bytes) at a time, so each run is hashed while it is still in the
CPU cache and no file-sized buffer is ever allocated.  Texts the single anchor cannot
cut get a denser set of anchors (mapped to one with ``bytes.translate``) and a
second pass; a few short ones are searched whole, and by their first and last
32 bytes, with ``bytes.find`` instead.  The search can only look for texts it
is given.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, count
from pathlib import Path

import ahocorasick

from ..store.descriptors import KeptReader
from .sidefiles import size_of

WINDOW = 32
MIN_KEY = 16
LAZY_FINDS = 16
# The cost of a pass is about one Python bytes object per run, so the sparse
# level takes the anchor rarest in the file (fewest runs) among those that cut
# the texts at least KEYED times a byte: a remnant of a few hundred bytes
# still holds a key (a sparser anchor is faster, and misses small remnants).
# A text it cannot cut costs a few ``bytes.find`` (or, past FINDS_INSTEAD or
# for a long text, a dense pass): each cost is written as the anchor density
# it equals.
SPARSE = 1 / 40  # anchors per byte of file, at most, for the sparse level
KEYED = 1 / 64  # anchors per byte of text, at least: a 200-byte remnant holds ~3
IN_TEXT = 1 / 20  # anchors per byte of text, at most: runs of ~20 bytes or more
DENSE = 1 / 10  # the dense level: one more, dearer pass (translate, short runs)
PER_FIND = 1 / 300  # one text searched with bytes.find costs about a pass at this density
FINDS_INSTEAD = 8  # up to this many short texts left: bytes.find beats a dense pass
LONG_TEXT = 256  # a text this long may be split over pages: never only finds
PIECE = 1 << 18  # bytes read and split at a time: the runs stay in L2 cache
WORD = 8  # short texts: WORD-byte words at offsets WORD divides are looked up
FINDS = 32  # up to this many strings too short for that: bytes.find; more, an automaton


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
class _Level:
    """One way of cutting bytes into runs, and the texts' runs long enough to be keys."""

    anchors: bytes
    texts: list = field(default_factory=list)  # (text index, its keys)
    first: dict = field(default_factory=dict)  # text index -> (its first key, offset in text)
    keyset: frozenset = frozenset()
    starts: frozenset = frozenset()  # every text's first key

    def __post_init__(self):
        # Several anchors become the first one; a single one needs no translate.
        self.sep = self.anchors[:1]
        self._mapped = None
        self.table = (
            bytes.maketrans(self.anchors, self.sep * len(self.anchors)) if len(self.anchors) > 1 else None
        )

    def translate(self, data: bytes) -> bytes:
        return data.translate(self.table) if self.table else data

    def runs(self, data: bytes) -> list[bytes]:
        return self.translate(data).split(self.sep)

    def count_texts(self, keys: set) -> Counter:
        """How many of ``keys`` each text has, counted in C but for shared keys."""
        owner, more = self._owners()
        counted = Counter(map(owner.__getitem__, keys - more.keys()))
        for key in keys & more.keys():
            counted.update(more[key])
        return counted

    def _owners(self) -> tuple[dict, dict]:
        # Key -> a text that has it, and key -> every text for the rare key
        # several texts share.  Filled in C a text at a time, and only once a
        # key is found: a search that finds nothing never needs it.
        if self._mapped is None:
            owner, more = {}, {}
            for i, mine in self.texts:
                for key in owner.keys() & mine:  # walks ``mine``, not the dict
                    more[key] = more.get(key, (owner[key],)) + (i,)
                owner.update(dict.fromkeys(mine, i))
            self._mapped = owner, more
        return self._mapped

    def find(self, chunks, locate: frozenset = frozenset()) -> tuple[set, dict]:
        """The keys in ``chunks`` (one file, in order), and the offsets where those in ``locate`` sit."""
        found, at = set(), {}
        for start, runs in self._pieces(chunks):
            # set.intersection hashes each run once, in C (``dict.keys() &`` is far slower);
            # a piece at a time, the runs are still in the CPU cache when hashed.
            here = self.keyset.intersection(runs)
            found |= here
            located = locate.intersection(here)  # a few keys: a set that stays in L1
            if not located:
                continue
            offset, done = start, 0
            for j in compress(count(), map(located.__contains__, runs)):
                # join sums the lengths in C, far faster than sum(map(len, ...)).
                offset += len(b"".join(runs[done:j])) + j - done
                done = j
                at.setdefault(runs[j], []).append(offset)
        return found, at

    def _pieces(self, chunks):
        # Each chunk's runs, less the one after its last anchor: that run is
        # still open and goes in front of the next chunk's first.  An open run
        # longer than a piece (a stretch of zeros, say) is no key: it is
        # dropped, and only its length kept for the offsets.
        start, carry, end = 0, b"", 0  # the open run and its offset (None: dropped)
        for chunk in chunks:
            end += len(chunk)
            runs = self.runs(chunk)
            if carry is None or len(carry) + len(runs[0]) > PIECE:
                start += len(carry or b"") + len(runs[0])
                runs[0], carry = b"", None
            else:
                runs[0], carry = carry + runs[0], b""
            if len(runs) == 1:
                carry = runs[0] if carry is not None else None
                continue
            carry = runs.pop()
            yield start, runs
            start = end - len(carry)
        if carry:
            yield start, [carry]


def _chunks(data: bytes):
    return (data[i : i + PIECE] for i in range(0, len(data), PIECE))


def _read(fh, on_chunk=lambda chunk: None):
    """The file a piece at a time, each piece also handed to ``on_chunk`` (progress, a second matcher)."""
    fh.seek(0)
    for chunk in iter(partial(fh.read, PIECE), b""):
        on_chunk(chunk)
        yield chunk


class Plain:
    """Many short byte strings looked for at once, in one pass: which of them a file holds.

    A string of 2 * WORD - 1 bytes or more, wherever it lies, has one of its
    WORD-byte words at an offset WORD divides: one word per remainder (the
    rarest in ``sample``) is looked up, all at once, in the numbers that
    ``array`` makes of the buffer in C; a hit is then compared byte for byte.
    Shorter strings are few ``bytes.find`` or one Aho-Corasick automaton.
    Buffers overlap by the longest string less one byte: none is cut in two.
    """

    def __init__(self, needles, sample: bytes = b""):
        self.needles = list(set(needles))
        self.overlap = max(map(len, self.needles), default=1) - 1
        # A few strings: a bytes.find each costs less than turning every buffer into words.
        few = len(self.needles) <= FINDS
        self.tiny = [n for n in self.needles if few or len(n) < 2 * WORD - 1]
        # word -> needle number * 256 + where the word starts in it (a tuple of those, rarely):
        # one small int per word keeps tens of thousands of needles in a few MB.
        self.words: dict[int, int | tuple] = {}
        common = Counter(sample[k : k + WORD] for k in range(0, len(sample) - WORD + 1))
        for number, n in enumerate(self.needles):
            if few or len(n) < 2 * WORD - 1:
                continue
            for r in range(WORD):
                at = min(range(r, min(len(n) - WORD + 1, 256), WORD), key=lambda k: common[n[k : k + WORD]])
                word, entry = int.from_bytes(n[at : at + WORD], sys.byteorder), number << 8 | at
                had = self.words.get(word)
                self.words[word] = entry if had is None else (*(had if type(had) is tuple else (had,)), entry)
        self.wordset = frozenset(self.words)
        self.automaton = None
        if len(self.tiny) > FINDS:
            self.automaton = ahocorasick.Automaton()
            for n in self.tiny:
                self.automaton.add_word(n.decode("latin-1"), n)
            self.automaton.make_automaton()

    def scanner(self):
        """A function to hand the buffers of one file, in order, and the set it fills."""
        present, tail = set(), [b""]

        def feed(chunk: bytes) -> None:
            window = tail[0] + chunk
            if self.wordset:
                self._words_in(window, present)
            if self.tiny:
                self._tiny_in(window, present)
            tail[0] = window[max(0, len(window) - self.overlap) :]

        return feed, present

    def present(self, chunks) -> set:
        feed, present = self.scanner()
        for chunk in chunks:
            feed(chunk)
        return present

    def _words_in(self, window: bytes, present: set) -> None:
        words = array("Q", window[: len(window) // WORD * WORD]).tolist()
        hits = self.wordset.intersection(words)
        if not hits:
            return
        if len(hits) <= FINDS:  # a few words: bytes.find walks the buffer in C
            spots = []
            for word in hits:
                key = word.to_bytes(WORD, sys.byteorder)
                at = window.find(key)
                while at != -1:
                    if at % WORD == 0:
                        spots.append((at, word))
                    at = window.find(key, at + 1)
        else:
            spots = [(WORD * j, words[j]) for j in compress(count(), map(hits.__contains__, words))]
        for at, word in spots:
            entries = self.words[word]
            for entry in entries if type(entries) is tuple else (entries,):
                needle, shift = self.needles[entry >> 8], entry & 255
                if at >= shift and window.startswith(needle, at - shift):
                    present.add(needle)

    def _tiny_in(self, window: bytes, present: set) -> None:
        if self.automaton is None:
            present.update(n for n in self.tiny if n not in present and n in window)
        else:
            present.update(n for _, n in self.automaton.iter(window.decode("latin-1")))


class Needles:
    """The texts to look for, cut into keys once, reused for every file.

    A key is a run of a text's bytes between two anchors; in a file the same
    run sits between the same two anchors wherever the text lies.  Texts with
    too few anchors for a key at the sparse level get a second single anchor
    or a denser level (a second pass over the file, only when needed); texts
    too short even for that are searched whole with ``bytes.find``.
    """

    def __init__(self, texts, sample: bytes, ignore: bytes = b""):
        self.raw = [t.encode("utf-8", "surrogatepass") for t in dict.fromkeys(texts) if t]
        self.ignore = ignore
        self.levels: list[_Level] = []
        self.keys_of: dict[int, int] = {}
        self.finds: dict[int, list[bytes]] = {}
        self.live: set[int] = set()  # texts a remaining row still holds whole
        self._live_keys: dict[int, set] = {}
        self._later_keys: dict[int, set] = {}
        in_file = Counter(sample)
        in_file = {b: n / len(sample) for b, n in in_file.items()}
        todo = list(range(len(self.raw)))
        # A second single anchor for the texts the first leaves, if it leaves
        # no more than finds can take: far cheaper than the dense pass.
        for choose in (_sparse_anchor, partial(_sparse_anchor, last=False), _dense_anchors):
            if not todo or (
                self.levels and len(todo) <= FINDS_INSTEAD and max(len(self.raw[i]) for i in todo) < LONG_TEXT
            ):
                break
            anchors = choose([self.raw[i] for i in todo], in_file)
            if anchors is None:
                continue
            level = _Level(anchors)
            todo = [i for i in todo if not self._cut(i, level)]
            level.keyset = frozenset().union(*(mine for _, mine in level.texts))
            level.starts = frozenset(key for key, _ in level.first.values())
            self.levels.append(level)
        for i in todo:
            raw = self.raw[i]
            # A short text sits in one cell: the whole string and its ends are enough.
            self.finds[i] = [raw[:WINDOW], *{raw, raw[-WINDOW:]} - {raw[:WINDOW]}]
        self.plain = Plain({w for words in self.finds.values() for w in words}, sample)
        self._ignored = None
        self._later = (None, set())

    def _cut(self, i: int, level: _Level) -> bool:
        text = level.translate(self.raw[i])
        # The first and last runs are cut by the text's ends: only whole runs match.
        mine = [run for run in text.split(level.sep)[1:-1] if len(run) >= MIN_KEY]
        if not mine:
            return False
        # No earlier run between two anchors equals the first key: found there.
        level.first[i] = (mine[0], text.find(level.sep + mine[0] + level.sep) + 1)
        mine = frozenset(mine)
        self.keys_of[i] = len(mine)
        level.texts.append((i, mine))
        return True

    def _held_by_live_rows(self, n: int, found: set, live: bytes | None = None) -> set:
        # Keys also present in rows that stay are not residue.  A few are
        # looked up one by one; many at once cost one pass over the live text.
        live, cache = (self.ignore, self._live_keys) if live is None else (live, self._later_keys)
        if not live:
            return set()
        if n in cache:
            return found & cache[n]
        if len(found) <= LAZY_FINDS:
            return {k for k in found if k in live}
        cache[n] = self.levels[n].find(_chunks(live))[0]
        return found & cache[n]

    def held_now(self, i: int, hit: dict, live: bytes) -> bool:
        """Whether every piece of text ``i`` that ``search`` counted as residue in one file
        is held by ``live``, the rows' text read again after the scan."""
        if self.raw[i] in live:
            return True
        if not (hit.get("keys") or hit.get("words")):
            return False
        if hit.get("words"):
            if self._later[0] is not live:  # the short texts' pieces it holds: one pass, once
                self._later = (live, self.plain.present(_chunks(live)))
            if not hit["words"] <= self._later[1]:
                return False
        return all(keys <= self._held_by_live_rows(n, keys, live) for n, keys in hit.get("keys", {}).items())

    @property
    def passes(self) -> int:
        """How many times ``search`` reads a file: once per level (the short texts ride on the first)."""
        return len(self.levels) or int(bool(self.finds))

    def search(self, fh, on_bytes=lambda n: None) -> dict[int, dict]:
        """For each text seen in the open file ``fh``: whether whole, and how many fragments were found.

        ``on_bytes(n)`` is told of every piece read, for the progress."""
        seen: dict[int, dict] = {}
        feed, present = self.plain.scanner() if self.finds else (None, None)

        def both(chunk):
            on_bytes(len(chunk))
            if feed is not None:
                feed(chunk)

        for n, level in enumerate(self.levels):
            found, starts = level.find(
                _read(fh, both if n == 0 else lambda c: on_bytes(len(c))), level.starts
            )
            live = self._held_by_live_rows(n, found) if found else set()
            # Keys per text: every key here, and those no live row holds.
            keys_here = level.count_texts(found)
            residue = level.count_texts(found - live) if live else keys_here
            for i, k in residue.items():
                seen.setdefault(i, {"whole": False, "fragments": 0})["fragments"] += k
            if residue:
                # The residue keys themselves, so ``held_now`` can judge them again.
                mine, left = dict(level.texts), found - live
                for i in residue:
                    seen[i].setdefault("keys", {})[n] = mine[i] & left
            for i in keys_here.keys() - seen.keys():
                if self.raw[i] in self.ignore:
                    self.live.add(i)
            for i in seen.keys() & keys_here.keys():
                # Only a text whose every key is here can be here whole, and it
                # would start where its first key sits, less that key's offset.
                if keys_here[i] == self.keys_of[i]:
                    key, shift = level.first[i]
                    seen[i]["whole"] = any(
                        _at(fh, p - shift, len(self.raw[i])) == self.raw[i]
                        for p in starts.get(key, ())
                        if p >= shift
                    )
        if self.finds:
            if not self.levels:
                for _ in _read(fh, both):
                    pass
            seen.update(self._found_whole_or_by_ends(present))
        return seen

    def _in_ignore(self) -> set:
        # The short texts' pieces the rows that stay hold: one pass over their text, once.
        if self._ignored is None:
            self._ignored = self.plain.present(_chunks(self.ignore)) if self.ignore else set()
        return self._ignored

    def _found_whole_or_by_ends(self, present: set) -> dict[int, dict]:
        seen = {}
        for i, words in self.finds.items():
            if i in self.live or present.isdisjoint(words):
                continue
            if self.raw[i] in self._in_ignore():
                self.live.add(i)
                continue
            left = {w for w in words if w in present and w not in self._in_ignore()}
            if left:
                seen[i] = {"whole": self.raw[i] in present, "fragments": len(left), "words": left}
        return seen


def _at(fh, offset: int, size: int) -> bytes:
    fh.seek(offset)
    return fh.read(size)


def _text_counts(raw_texts: list[bytes]) -> tuple[int, Counter]:
    text = b"".join(raw_texts[:2000])[: 1 << 16]
    return len(text), Counter(text)


def _sparse_anchor(raw_texts: list[bytes], in_file: dict, last: bool = True) -> bytes | None:
    # The byte value that leaves the fewest runs in the file, with each text it
    # cannot cut priced at what looking for that text otherwise costs.  Unless
    # it is the ``last`` resort, none when the texts it leaves need a dense pass.
    size, in_text = _text_counts(raw_texts)
    fit = sorted(
        (
            b
            for b, n in in_text.items()
            if KEYED * size <= n <= IN_TEXT * size and in_file.get(b, 0) <= SPARSE
        ),
        key=lambda b: in_file.get(b, 0),
    )
    sample = raw_texts[:2000]
    best, least = None, float("inf")
    for b in fit:
        if in_file.get(b, 0) >= least:
            break
        uncut = [t for t in sample if t.count(b) < 2]  # an estimate: no key without two anchors
        left = len(uncut) * len(raw_texts) / len(sample)
        extra = left * PER_FIND if left <= FINDS_INSTEAD and all(len(t) < LONG_TEXT for t in uncut) else DENSE
        if in_file.get(b, 0) + extra < least:
            best, least = b, in_file.get(b, 0) + extra
    if best is not None and (last or least - in_file.get(best, 0) < DENSE):
        return bytes([best])
    return _anchors(raw_texts, in_file, SPARSE, 1) if last else None


def _dense_anchors(raw_texts: list[bytes], in_file: dict) -> bytes:
    return _anchors(raw_texts, in_file, DENSE, 256)


def _anchors(raw_texts: list[bytes], in_file: dict, density: float, most: int) -> bytes:
    # Anchors: the byte values most common in the texts, skipping any that
    # would cut the files more often than ``density`` in total, or the texts
    # into runs too short to be keys (CJK lead bytes: every third byte).
    size, in_text = _text_counts(raw_texts)
    chosen, budget, cuts = [], density, IN_TEXT * size
    for b in sorted(in_text, key=in_text.get, reverse=True):
        if len(chosen) < most and in_file.get(b, 0) <= budget and in_text[b] <= cuts:
            chosen.append(b)
            budget -= in_file.get(b, 0)
            cuts -= in_text[b]
    # Every byte of the texts is common in the files: the rarest one will do.
    return bytes(chosen or [min(in_text, key=lambda b: in_file.get(b, 0), default=0x65)])


def file_sample(paths, size: int = 1 << 16) -> bytes:
    """Up to ``size`` bytes taken evenly from the files, to choose anchors."""
    parts = []
    for p in paths:
        try:
            with KeptReader(p) as fh:
                n = fh.seek(0, 2)
                for k in range(16):
                    fh.seek(n * k // 16)
                    parts.append(fh.read(size // 16 // max(1, len(paths))))
        except FileNotFoundError:
            continue
    return b"".join(parts)


def scan(paths, texts, ignore: bytes = b"", progress=lambda done, total: None, live_again=None):
    """Search every file in ``paths`` for every text.

    ``ignore`` is the text of the rows that stay, read before the scan.  An
    agent saving meanwhile can write a purged text again into a new row: if
    anything was found, ``live_again()`` (when given) reads the rows' text once
    more, and a text whose every piece found is held by it is reported as
    ``saved_again`` (and ``still_stored``), not as residue.
    Returns ({sha256: TextHits}, [(path, size) of the files actually read]);
    a side file that vanished before it could be read is simply not listed.
    """
    paths = [Path(p) for p in paths]
    needles = Needles(texts, file_sample(paths), ignore)
    keys = [hashlib.sha256(r).hexdigest() for r in needles.raw]
    hits = {k: TextHits(k, len(r)) for k, r in zip(keys, needles.raw)}
    # Progress counts every byte read: each file is read ``passes`` times.
    total = sum(size_of(p) or 0 for p in paths) * max(1, needles.passes) or 1
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
            for i, hit in needles.search(fh, moved).items():
                found[i, str(p)] = hit
        done = max(done, start + size * max(1, needles.passes))
        progress(min(done, total), total)
    progress(total, total)
    later = live_again() if found and live_again is not None else b""
    again = {i for i, _ in found}
    for (i, path), hit in found.items():
        if later and needles.held_now(i, hit, later):
            continue
        again.discard(i)
        hits[keys[i]].files[path] = {"whole": hit["whole"], "fragments": hit["fragments"]}
    for i in needles.live | (again if later else set()):
        hits[keys[i]].still_stored = not hits[keys[i]].files
    for i in again if later else ():
        hits[keys[i]].saved_again = True
    return hits, scanned
