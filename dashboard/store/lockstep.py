"""Writing several files as one action: every lock first, then the checks, then the writes.

Each file's transaction is ``connection.write``, entered and left by hand so locks are
taken in one order and commits made in another; ``intents`` records the action between.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask_babel import gettext as _

from . import intents
from .connection import StoreProblem, describe_error, settle, write


class _Abandon(Exception):
    """Thrown into a ``write`` transaction to roll it back without naming an error."""


@contextmanager
def write_all(
    paths: list[Path], intent: intents.Intent | None = None
) -> Iterator[dict[Path, sqlite3.Connection]]:
    """One ``write`` transaction on every distinct file in ``paths``, all held at once; yields
    ``{path: connection}`` (two paths naming one file share one).

    Locks are taken in resolved-path order (no deadlock); commits follow ``paths`` (callers
    put first the half that can be repeated).  An error before the first commit rolls every
    file back.  ``intent`` is recorded durably before the first commit (or the action is
    refused); a later commit that fails leaves it and raises ``StoreProblem("half_done")``."""
    files: dict[str, Path] = {}
    for p in paths:
        files.setdefault(str(Path(p).resolve()), Path(p))
    settle(*files.values())  # an earlier action stopped half way is finished first
    held: dict[str, tuple[Any, sqlite3.Connection]] = {}
    try:
        for key in sorted(files):
            cm = write(files[key], settled=True)
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
    keys = list(files)  # commit order: as given
    if len(keys) < 2:
        intent = None
    if intent is not None:
        try:
            intent.record(files[keys[0]])
        except OSError as exc:
            _abandon(held.values())
            raise describe_error(files[keys[0]].parent, exc, writing=True) from exc
    for n, key in enumerate(keys):
        try:
            held[key][0].__exit__(None, None, None)  # write() commits
        except BaseException as exc:
            _abandon(held[k] for k in keys[n + 1 :])
            if intent is not None:
                intent.close(finished=n == 0)
            if n == 0 or not isinstance(exc, StoreProblem):
                raise
            if intent is not None:
                raise StoreProblem("half_done", intent.half(reason(exc))) from exc
            raise StoreProblem(
                "half_done",
                _(
                    "%(written)s was written but %(missed)s was not: %(error)s",
                    written=", ".join(str(files[k]) for k in keys[:n]),
                    missed=files[key],
                    error=reason(exc),
                ),
            ) from exc
        if n == 0:
            intents.fault("between_commits")
    if intent is not None:
        intent.close(finished=True)


def reason(problem: StoreProblem) -> str:
    """Why a file could not be written, without the "nothing was changed" of a whole refusal."""
    cause = problem.__cause__
    error = str(cause) if cause is not None else str(problem)
    if problem.kind == "disk_full":
        return _("its disk is full (SQLite: %(error)s)", error=error)
    return _("it could not be written (%(error)s)", error=error)


def _abandon(held: Iterable[tuple[Any, sqlite3.Connection]]) -> None:
    # Roll back every transaction still open; one failing must not leave another open.
    for cm, _conn in held:
        try:
            cm.__exit__(_Abandon, _Abandon(), None)
        except BaseException:  # noqa: BLE001 - the caller raises the error that matters
            pass
