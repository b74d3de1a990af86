"""The overview's memories tally and timeline, read from the in-memory copy's counts."""

from __future__ import annotations

from .mirror import Mirror
from .registry import StoreRef


def overview_tallies(mirror: Mirror, refs: list[StoreRef]):
    """Per store key the memories tally rows, the timeline over all stores, and the
    problems of stores whose rows cannot be read (store key -> StoreProblem).

    The tally rows are what ``status.inspect`` counts on the file: one per
    (scope, type, source, confidence, deleted).  The timeline is
    ``{"by": "month"|"week", "periods": [{"period", "created", "updated"}, ...],
    "problems": {store key: message}}``: live memories created, and live
    memories last updated later than created (in the period of that update),
    per month — per week when every stamp falls within two months.  A store
    whose rows cannot be read is left out of both.
    """
    def collect(m: Mirror, labels: dict[str, str]):
        kinds = {key: m.tallies.kinds(path) for path, key in labels.items()}
        by, periods = "month", m.tallies.periods(labels, "month")
        if len(periods) <= 2:
            by, periods = "week", m.tallies.periods(labels, "week")
        return kinds, {"by": by, "periods": periods}
    (kinds, timeline), problems = mirror.query(refs, collect)
    timeline["problems"] = {key: str(p) for key, p in problems.items()}
    return kinds, timeline, problems
