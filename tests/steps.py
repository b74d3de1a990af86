"""Work counted in steps, not seconds: the same count on an idle machine and on a busy one.

``lines(fn, *args)`` runs ``fn`` and returns how many lines of the dashboard's own
Python it ran (``sys.settrace`` line events in ``dashboard/``).  A loop that goes
quadratic in Python shows as a line count that grows with the square of the input.
What a single C call does (one ``re`` search, one ``str.find``) counts as one line:
a regex that backtracks is not seen here; its patterns are tested for the same
matches as the ones they replace, and timed by bench/bench_redos.py.

``budget``: stop the call (raise ``OverBudget``) once it has run that many lines, so
that a runaway loop fails the test at once instead of hanging it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

DASHBOARD = str(Path(__file__).resolve().parents[1] / "dashboard")


class OverBudget(Exception):
    pass


def lines(fn: Callable[..., Any], *args: Any, budget: int | None = None) -> int:
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if budget is not None and count > budget:
                raise OverBudget(f"more than {budget:,} lines")
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(DASHBOARD) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        fn(*args)
    finally:
        sys.settrace(previous)
    return count
