"""Fixtures: databases written by the real agentao 0.5.17, and apps over them.

Every test database is built through agentao's own API, so a schema change
in agentao shows up here as a failure rather than as a silently stale fixture.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agentao_world import Agent, BrowserClient, file_digest, seed_corpus  # noqa: F401
from flask import Flask
from jinja2 import BytecodeCache


class _CompiledTemplates(BytecodeCache):
    """Jinja's compiled templates, kept for the test process (keyed on each template's source).

    Tests build hundreds of apps; each would otherwise parse and compile every template it
    renders again.  Every app configures its Jinja environment the same way, so one app's
    code serves the next; an edited template has another checksum and is compiled anew.
    """

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()
_jinja_environment = Flask.create_jinja_environment


def _shared_code(app: Flask):
    env = _jinja_environment(app)
    env.bytecode_cache = _COMPILED
    return env


Flask.create_jinja_environment = _shared_code  # type: ignore[method-assign]


@pytest.fixture
def agent(tmp_path) -> Agent:
    """An empty project and user store, created by agentao itself."""
    return Agent(tmp_path)


@pytest.fixture(scope="module")
def seeded_files(tmp_path_factory) -> Path:
    """``seed_corpus``'s stores, written by agentao once per module (``seeded`` copies them)."""
    root = tmp_path_factory.mktemp("seeded")
    written = seed_corpus(Agent(root))
    for store in (written.project_store, written.user_store):
        store.close()
    return root


@pytest.fixture
def seeded(agent, seeded_files) -> Agent:
    """A small realistic corpus in both stores, written through agentao: a fresh copy of the
    module's ``seeded_files`` under ``agent``'s folder (agentao's writes cost a quarter second)."""
    for db in (agent.project_db, agent.user_db):
        for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):  # the empty stores' journal, if any
            leftover.unlink(missing_ok=True)
    shutil.copytree(seeded_files, agent.project_dir.parent, dirs_exist_ok=True)
    return agent


@pytest.fixture
def client(seeded):
    return seeded.app().test_client()


@pytest.fixture(params=["compiled", "numpy"])
def scan_loop(request, monkeypatch) -> str:
    """The byte scan's place-by-place loop, both ways: compiled at install (the module is there
    wherever the tests run: a missing one fails), and numpy's form of it, which runs when an
    install found no compiler.  Scan tests take it through ``pytest.mark.usefixtures``."""
    from dashboard.actions import grams

    if request.param == "numpy":
        monkeypatch.setattr(grams, "kernel", None)
    else:
        assert grams.kernel is not None, "dashboard_scan_kernel was not built at install"
    return request.param
