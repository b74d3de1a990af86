"""agentao's ``/memory search`` (contract §6) over a file's snapshot, exactly.

A plain needle (no ``%``, ``_``, NUL or ``SEP``) is agentao's predicate as
``needle in haystack``: each row's searched fields folded as SQLite's LOWER
folds them, joined by ``SEP``.  A wildcard needle, and every "odd" row (NUL or
``SEP`` in a field, a non-text field, JSON that json_each reads differently),
go through agentao's own predicate in a private in-memory SQLite database.
"""

from __future__ import annotations

import json
import sqlite3
from itertools import repeat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..records import Memory
    from .snapshot import FileRows

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
    """String elements of a JSON array column, and whether that is all it held.

    agentao writes arrays of strings.  Anything else (numbers, nulls, nested
    values, text that is not JSON) is rendered differently by SQLite's
    json_each than by Python, so such rows are "odd" and left to SQLite.
    """
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


def matching(snap: FileRows, query: str) -> list[bool]:
    """Per row of ``snap`` (live or not), whether agentao's search for ``query`` matches it."""
    needle = query.lower()
    if "%" in needle or "_" in needle or "\0" in needle or SEP in needle:
        # A wildcard: agentao's own LIKE (linear in the text) over every row.
        odd = {i: snap.odd.get(i) or _stored(m) for i, m in enumerate(snap.rows)}
        hits = [False] * len(snap.rows)
    else:
        odd, hits = snap.odd, [needle in t for t in snap.haystacks]
        for i in odd:
            hits[i] = False
    for i in _odd_hits(odd, needle):
        hits[i] = True
    return hits


def _stored(m: Memory) -> tuple[Any, ...]:
    # A plain row's searched columns as json_each reads them (the same strings).
    return (m.title, m.content, m.key_normalized, json.dumps(m.tags), json.dumps(m.keywords))


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
