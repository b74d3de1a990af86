"""Findings that were shown and are gone from a newer scan: "fixed", for this process.

A fix (an edit, a delete, a reject) makes the next scan drop the finding, so the
list would forget it, and with it the re-check link that proves the fix (#21).
``Fixed`` remembers them for as long as the dashboard runs.

A finding is known by where it sits and what it flagged: the store's file (not
its key: the project switcher shows another file under the same key), the
table, the row, the rule, the field, and the flagged text's keyed digest (so a
span that moved because other text was edited is still the same finding).
A finding is called fixed only when the newer scan read every row and the
finding's file was read whole both times (each file is compared with its own
last complete scan): a scan cut short, or a store that could not be read,
proves nothing.  One that comes back (an undo) is dropped again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

HELD = 500  # the newest fixes kept: a bulk delete of thousands need not all be listed


class Gone(NamedTuple):
    item: object  # the Item as it was last shown (its excerpt is masked)
    path: str  # the store file it was in
    fixed_at: datetime  # when the scan that no longer found it ran


def identity(path: str, item) -> tuple:
    f = item.finding
    return (path, item.table, item.row_id, f.rule, f.field, f.signature or "")


def _keyed(report, paths: dict[str, str]) -> dict[tuple, object]:
    """identity -> item, for the items of the stores the report scanned."""
    return {identity(paths[i.store], i): i for i in report.items if i.store in paths}


class Fixed:
    """The findings gone since they were shown, and each file's last complete scan."""

    def __init__(self) -> None:
        self._gone: OrderedDict[tuple, Gone] = OrderedDict()
        self._last: dict[str, dict[tuple, object]] = {}  # file -> its findings, last complete scan
        self._lock = threading.Lock()  # pages read while a background scan updates

    def update(self, report, paths: dict[str, str], when: datetime) -> None:
        """Take a new scan: ``paths`` maps each store key it was asked to read to its file.

        Kept per file, so switching projects (another file under the key
        "project") compares each file with its own last scan.
        """
        scanned = _scanned(report, paths)
        now = _keyed(report, scanned)
        with self._lock:
            self._update(scanned, now, report.timed_out, when)

    def _update(self, scanned: dict[str, str], now: dict, timed_out: bool, when: datetime) -> None:
        for key in [k for k in self._gone if k in now]:
            del self._gone[key]  # it came back
        if timed_out:
            return  # rows were left unread: what is missing proves nothing
        for path in set(scanned.values()):
            found = {k: i for k, i in now.items() if k[0] == path}
            for key, item in self._last.get(path, {}).items():
                if key not in found:
                    self._gone[key] = Gone(item, path, when)
                    self._gone.move_to_end(key)
            self._last[path] = found
        while len(self._gone) > HELD:
            self._gone.popitem(last=False)

    def shown(self, paths: Iterable[str]) -> list[Gone]:
        """The fixes in these files, newest first."""
        wanted = set(paths)
        with self._lock:
            return [g for g in reversed(self._gone.values()) if g.path in wanted]


def _scanned(report, paths: dict[str, str]) -> dict[str, str]:
    # A store the scan could not read (a problem) did not lose its findings.
    broken = {p.get("store") for p in report.problems}
    if "" in broken:  # the stable selection could not be read: reach unknown everywhere
        return {}
    return {k: v for k, v in paths.items() if k in report.scanned and k not in broken}
