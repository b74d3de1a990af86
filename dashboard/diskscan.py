"""Looking at a store's files as bytes: the WAL header and frames, copies beside it,
and a search of raw bytes for texts that should be gone.

The search is built for "1,000 texts in a 100 MB file" without a C extension.
Text longer than a page is split over overflow pages, so a text is looked for
as pieces, not only as one string.  The pieces are content-defined: both the
texts and the file are ``split`` on an "anchor" byte value (common in the
texts, rationed in the file), in C.  A run of a text between two anchors is
then found in the file by a set intersection wherever it sits, with no
per-offset Python loop; a run of MIN_KEY bytes or more counts as a fragment.
The file is split a megabyte at a time, so each run is hashed while it is
still in the CPU cache.  Texts the single anchor cannot cut get a denser set
of anchors (mapped to one with ``bytes.translate``) and a second pass; a few
short ones are searched whole, and by their first and last 32 bytes, with
``bytes.find`` instead.  The search can only look for texts it is given.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress, count, islice
from pathlib import Path

from .sidefiles import read_or_none, size_of

WINDOW = 32
MIN_KEY = 16
LAZY_FINDS = 16
# Anchors per byte of file.  The sparse level splits on one byte value with no
# translate (runs of ~64 bytes): the bulk of the cost is one bytes object per
# run.  The dense level (runs of ~10) is a second, dearer pass, made only for
# texts the sparse one cannot cut: when many are left, or one long enough to
# spill onto overflow pages, where its ends alone do not show every fragment.
SPARSE, DENSE = 1 / 64, 1 / 10
FINDS_INSTEAD = 8      # up to this many short texts left: bytes.find beats a dense pass
LONG_TEXT = 256        # a text this long may be split over pages: never only finds
PIECE = 1 << 20        # bytes split at a time
IN_TEXT = 1 / 20       # anchors per byte of text, at most: runs of ~20 bytes or more


@dataclass
class TextHits:
    """Where one text was seen: per file path, ``whole`` and the pieces found."""

    sha256: str
    bytes: int
    files: dict = field(default_factory=dict)   # path -> {"whole": bool, "fragments": n}
    still_stored: bool = False   # a remaining row holds the same text: not residue

    @property
    def found(self) -> bool:
        return bool(self.files)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class _Level:
    """One way of cutting bytes into runs, and the texts' runs long enough to be keys."""

    anchors: bytes
    keys: dict = field(default_factory=dict)     # key -> [text index]
    first: dict = field(default_factory=dict)    # text index -> (its first key, offset in text)
    keyset: frozenset = frozenset()
    starts: frozenset = frozenset()              # every text's first key

    def __post_init__(self):
        # Several anchors become the first one; a single one needs no translate.
        self.table = bytes.maketrans(self.anchors, self.anchors[:1] * len(self.anchors)) \
            if len(self.anchors) > 1 else None

    def runs(self, data: bytes) -> list[bytes]:
        if self.table:
            data = data.translate(self.table)
        return data.split(self.anchors[:1])

    def find(self, data: bytes, locate: frozenset = frozenset()) -> tuple[set, dict]:
        """The keys in ``data``, and the offsets where those in ``locate`` sit."""
        found, at = set(), {}
        for offset, runs in self._pieces(data):
            # set.intersection hashes each run once, in C (``dict.keys() &`` is far slower);
            # a piece at a time, the runs are still in the CPU cache when hashed.
            here = self.keyset.intersection(runs)
            found |= here
            if locate.isdisjoint(here):
                continue
            walk, done = iter(runs), 0
            for j in compress(count(), map(locate.__contains__, runs)):
                offset += sum(map(len, islice(walk, j - done))) + j - done
                done = j
                at.setdefault(runs[j], []).append(offset)
        return found, at

    def _pieces(self, data: bytes):
        # Cut at an anchor, so that no run is split between two pieces.  A run
        # longer than a piece (a stretch of zeros, say) is no key: skipped.
        start, inside = 0, False
        while start < len(data):
            end = min(start + PIECE, len(data))
            runs = self.runs(data[start:end])
            if end < len(data):
                if len(runs) == 1:
                    start, inside = end, True
                    continue
                end -= len(runs.pop()) + 1
            if inside:
                start += len(runs.pop(0)) + 1
            yield start, runs
            start, inside = end + 1, False


