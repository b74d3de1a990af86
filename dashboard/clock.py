"""One clock: every stamp the dashboard writes and every "now" a page compares with.

The source is ``app.config["CLOCK"]``: a callable giving an aware datetime (UTC by
default).  ``create_app`` makes it this module's source, and so does every
request, so code without Flask (``actions``, ``store``) reads the same moment
through ``now``, ``local`` and ``stamp``.  A test pins it with
``create_app({"CLOCK": lambda: moment})``.

agentao stamps rows with the local wall clock, whole seconds, no zone
(``2026-01-02T03:04:05``); ``stamp`` writes exactly that, from the same moment.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone


def system() -> datetime:
    return datetime.now(timezone.utc)


_source: Callable[[], datetime] = system


def use(source: Callable[[], datetime] | None) -> None:
    """Make ``source`` the clock (None: the system clock)."""
    global _source
    _source = source or system


def now() -> datetime:
    """Now, aware, in UTC."""
    return _source().astimezone(timezone.utc)


def local() -> datetime:
    """Now on the local wall clock, without a zone: how agentao reads and writes time."""
    return now().astimezone().replace(tzinfo=None)


def stamp() -> str:
    """agentao's stamp for now: local wall-clock time, whole seconds, no zone."""
    return local().strftime("%Y-%m-%dT%H:%M:%S")
