"""sqlite3 rows -> records, tolerant of hand edits: a BLOB is read as UTF-8 text (invalid
bytes replaced) and a JSON column that cannot be read is shown as its raw text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import fields
from functools import partial
from typing import Any, TypeVar

from ..records import Event, Memory, ReviewItem, Summary

# A row as sqlite3 gives it, or as a dict once a BLOB in it was read as text.
RowLike = sqlite3.Row | dict[str, Any]


def as_text(value: Any) -> Any:
    """``value`` as stored, except bytes (a BLOB a hand edit left), read as UTF-8 text."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def whole_number(raw: Any) -> int | None:
    """``raw`` (a stored counter or a request value) as an int, or None unless it is 1 to 18
    ASCII digits: ``str.isdigit`` also accepts "²", which ``int`` refuses."""
    raw = as_text(raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw if raw >= 0 else None
    if isinstance(raw, str) and 0 < len(raw) <= 18 and raw.isascii() and raw.isdigit():
        return int(raw)
    return None


def text_select(columns: Iterable[str]) -> str:
    """A SELECT list of ``columns`` in which a BLOB is read as TEXT, done by SQLite in C
    (a bulk read of 100,000 rows must not pay a Python call per value)."""
    return ", ".join(
        f"CASE WHEN typeof({c}) = 'blob' THEN CAST({c} AS TEXT) ELSE {c} END AS {c}" for c in columns
    )


def _plain(row: RowLike) -> RowLike:
    # The membership test runs in C; only a row that holds a BLOB pays for a copy.
    if bytes in map(type, row):
        return {k: as_text(row[k]) for k in row.keys()}  # noqa: SIM118 (sqlite3.Row iterates values)
    return row


def decode_list(raw: Any) -> tuple[str, ...]:
    """A JSON array column as a tuple of strings; anything else as one raw string."""
    raw = as_text(raw)
    try:
        value = json.loads(raw) if isinstance(raw, str) else []
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the stack
        return (str(raw),)
    if not isinstance(value, list):
        return (str(raw),)
    out = []
    for v in value:
        try:
            out.append(v if isinstance(v, str) else json.dumps(v))
        except RecursionError:
            return (str(raw),)
    return tuple(out)


R = TypeVar("R", Memory, Summary, ReviewItem, Event)


def _columns(cls: type) -> tuple[list[str], list[str]]:
    # A record's fields read as they are, and those decoded from a ``*_json`` column.
    names = [f.name for f in fields(cls) if f.name != "store"]
    arrays = [n for n in names if n in ("tags", "keywords")]
    return [n for n in names if n not in arrays], arrays


_COLUMNS = {cls.__name__: _columns(cls) for cls in (Memory, Summary, ReviewItem, Event)}


def columns(cls: type) -> tuple[str, ...]:
    """The table columns a record of ``cls`` is read from."""
    plain, arrays = _COLUMNS[cls.__name__]
    return (*plain, *(n + "_json" for n in arrays))


# Columns holding one of a few codes ("project", "note", "explicit_user"...): a record kept
# for long takes its value from ``shared`` instead of a copy of its own.
CODES = ("scope", "type", "source", "confidence", "sensitivity")
_CODED = {name: [n for n in CODES if n in plain] for name, (plain, _arrays) in _COLUMNS.items()}


def record(
    cls: type[R], row: RowLike, store: str, shared: dict[str, str] | None = None, **lists: tuple[str, ...]
) -> R:
    """A row as a ``cls`` record; ``lists`` gives array fields already decoded.  With ``shared``
    (one dict for many rows), a code column's value equal to one seen before is that string."""
    row = _plain(row)
    plain, arrays = _COLUMNS[cls.__name__]
    values: dict[str, Any] = {n: row[n] for n in plain}
    if shared is not None:
        for n in _CODED[cls.__name__]:
            v = values[n]
            if v.__class__ is str:
                values[n] = shared.setdefault(v, v)
    for n in arrays:
        values[n] = lists[n] if n in lists else decode_list(row[n + "_json"])
    return cls(**values, store=store)


# One reader per table: ``memory(row, store)`` and so on.
memory = partial(record, Memory)
summary = partial(record, Summary)
review = partial(record, ReviewItem)
event = partial(record, Event)


def memory_by_id(conn: sqlite3.Connection, memory_id: Any, store: str) -> Memory | None:
    """One memory row by id, live or soft-deleted (the one place that reads a row by id)."""
    row = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return None if row is None else memory(row, store)


def review_by_id(conn: sqlite3.Connection, item_id: Any, store: str) -> ReviewItem | None:
    """One review-queue row by id, whatever its status."""
    row = conn.execute("SELECT * FROM memory_review_queue WHERE id = ?", (item_id,)).fetchone()
    return None if row is None else review(row, store)
