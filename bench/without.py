"""Start the dashboard with some of its process-wide caches switched off (for bench_caches.py).

    python bench/without.py snapshot,status -- --project P --user-db U --port 0

Each name switches off one cache, in this process only, without editing the
source: a held dict is replaced by one that forgets everything whenever it is
asked, a held value is made never to match.  ``none`` switches nothing off.
"""

from __future__ import annotations

import copy
import sys


class Forgetful(dict):
    """A cache that is emptied every time it is consulted: every lookup misses."""

    def get(self, key, default=None):
        self.clear()
        return default

    def __contains__(self, key):
        self.clear()
        return False


def _miss(name: str) -> bool:
    """In a tree with store/held.py (one table for what is kept): that name always misses."""
    try:
        from dashboard.store import held
    except ImportError:
        return False
    real = held.peek
    held.peek = lambda n, *args, **kwargs: None if n == name else real(n, *args, **kwargs)
    return True


def _snapshot():
    from dashboard.store import snapshot

    if not _miss("rows"):
        snapshot._held = Forgetful()


def _status():
    from dashboard.store import status

    if not _miss("status"):
        status._read_at = Forgetful()


def _engine():
    # The engine's token index and stable selection (engine/cache.py), held across
    # requests by preview_source._last: built again on every request.
    if _miss("engine"):
        return
    from dashboard import preview_source

    real = preview_source.snapshot

    def fresh(statuses):
        preview_source._last = None
        return real(statuses)

    preview_source.snapshot = fresh


def _events():
    from dashboard.store import events

    if not _miss("mark"):
        events._marks = Forgetful()
    events._histories = Forgetful()  # absent once removed: then nothing to switch off


def _diffs():
    from dashboard.views import activity_log

    activity_log._diffs = Forgetful()


def _marks():
    from dashboard.views import memory_marks

    real = memory_marks.current_report

    def another(*args, **kwargs):  # a copy: never the report held, so flags are worked out again
        found = real(*args, **kwargs)
        return (copy.copy(found[0]), *found[1:])

    memory_marks.current_report = another


def _findings():
    # The findings scan held for the screens to share: every page scans again.
    from dashboard.views import findings

    if not _miss("findings"):
        findings.REUSE_S = findings.FULL_REUSE_S = 0


def _gates():
    # findings/gates.py: every row goes to every text rule (the store gate and each field's).
    from dashboard.findings import rows, rules

    rows.rows_to_scan = lambda texts, digit_rules: set(range(len(texts)))
    rules.open_families = lambda text: dict.fromkeys(rules.FAMILY_GATES, True)


def _rowgate():
    # Only the store gate (gates.rows_to_scan, gone since bench/results/caches-round5.txt: then
    # this switches nothing off): every row to scan_text, whose field gates stay.
    from dashboard.findings import rows

    rows.rows_to_scan = lambda texts, digit_rules: set(range(len(texts)))


def _unbounded():
    # Not a cache: the findings scan's time limit lifted, to see what a whole scan costs.
    from dashboard.views import findings

    findings.TIME_LIMIT_MS = 600_000


SWITCHES = {
    "snapshot": _snapshot,
    "status": _status,
    "engine": _engine,
    "events": _events,
    "diffs": _diffs,
    "marks": _marks,
    "findings": _findings,
    "gates": _gates,
    "rowgate": _rowgate,
    "unbounded": _unbounded,
}
CACHES = [name for name in SWITCHES if name != "unbounded"]


def main() -> int:
    names = [n for n in sys.argv[1].split(",") if n and n != "none"]
    if names == ["all"]:
        names = CACHES
    import dashboard.preview_source  # noqa: F401  (before the views bind its names)

    for name in names:
        SWITCHES[name]()
    from dashboard.cli import main as cli

    return cli(sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
