"""Each file's live rows as records, kept in agentao's listing order while rows change.

The preview engine needs every live row of a file in the order agentao lists
them (``ORDER BY created_at``, equal stamps in (scope, key) order: see
``Mirror.live_records``).  Sorting 100,000 records on every change of the
file costs more than the change itself, and an agent that saves in a loop
changes the file many times a second.  So the order is built once per file
and then patched: a changed row is taken out where it sat and put back where
its new stamps place it (binary search), and the unchanged records stay the
same objects, which lets the engine's per-row memos keep working.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable

from ..records import Memory


def _place(m: Memory) -> tuple:
    return (m.created_at, m.scope, m.key_normalized)


class LiveOrder:
    """Sorted live records per file path; callers hold the mirror's lock."""

    def __init__(self) -> None:
        self._by_path: dict[str, tuple[list[tuple], list[Memory]]] = {}

    def held(self, path: str) -> bool:
        """True when ``path``'s order is built and being patched."""
        return path in self._by_path

    def build(self, path: str, records: Iterable[Memory]) -> None:
        """Start following ``path`` with these records (live ones are kept)."""
        rows = sorted((m for m in records if m.deleted_at is None), key=_place)
        self._by_path[path] = ([_place(m) for m in rows], rows)

    def drop(self, path: str) -> None:
        """Forget ``path`` (its rows are about to be reloaded whole)."""
        self._by_path.pop(path, None)

    def remove(self, path: str, record: Memory) -> None:
        """Take a record that is being replaced out of the order."""
        places, rows = self._by_path[path]
        at = bisect_left(places, _place(record))
        while at < len(rows) and places[at] == _place(record):
            if rows[at] is record:
                del places[at], rows[at]
                return
            at += 1

    def add(self, path: str, record: Memory) -> None:
        """Put a new or changed record where its stamps place it, if it is live."""
        if record.deleted_at is not None:
            return
        places, rows = self._by_path[path]
        place = _place(record)
        # After any equal place, as a stable sort of the file's rows would put it.
        at = bisect_left(places, place)
        while at < len(places) and places[at] == place:
            at += 1
        places.insert(at, place)
        rows.insert(at, record)

    def rows(self, path: str) -> list[Memory]:
        """A copy of ``path``'s live records in order."""
        return list(self._by_path[path][1])
