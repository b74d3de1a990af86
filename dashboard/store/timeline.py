"""The overview's timeline of live memories, counted by SQLite on the files."""

from __future__ import annotations

from typing import Any

from .connection import StoreProblem, read
from .registry import StoreRef

# SQLite itself labels the periods (substr for months, strftime('%Y-W%W') for
# weeks) and decides "updated later" (its own >), so the labels are exactly
# what a query on the file gives.
# A BLOB a hand edit left is read as TEXT first, as every other read does (rows.text_select).
_TEXT = "CASE WHEN typeof({0}) = 'blob' THEN CAST({0} AS TEXT) ELSE {0} END"
_SQL = {
    by: f"SELECT {label.format(_TEXT.format('created_at'))},"
    f" {label.format(_TEXT.format('updated_at'))}, {_TEXT.format('updated_at')} >"
    f" {_TEXT.format('created_at')}, COUNT(*) FROM memories WHERE deleted_at IS NULL"
    " GROUP BY 1, 2, 3"
    for by, label in (("month", "substr({}, 1, 7)"), ("week", "strftime('%Y-W%W', {})"))
}


def _periods(refs: list[StoreRef], by: str, problems: dict[str, StoreProblem]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for ref in refs:
        if ref.key in problems:
            continue
        try:
            found = read(ref.path, lambda conn: conn.execute(_SQL[by]).fetchall())
        except StoreProblem as problem:
            problems[ref.key] = problem
            continue
        for created, updated, later, n in found:
            for what, label in (("created", created), ("updated", updated))[: 2 if later else 1]:
                label = label or "unknown"
                row = rows.setdefault(label, {"period": label, "created": 0, "updated": 0})
                row[what] += n
    return [rows[p] for p in sorted(rows)]


def timeline(refs: list[StoreRef]) -> tuple[dict[str, Any], dict[str, StoreProblem]]:
    """Live memories created and last updated per month (per week within two months):
    ``{"by", "periods": [{"period", "created", "updated"}], "problems"}`` and the problems."""
    problems: dict[str, StoreProblem] = {}
    by, periods = "month", _periods(refs, "month", problems)
    if len(periods) <= 2:
        by, periods = "week", _periods(refs, "week", problems)
    return {"by": by, "periods": periods, "problems": {key: str(p) for key, p in problems.items()}}, problems
