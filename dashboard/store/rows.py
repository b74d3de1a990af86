"""sqlite3 rows -> records; tolerant of what hand edits and old versions leave behind."""

from __future__ import annotations

import json
import sqlite3

from ..records import Event, Memory, ReviewItem, Summary


def decode_list(raw) -> tuple[str, ...]:
    """A JSON array column as a tuple of strings; anything else as one raw string."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else []
    except ValueError:
        return (str(raw),)
    if not isinstance(value, list):
        return (str(raw),)
    return tuple(v if isinstance(v, str) else json.dumps(v) for v in value)


def memory(row: sqlite3.Row, store: str) -> Memory:
    return Memory(
        id=row["id"], scope=row["scope"], type=row["type"],
        key_normalized=row["key_normalized"], title=row["title"], content=row["content"],
        tags=decode_list(row["tags_json"]), keywords=decode_list(row["keywords_json"]),
        source=row["source"], confidence=row["confidence"], sensitivity=row["sensitivity"],
        created_at=row["created_at"], updated_at=row["updated_at"],
        deleted_at=row["deleted_at"], store=store)


def summary(row: sqlite3.Row, store: str) -> Summary:
    return Summary(id=row["id"], session_id=row["session_id"], summary_text=row["summary_text"],
                   tokens_before=row["tokens_before"],
                   messages_summarized=row["messages_summarized"],
                   created_at=row["created_at"], store=store)


def review(row: sqlite3.Row, store: str) -> ReviewItem:
    return ReviewItem(
        id=row["id"], scope=row["scope"], type=row["type"],
        key_normalized=row["key_normalized"], title=row["title"], content=row["content"],
        tags=decode_list(row["tags_json"]), evidence=row["evidence"],
        source_session=row["source_session"], occurrences=row["occurrences"],
        confidence=row["confidence"], status=row["status"],
        created_at=row["created_at"], updated_at=row["updated_at"], store=store)


def event(row: sqlite3.Row, store: str) -> Event:
    return Event(id=row["id"], memory_id=row["memory_id"], event_type=row["event_type"],
                 timestamp=row["timestamp"], detail=row["detail"], store=store)
