"""What the dashboard keeps between requests: one table, one rule, one lock.

A value is kept while every file it came from keeps the stamp it had before the work
(``connection.file_stamp``), and worked out again whole when one moves.  Only what a page
misses its budget without is kept (bench/bench_caches.py, bench/results/caches-*.txt):
``rows``, ``engine``, ``findings``, ``status``, ``timeline``, ``saved``, ``history``, ``changed``, ``mark``,
``trail``, ``warnings``, ``effects``, ``about``.
The lock guards the table; work runs outside it, one at a time per name.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from .connection import file_stamp
from .recovery import Stamp

T = TypeVar("T")
Stamps = tuple[Stamp, ...]  # each file's ``file_stamp``, in the order of its paths
KEPT = 24  # values held, the least recently used dropped first: both files and a switch or two

_lock = threading.Lock()
_table: OrderedDict[tuple[str, tuple[str, ...], Hashable], tuple[Stamps, object]] = OrderedDict()
_working: dict[str, threading.Lock] = {}
# name -> (when it was done, paths, key, stamps, value): the last value ``whole`` said is not,
# for the requests that were waiting while it was worked out (read and written under its gate).
_cut: dict[str, tuple[float, tuple[str, ...], Hashable, Stamps, object]] = {}


def stamps(paths: Iterable[Path | str]) -> Stamps:
    return tuple(file_stamp(p) for p in paths)


def peek(name: str, paths: Iterable[Path | str], key: Hashable = (), stamp: Stamps | None = None) -> Any:
    """The value held for ``name`` over ``paths`` (and ``key``), if the files have not moved.

    Whatever ``keep`` held under that name (each name holds one type: the caller knows it)."""
    files = tuple(map(str, paths))
    stamp = stamps(files) if stamp is None else stamp
    with _lock:
        found = _table.get((name, files, key))
        if found is not None and found[0] == stamp:
            _table.move_to_end((name, files, key))
            return found[1]
    return None


def keep(
    name: str, paths: Iterable[Path | str], value: object, key: Hashable = (), stamp: Stamps | None = None
) -> None:
    """Hold ``value`` for the files as they were at ``stamp`` (taken before the work)."""
    files = tuple(map(str, paths))
    with _lock:
        _table[(name, files, key)] = (stamps(files) if stamp is None else stamp, value)
        _table.move_to_end((name, files, key))
        while len(_table) > KEPT:
            _table.popitem(last=False)


def held(
    name: str,
    paths: Iterable[Path | str],
    work: Callable[[Stamps], T],
    key: Hashable = (),
    stamp: Stamps | None = None,
    whole: Callable[[T], bool] = lambda _value: True,
) -> T:
    """The value held, or ``work(stamps)`` done once however many threads ask at once.

    ``stamp``: the files as they were when what ``work`` uses was read (rows held under
    another name), instead of as they are now.  A value ``whole`` says is not (work cut short
    by its time limit) is not held: it answers the requests that were already waiting for it
    (their own time went on the wait), and the next request does the work again."""
    paths = tuple(map(str, paths))
    given = stamp
    found: T | None = peek(name, paths, key, given)
    if found is not None:
        return found
    asked = time.monotonic()
    with _lock:
        gate = _working.setdefault(name, threading.Lock())
    with gate:
        stamp = stamps(paths) if given is None else given  # again: another thread may have done it
        found = peek(name, paths, key, stamp)
        if found is None:
            cut = _cut.get(name)
            if cut is not None and cut[0] >= asked and cut[1:4] == (paths, key, stamp):
                return cut[4]  # type: ignore[return-value]
            found = work(stamp)
            if whole(found):
                keep(name, paths, found, key, stamp)
                _cut.pop(name, None)
            else:
                _cut[name] = (time.monotonic(), tuple(map(str, paths)), key, stamp, found)
        return found
