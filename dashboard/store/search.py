"""agentao's ``/memory search`` over the in-memory copy, answered mostly in Python.

agentao's predicate (contract §6) is ``LOWER(field) LIKE '%' || query.lower() || '%'``
over title, content, key and every tag and keyword, which no index serves.  The
copy keeps, per row, one "haystack": those fields lower-cased as SQLite's
LOWER does (ASCII only) and joined by ``SEP`` (U+001F, the unit separator).
A row holding ``SEP`` or NUL in a field (SQLite's LIKE stops at a NUL), or
JSON that SQLite's json_each renders differently from Python, is "odd": it
always goes through agentao's exact predicate in SQL, on just those rows.  On
the other, "plain" rows the haystack decides alone.  For a query without
``%``, ``_``, NUL or ``SEP``, ``needle in haystack`` *is* agentao's predicate:
LIKE folds ASCII case only, the haystack is ASCII-folded, the needle is
lower-cased, and the needle cannot span two fields.  A wildcard query is
matched by ``like.Like`` (linear in the text, never a regex built from the
query): on the haystack first, then, when the match found spans two fields,
on each field.

The haystacks are not read for most searches, though: a needle of one word
(no whitespace) is answered exactly by the word index in ``terms``, and a
needle of several words reads only the haystacks holding all its words, when
those are few.

The latest search's rows are kept until the copy changes, so paging,
re-sorting and re-filtering one search reuse them (``LastSearch``).
"""

from __future__ import annotations

import json
from itertools import chain, compress, repeat

from .like import Like
from .terms import TermIndex, as_mask, byte_marks, words

# Searches matching fewer than one row in _SPARSE are driven from their rows.
_SPARSE = 4
# The longest words of a needle whose rows narrow a search down (each costs a word-index look-up).
_NARROWING = 3
_DECODER = json.JSONDecoder()
SEP = "\x1f"   # between a haystack's fields: whitespace to str.split, so to the word index
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# A JSON column that is not valid JSON would make json_each fail the whole query.
_TAGS = "json_each(CASE WHEN json_valid(m.tags_json) THEN m.tags_json ELSE '[]' END)"
_KEYWORDS = "json_each(CASE WHEN json_valid(m.keywords_json) THEN m.keywords_json ELSE '[]' END)"
# agentao's predicate, pattern bound five times.
_PREDICATE = ("(LOWER(m.title) LIKE ? OR LOWER(m.content) LIKE ? OR LOWER(m.key_normalized) LIKE ?"
              f" OR EXISTS (SELECT 1 FROM {_TAGS} t WHERE LOWER(t.value) LIKE ?)"
              f" OR EXISTS (SELECT 1 FROM {_KEYWORDS} k WHERE LOWER(k.value) LIKE ?))")


def ascii_lower(text: str) -> str:
    """``text`` folded as SQLite's LOWER folds it: ASCII letters only."""
    # str.lower is many times faster, and the same on ASCII text (isascii is O(1)).
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def json_strings(raw) -> tuple[list[str], bool]:
    """String elements of a JSON array column, and whether that is all it held.

    agentao writes arrays of strings.  Anything else (numbers, nulls, nested
    values, text that is not JSON) is rendered differently by SQLite's
    json_each than by Python, so such rows are marked "odd" and always left to
    the exact SQL predicate.
    """
    try:
        # agentao writes compact JSON, which raw_decode reads without json.loads'
        # wrapping (a fifth of loading 100,000 rows); anything else is read again.
        value, end = _DECODER.raw_decode(raw)
        if end != len(raw):
            value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        try:
            value = json.loads(raw)
        except (TypeError, ValueError, RecursionError):
            return [], False
    if not isinstance(value, list):
        return [], False
    if all(map(isinstance, value, repeat(str))):
        return value, True
    return [v for v in value if isinstance(v, str)], False


def haystack(row, tags: list[str], plain_tags: bool) -> tuple[str, bool]:
    """The fields /memory search looks at, ASCII-lower-cased and joined by ``SEP``;
    and whether the row is plain (see the module's docstring and ``json_strings``)."""
    keywords, plain_keywords = json_strings(row["keywords_json"])
    fields = [row["title"], row["content"], row["key_normalized"]]
    plain = plain_tags and plain_keywords and all(isinstance(f, str) for f in fields)
    parts = [f if isinstance(f, str) else "" for f in fields] + tags + keywords
    text = ascii_lower(SEP.join(parts))
    if plain and ("\0" in text or text.count(SEP) != len(parts) - 1):
        plain = False
    return text, plain


