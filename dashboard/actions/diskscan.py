"""A search of a store's raw bytes for texts that should be gone, in one pass per file.

A text lies in the file as its UTF-8 bytes, whole in one cell or, when longer
than a page allows, in pieces over overflow pages.  So each text is looked for
as pieces: a *fragment* starts at an *anchor* (one of a few byte values, rare
in the file and present in the texts) and runs FRAGMENT bytes on.  The file is
read a chunk at a time (consecutive chunks overlap by the longest pattern less
one byte, so nothing is cut in two), ``split`` on the anchors in C, and the
first GRAM bytes after every anchor are looked up in one set of all the texts'
fragments: that is the multi-pattern match, a hash per anchor instead of a
step per byte.  A hit is then compared byte for byte.  Texts too short for a
fragment (or with no anchor at all) are looked for as plain pieces: a few with
``bytes.find``, many with an Aho-Corasick automaton (pyahocorasick), in the
same pass.  Memory stays bounded: chunks, never a whole file, and at most
MAX_PIECES patterns however many texts (their spacing widens past it).  The
search can only look for texts it is given.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress, count
from operator import itemgetter
from pathlib import Path

import ahocorasick

from .sidefiles import size_of
from ..store.descriptors import KeptReader

GRAM = 15              # bytes after an anchor that name a fragment in the set
FRAGMENT = 32          # bytes of a fragment, from its anchor on (fewer at a text's end)
WINDOW = 32            # a plain piece: this many bytes of a text no anchor cuts
SPACING = 128          # bytes of text between two fragments of one text, at least ...
MAX_PIECES = 1 << 16   # ... widened so that all texts together have at most this many
MAX_ANCHORS = 8
ANCHOR_DENSITY = 1 / 32   # anchors per byte of file, at most: each costs one bytes object
TEXT_GAP = 48          # bytes of text per anchor, about, once the budget allows
IN_TEXT = 1 / 20       # an anchor more common in the texts cuts their fragments short
FINDS = 32             # up to this many plain pieces, bytes.find; more, one automaton
POSITIONS = 64         # places a text's first fragment is remembered, per file
PIECE = 1 << 18        # bytes read at a time (and the step of the progress)


@dataclass
class TextHits:
    """Where one text was seen: per file path, ``whole`` and the pieces found."""

    sha256: str
    bytes: int
    files: dict = field(default_factory=dict)   # path -> {"whole": bool, "fragments": n}
    still_stored: bool = False   # a remaining row holds the same text: not residue
    saved_again: bool = False    # ... a row that was saved while the scan ran

    @property
    def found(self) -> bool:
        return bool(self.files)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Needles:
    """The texts to look for, cut into pieces once, reused for every file.

    ``pieces[i]`` maps an offset in text ``i`` to the bytes found there; a
    piece at an anchor is keyed in ``grams`` by the GRAM bytes after it, the
    others (``plain``) are searched for as they are.
    """

    def __init__(self, texts, sample: bytes, ignore: bytes = b""):
        self.raw = [t.encode("utf-8", "surrogatepass") for t in dict.fromkeys(texts) if t]
        self.ignore = ignore
        self.live: set[int] = set()   # texts a remaining row still holds whole
        self.anchors = _anchors(self.raw, sample)
        sep = self.anchors[:1]
        self.sep = sep
        self.table = bytes.maketrans(self.anchors, sep * len(self.anchors)) if len(self.anchors) > 1 else None
        self.pieces: list[dict] = [{} for _ in self.raw]
        self.first: dict[int, int] = {}               # text -> offset of its first fragment
        self.grams: dict[bytes, list] = {}            # gram -> [(text, offset, fragment)]
        self.plain: dict[bytes, list] = {}            # piece -> [(text, offset)]
        spacing = _spacing(self.raw)
        for i, raw in enumerate(self.raw):
            at = self._fragments(i, raw, spacing)
            if not at:
                step = max(spacing, WINDOW)
                for k in sorted({*range(0, max(1, len(raw) - WINDOW + 1), step), max(0, len(raw) - WINDOW)}):
                    piece = raw[k:k + WINDOW]
                    self.pieces[i][k] = piece
                    self.plain.setdefault(piece, []).append((i, k))
        self.gramset = frozenset(self.grams)
        self.longest = max((len(p) for p in self.plain), default=0)
        self.automaton = None
        if len(self.plain) > FINDS:
            self.automaton = ahocorasick.Automaton()
            for piece in self.plain:
                self.automaton.add_word(piece.decode("latin-1"), piece)
            self.automaton.make_automaton()
        self._held: dict[int, set] = {}

    def _translate(self, data: bytes) -> bytes:
        return data.translate(self.table) if self.table else data

    def _fragments(self, i: int, raw: bytes, spacing: int) -> bool:
        text, sep, last = self._translate(raw), self.sep, -spacing
        at = text.find(sep)
        while at != -1 and at + GRAM < len(raw):
            gram = text[at + 1:at + 1 + GRAM]
            if sep not in gram and at - last >= spacing:
                self.pieces[i][at] = fragment = raw[at:at + FRAGMENT]
                self.grams.setdefault(gram, []).append((i, at, fragment))
                self.first.setdefault(i, at)
                last = at
            at = text.find(sep, at + 1)
        return i in self.first

    @property
    def overlap(self) -> int:
        return max(FRAGMENT, self.longest) - 1

    def match(self, chunks, positions: dict | None = None) -> set:
        """The (text, offset) pieces in ``chunks`` (one file or text, in order).

        ``positions``, when given, collects where each text's first fragment
        starts (at most POSITIONS per text; None past that).
        """
        found, tail, base, getter = set(), b"", 0, itemgetter(slice(0, GRAM))
        chunks = iter(chunks)
        chunk = next(chunks, b"")
        while chunk:
            following = next(chunks, b"")
            buf = tail + chunk
            # Patterns starting in [0, end) are complete in ``buf``; the rest
            # start again in the next one, whose front is this one's tail.
            end = len(buf) - self.overlap if following else len(buf)
            if self.grams:
                self._grams_in(buf, end, base, getter, found, positions)
            if self.plain:
                self._plain_in(buf, end, found)
            tail = buf[max(0, end):]
            base += len(buf) - len(tail)
            chunk = following
        return found

    def _grams_in(self, buf, end, base, getter, found, positions):
        runs = self._translate(buf).split(self.sep)
        # frozenset.intersection hashes each run's first GRAM bytes once, in C.
        hits = self.gramset.intersection(map(getter, runs[1:]))
        if not hits:
            return
        offset, done = 0, 0
        for j in compress(count(), map(hits.__contains__, map(getter, runs))):
            if j == 0:
                continue
            # join sums the lengths in C, far faster than sum(map(len, ...)).
            offset += len(b"".join(runs[done:j])) + j - done
            done = j
            at = offset - 1   # the anchor
            if at >= end:
                break
            for i, k, fragment in self.grams[getter(runs[j])]:
                if buf.startswith(fragment, at):
                    found.add((i, k))
                    if positions is not None and self.first.get(i) == k:
                        seen = positions.setdefault(i, [])
                        if seen is not None:
                            seen.append(base + at - k)
                            if len(seen) > POSITIONS:
                                positions[i] = None

    def _plain_in(self, buf, end, found):
        # Only pieces that start before ``end``: the others come again in the next buffer.
        if self.automaton is None:
            for piece, owners in self.plain.items():
                at = buf.find(piece)
                if at != -1 and at < end:
                    found.update(owners)
            return
        for last, piece in self.automaton.iter(buf.decode("latin-1")):
            if last - len(piece) + 1 < end:
                found.update(self.plain[piece])

    def held(self, live: bytes, cache: bool = True) -> set:
        """The pieces ``live`` (rows' text) holds: found there, they are not residue."""
        key = id(live)
        if cache and key in self._held:
            return self._held[key]
        mine = self.match(_chunks(live)) if live else set()
        if cache:
            self._held[key] = mine
        return mine

    def held_now(self, i: int, hit: dict, live: set, live_text: bytes) -> bool:
        """Whether every piece of text ``i`` counted as residue in one file is held by the
        rows' text read again after the scan (``live``: its pieces, ``live_text``: its bytes)."""
        if self.raw[i] in live_text:
            return True
        return bool(hit["pieces"]) and all((i, k) in live for k in hit["pieces"])

    def search(self, fh, on_bytes=lambda n: None) -> dict[int, dict]:
        """For each text seen in the open file ``fh``: whether whole, and how many pieces were found."""
        positions: dict[int, list | None] = {}
        found = self.match(_read(fh, on_bytes), positions)
        if not found:
            return {}
        held = self.held(self.ignore) if self.ignore else set()
        by_text: dict[int, set] = {}
        for i, k in found:
            by_text.setdefault(i, set()).add(k)
        seen = {}
        for i, offsets in by_text.items():
            residue = {k for k in offsets if (i, k) not in held}
            if not residue:
                if self.ignore and self.raw[i] in self.ignore:
                    self.live.add(i)
                continue
            whole = False
            if len(offsets) == len(self.pieces[i]):
                # Every piece is here: is the whole text, in one place?
                raw, spots = self.raw[i], positions.get(i, [])
                if len(raw) <= WINDOW and i not in self.first:
                    whole = True
                elif spots is None or i not in self.first:
                    whole = _contains(fh, raw)
                else:
                    whole = any(_at(fh, p, len(raw)) == raw for p in spots if p >= 0)
            seen[i] = {"whole": whole, "fragments": len(residue), "pieces": residue}
        return seen


def _spacing(raw_texts: list[bytes]) -> int:
    # One fragment per SPACING bytes of text, and one at least per text, within MAX_PIECES.
    total = sum(len(r) for r in raw_texts)
    room = max(1, MAX_PIECES - len(raw_texts))
    return max(SPACING, -(-total // room))


def _anchors(raw_texts: list[bytes], sample: bytes) -> bytes:
    """The byte values to cut at: the rarest in the file that cut the texts often enough.

    Taken rarest first while the file's budget lasts, until every text long
    enough has a fragment and the texts hold one anchor per TEXT_GAP bytes
    (a piece of a few hundred bytes then holds one), never one so common in
    the texts that its fragments would be cut short by the next.
    """
    in_file, size = Counter(sample), max(1, len(sample))
    texts = [t for t in raw_texts[:4000] if len(t) > GRAM]
    joined = b"".join(t[:4096] for t in texts[:2000])
    in_text, text_size = Counter(joined), max(1, len(joined))
    candidates = sorted((b for b, n in in_text.items() if n / text_size <= IN_TEXT),
                        key=lambda b: (in_file.get(b, 0), -in_text[b]))
    chosen, density, cuts, uncut = [], 0.0, 0.0, texts
    for b in candidates:
        if len(chosen) >= MAX_ANCHORS or (not uncut and cuts >= 1 / TEXT_GAP):
            break
        share = in_file.get(b, 0) / size
        if chosen and density + share > ANCHOR_DENSITY:
            break
        still = [t for t in uncut if t.find(bytes([b]), 0, len(t) - GRAM) == -1]
        if not chosen or len(still) < len(uncut) or cuts < 1 / TEXT_GAP:
            chosen.append(b)
            density, cuts, uncut = density + share, cuts + in_text[b] / text_size, still
    return bytes(chosen or b"\x00")


def _chunks(data: bytes):
    return (data[i:i + PIECE] for i in range(0, len(data), PIECE))


def _read(fh, on_bytes=lambda n: None):
    fh.seek(0)
    while True:
        chunk = fh.read(PIECE)
        if not chunk:
            return
        on_bytes(len(chunk))
        yield chunk


def _at(fh, offset: int, size: int) -> bytes:
    fh.seek(offset)
    return fh.read(size)


def _contains(fh, raw: bytes) -> bool:
    """Whether the file holds ``raw`` whole: chunks overlapping by its length less one."""
    tail, keep = b"", len(raw) - 1
    fh.seek(0)
    while chunk := fh.read(max(PIECE, 2 * len(raw))):
        window = tail + chunk
        if raw in window:
            return True
        tail = window[len(window) - keep:] if keep else b""
    return False


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
    """Search every file in ``paths`` for every text, reporting progress by bytes read.

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
    total = sum(size_of(p) or 0 for p in paths) or 1
    done, scanned, found = 0, [], {}

    def moved(n: int) -> None:
        nonlocal done
        done += n
        progress(min(done, total), total)

    for p in paths:
        try:
            fh = KeptReader(p)   # never open()/close(): see store/descriptors.py
        except FileNotFoundError:
            continue
        with fh:
            size = fh.seek(0, 2)
            scanned.append((p, size))
            if needles.raw:
                for i, hit in needles.search(fh, moved).items():
                    found[i, str(p)] = hit
            else:
                moved(size)
    progress(total, total)
    later = live_again() if found and live_again is not None else b""
    held_later = needles.held(later, cache=False) if later else set()
    again = {i for i, _ in found}
    for (i, path), hit in found.items():
        if later and needles.held_now(i, hit, held_later, later):
            continue
        again.discard(i)
        hits[keys[i]].files[path] = {"whole": hit["whole"], "fragments": hit["fragments"]}
    for i in needles.live | (again if later else set()):
        hits[keys[i]].still_stored = not hits[keys[i]].files
    for i in again if later else ():
        hits[keys[i]].saved_again = True
    return hits, scanned
