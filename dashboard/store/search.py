"""agentao's ``/memory search`` (contract §6) over a file's snapshot, answered in Python, exactly.

Each row has a "haystack": its searched fields folded as SQLite's LOWER folds them,
joined by ``SEP``.  A plain needle is ``needle in haystack``; a wildcard one is matched by
``like.Like`` (linear, no regex), per field when a match spans two.  "Odd" rows (NUL or
``SEP`` in a field, non-text, JSON json_each reads otherwise) go through agentao's own
predicate in a private in-memory SQLite database.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from itertools import repeat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..records import Memory

from .like import Like

_DECODER = json.JSONDecoder()
SEP = "\x1f"  # between a haystack's fields
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# A JSON column that is not valid JSON would make json_each fail the whole query.
_TAGS = "json_each(CASE WHEN json_valid(m.tags_json) THEN m.tags_json ELSE '[]' END)"
_KEYWORDS = "json_each(CASE WHEN json_valid(m.keywords_json) THEN m.keywords_json ELSE '[]' END)"
# agentao's predicate, pattern bound five times.
_PREDICATE = (
    "(LOWER(m.title) LIKE ? OR LOWER(m.content) LIKE ? OR LOWER(m.key_normalized) LIKE ?"
    f" OR EXISTS (SELECT 1 FROM {_TAGS} t WHERE LOWER(t.value) LIKE ?)"
    f" OR EXISTS (SELECT 1 FROM {_KEYWORDS} k WHERE LOWER(k.value) LIKE ?))"
)


def ascii_lower(text: str) -> str:
    """``text`` folded as SQLite's LOWER folds it: ASCII letters only."""
    # str.lower is many times faster, and the same on ASCII text (isascii is O(1)).
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def json_strings(raw: Any) -> tuple[list[str], bool]:
    """String elements of a JSON array column, and whether that is all it held (anything else
    json_each renders otherwise: the row is "odd")."""
    try:
        # agentao writes compact JSON, which raw_decode reads without json.loads'
        # wrapping; anything else is read again.
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


def haystack(m: Memory) -> str:
    """The fields /memory search looks at, ASCII-lower-cased and joined by ``SEP``."""
    parts = [f if isinstance(f, str) else "" for f in (m.title, m.content, m.key_normalized)]
    return ascii_lower(SEP.join(parts + list(m.tags) + list(m.keywords)))


def _wildcard(needle: str) -> Callable[[str], bool]:
    """A test of one plain row's haystack for a needle with ``%``, ``_``, NUL or ``SEP``."""
    exact = Like(f"%{needle}%")  # SQLite's pattern; cut at a NUL, it may lose its last %
    loose = exact if exact.floating else Like(f"%{needle.split(chr(0), 1)[0]}%")
    search, matches = loose.search, exact.matches
    core = exact.literal()
    if core is not None and SEP not in core:
        return lambda text: core in text  # "%word%": a plain needle after all

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
                return True  # placed inside one field
            pos = last + 1
        return False

    return hit


def matching(haystacks: list[str], odd: dict[int, tuple[Any, ...]], query: str) -> list[bool]:
    """Per row (live or not), whether agentao's search for ``query`` matches it. ``haystacks``: one per row;
    ``odd``: position -> (title, content, key, tags_json, keywords_json) as stored, for the rows the haystack
    cannot decide."""
    needle = query.lower()
    wild = "%" in needle or "_" in needle or "\0" in needle or SEP in needle
    hits = list(map(_wildcard(needle), haystacks)) if wild else [needle in t for t in haystacks]
    if odd:
        for i in odd:
            hits[i] = False
        for i in _odd_hits(odd, needle):
            hits[i] = True
    return hits


def _odd_hits(odd: dict[int, tuple[Any, ...]], needle: str) -> list[int]:
    # agentao's own predicate, run by SQLite on the odd rows' stored values.
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(
            "CREATE TABLE m (pos INTEGER PRIMARY KEY, title, content, key_normalized,"
            " tags_json, keywords_json)"
        )
        conn.executemany(
            "INSERT INTO m VALUES (?, ?, ?, ?, ?, ?)", [(i, *values) for i, values in odd.items()]
        )
        return [r[0] for r in conn.execute(f"SELECT m.pos FROM m WHERE {_PREDICATE}", [f"%{needle}%"] * 5)]
    finally:
        conn.close()
