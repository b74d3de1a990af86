"""A two-file action written down before its first commit, so that it is never left half done.

Two WAL files never commit atomically, so an action writing both stores is recorded in
``dashboard-intent-<id>.json`` beside the file it commits first (ids, paths and digests,
no text; written atomically and held under ``flock`` while it runs) and the record goes
after the last commit.  ``settle`` hands a stopped record to its finisher (``FINISHERS``,
from ``actions.twofile``) at start and before any other write; ``reports`` keeps what
they did; a record that cannot be finished refuses the write that asked.  A record of a
known action whose fields are not what its finisher reads (``check``) is said, not
finished: nothing is changed, the file stays where it is and writes go on.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from .. import clock

PREFIX, SUFFIX = "dashboard-intent-", ".json"
FAULT_ENV = "AGENTAO_DASHBOARD_FAULT"  # a test build's fault hook (see ``fault``)
KEEP = 20  # reports remembered for the pages
# Bytes read of a record: the largest written (500 rows moved, two dry runs) is under 2 MB.
MAX_RECORD = 8 << 20
MOST_ITEMS = 10_000  # items of a list in a record (a bulk action writes at most 500 rows)

Record = dict[str, Any]  # an intent file's JSON object: ids, paths, digests, by name
Report = dict[str, Any]  # what a finish did: its sentence ("text"), "finished", and details


@dataclass(frozen=True)
class Kind:
    """A field a finisher reads: what a message says it should be, and the test of a value
    (given the whole record: a path it writes must be one of the record's ``stores``)."""

    expected: Any  # a lazy string
    fits: Callable[[Any, Record], bool]


@dataclass(frozen=True)
class ByStore:
    """An object keyed by store (``project``, ``user``) whose values are ``spec``."""

    spec: Spec


# A record's fields: a Kind; {name: spec} an object holding those names; [spec] a list of them.
Spec = Kind | ByStore | dict[str, "Spec"] | list["Spec"]


@dataclass(frozen=True)
class Finisher:
    what: Any  # the action in words, for a record that cannot be read ("move")
    spec: dict[str, Spec]  # every field ``finish`` reads (beside ``COMMON``'s)
    finish: Callable[[Record], Report]


FINISHERS: dict[str, Finisher] = {}  # action -> its finisher


class Unreadable(Exception):
    """A record's ``field`` is missing (``expected`` None) or is not ``expected``."""

    def __init__(self, field: str, expected: Any = None):
        super().__init__(field)
        self.field, self.expected = field, expected


def _text(value: Any, most: int, encode: Callable[[str], bytes]) -> bool:
    if not isinstance(value, str) or len(value) > most:
        return False
    try:
        encode(value)  # a lone surrogate can be neither shown nor opened
    except UnicodeError:
        return False
    return True


TEXT = Kind(_l("a short text"), lambda v, _r: _text(v, 200, str.encode))
FILE = Kind(_l("a file path"), lambda v, _r: "\0" not in str(v) and _text(v, 4096, os.fsencode))
PATH = Kind(_l("one of the record's stores"), lambda v, r: FILE.fits(v, r) and v in r["stores"])
STORE = Kind(_l("“project” or “user”"), lambda v, _r: v in ("project", "user"))
FLAG = Kind(_l("true or false"), lambda v, _r: isinstance(v, bool))
COMMON: dict[str, Spec] = {"id": TEXT, "started": TEXT, "stores": [FILE]}


def check(value: Any, spec: Spec, record: Record, field: str = "") -> None:
    """Raise ``Unreadable`` naming the first field of ``value`` that ``spec`` does not allow."""
    if isinstance(spec, Kind):
        if not spec.fits(value, record):
            raise Unreadable(field, spec.expected)
    elif isinstance(spec, (dict, ByStore)):
        if not isinstance(value, dict):
            raise Unreadable(field, _l("an object"))
        if isinstance(spec, ByStore):
            if not all(STORE.fits(k, record) for k in value):
                raise Unreadable(field, _l("an object keyed by “project” or “user”"))
            spec = dict.fromkeys(value, spec.spec)
        for name, inner in spec.items():
            where = f"{field}.{name}" if field else name
            if name not in value:
                raise Unreadable(where)
            check(value[name], inner, record, where)
    else:
        if not isinstance(value, list) or len(value) > MOST_ITEMS:
            raise Unreadable(field, _l("a list"))
        for n, item in enumerate(value):
            check(item, spec[0], record, f"{field}[{n}]")


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
            with open(record, "rb") as f:
                raw = f.read(MAX_RECORD + 1)
            data = json.loads(raw) if len(raw) <= MAX_RECORD else None
        except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply to read
            data = None
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("action"), str)
            or data["action"] not in FINISHERS
        ):
            # not ours to read (a newer dashboard's, or damaged: not JSON, too deep, too large)
            # (``actions.twofile`` registers the finishers; the app and the command line import it)
            return None
        finisher = FINISHERS[data["action"]]
        try:
            check(data, {"stores": COMMON["stores"]}, data)
            if paths and not any(_same(p, s) for p in paths for s in data["stores"]):
                return None
            check(data, COMMON | finisher.spec, data)
            report = finisher.finish(data)
        except Unreadable as problem:
            report = _unreadable(record, data, finisher, problem, paths)
            note(report)
            return report
        report = {
            "id": data["id"],
            "action": data["action"],
            "started": data["started"],
            "stores": data["stores"],
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


def _unreadable(
    record: Path, data: Record, finisher: Finisher, problem: Unreadable, paths: tuple[Path | str, ...]
) -> Report:
    """What a record whose fields cannot be read says: which field, and that nothing was done."""

    def shown(name: str) -> str:  # a file name with bytes that are not UTF-8
        return name.encode("utf-8", "backslashreplace").decode()

    if problem.expected is None:
        wrong = _("its field “%(field)s” is missing", field=problem.field)
    else:
        wrong = _("its field “%(field)s” is not %(expected)s", field=problem.field, expected=problem.expected)
    beside = [str(p) for p in paths if _same(Path(p).parent, record.parent)]
    return {
        "id": shown(record.name[len(PREFIX) : -len(SUFFIX)]),
        "action": data["action"],
        "started": data["started"] if TEXT.fits(data.get("started"), data) else None,
        "stores": beside or [str(p) for p in paths],
        "finished": False,
        "kept": shown(str(record)),
        "text": _(
            "A stopped %(action)s was recorded in %(path)s, but that record cannot be finished: "
            "%(problem)s. Nothing was changed and the record is left where it is; remove it once "
            "both stores look right to you.",
            action=finisher.what,
            path=shown(str(record)),
            problem=wrong,
        ),
    }


def note(report: Report) -> None:
    """Keep what a recovery did, for the pages (newest last)."""
    with _lock:
        _reports[:] = [r for r in _reports if r.get("id") != report.get("id")]
        _reports.append(report)
        del _reports[:-KEEP]


def reports() -> list[Report]:
    with _lock:
        return list(_reports)
