"""SQLite's LIKE, matched in time linear in the text, without a regex (a needle comes from a URL).

A pattern is cut at its ``%`` into pieces, each placed leftmost after the one before (right
for LIKE): plain pieces with ``str.find``, pieces with ``_`` from their longest plain runs
and then with bitmasks (one bit-byte per text position, a bounded number of C passes).
The caller folds ASCII case on both sides; like SQLite, text and pattern end at a NUL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import itemgetter

# A piece with "_" inside tries this many candidates from each of its (up to)
# three longest plain runs, the longest first, before the bitmasks: a rare run
# ends the search in a few finds; when every run is frequent, the masks cost
# a few passes over the text whatever it holds.
_MIN_CANDIDATES = 8
_ANCHORS = 3
_SHORT_CANDIDATES = 2  # for a run of one character, which a text holds everywhere or nowhere


class _Wild:
    """A piece starting and ending with a plain character, with ``_`` inside."""

    def __init__(self, piece: str) -> None:
        self.size = len(piece)
        self.places = [i for i, ch in enumerate(piece) if ch != "_"]
        self.chars = tuple(piece[i] for i in self.places)
        self.check: Callable[[str], object] = itemgetter(*self.places)
        runs = list(_runs(piece))
        first: dict[str, int] = {}
        for at, run in sorted(runs, key=lambda r: -len(r[1])):
            first.setdefault(run, at)
        self.anchors = [(at, run) for run, at in first.items()]
        distinct = sorted(set(self.chars))
        self.latin = all(ord(c) < 256 for c in distinct)
        self.plain_code = {c: ord(c) for c in distinct}
        # A text with characters past Latin-1 is encoded with errors="replace",
        # which makes each of them "?".  Then the piece's own "?" and characters
        # past Latin-1 are first translated to bytes no other piece character
        # has, and the text's own characters of those bytes to one past Latin-1.
        odd = [c for c in distinct if ord(c) > 255 or c == "?"]
        free = [b for b in range(1, 256) if chr(b) not in distinct and b != ord("?")]
        self.remap: dict[int, str] | None
        self.odd, self.odd_code, self.remap = bool(odd), dict(self.plain_code), {}
        if len(odd) <= len(free):
            sentinel = next(chr(c) for c in range(0x10FFFF, 0, -1) if chr(c) not in distinct)
            for c, b in zip(odd, free):
                self.odd_code[c] = b
                self.remap[ord(c)] = chr(b)
                self.remap[b] = sentinel
        else:  # no bytes to spare (hundreds of distinct characters): candidates only
            self.remap = None
        self.groups = [distinct[i : i + 8] for i in range(0, len(distinct), 8)]
        # The masks' shifts, each character's first place first, then each one's
        # second...: where a text repeats one character, the others end it soon.
        by_char: dict[str, list[int]] = {}
        for place, ch in zip(self.places, self.chars):
            by_char.setdefault(ch, []).append(place)
        turns = [(k, ch, place) for ch, places in by_char.items() for k, place in enumerate(places)]
        self.steps = [(divmod(distinct.index(ch), 8), place) for _k, ch, place in sorted(turns)]
        self.others = [run for _at, run in self.anchors[_ANCHORS:]]
        self.tables = {
            id(code): [_table(code, g) for g in self.groups] for code in (self.plain_code, self.odd_code)
        }

    def at(self, text: str, i: int) -> bool:
        """Whether the piece matches ``text`` at ``i`` (which leaves room for it)."""
        return self.check(text[i : i + self.size]) == self.chars

    def find(self, text: str, start: int, end: int) -> int:
        """Leftmost i >= start with the piece at ``text[i:i+size]`` and i + size <= end; or -1."""
        size, check, chars, find = self.size, self.check, self.chars, text.find
        if self.remap is None:  # no masks: the longest run's candidates, all of them
            anchors = [(lead, run, 1 << 62) for lead, run in self.anchors[:1]]
        else:
            anchors = [
                (lead, run, _SHORT_CANDIDATES if len(run) == 1 else _MIN_CANDIDATES)
                for lead, run in self.anchors[:_ANCHORS]
            ]
        for lead, run, tries in anchors:
            last = end - size + lead + len(run)
            for _ in range(min(tries, _MIN_CANDIDATES) if self.remap is not None else tries):
                if end - start < size:  # (and find's bound above stays >= 0)
                    return -1
                i = find(run, start + lead, last) - lead
                if i < -lead:
                    return -1  # no more of this run: no more of the piece
                if check(text[i : i + size]) == chars:
                    return i
                start = i + 1
        if end - start < size or any(find(r, start, end) < 0 for r in self.others):
            return -1
        return self._masked(text, start, end)

    def _masked(self, text: str, start: int, end: int) -> int:
        # A translation gives each of up to eight piece characters a bit: byte k
        # of the int has bit b set where window[k] is character b.  Shifted right
        # by 8 * place + b for each plain place and and-ed, bit 0 of byte k stays
        # set where the whole piece matches at k (the other bits are noise).
        window = text[start:end]
        if len(window) < self.size:
            return -1
        encoded = self._bytes(window)
        if encoded is None:
            return -1
        data, code = encoded
        masks = [int.from_bytes(data.translate(t), "little") for t in self.tables[id(code)]]
        hits = -1
        for (g, bit), place in self.steps:
            hits &= masks[g] >> (8 * place + bit)
            if not hits:
                return -1
        hits &= int.from_bytes(b"\x01" * len(window), "little")
        return start + ((hits & -hits).bit_length() - 1) // 8 if hits else -1

    def _bytes(self, window: str) -> tuple[bytes, dict[str, int]] | None:
        """The window as one byte per character, and the byte of each piece
        character; None when the piece cannot be in the window."""
        try:
            data = window.encode("latin-1")
        except UnicodeEncodeError:
            if not self.odd:
                return window.encode("latin-1", "replace"), self.plain_code
            assert self.remap is not None  # the masks (and so this) only where bytes were to spare
            return window.translate(self.remap).encode("latin-1", "replace"), self.odd_code
        return (data, self.plain_code) if self.latin else None


def _table(code: dict[str, int], group: list[str]) -> bytes:
    # bytes.translate table: the byte of the group's b-th character -> 1 << b, all others -> 0.
    table = bytearray(256)
    for b, ch in enumerate(group):
        if code[ch] < 256:  # (a character past Latin-1 in the plain code is never looked for)
            table[code[ch]] = 1 << b
    return bytes(table)


def _runs(piece: str) -> Iterator[tuple[int, str]]:
    # (offset, text) of each run of plain characters in a piece.
    i = 0
    for part in piece.split("_"):
        if part:
            yield i, part
        i += len(part) + 1


class _Piece:
    """What lies between two ``%``: fixed leading and trailing ``_`` and a core."""

    def __init__(self, piece: str) -> None:
        core = piece.strip("_")
        self.lead = len(piece) - len(piece.lstrip("_"))
        self.trail = len(piece) - len(core) - self.lead
        self.core = core
        self.wild = _Wild(core) if "_" in core else None
        self.times = 1  # several pieces in a row of this plain text (see ``Like``)

    def place(self, text: str, pos: int, end: int) -> tuple[int, int] | None:
        """Leftmost (start, stop) of the piece in ``text[pos:end]``, or None."""
        if pos + len(self) > end:  # (and find's bound below stays >= 0)
            return None
        if not self.core:
            return pos, pos + len(self)
        last = end - self.trail
        if self.times > 1:
            # The first ``times`` occurrences, as many finds would place them, in one pass.
            parts = text[pos:end].split(self.core, self.times)
            return None if len(parts) <= self.times else (pos + len(parts[0]), end - len(parts[-1]))
        if self.wild is None:
            i = text.find(self.core, pos + self.lead, last)
        else:
            i = self.wild.find(text, pos + self.lead, last)
        return None if i < 0 else (i - self.lead, i + len(self.core) + self.trail)

    def at(self, text: str, i: int) -> bool:
        """Whether the piece matches exactly at ``i`` (room checked by the caller)."""
        j = i + self.lead
        if self.wild is None:
            return text.startswith(self.core, j)
        return self.wild.at(text, j)

    def __len__(self) -> int:
        return self.lead + len(self.core) * self.times + self.trail


def _merged(parts: list[str]) -> list[str]:
    """The pieces between ``%`` without empty ones, a piece of only ``_`` joined
    to the next (or else the one before) as leading (trailing) ``_``: the same
    matches, and the span found is no wider than it must be."""
    out: list[str] = []
    carry = ""
    for part in parts:
        if part.strip("_"):
            out.append(carry + part)
            carry = ""
        else:
            carry += part
    if carry:
        if out:
            out[-1] += carry
        else:
            out.append(carry)
    return out


class Like:
    """One LIKE pattern: ``matches(text)`` is ``text LIKE pattern`` on case-folded input."""

    def __init__(self, pattern: str) -> None:
        pattern = pattern.split("\0", 1)[0]
        parts = pattern.split("%")
        self.whole = _Piece(parts[0]) if len(parts) == 1 else None
        self.head = _Piece(parts[0])
        self.tail = _Piece(parts[-1])
        self.middle: list[_Piece] = []
        for part in _merged(parts[1:-1]):
            piece, before = _Piece(part), self.middle[-1] if self.middle else None
            if (
                before is not None
                and before.wild is None
                and part == before.core
                and len(before) == len(part) * before.times
            ):
                before.times += 1  # "%z%z%z%…": one split, not a find per piece
            else:
                self.middle.append(piece)
        self.floating = not parts[0] and not parts[-1]  # "%...%": matches anywhere

    def matches(self, text: str) -> bool:
        text = text.split("\0", 1)[0] if "\0" in text else text
        if self.whole is not None:
            return len(text) == len(self.whole) and self.whole.at(text, 0)
        n, head, tail = len(text), self.head, self.tail
        if len(head) + len(tail) > n or not head.at(text, 0):
            return False
        end = n - len(tail)
        if not tail.at(text, end):
            return False
        return self._middle(text, len(head), end) is not None

    def search(self, text: str, pos: int = 0) -> tuple[int, int] | None:
        """For a ``%...%`` pattern: the span of the leftmost placement of its pieces in ``text[pos:]`` (NUL
        not special), or None when there is none. No placement ends before this one's end (each piece is
        placed first where it can be), so none lies inside a part of the text that ends sooner."""
        assert self.floating
        return self._middle(text, pos, len(text))

    def _middle(self, text: str, pos: int, end: int) -> tuple[int, int] | None:
        first = pos
        for n, piece in enumerate(self.middle):
            span = piece.place(text, pos, end)
            if span is None:
                return None
            if n == 0:
                first = span[0]
            pos = span[1]
        return first, pos

    def literal(self) -> str | None:
        """For ``%text%`` with no ``_`` in ``text``: ``text``; else None."""
        if not self.floating or len(self.middle) != 1:
            return None
        piece = self.middle[0]
        return piece.core if piece.wild is None and len(piece) == len(piece.core) else None  # (times 1)
