"""Fixtures: databases written by the real agentao 0.5.17, and apps over them.

Every test database is built through agentao's own API, so a schema change
in agentao shows up here as a failure rather than as a silently stale fixture.
"""

from __future__ import annotations

import pytest
from agentao_world import Agent, BrowserClient, file_digest, seed_corpus  # noqa: F401


@pytest.fixture
def agent(tmp_path) -> Agent:
    """An empty project and user store, created by agentao itself."""
    return Agent(tmp_path)


@pytest.fixture
def seeded(agent) -> Agent:
    """A small realistic corpus in both stores, written through agentao."""
    return seed_corpus(agent)


@pytest.fixture
def client(seeded):
    return seeded.app().test_client()
