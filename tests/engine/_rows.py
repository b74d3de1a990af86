"""Read agentao's memory files into engine records, for the engine tests only.

The real reader belongs to ``dashboard.store``; this stand-in uses the same
ordering SQL as agentao (``ORDER BY created_at ASC`` per file, summaries in
rowid order) so the engine sees rows in the order agentao does.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from dashboard.records import Memory, Summary


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def read_memories(path: Path | None, store: str) -> list[Memory]:
    """Live rows of one file, ``created_at`` ascending (rowid among ties)."""
    if path is None:
        return []
    with closing(_connect(path)) as conn:
        rows = conn.execute(
            "SELECT * FROM memories WHERE deleted_at IS NULL ORDER BY created_at ASC"
        ).fetchall()
    return [
        Memory(
            id=r["id"],
            scope=r["scope"],
            type=r["type"],
            key_normalized=r["key_normalized"],
            title=r["title"],
            content=r["content"],
            tags=tuple(json.loads(r["tags_json"])),
            keywords=tuple(json.loads(r["keywords_json"])),
            source=r["source"],
            confidence=r["confidence"],
            sensitivity=r["sensitivity"],
            created_at=r["created_at"],
            updated_at=r["updated_at"],
            deleted_at=r["deleted_at"],
            store=store,
        )
        for r in rows
    ]


def read_summaries(path: Path) -> list[Summary]:
    """Every session summary of the project file, in rowid order."""
    with closing(_connect(path)) as conn:
        rows = conn.execute("SELECT * FROM session_summaries ORDER BY rowid").fetchall()
    return [
        Summary(
            id=r["id"],
            session_id=r["session_id"],
            summary_text=r["summary_text"],
            tokens_before=r["tokens_before"],
            messages_summarized=r["messages_summarized"],
            created_at=r["created_at"],
            store="project",
        )
        for r in rows
    ]


def change_counter(path: Path | None) -> int | None:
    """``schema_meta.memories_change`` of a file (None when there is no file)."""
    if path is None:
        return None
    with closing(_connect(path)) as conn:
        row = conn.execute("SELECT value FROM schema_meta WHERE key = 'memories_change'").fetchone()
    return int(row[0]) if row else 0
