"""A two-file action written down before its first commit, so that it is never left half done.

Two WAL files never commit atomically, so an action writing both stores is recorded in
``dashboard-intent-<id>.json`` beside the file it commits first (ids, paths and digests,
no text; written atomically and held under ``flock`` while it runs) and the record goes
after the last commit.  ``settle`` hands a stopped record to its finisher (``FINISHERS``,
from ``actions.twofile``) at start and before any other write; ``reports`` keeps what
they did; a record that cannot be finished refuses the write that asked.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import clock

PREFIX, SUFFIX = "dashboard-intent-", ".json"
FAULT_ENV = "AGENTAO_DASHBOARD_FAULT"  # a test build's fault hook (see ``fault``)
KEEP = 20  # reports remembered for the pages

Record = dict[str, Any]  # an intent file's JSON object: ids, paths, digests, by name
Report = dict[str, Any]  # what a finish did: its sentence ("text"), "finished", and details

FINISHERS: dict[str, Callable[[Record], Report]] = {}  # action -> finish(record) -> report

_partners: dict[str, set[str]] = {}  # a store folder -> the folders of the stores shown with it
_reports: list[Report] = []
_lock = threading.RLock()
_local = threading.local()


class Unfinished(Exception):
    """A stopped action could not be finished now; ``report`` says what is half done."""

    def __init__(self, report: Report):
        super().__init__(report["text"])
        self.report = report


def fault(point: str) -> None:
    """Die here, as ``kill -9`` would, when the test build armed this point (``FAULT_ENV``)."""
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def digest(*values: object) -> str:
    """A short digest of plain values (no text kept): what a record checks a row against."""
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=list).encode()).hexdigest()[:16]


def watch(*paths: Path | str | None) -> None:
    """Remember that these stores go together (one workspace, one action): a write to one
    looks for records beside each of them."""
    folders = {str(Path(p).parent) for p in paths if p is not None}
    for folder in folders:
        _partners.setdefault(folder, set()).update(folders)


def _same(a: Path | str, b: Path | str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


class Intent:
    """One recorded action: ``record`` before the first commit, ``update`` between, ``close`` after."""

    def __init__(self, action: str, stores: Iterable[Path | str], data: Record, half: Callable[[str], str]):
        # ``half(reason)``: what is done and what is not, when the second commit fails.
        self.action, self.stores, self.data, self.half = action, [str(p) for p in stores], data, half
        self.id = secrets.token_hex(8)
        self.path: Path | None = None
        self._fd: int | None = None

    def content(self) -> Record:
        return {
            "version": 1,
            "id": self.id,
            "action": self.action,
            "stores": self.stores,
            "started": self.data.get("started") or clock.stamp(),
            **self.data,
        }

    def record(self, beside: Path) -> None:
        """Write the record durably beside ``beside`` and hold its lock (OSError: not written)."""
        watch(beside)
        self.data["started"] = self.content()["started"]
        self.path = Path(beside).parent / f"{PREFIX}{self.id}{SUFFIX}"
        self._write()

    def update(self, **changes: object) -> None:
        self.data.update(changes)
        self._write()

    def _write(self) -> None:
        assert self.path is not None  # named by record() before the first write
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, json.dumps(self.content()).encode())
            os.fsync(fd)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.replace(tmp, self.path)
            _sync_folder(self.path.parent)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        old, self._fd = self._fd, fd
        if old is not None:
            os.close(old)

    def close(self, finished: bool) -> None:
        """Remove the record (``finished``) or leave it for ``settle``; release its lock."""
        if self.path is not None and finished:
            self.path.unlink(missing_ok=True)
            _sync_folder(self.path.parent)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _records(paths: tuple[Path | str, ...]) -> list[Path]:
    folders = set()
    for p in paths:
        folders |= _partners.get(str(Path(p).parent), set())
    if not paths:
        folders = set(_partners)
    found = []
    for folder in sorted(folders):
        try:
            with os.scandir(folder) as entries:
                found += [
                    Path(e.path) for e in entries if e.name.startswith(PREFIX) and e.name.endswith(SUFFIX)
                ]
        except OSError:
            continue
    return sorted(found)


def settle(*paths: Path | str) -> list[Report]:
    """Finish every stopped action on any of ``paths`` (all stores when none); returns reports,
    raises ``Unfinished`` when one cannot be finished now.  Live and re-entrant ones are left."""
    if getattr(_local, "busy", False):
        return []
    watch(*paths)
    records = _records(paths)
    if not records:
        return []
    done = []
    with _lock:
        _local.busy = True
        try:
            for record in records:
                report = _settle_one(record, paths)
                if report is not None:
                    done.append(report)
        finally:
            _local.busy = False
    return done


def _settle_one(record: Path, paths: tuple[Path | str, ...]) -> Report | None:
    try:
        fd = os.open(record, os.O_RDONLY)
    except OSError:
        return None  # finished meanwhile
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # its action is still running
        if not record.exists():
            return None  # finished between our listing and our lock
        try:
            data = json.loads(record.read_bytes())
        except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply to read
            data = None
        if (
            not isinstance(data, dict)
            or data.get("action") not in FINISHERS
            or not isinstance(data.get("stores", []), list)
            or not all(isinstance(s, str) for s in data.get("stores", []))
        ):
            # not ours to read (a newer dashboard's, or damaged: not JSON, too deep, odd stores),
            # or no finisher registered
            # (``actions.twofile`` registers them; the app and the command line import it)
            return None
        if paths and not any(_same(p, s) for p in paths for s in data.get("stores", ())):
            return None
        report = FINISHERS[data["action"]](data)
        report = {
            "id": data.get("id"),
            "action": data["action"],
            "started": data.get("started"),
            "stores": data.get("stores"),
            "finished": True,
            **report,
        }
        note(report)
        if not report["finished"]:
            raise Unfinished(report)
        record.unlink(missing_ok=True)
        _sync_folder(record.parent)
        return report
    finally:
        os.close(fd)


def note(report: Report) -> None:
    """Keep what a recovery did, for the pages (newest last)."""
    with _lock:
        _reports[:] = [r for r in _reports if r.get("id") != report.get("id")]
        _reports.append(report)
        del _reports[:-KEEP]


def reports() -> list[Report]:
    with _lock:
        return list(_reports)
