"""agentao's schema version 3, for building fresh stores (the demo, never a user's file).

The dashboard never creates or migrates a user's database: this module is
used only to make throw-away stores in a temporary folder.  The tables,
indexes and triggers have the same meaning as agentao's (contract §2), so
agentao can open a demo store and keep working in it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
