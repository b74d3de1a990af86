"""Writing several files as one action: every lock first, then the checks, then the writes.

An action that touches both stores (a move, an approval whose memory lands
in the user file) cannot share one SQLite transaction between two files.
What it can do is hold both write locks at once: take the lock of every
file, check every expectation while nobody else can write, and only then
write.  A refusal then happens before the first byte is written.

Each file's transaction is ``connection.write`` itself (same checks, same
error messages), entered and left by hand so that the locks can be taken in
one order and the commits made in another.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from flask_babel import gettext as _

from .connection import StoreProblem, describe_error, write


class _Abandon(Exception):
    """Thrown into a ``write`` transaction to roll it back without naming an error."""


@contextmanager
def write_all(paths: list[Path]) -> Iterator[dict[Path, sqlite3.Connection]]:
    """One ``write`` transaction on every distinct file in ``paths``, all held at once.

    The locks are taken in one fixed order, by resolved path, so two
    dashboards doing the same cannot deadlock (agentao holds one file at a
    time).  Two paths naming one file share one connection: one transaction.
    Yields ``{path: connection}`` for each path given.

    On success the files commit in the order ``paths`` gives them.  Callers
    put first the file whose half can be done again (the memory, saved by an
    upsert), so a crash between two commits leaves a state that repeating the
    action completes without a duplicate.  Any error before the first commit
    rolls every file back.  If a later commit fails, the error says which
    file was written and that doing the action again finishes it.
    """
    files: dict[str, Path] = {}
    for p in paths:
        files.setdefault(str(Path(p).resolve()), Path(p))
    held: dict[str, tuple[Any, sqlite3.Connection]] = {}
    try:
        for key in sorted(files):
            cm = write(files[key])
            held[key] = (cm, cm.__enter__())
    except BaseException:
        _abandon(held.values())
        raise
    try:
        yield {Path(p): held[str(Path(p).resolve())][1] for p in paths}
    except sqlite3.Error as exc:
        _abandon(held.values())
        raise describe_error(Path(" and ".join(map(str, files.values()))), exc) from exc
    except BaseException:
        _abandon(held.values())
        raise
    keys = list(files)   # commit order: as given
    for n, key in enumerate(keys):
        try:
            held[key][0].__exit__(None, None, None)   # write() commits
        except BaseException as exc:
            _abandon(held[k] for k in keys[n + 1:])
            if n == 0 or not isinstance(exc, StoreProblem):
                raise
            written = ", ".join(str(files[k]) for k in keys[:n])
            raise StoreProblem(exc.kind, _(
                "%(written)s was written but %(missed)s was not: %(error)s Do the same action "
                "again to finish it; it will not be done twice.", written=written,
                missed=files[key], error=exc)) from exc


def _abandon(held: Iterable[tuple[Any, sqlite3.Connection]]) -> None:
    # Roll back every transaction still open; one failing must not leave another open.
    for cm, _conn in held:
        try:
            cm.__exit__(_Abandon, _Abandon(), None)
        except BaseException:  # noqa: BLE001 - the caller raises the error that matters
            pass
