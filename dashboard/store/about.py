"""The reads behind "About you": each section at most ``LIMIT`` rows plus a count of all."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import rows
from .connection import read
from .registry import StoreRef

LIMIT = 10  # a sample per section: the page answers in sentences, each list has its full page


@dataclass
class Section:
    """The first rows of one kind of thing about the person, and how many there are."""

    items: list[Any] = field(default_factory=list)
    total: int = 0

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.items))

    def add(self, other: Section, limit: int) -> None:
        self.items = (self.items + other.items)[:limit]
        self.total += other.total

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "shown": len(self.items), "more": self.more, "items": self.items}


def _section(
    conn: sqlite3.Connection,
    table: str,
    where: str,
    order: str,
    limit: int,
    make: Callable[[sqlite3.Row], Any],
) -> Section:
    total = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0]
    found = conn.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY {order} LIMIT ?", (limit,))
    return Section([make(r) for r in found], total)


def user_memories(ref: StoreRef) -> tuple[Section, Section]:
    """Memories with scope ``user`` in one file: (live, soft-deleted), newest change first. Scope, not file:
    without a user store agentao keeps user-scope memories in the project file, and the overview's "about you"
    count and link filter by scope too."""

    def run(conn: sqlite3.Connection) -> tuple[Section, Section]:
        make = lambda r: rows.memory(r, ref.key)  # noqa: E731
        live = _section(
            conn, "memories", "scope = 'user' AND deleted_at IS NULL", "updated_at DESC, id", LIMIT, make
        )
        gone = _section(
            conn, "memories", "scope = 'user' AND deleted_at IS NOT NULL", "deleted_at DESC, id", LIMIT, make
        )
        return live, gone

    return read(ref.path, run)


def review_evidence(ref: StoreRef) -> Section:
    """Review items whose evidence (the person's own message) is kept: pending first."""
    return read(
        ref.path,
        lambda conn: _section(
            conn,
            "memory_review_queue",
            "evidence IS NOT NULL AND evidence != ''",
            "status != 'pending', updated_at DESC, id",
            LIMIT,
            lambda r: rows.review(r, ref.key),
        ),
    )


def session_summaries(ref: StoreRef) -> Section:
    """The file's session summaries (what was said, in the agent's words), newest first."""
    return read(
        ref.path,
        lambda conn: _section(
            conn, "session_summaries", "1", "created_at DESC, id", LIMIT, lambda r: rows.summary(r, ref.key)
        ),
    )
