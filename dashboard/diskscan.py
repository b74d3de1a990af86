"""Looking at a store's files as bytes: the WAL header and frames, copies beside it,
and a search of raw bytes for texts that should be gone.

The search is built for "1,000 texts in a 100 MB file" without a C extension.
Text longer than a page is split over overflow pages, so a text is looked for
as pieces, not only as one string.  The pieces are content-defined: a few
"anchor" byte values (common in the texts, rationed in the files) are mapped
to one separator with ``bytes.translate`` and both sides are ``split`` on it,
all in C.  A run of a text between two anchors is then found in the file by a
set intersection wherever it sits, with no per-offset Python loop.  A run of
MIN_KEY bytes or more counts as a fragment.  Texts too short for a run are
searched whole (and by their first and last 32 bytes) with ``bytes.find``.
The search can only look for texts it is given.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .sidefiles import read_or_none, size_of

WINDOW = 32
MIN_KEY = 16
LAZY_FINDS = 16
MAX_WHOLE_CHECKS = 10   # per file; beyond that "whole" is None (not checked)
DENSITIES = (1 / 32, 1 / 10)   # anchors per byte of file: runs of ~32, then ~10 bytes


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
        self.levels: list[tuple[bytes, dict[bytes, list[int]]]] = []
        self.keys_of: dict[int, int] = {}
        self.finds: dict[int, list[bytes]] = {}
        self.live: set[int] = set()   # texts a remaining row still holds whole
        self._live_keys: dict[int, set] = {}
        todo = list(range(len(self.raw)))
        for density in DENSITIES:
            if not todo:
                break
            table = _anchor_table([self.raw[i] for i in todo], sample, density)
            keys: dict[bytes, list[int]] = {}
            left = []
            for i in todo:
                # The first and last runs are cut by the text's ends: only whole runs match.
                mine = {p for p in _runs(self.raw[i], table)[1:-1] if len(p) >= MIN_KEY}
                if mine:
                    self.keys_of[i] = len(mine)
                    for key in mine:
                        keys.setdefault(key, []).append(i)
                else:
                    left.append(i)
            self.levels.append((table, keys))
            todo = left
        for i in todo:
            raw = self.raw[i]
            if ignore and raw in ignore:
                self.live.add(i)
            else:
                # A short text sits in one cell: the whole string and its ends are enough.
                self.finds[i] = [w for w in {raw, raw[:WINDOW], raw[-WINDOW:]}
                                 if not (ignore and w in ignore)]

    def _held_by_live_rows(self, level: int, found: set) -> set:
        # Keys also present in rows that stay are not residue.  A few are
        # looked up one by one; many at once cost one pass over the live text.
        if not self.ignore:
            return set()
        if level in self._live_keys:
            return found & self._live_keys[level]
        if len(found) <= LAZY_FINDS:
            return {k for k in found if k in self.ignore}
        table, keys = self.levels[level]
        self._live_keys[level] = keys.keys() & _runs(self.ignore, table)
        return found & self._live_keys[level]

    def search(self, data: bytes) -> dict[int, dict]:
        """For each text seen in ``data``: whether whole, and how many fragments were found."""
        seen: dict[int, dict] = {}
        for level, (table, keys) in enumerate(self.levels):
            found = keys.keys() & _runs(data, table) if keys else set()
            live = self._held_by_live_rows(level, found) if found else set()
            for key in found - live:
                for i in keys[key]:
                    seen.setdefault(i, {"whole": False, "fragments": 0})["fragments"] += 1
            for i in {i for key in live for i in keys[key]} - seen.keys():
                if self.raw[i] in self.ignore:
                    self.live.add(i)
        for i, needles in self.finds.items():
            n = sum(1 for w in needles if w in data)
            if n:
                seen[i] = {"whole": self.raw[i] in needles and self.raw[i] in data, "fragments": n}
        checks = MAX_WHOLE_CHECKS
        for i, hit in seen.items():
            # Looking for the whole string costs a pass over the file: only when
            # every key of the text was found is it worth one, and only so many.
            if i in self.keys_of and hit["fragments"] >= self.keys_of[i]:
                hit["whole"] = (self.raw[i] in data) if checks > 0 else None
                checks -= 1
        return seen


def _runs(data: bytes, table: bytes) -> list[bytes]:
    return data.translate(table).split(b"\n")


def _anchor_table(raw_texts: list[bytes], sample: bytes, density: float) -> bytes:
    # Anchors: the byte values most common in the texts, skipping any that
    # would cut the files more often than ``density`` in total.
    text = b"".join(raw_texts[:2000])[:1 << 18]
    in_text = {b: n / len(text) for b, n in Counter(text).items()}
    seen = Counter(sample)
    in_file = {b: seen[b] / max(1, len(sample)) for b in in_text}
    chosen, budget = [], density
    for b in sorted(in_text, key=in_text.get, reverse=True):
        if b != 0x0A and in_file[b] <= budget:
            chosen.append(b)
            budget -= in_file[b]
    chosen = bytes(chosen or b"e")
    return bytes.maketrans(chosen, b"\n" * len(chosen))


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
