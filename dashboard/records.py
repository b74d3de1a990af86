"""Plain records read from agentao's memory databases, named as its columns (contract §2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast


def plain(obj: object, *names: str) -> dict[str, Any]:
    """``{name: obj.name}`` for each name given, in order: the plain part of a JSON twin."""
    return {name: getattr(obj, name) for name in names}


class _Row:
    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data (tuples as lists)."""
        # Every row class below is a flat dataclass of plain values, so this is ``asdict``
        # without its deep copy (a list page fingerprints each of its rows).
        values = ((name, getattr(self, name)) for name in cast(Any, self).__dataclass_fields__)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in values}


@dataclass(frozen=True)
class _Fact(_Row):
    """The columns a memory and a review item (a proposed memory) share, in schema order."""

    id: str
    scope: str
    type: str
    key_normalized: str
    title: str
    content: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Memory(_Fact):
    """One row of ``memories``; ``store`` says which file it came from."""

    keywords: tuple[str, ...] = ()
    source: str = "explicit"
    confidence: str = "explicit_user"
    sensitivity: str = "normal"
    created_at: str = ""
    updated_at: str = ""
    deleted_at: str | None = None
    store: str = "project"  # "project" or "user": the file the row lives in

    @property
    def live(self) -> bool:
        return self.deleted_at is None


@dataclass(frozen=True)
class Summary(_Row):
    """One row of ``session_summaries``."""

    id: str
    session_id: str
    summary_text: str
    tokens_before: int = 0
    messages_summarized: int = 0
    created_at: str = ""
    store: str = "project"


@dataclass(frozen=True)
class ReviewItem(_Fact):
    """One row of ``memory_review_queue``."""

    evidence: str = ""
    source_session: str = ""
    occurrences: int = 1
    confidence: str = "auto_summary"
    status: str = "pending"
    created_at: str = ""
    updated_at: str = ""
    store: str = "project"


@dataclass(frozen=True)
class Event(_Row):
    """One row of ``memory_events``."""

    id: int
    memory_id: str
    event_type: str
    timestamp: str
    detail: str | None = None
    store: str = "project"
