"""One clock: ``app.config["CLOCK"]`` (aware, UTC by default), read through ``now``, ``local``
and ``stamp`` also outside Flask; ``stamp`` writes agentao's local ``2026-01-02T03:04:05``.
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
