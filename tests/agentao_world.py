"""The real agentao, as the tests' source of truth: databases written through its own API.

Shared by every test directory (``pythonpath = ["tests"]`` in pyproject.toml);
fixtures that use it live in ``tests/conftest.py``.  Kept out of conftest so
that ``tests/engine`` and ``tests/browser`` can have conftests of their own
without a module-name clash.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
import time
from pathlib import Path

import agentao.memory.retriever as agentao_retriever
from agentao.memory import MemoryManager, MemoryPromptRenderer, MemoryRetriever, SQLiteMemoryStore
from agentao.memory.models import SaveMemoryRequest
from flask.testing import FlaskClient

from dashboard import create_app


class Agent:
    """A real agentao MemoryManager over a project folder and a user store."""

    def __init__(self, root: Path, with_user_store: bool = True):
        self.project_dir = root / "project"
        self.project_db = self.project_dir / ".agentao" / "memory.db"
        self.user_db = root / "home" / ".agentao" / "memory.db" if with_user_store else None
        self.project_store = SQLiteMemoryStore.open(self.project_db)
        self.user_store = SQLiteMemoryStore.open(self.user_db) if with_user_store else None
        self.manager = MemoryManager(self.project_store, self.user_store)

    def save(self, key, value, tags=(), scope=None, type=None, source="explicit"):
        return self.manager.upsert(
            SaveMemoryRequest(key=key, value=value, tags=list(tags), scope=scope, type=type, source=source)
        )

    def summary(self, text, session_id=None, tokens_before=1000, messages=10):
        if session_id is not None:
            self.manager._session_id = session_id
        return self.manager.save_session_summary(text, tokens_before, messages)

    def crystallize(self, *user_texts):
        return self.manager.crystallize_user_messages([{"role": "user", "content": t} for t in user_texts])

    def app(self, **config):
        # No access token unless a test asks for one (tests/test_security.py does).
        app = create_app(
            {
                "PROJECT_DIR": self.project_dir,
                "USER_DB": self.user_db,
                "TESTING": True,
                "AUTH_TOKEN": False,
                **config,
            }
        )
        app.test_client_class = BrowserClient
        return app


class BrowserClient(FlaskClient):
    """A test client that, like a browser on the dashboard's own page, sends
    ``Sec-Fetch-Site: same-origin``; pass another value in ``headers`` to override."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.environ_base["HTTP_SEC_FETCH_SITE"] = "same-origin"


def file_digest(*paths: Path) -> dict:
    """sha256 of each existing file and its side files, to prove nothing was written."""
    out = {}
    for p in paths:
        if p is None:
            continue
        for suffix in ("", "-wal", "-shm", "-journal"):
            f = Path(str(p) + suffix)
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest() if f.exists() else None
    return out


def integrity(db: Path, read_only: bool = False) -> str:
    """SQLite's ``PRAGMA integrity_check`` of ``db`` ("ok" when sound).

    ``read_only`` opens it without ever writing; otherwise a hot journal left
    by a killed writer is rolled back first, as any agentao open would.
    """
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True) if read_only else sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def seed_corpus(agent: Agent, services: int = 0) -> Agent:
    """A small realistic corpus through agentao: both scopes, a soft-deleted row,
    summaries of two sessions and two review candidates; ``services`` adds that
    many near-identical "service NN" notes (the browser tests' recall fodder)."""
    agent.save("user_language", "Answer in English, code comments too.", ["user"])
    agent.save("editor", "Uses Neovim with LazyVim.", ["profile"])
    agent.save("Package Manager", "This project uses uv; see pyproject.toml.", ["tooling"])
    agent.save("database", "PostgreSQL 16 in production, SQLite in tests.", ["infra"], type="project_fact")
    agent.save("release process", "Tag on main, CI builds the wheel.", ["workflow"])
    agent.save("部署 deploy", "部署脚本在 scripts/deploy.sh。", ["运维"])
    for n in range(services):
        agent.save(f"service {n:02d}", f"Service {n:02d} listens on port {8000 + n}.", ["ports"])
    gone = agent.save("old api", "The old API lived at /v1.", ["legacy"])
    agent.manager.delete(gone.id)
    agent.summary("Set up uv and pytest.", session_id="session-a")
    agent.summary("Fixed the flaky retry test.", session_id="session-b")
    agent.crystallize("I prefer tabs over spaces. We must never push to main.")
    return agent


def agentao_blocks(agent, query, session_id=None, now=None):
    """agentao's own two blocks for ``agent``'s stores, with its clock pinned: ``session_id``
    is the session it starts (None: a brand-new one), ``query`` the user's message."""
    mgr = agent.manager
    mgr.archive_session(session_id)
    renderer = MemoryPromptRenderer()
    tail = mgr.get_cross_session_tail()
    shown = renderer.fit_stable_records(mgr.get_stable_entries(), session_tail=tail)
    stable = renderer.render_stable_block(shown, session_tail=tail)
    real = agentao_retriever.datetime

    class Pinned(real):
        @classmethod
        def now(cls, tz=None):
            return now.astimezone(tz)

    agentao_retriever.datetime = Pinned
    try:
        cands = MemoryRetriever(mgr).recall_candidates(query, exclude_ids={r.id for r in shown})
    finally:
        agentao_retriever.datetime = real
    return stable, renderer.render_dynamic_block(cands)


def wait_for_job(client, url, timeout=120.0) -> dict:
    """A forget job's JSON once it stopped running (or after ``timeout`` seconds: generous, for a
    busy machine three times slower; never reached when all works)."""
    deadline = time.monotonic() + timeout
    while True:
        data = client.get(url + ".json").get_json()
        if data["state"] != "running" or time.monotonic() > deadline:
            return data
        time.sleep(0.02)


def agent_command(folder: Path, with_jieba: bool) -> Path:
    """An ``agentao`` command as pip installs it in ``folder``, whose interpreter finds jieba
    or not (``-S``: this interpreter without its site-packages, where jieba lives)."""
    folder.mkdir(parents=True)
    python = sys.executable
    if not with_jieba:
        python = str(folder / "python-without-jieba")
        Path(python).write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
        os.chmod(python, 0o755)
    command = folder / "agentao"
    command.write_text(
        f"#!{python}\nimport sys\nfrom agentao.cli import entrypoint\nsys.exit(entrypoint())\n"
    )
    os.chmod(command, 0o755)
    return command
