"""A hard purge killed with SIGKILL while it rewrites the file: nothing is half-lost,
the file stays sound for agentao, and running the purge again finishes and verifies."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from agentao.memory import SQLiteMemoryStore
from agentao.memory.models import MemoryRecord
from agentao_world import Agent, integrity

from dashboard.actions import diskscan, purge
from dashboard.store import build_refs

ROOT = Path(__file__).resolve().parents[1]
ROWS, ROW_BYTES = 40, 400_000  # 16 MB in few writes: the VACUUM takes a while to write

PURGER = textwrap.dedent("""
    import sys
    from dashboard.actions import purge
    from dashboard.store import build_refs
    ref = next(r for r in build_refs(sys.argv[1], None) if r.kind == "project")
    # Each step on its own line, before the step runs: the test kills on "vacuum".
    purge.purge(ref, purge.plan(ref, ["soft_deleted"]),
                progress=lambda step, fraction=None: print(step, flush=True))
    print("finished", flush=True)
""")


def rows_by_id(db: Path, deleted: bool | None = None) -> dict:
    where = {None: "", True: " WHERE deleted_at IS NOT NULL", False: " WHERE deleted_at IS NULL"}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT id, content FROM memories" + where[deleted]))
    finally:
        conn.close()


def big_store(agent: Agent) -> None:
    """ROWS long memories written by agentao's store, every other one soft-deleted by it."""
    rng = random.Random(5)
    store = agent.project_store
    # Held open so that agentao's connections, closing after each write, are not
    # the last one and do not checkpoint the growing file every time.
    held = sqlite3.connect(agent.project_db)
    for n in range(ROWS):
        # Distinct text per row, long enough to spill over dozens of overflow pages.
        text = rng.randbytes(ROW_BYTES * 4 // 9).hex(" ", 4)
        record = store.upsert_memory(
            MemoryRecord(
                id=f"bulk{n:04d}",
                scope="project",
                type="note",
                key_normalized=f"bulk {n}",
                title=f"bulk {n}",
                content=text,
                tags=["bulk"],
            )
        )
        if n % 2:
            store.soft_delete_memory(record.id)
    held.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # start from an empty WAL, as after a quiet night
    held.close()


def stamp(db: Path) -> tuple:
    """Size and modification time of the database and its WAL: changes on every write."""
    out = []
    for path in (db, Path(str(db) + "-wal")):
        try:
            st = path.stat()
            out += [st.st_size, st.st_mtime_ns]
        except FileNotFoundError:
            out += [None, None]
    return tuple(out)


def test_purge_killed_while_rewriting_then_rerun_verifies(seeded):
    db = seeded.project_db
    big_store(seeded)
    before, gone = rows_by_id(db), rows_by_id(db, deleted=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", PURGER, str(seeded.project_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    steps = []
    try:
        while not steps or steps[-1] != "vacuum":
            steps.append(proc.stdout.readline().strip())
            assert steps[-1], f"the purge ended before its VACUUM: {steps}"
        # The DELETE has committed; kill as soon as the VACUUM writes the new file
        # (its pages go to the WAL, then into the database).
        start, deadline = stamp(db), time.monotonic() + 20
        while stamp(db) == start and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.0005)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        proc.kill()
        rest = proc.stdout.read().split()
        proc.stdout.close()
    assert "finished" not in rest and "scan" not in rest, f"killed too late: {steps + rest}"

    assert integrity(db) == "ok"
    after = rows_by_id(db)
    purged = set(gone) - after.keys()
    assert purged in (set(), set(gone))  # the DELETE committed whole, or not at all
    assert after == {k: v for k, v in before.items() if k not in purged}  # every byte of the rest

    again = Agent(seeded.project_dir.parent)  # the agent, next morning
    again.save("after the crash", "The purge was killed and the agent carried on.", ["ops"])
    assert "after the crash" in {m.title for m in again.manager.get_all_entries()}
    assert SQLiteMemoryStore.open(db).get_memory_by_id(next(iter(set(before) - set(gone))))

    ref = next(r for r in build_refs(seeded.project_dir, seeded.user_db) if r.kind == "project")
    rerun = purge.purge(ref, purge.plan(ref, ["soft_deleted"]), verify_texts=list(gone.values()))
    assert rerun.status == "verified erased", rerun.message
    assert {v["sha256"] for v in rerun.verification} >= {diskscan.sha256_text(t) for t in gone.values()}
    assert not any(v["files"] for v in rerun.verification)
    assert integrity(db) == "ok"


SCANNER = textwrap.dedent("""
    import sys, time
    from dashboard.actions import purge
    from dashboard.store import build_refs
    ref = next(r for r in build_refs(sys.argv[1], None) if r.kind == "project")

    def told(step, fraction=None):
        print(step, fraction, flush=True)
        if step == "scan":
            time.sleep(0.05)   # a slow disk: the test kills it with the scan under way
    purge.purge(ref, purge.plan(ref, ["soft_deleted"]), progress=told)
    print("finished", flush=True)
""")


def test_purge_killed_during_its_scan_shows_progress_and_the_rerun_gives_a_verdict(seeded):
    db = seeded.project_db
    big_store(seeded)
    gone = rows_by_id(db, deleted=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", SCANNER, str(seeded.project_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    fractions = []
    try:
        # Killed once the scan has told of some bytes read, and not all.
        while not fractions or not 0 < fractions[-1] < 0.5:
            line = proc.stdout.readline().split()
            assert line and line[0] != "finished", f"the purge ended first: {fractions}"
            if line[0] == "scan":
                fractions.append(float(line[1]))
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        proc.kill()
        proc.stdout.close()
    assert fractions == sorted(fractions) and len(set(fractions)) >= 2
    assert integrity(db) == "ok"
    assert rows_by_id(db, deleted=True) == {}  # the delete had committed before the scan

    ref = next(r for r in build_refs(seeded.project_dir, seeded.user_db) if r.kind == "project")
    rerun = purge.purge(ref, purge.plan(ref, ["soft_deleted"]), verify_texts=list(gone.values()))
    assert rerun.status == "verified erased" and rerun.message, rerun.message
    assert {v["sha256"] for v in rerun.verification} == {diskscan.sha256_text(t) for t in gone.values()}
    assert not any(v["files"] for v in rerun.verification)
