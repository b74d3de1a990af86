"""agentao's ``/memory search`` over the in-memory copy, answered mostly in Python.

agentao's predicate (contract §6) is ``LOWER(field) LIKE '%' || query.lower() || '%'``
over title, content, key and every tag and keyword, which no index serves.  The
copy keeps, per row, one "haystack": those fields lower-cased as SQLite's
LOWER does (ASCII only) and joined by newlines.  For a query without ``%``,
``_`` or a newline, ``needle in haystack`` *is* agentao's predicate on a row
whose tags and keywords are plain strings: LIKE folds ASCII case only, the
haystack is ASCII-folded, the needle is lower-cased, and a needle without a
newline cannot span two fields.  Wildcard queries and "odd" rows (JSON that
SQLite's json_each renders differently from Python) go through agentao's
exact predicate in SQL, on just those rows.

The result, the exact set of matching rows, is remembered per copy version,
so paging, re-sorting and re-filtering one search reuse it.
"""

from __future__ import annotations

import json
import re

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
    return text.translate(_ASCII_LOWER)


def json_strings(raw) -> tuple[list[str], bool]:
    """String elements of a JSON array column, and whether that is all it held.

    agentao writes arrays of strings.  Anything else (numbers, nulls, nested
    values, text that is not JSON) is rendered differently by SQLite's
    json_each than by Python, so such rows are marked "odd" and always left to
    the exact SQL predicate.
    """
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return [], False
    if not isinstance(value, list):
        return [], False
    strings = [v for v in value if isinstance(v, str)]
    return strings, len(strings) == len(value)


def haystack(row, tags: list[str], plain_tags: bool) -> tuple[str, bool]:
    """The fields /memory search looks at, ASCII-lower-cased and joined by newlines;
    and whether the row is plain (see ``json_strings``).

    A tag or keyword already contained in title, content or key is left out:
    whatever a LIKE ``%...%`` pattern finds in it, it finds in the field that
    contains it too, and most keywords are words of those fields.
    """
    keywords, plain_keywords = json_strings(row["keywords_json"])
    base = ascii_lower("\n".join((row["title"] or "", row["content"] or "", row["key_normalized"] or "")))
    extra = [folded for folded in map(ascii_lower, [*tags, *keywords]) if folded not in base]
    return "\n".join([base, *extra]), plain_tags and plain_keywords


def like_matcher(query: str):
    """A test on a haystack for agentao's predicate, and whether it is exact.

    A query with no wildcard and no newline is a plain substring test, exact
    on plain rows (see the module docstring).  Wildcards give a regex that may
    also match across fields: a superset, to be checked in SQL.
    """
    needle = query.lower()
    if "%" not in needle and "_" not in needle and "\n" not in needle:
        return (lambda hay: needle in hay), True
    # The haystack is ASCII-folded and the needle lower-cased, so a plain regex
    # of the wildcards follows LIKE's case rule.
    rx = re.compile("".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch)
                            for ch in needle), re.S)
    return (lambda hay: rx.search(hay) is not None), False


def matching_rids(conn, haystacks: dict[int, tuple[str, bool]], query: str) -> list[int]:
    """Every copy row (live or not) that agentao's search for ``query`` matches, by rid, ascending.

    ``haystacks`` maps rid -> (haystack, plain).  Rows the haystack test cannot
    decide alone are checked with agentao's predicate on the copy ``conn``.
    """
    match, exact = like_matcher(query)
    sure: list[int] = []
    unsure: list[int] = []
    for rid, (hay, plain) in haystacks.items():
        if not plain:
            unsure.append(rid)
        elif match(hay):
            (sure if exact else unsure).append(rid)
    if unsure:
        pattern = f"%{query.lower()}%"
        sure.extend(r[0] for r in conn.execute(
            "SELECT m.rid FROM memories m WHERE m.rid IN (SELECT value FROM json_each(?))"
            f" AND {_PREDICATE}", [json.dumps(unsure)] + [pattern] * 5))
    return sorted(sure)