class Needles:
    """The texts to look for, cut into keys once, reused for every file.

    A key is a run of a text's bytes between two anchors; in a file the same
    run sits between the same two anchors wherever the text lies.  Texts with
    too few anchors for a key at the sparse level get one at a denser level
    (a second pass over the file, only when needed); texts too short even for
    that are searched whole with ``bytes.find``.
    """

    def __init__(self, texts, sample: bytes, ignore: bytes = b""):
        self.raw = [t.encode("utf-8", "surrogatepass") for t in dict.fromkeys(texts) if t]
        self.ignore = ignore
        self.levels: list[_Level] = []
        self.keys_of: dict[int, int] = {}
        self.finds: dict[int, list[bytes]] = {}
        self.live: set[int] = set()   # texts a remaining row still holds whole
        self._live_keys: dict[int, set] = {}
        todo = list(range(len(self.raw)))
        for density, most in ((SPARSE, 1), (DENSE, 256)):
            if not todo or (self.levels and len(todo) <= FINDS_INSTEAD
                            and max(len(self.raw[i]) for i in todo) < LONG_TEXT):
                break
            level = _Level(_anchors([self.raw[i] for i in todo], sample, density, most))
            todo = [i for i in todo if not self._cut(i, level)]
            level.keyset = frozenset(level.keys)
            level.starts = frozenset(key for key, _ in level.first.values())
            self.levels.append(level)
        for i in todo:
            raw = self.raw[i]
            # A short text sits in one cell: the whole string and its ends are enough.
            self.finds[i] = [raw[:WINDOW], *{raw, raw[-WINDOW:]} - {raw[:WINDOW]}]

    def _cut(self, i: int, level: _Level) -> bool:
        # The first and last runs are cut by the text's ends: only whole runs match.
        head, *inner = level.runs(self.raw[i])
        mine = [run for run in inner[:-1] if len(run) >= MIN_KEY]
        if not mine:
            return False
        before = inner[:inner.index(mine[0])]
        level.first[i] = (mine[0], len(head) + 1 + sum(map(len, before)) + len(before))
        mine = set(mine)
        self.keys_of[i] = len(mine)
        for run in mine:
            level.keys.setdefault(run, []).append(i)
        return True

    def _held_by_live_rows(self, n: int, found: set) -> set:
        # Keys also present in rows that stay are not residue.  A few are
        # looked up one by one; many at once cost one pass over the live text.
        if not self.ignore:
            return set()
        if n in self._live_keys:
            return found & self._live_keys[n]
        if len(found) <= LAZY_FINDS:
            return {k for k in found if k in self.ignore}
        level = self.levels[n]
        self._live_keys[n] = level.find(self.ignore)[0]
        return found & self._live_keys[n]

    def search(self, data: bytes) -> dict[int, dict]:
        """For each text seen in ``data``: whether whole, and how many fragments were found."""
        seen: dict[int, dict] = {}
        for n, level in enumerate(self.levels):
            found, starts = level.find(data, level.starts)
            live = self._held_by_live_rows(n, found) if found else set()
            keys_here: dict[int, int] = {}
            for key in found:
                for i in level.keys[key]:
                    keys_here[i] = keys_here.get(i, 0) + 1
                    if key not in live:
                        seen.setdefault(i, {"whole": False, "fragments": 0})["fragments"] += 1
            for i in keys_here.keys() - seen.keys():
                if self.raw[i] in self.ignore:
                    self.live.add(i)
            for i in seen.keys() & keys_here.keys():
                # Only a text whose every key is here can be here whole, and it
                # would start where its first key sits, less that key's offset.
                if keys_here[i] == self.keys_of[i]:
                    key, shift = level.first[i]
                    seen[i]["whole"] = any(data[p - shift:p - shift + len(self.raw[i])] == self.raw[i]
                                           for p in starts.get(key, ()) if p >= shift)
        for i, needles in self.finds.items():
            if i in self.live or all(w not in data for w in needles):
                continue
            if self.ignore and self.raw[i] in self.ignore:
                self.live.add(i)
                continue
            n = sum(1 for w in needles if w in data and not (self.ignore and w in self.ignore))
            if n:
                seen[i] = {"whole": self.raw[i] in data, "fragments": n}
        return seen


def _anchors(raw_texts: list[bytes], sample: bytes, density: float, most: int) -> bytes:
    # Anchors: the byte values most common in the texts, skipping any that
    # would cut the files more often than ``density`` in total, or the texts
    # into runs too short to be keys (CJK lead bytes: every third byte).
    text = b"".join(raw_texts[:2000])[:1 << 18]
    in_text = Counter(text)
    seen = Counter(sample)
    in_file = {b: seen[b] / max(1, len(sample)) for b in in_text}
    chosen, budget, cuts = [], density, IN_TEXT * len(text)
    for b in sorted(in_text, key=in_text.get, reverse=True):
        if len(chosen) < most and in_file[b] <= budget and in_text[b] <= cuts:
            chosen.append(b)
            budget -= in_file[b]
            cuts -= in_text[b]
    # Every byte of the texts is common in the files: the rarest one will do.
    return bytes(chosen or [min(in_text, key=in_file.get, default=0x65)])


def file_sample(paths, size: int = 1 << 18) -> bytes:
    """Up to ``size`` bytes taken evenly from the files, to choose anchors."""
    parts = []
    for p in paths:
        try:
            with open(p, "rb") as fh:
                n = fh.seek(0, 2)
                for k in range(16):
                    fh.seek(n * k // 16)
                    parts.append(fh.read(size // 16 // max(1, len(paths))))
        except FileNotFoundError:
            continue
    return b"".join(parts)


def scan(paths, texts, ignore: bytes = b"", progress=lambda done, total: None):
    """Search every file in ``paths`` for every text.

    Returns ({sha256: TextHits}, [(path, size) of the files actually read]);
    a side file that vanished before it could be read is simply not listed.
    """
    paths = [Path(p) for p in paths]
    needles = Needles(texts, file_sample(paths), ignore)
    hits = {sha256_text(t): TextHits(sha256_text(t), len(t.encode("utf-8", "surrogatepass")))
            for t in texts if t}
    keys = [hashlib.sha256(r).hexdigest() for r in needles.raw]
    total = sum(size_of(p) or 0 for p in paths) or 1
    done, scanned = 0, []
    for p in paths:
        data = read_or_none(p)
        if data is None:
            continue
        scanned.append((p, len(data)))
        for i, hit in needles.search(data).items():
            hits[keys[i]].files[str(p)] = hit
        done += len(data)
        progress(min(done, total), total)
    for i in needles.live:
        hits[keys[i]].still_stored = not hits[keys[i]].files
    return hits, scanned
