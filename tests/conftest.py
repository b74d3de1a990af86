"""Fixtures: databases written by the real agentao 0.5.17, and apps over them.

Every test database is built through agentao's own API, so a schema change
in agentao shows up here as a failure rather than as a silently stale fixture.
"""

from __future__ import annotations

import pytest

from agentao_world import Agent, BrowserClient, file_digest  # noqa: F401


@pytest.fixture
def agent(tmp_path) -> Agent:
    """An empty project and user store, created by agentao itself."""
    return Agent(tmp_path)


@pytest.fixture
def seeded(agent) -> Agent:
    """A small realistic corpus in both stores, written through agentao."""
    agent.save("user_language", "Answer in English, code comments too.", ["user"])
    agent.save("editor", "Uses Neovim with LazyVim.", ["profile"])
    agent.save("Package Manager", "This project uses uv; see pyproject.toml.", ["tooling"])
    agent.save("database", "PostgreSQL 16 in production, SQLite in tests.", ["infra"],
               type="project_fact")
    agent.save("release process", "Tag on main, CI builds the wheel.", ["workflow"])
    agent.save("部署 deploy", "部署脚本在 scripts/deploy.sh。", ["运维"])
    gone = agent.save("old api", "The old API lived at /v1.", ["legacy"])
    agent.manager.delete(gone.id)
    agent.summary("Set up uv and pytest.", session_id="session-a")
    agent.summary("Fixed the flaky retry test.", session_id="session-b")
    agent.crystallize("I prefer tabs over spaces. We must never push to main.")
    return agent


@pytest.fixture
def client(seeded):
    return seeded.app().test_client()
