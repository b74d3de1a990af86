"""Counting memories over time, for the overview's timeline picture."""

from __future__ import annotations

from .connection import StoreProblem, read
from .registry import StoreRef

# SQL expressions that turn agentao's 'YYYY-MM-DDTHH:MM:SS' stamps into a period label.
PERIODS = {"month": "substr({col}, 1, 7)", "week": "strftime('%Y-W%W', {col})"}


def activity_timeline(refs: list[StoreRef]) -> dict:
    """Month columns, or week columns when every stamp falls within two months.

    ``{"by": "month"|"week", "periods": [...], "problems": {...}}`` (see activity_by_period).
    """
    by = "month"
    periods, problems = activity_by_period(refs, by)
    if len(periods) <= 2:
        by = "week"
        periods, problems = activity_by_period(refs, by)
    return {"by": by, "periods": periods, "problems": problems}


def activity_by_period(refs: list[StoreRef], by: str = "month") -> tuple[list[dict], dict]:
    """Live memories created, and live memories last updated, per month (or week).

    Returns ``([{"period", "created", "updated"}, ...] oldest first, problems)``;
    "updated" counts rows whose last write is later than their creation, in the
    period of that last write.  Soft-deleted rows are left out (the agent no
    longer sees them).  A store that cannot be read is skipped and named in
    ``problems`` (store key -> message).
    """
    period = PERIODS[by]
    sql = (f"SELECT {period.format(col='created_at')} AS p, 'created' AS what, COUNT(*) AS n"
           " FROM memories WHERE deleted_at IS NULL GROUP BY p"
           f" UNION ALL SELECT {period.format(col='updated_at')} AS p, 'updated', COUNT(*)"
           " FROM memories WHERE deleted_at IS NULL AND updated_at > created_at GROUP BY p")
    counts: dict = {}
    problems: dict = {}
    for ref in refs:
        try:
            found = read(ref.path, lambda conn: conn.execute(sql).fetchall())
        except StoreProblem as problem:
            problems[ref.key] = str(problem)
            continue
        for p, what, n in found:
            row = counts.setdefault(p or "unknown", {"period": p or "unknown", "created": 0,
                                                     "updated": 0})
            row[what] += n
    return [counts[p] for p in sorted(counts)], problems
