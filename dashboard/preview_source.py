"""The engine's inputs for one request: both files' snapshots, and the ``EngineCache`` held
over their rows (``store.held``, keyed on the stamps the rows were read at).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .engine import EngineCache
from .records import Memory, Summary
from .store import StoreProblem
from .store.held import held
from .store.snapshot import FileRows, rows_of
from .store.status import StoreStatus


@dataclass(frozen=True)
class Snapshot:
    """Everything one preview needs from the files."""

    project: list[Memory]  # live rows, agentao's listing order
    user: list[Memory]
    summaries: list[Summary]  # the project file's newest, newest first
    version: tuple  # the engine cache's key: the two snapshots
    cache: EngineCache
    problems: dict[str, str] = field(default_factory=dict)  # store key -> message


def snapshot(statuses: list[StoreStatus]) -> Snapshot:
    """Rows of the readable stores; an unreadable one counts as empty, as in agentao."""
    problems: dict[str, str] = {}
    files: dict[str, FileRows] = {}
    for st in statuses:
        if not st.readable:
            if st.problem is not None and st.problem.kind != "missing":
                problems[st.ref.key] = str(st.problem)
            continue
        try:
            files[st.ref.kind] = rows_of(st.ref)
        except StoreProblem as problem:
            problems[st.ref.key] = str(problem)
    project, user = files.get("project"), files.get("user")
    read = [f for f in (project, user) if f]
    version = tuple((f.path, f.stamp, f.counter) if f else None for f in (project, user))
    # Held for these very rows: keyed on the stamps they were read at, one rule for both.
    cache = held(
        "engine",
        [f.path for f in read],
        lambda _stamp: EngineCache(project.live if project else [], user.live if user else []),
        stamp=tuple(f.stamp for f in read),
    )
    return Snapshot(
        cache.project, cache.user, list(project.summaries) if project else [], version, cache, problems
    )
