"""The preview engine's inputs, read through the store and kept while nothing changes.

agentao keys its recall index on each store's ``memories_change`` counter; the
preview does the same twice over: the rows themselves are re-read only when a
counter moved, and the engine's token cache is keyed on the same counters.
Summaries do not move the counter, so the 10 newest are read on every request
(one small query).  One instance lives in ``app.extensions``; a lock makes the
re-read happen once when several waitress threads notice the same change.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .engine import EngineCache
from .records import Memory, Summary
from .store import StoreProblem, recent_summaries
from .store.mirror import Mirror, mirror_for
from .store.status import StoreStatus


@dataclass(frozen=True)
class Snapshot:
    """Everything one preview needs from the files."""

    project: list[Memory]
    user: list[Memory]
    summaries: list[Summary]
    version: tuple | None          # engine cache key; None when a counter is unknown
    cache: EngineCache
    problems: dict[str, str] = field(default_factory=dict)  # store key -> message
    stale: bool = False   # rows from just before a re-read that another thread is doing


class PreviewSource:
    """Rows per store, re-read when the change counters move."""

    def __init__(self, mirror: Mirror) -> None:
        self._mirror = mirror
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._rows: tuple[list[Memory], list[Memory], dict[str, str]] | None = None
        self.cache = EngineCache()

    def snapshot(self, statuses: list[StoreStatus]) -> Snapshot:
        """Rows of the readable stores; an unreadable one counts as empty, as in agentao."""
        readable = [st for st in statuses if st.readable]
        key = tuple((st.ref.key, str(st.ref.path), st.change_counter) for st in readable)
        known = all(st.change_counter is not None for st in readable)
        stale = False
        if known and key == self._key and self._rows is not None:
            project, user, problems = self._rows
        else:
            same_files = (self._rows is not None and self._key is not None
                          and {k[:2] for k in self._key} == {k[:2] for k in key})
            # While another thread re-reads these same files, answer from the
            # rows it is replacing instead of queueing every request behind it
            # when an agent keeps writing: stale by at most one re-read.
            if self._lock.acquire(blocking=not same_files):
                try:
                    self._rows = self._read(statuses)
                    self._key = key
                    project, user, problems = self._rows
                finally:
                    self._lock.release()
            else:
                project, user, problems = self._rows
                key, stale = self._key, True
        summaries: list[Summary] = []
        for st in readable:
            if st.ref.kind == "project":
                try:
                    summaries = recent_summaries(st.ref)
                except StoreProblem as problem:
                    problems = {**problems, st.ref.key: str(problem)}
        return Snapshot(project, user, summaries, key if known else None, self.cache,
                        problems, stale)

    def _read(self, statuses: list[StoreStatus]):
        # The rows come from the app's in-memory copy (store.mirror), which
        # follows each file through its change counter and event log, so a
        # change costs the touched rows, not a re-read of every row.
        problems: dict[str, str] = {}
        for st in statuses:
            if not st.readable and st.problem is not None and st.problem.kind != "missing":
                problems[st.ref.key] = str(st.problem)
        lists, left_out = self._mirror.live_records([st.ref for st in statuses if st.readable])
        problems.update({key: str(p) for key, p in left_out.items()})
        kinds = {st.ref.key: st.ref.kind for st in statuses}
        project = next((rows for key, rows in lists.items() if kinds.get(key) == "project"), [])
        user = next((rows for key, rows in lists.items() if kinds.get(key) == "user"), [])
        return project, user, problems


def source_for(extensions: dict) -> PreviewSource:
    """The app's source, created on first use (never at import or app creation)."""
    found = extensions.get("preview_source")
    if found is None:
        found = extensions.setdefault("preview_source", PreviewSource(mirror_for(extensions)))
    return found
