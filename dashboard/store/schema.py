"""agentao's schema version 3, for throw-away stores only (the demo, tests); the dashboard
never creates or migrates a user's database.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..contract import PlannedSave

SCHEMA_V3 = """
CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
  id TEXT PRIMARY KEY, scope TEXT NOT NULL, type TEXT NOT NULL DEFAULT 'note',
  key_normalized TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL,
  tags_json TEXT NOT NULL DEFAULT '[]', keywords_json TEXT NOT NULL DEFAULT '[]',
  source TEXT NOT NULL DEFAULT 'explicit', confidence TEXT NOT NULL DEFAULT 'explicit_user',
  sensitivity TEXT NOT NULL DEFAULT 'normal', created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL, deleted_at TEXT);
CREATE UNIQUE INDEX uix_memories_scope_key ON memories(scope, key_normalized)
  WHERE deleted_at IS NULL;
INSERT INTO schema_meta(key, value) VALUES ('memories_change', '0'), ('version', '3');
CREATE TRIGGER trg_memories_change_ins AFTER INSERT ON memories BEGIN
  UPDATE schema_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memories_change'; END;
CREATE TRIGGER trg_memories_change_upd AFTER UPDATE ON memories BEGIN
  UPDATE schema_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memories_change'; END;
CREATE TRIGGER trg_memories_change_del AFTER DELETE ON memories BEGIN
  UPDATE schema_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memories_change'; END;
CREATE TABLE session_summaries (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, summary_text TEXT NOT NULL,
  tokens_before INTEGER NOT NULL DEFAULT 0, messages_summarized INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL);
CREATE TABLE memory_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, event_type TEXT NOT NULL,
  timestamp TEXT NOT NULL, detail TEXT);
CREATE TABLE memory_review_queue (
  id TEXT PRIMARY KEY, scope TEXT NOT NULL, type TEXT NOT NULL, key_normalized TEXT NOT NULL,
  title TEXT NOT NULL, content TEXT NOT NULL, tags_json TEXT NOT NULL DEFAULT '[]',
  evidence TEXT NOT NULL DEFAULT '', source_session TEXT NOT NULL DEFAULT '',
  occurrences INTEGER NOT NULL DEFAULT 1, confidence TEXT NOT NULL DEFAULT 'auto_summary',
  status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE UNIQUE INDEX uix_review_scope_key ON memory_review_queue(scope, key_normalized)
  WHERE status = 'pending';
"""


def create_fresh_store(path: Path) -> sqlite3.Connection:
    """Create a new, empty v3 store at ``path`` (which must not exist) in WAL mode."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"refusing to create a store over an existing file: {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA_V3)
    return conn


def seed_memory(
    conn: sqlite3.Connection,
    plan: PlannedSave,
    created_at: str,
    updated_at: str,
    deleted_at: str | None,
    events: list[tuple[str, str]],
) -> str:
    """Insert one memory (a ``contract.PlannedSave``) and its event history into a fresh store."""
    mid = uuid.uuid4().hex[:8]
    conn.execute(
        "INSERT INTO memories (id, scope, type, key_normalized, title, content, tags_json,"
        " keywords_json, source, confidence, sensitivity, created_at, updated_at, deleted_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            mid,
            plan.scope,
            plan.type,
            plan.key_normalized,
            plan.title,
            plan.content,
            json.dumps(list(plan.tags)),
            json.dumps(list(plan.keywords)),
            plan.source,
            plan.confidence,
            "normal",
            created_at,
            updated_at,
            deleted_at,
        ),
    )
    conn.executemany(
        "INSERT INTO memory_events (memory_id, event_type, timestamp) VALUES (?,?,?)",
        [(mid, kind, at) for kind, at in events],
    )
    return mid


def seed_review(
    conn: sqlite3.Connection,
    *,
    scope: str,
    type_: str,
    key: str,
    title: str,
    content: str,
    evidence: str,
    session: str,
    occurrences: int,
    status: str,
    created_at: str,
    updated_at: str,
) -> None:
    """Insert one review-queue item into a fresh store, shaped as agentao's crystallizer writes it."""
    conn.execute(
        "INSERT INTO memory_review_queue (id, scope, type, key_normalized, title, content,"
        " tags_json, evidence, source_session, occurrences, confidence, status, created_at,"
        " updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            uuid.uuid4().hex[:12],
            scope,
            type_,
            key,
            title,
            content,
            json.dumps([type_]),
            evidence,
            session,
            occurrences,
            "inferred" if occurrences >= 2 else "auto_summary",
            status,
            created_at,
            updated_at,
        ),
    )


def seed_summary(conn: sqlite3.Connection, session_id: str, text: str, created_at: str) -> None:
    """Insert one session summary into a fresh store."""
    conn.execute(
        "INSERT INTO session_summaries (id, session_id, summary_text, tokens_before,"
        " messages_summarized, created_at) VALUES (?,?,?,?,?,?)",
        (uuid.uuid4().hex[:12], session_id, text, 48000, 37, created_at),
    )
