"""A large findings scan runs its near-duplicate join in a forked child: the report
must be the one an in-process scan gives, and a child that fails or hangs must
cost nothing but time."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

import pytest

from agentao_world import seed_corpus
from dashboard.findings import beside, scan as scan_module
from dashboard.findings.beside import Beside
from dashboard.findings.scan import CATEGORIES, REACH
from dashboard.store import build_refs

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
needs_fork = pytest.mark.skipif(not beside._can_fork(), reason="fork needs Linux and 2 cores")


def _in_child_only(parent: int, action):
    def fn(*args):
        if os.getpid() != parent:
            action()
        return sum(args)
    return fn


@needs_fork
def test_the_childs_answer_is_the_functions():
    job = Beside(sorted, [3, 1, 2], fork=True)
    assert job.result() == [1, 2, 3] and job.forked


@needs_fork
def test_a_child_that_dies_leaves_the_work_to_the_caller():
    job = Beside(_in_child_only(os.getpid(), lambda: os._exit(3)), 2, 3)
    assert job.result() == 5 and not job.forked


@needs_fork
def test_a_child_that_raises_leaves_the_work_to_the_caller():
    def boom():
        raise RuntimeError("only in the child")
    job = Beside(_in_child_only(os.getpid(), boom), 2, 3)
    assert job.result() == 5 and not job.forked


@needs_fork
def test_a_child_that_hangs_is_killed_and_the_caller_does_the_work(monkeypatch):
    monkeypatch.setattr(beside, "TIMEOUT_S", 0.5)
    job = Beside(_in_child_only(os.getpid(), lambda: time.sleep(60)), 2, 3)
    child, started = job.pid, time.monotonic()
    assert job.result() == 5 and not job.forked
    assert time.monotonic() - started < 5
    with pytest.raises(ChildProcessError):      # reaped: no zombie left behind
        os.waitpid(child, os.WNOHANG)


@needs_fork
def test_in_child_arguments_reach_only_the_child():
    # The join gets a list to hold what it would free on return only in the
    # child, which exits without freeing; the caller's own run frees as usual.
    def where(x, held=None):
        return x, held
    assert Beside(where, 1, in_child={"held": []}).result() == (1, [])
    job = Beside(where, 1, fork=False, in_child={"held": []})
    assert job.result() == (1, None) and not job.forked
    dying = Beside(_in_child_only(os.getpid(), lambda: os._exit(3)), 2, 3, in_child={})
    assert dying.result() == 5


@needs_fork
def test_the_time_spent_waiting_for_the_child_is_measured():
    # The benchmark prints it: near zero when the caller's own work was the longer half.
    slow = Beside(_in_child_only(os.getpid(), lambda: time.sleep(0.3)), 2, 3)
    assert slow.result() == 5 and slow.forked and 0.25 <= slow.waited < 5
    quick = Beside(sorted, [2, 1])
    time.sleep(0.3)
    assert quick.result() == [1, 2] and quick.forked and quick.waited < 0.25
    assert Beside(sorted, [2, 1], fork=False).waited == 0.0


def test_an_error_in_the_function_reaches_the_caller():
    with pytest.raises(ZeroDivisionError):
        Beside(lambda: 1 / 0).result()


def test_no_fork_when_asked_not_to(monkeypatch):
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    job = Beside(sorted, [2, 1], fork=False)
    assert job.result() == [1, 2] and not job.forked


@pytest.fixture
def refs(agent):
    seed_corpus(agent, services=5)
    # Soft-deleted rows between the duplicates: the child picks the live rows out
    # itself, and the rows it names must be the ones this process numbers.
    agent.manager.delete(agent.save("gone before", "This project uses uv; run uv sync then uv run pytest.").id)
    for n in range(6):
        if n == 3:
            agent.manager.delete(agent.save("gone between", "a note soon deleted").id)
        agent.save(f"uv note {n}", "This project uses uv; run uv sync then uv run pytest.", ["tooling"])
    agent.save("uv note colon", "This project uses uv: run uv sync, then uv run pytest", ["tooling"])
    agent.save("user_contact", "Reach me at alice.smith@acme-corp.io", ["user"])
    agent.save("pasted doc", "lorem ipsum dolor " * 210, ["doc"])
    return build_refs(agent.project_dir, agent.user_db)


def _dicts(report):
    return [i.to_dict() for i in report.items]


@needs_fork
def test_a_forked_scan_reports_what_an_in_process_scan_does(refs, monkeypatch):
    monkeypatch.setattr(scan_module, "FORK_MIN_ROWS", 10**9)
    alone = scan_module.scan(refs, NOW)
    monkeypatch.setattr(scan_module, "FORK_MIN_ROWS", 0)
    forked = scan_module.scan(refs, NOW)
    assert not alone.forked and forked.forked
    duplicates = [i for i in _dicts(forked) if i["rule"] == "conflict.duplicate"]
    assert len(duplicates) == 7 and all(i["related"] for i in duplicates)
    assert _dicts(forked) == _dicts(alone)
    # The page's order: category, then reach; conflicts sit between the text findings and upkeep.
    order = [(list(CATEGORIES).index(i["category"]), list(REACH).index(i["reach"]))
             for i in _dicts(forked)]
    assert order == sorted(order)
    assert {i["category"] for i in _dicts(forked)} >= {"personal", "conflict", "upkeep"}


def test_a_scan_leaves_the_garbage_collector_as_it_found_it(refs):
    # The scan pauses the cyclic collector process-wide; a server left without it
    # would never free reference cycles again.
    import gc
    assert gc.isenabled()
    scan_module.scan(refs, NOW)
    assert gc.isenabled()
    gc.disable()
    try:
        scan_module.scan(refs, NOW)
        assert not gc.isenabled()
    finally:
        gc.enable()