def _wildcard(needle: str):
    """A test of one plain row's haystack for a needle with ``%``, ``_``, NUL or ``SEP``."""
    exact = Like(f"%{needle}%")      # SQLite's pattern; cut at a NUL, it may lose its last %
    loose = exact if exact.floating else Like(f"%{needle.split(chr(0), 1)[0]}%")
    search, matches = loose.search, exact.matches
    core = exact.literal()
    if core is not None and SEP not in core:
        return lambda text: core in text     # "%word%": a plain needle after all

    def fields(text: str) -> bool:
        return search(text) is not None and any(map(matches, text.split(SEP)))
    if loose is not exact:
        return fields

    def hit(text: str) -> bool:
        # A placement across fields ends sooner than any inside a field it
        # spans (like.Like.search): look again from the field it ends in.
        pos = 0
        while (span := search(text, pos)) is not None:
            last = text.rfind(SEP, *span)
            if last < 0:
                return True      # placed inside one field
            pos = last + 1
        return False
    return hit


def _matching(conn, terms: TermIndex, hay: dict[int, str], odd: set[int], query: str,
              scan) -> tuple[int, list]:
    """Every copy row (live or not) that agentao's search for ``query`` matches.

    Returned as a mask (see ``terms``) and a list of rids (which may repeat);
    the rows are their union.  A one-word needle is answered by the word
    index ``terms``.  Any other needle reads the haystacks holding its longest
    words (pieces between whitespace, ``_`` and ``%``: each is inside one word
    of a haystack that matches), when those are few, else every haystack
    (``scan()``: rids and haystacks as two lists).  The rows the haystack
    cannot decide (``odd``) are checked with agentao's predicate on the copy
    ``conn``.
    """
    needle = query.lower()
    wild = "%" in needle or "_" in needle or "\0" in needle or SEP in needle
    if not wild and needle.split() == [needle]:
        mask, sure = terms.rows_with(needle)
        sure = [rid for rids in sure for rid in rids]
    else:
        common = -1
        pieces = sorted(words(needle.split("\0", 1)[0]), key=lambda w: (-len(w), w))
        for piece in pieces[:_NARROWING]:
            dense, rows = terms.rows_with(piece)
            common &= int.from_bytes(byte_marks(dense, chain.from_iterable(rows), terms.top), "little")
        if common >= 0 and common.bit_count() * _SPARSE < len(hay):
            rids = list(compress(range(terms.top), common.to_bytes(terms.top, "little")))
            texts = [hay[rid] for rid in rids]
        else:   # many hold every word (one flat pass reads faster), or the needle has none
            rids, texts = scan()
        hit = _wildcard(needle) if wild else None
        mask, sure = 0, ([rid for rid, text in zip(rids, texts) if needle in text] if hit is None
                         else list(compress(rids, map(hit, texts))))
    if odd:
        mask &= ~as_mask(sorted(odd))
        sure = [rid for rid in sure if rid not in odd]
        sure.extend(r[0] for r in conn.execute(
            "SELECT m.rid FROM memories m WHERE m.rid IN (SELECT value FROM json_each(?))"
            f" AND {_PREDICATE}", [json.dumps(sorted(odd))] + [f"%{needle}%"] * 5))
    return mask, sure


class LastSearch:
    """The copy's most recent search, kept until the copy changes.

    Few hits go into the temp table ``hits`` (SQLite then drives from them);
    many hits become a bitmap blob indexed by rid, tested in the query with
    ``substr`` — filling a table with tens of thousands of rows costs more
    than the whole rest of the request.  Many hits are also kept as a mask
    (see ``terms``), which counts them per file without SQL.
    """

    def __init__(self) -> None:
        self._rows: tuple = (None, [], [])   # (generation, rids, haystacks): flat lists scan fastest
        self._key: tuple | None = None
        self._bitmap: bytes | None = None
        self._mask = 0

    def hits(self, conn, terms: TermIndex, haystacks: dict[int, str], odd: set[int],
             generation: int, query: str) -> bytes | None:
        """The bitmap of the rows matching ``query``; None when they are in ``hits`` instead.

        ``terms`` indexes the haystacks ``haystacks`` (rid -> haystack),
        ``odd`` holds the rows that are not plain, ``generation`` is the copy's
        version.
        """
        if self._key == (generation, query):
            return self._bitmap

        def scan():
            if self._rows[0] != generation:
                self._rows = (generation, list(haystacks), list(haystacks.values()))
            return self._rows[1:]
        mask, found = _matching(conn, terms, haystacks, odd, query, scan)
        bitmap = None
        if mask or found and len(found) * _SPARSE >= len(haystacks):
            bitmap = bytes(byte_marks(mask, found, terms.top))
            mask = int.from_bytes(bitmap, "little")
        with conn:
            conn.execute("DELETE FROM hits")
            if bitmap is None:
                conn.execute("INSERT OR IGNORE INTO hits SELECT value FROM json_each(?)",
                             (json.dumps(found),))
        self._key, self._bitmap, self._mask = (generation, query), bitmap, mask
        return bitmap

    def count(self, terms: TermIndex, paths, live_only: bool) -> int | None:
        """How many rows of these files the latest search matched (only live ones,
        with ``live_only``); None when its rows are few: SQL counts those well."""
        if self._bitmap is None:
            return None
        return (self._mask & terms.rows_of(paths, live_only)).bit_count()
