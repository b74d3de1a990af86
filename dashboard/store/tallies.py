"""The overview's counts, kept by the in-memory copy as rows come and go.

The overview shows, per store, memories by scope / type / source /
confidence / soft-deleted, and a timeline of live memories created and
updated per month or week.  Counting 100,000 rows takes a full scan per
number, on every view, while an agent that saves in a loop changes the file
many times a second.  So the copy (``store.mirror``) counts each row once,
when it arrives, and uncounts it when it is replaced or dropped.  The labels
are computed by SQLite itself on the copy's rows (``substr`` for months,
``strftime('%Y-W%W')`` for weeks, SQLite's own ``>`` for "updated later"),
so they are exactly what a query on the file would give.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

_LABELS = ("SELECT scope, type, source, confidence, deleted_at IS NOT NULL, live,"
           " substr(created_at, 1, 7), strftime('%Y-W%W', created_at),"
           " substr(updated_at, 1, 7), strftime('%Y-W%W', updated_at),"
           " updated_at > created_at, COUNT(*)"
           " FROM memories WHERE {where} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11")


class _Tally:
    def __init__(self) -> None:
        self.kinds: Counter = Counter()     # (scope, type, source, confidence, deleted) -> n
        self.created = {"month": Counter(), "week": Counter()}   # live rows, by period
        self.updated = {"month": Counter(), "week": Counter()}   # live rows updated later


def _sql_order(value):
    # SQLite's ORDER BY across storage classes: NULL, numbers, text, blobs.
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, value) if isinstance(value, str) else (3, value)


class Tallies:
    """Counts per file path; the mirror calls ``count`` under its lock."""

    def __init__(self) -> None:
        self._by_path: dict[str, _Tally] = {}

    def count(self, conn: sqlite3.Connection, path: str, where: str, params, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) the copy's rows matching ``where``."""
        t = self._by_path.setdefault(path, _Tally())
        for (scope, type_, source, confidence, deleted, live, c_month, c_week, u_month, u_week,
             later, n) in conn.execute(_LABELS.format(where=where), params):
            t.kinds[(scope, type_, source, confidence, deleted)] += sign * n
            if live:
                t.created["month"][c_month] += sign * n
                t.created["week"][c_week] += sign * n
                if later:
                    t.updated["month"][u_month] += sign * n
                    t.updated["week"][u_week] += sign * n

    def drop(self, path: str) -> None:
        self._by_path.pop(path, None)

    def kinds(self, path: str) -> list[dict]:
        """Rows per (scope, type, source, confidence, deleted), in the file query's order."""
        t = self._by_path.get(path) or _Tally()
        keys = sorted((k for k, n in t.kinds.items() if n > 0),
                      key=lambda k: tuple(_sql_order(v) for v in k))
        return [{"scope": k[0], "type": k[1], "source": k[2], "confidence": k[3],
                 "deleted": k[4], "n": t.kinds[k]} for k in keys]

    def values(self, paths, column: str) -> list:
        """Distinct values of ``type``, ``source`` or ``confidence`` among live rows, in
        ``SELECT DISTINCT ... ORDER BY 1`` order."""
        at = {"type": 1, "source": 2, "confidence": 3}[column]
        found = {k[at] for path in paths for k, n in (self._by_path.get(path) or _Tally()).kinds.items()
                 if n > 0 and not k[4]}
        return sorted(found, key=_sql_order)

    def periods(self, paths, by: str) -> list[dict]:
        """``[{"period", "created", "updated"}, ...]`` over ``paths``, oldest first."""
        rows: dict = {}
        for path in paths:
            t = self._by_path.get(path) or _Tally()
            for what, counter in (("created", t.created[by]), ("updated", t.updated[by])):
                for label, n in counter.items():
                    if n > 0:
                        label = label or "unknown"
                        row = rows.setdefault(label, {"period": label, "created": 0, "updated": 0})
                        row[what] += n
        return [rows[p] for p in sorted(rows)]
