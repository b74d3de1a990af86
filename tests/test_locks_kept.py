"""Looking at a store's bytes never drops the dashboard's own SQLite locks.

Closing any descriptor of a file drops every POSIX lock the process holds on
it, and SQLite keeps its WAL write lock in the ``-shm``.  A byte scan or a lock
probe that opened and closed the files while a dashboard thread was inside a
write transaction let agentao write the same pages at the same time: the
concurrency bench found the project store corrupt.  Here a write transaction
is held while each of those looks run, and a second, real process must still
be locked out.
"""

from __future__ import annotations

import subprocess
import sys

from dashboard.actions import diskscan, sidefiles
from dashboard.store import connection, full_disk

TRY_WRITE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
try:
    conn.execute("BEGIN IMMEDIATE")
    print("got the write lock")
except sqlite3.OperationalError as exc:
    print("locked out:", exc)
"""


def other_process_writes(db) -> str:
    return subprocess.run(
        [sys.executable, "-c", TRY_WRITE, str(db)], capture_output=True, text=True, timeout=30
    ).stdout.strip()


def test_scans_and_probes_keep_the_write_lock_of_a_transaction_in_progress(agent):
    agent.save("editor", "Use vim for quick edits.")
    db = agent.project_db
    with connection.write(db) as conn:
        conn.execute("UPDATE memories SET title = title")
        assert other_process_writes(db).startswith("locked out")
        looks = {
            "the purge's byte scan": lambda: diskscan.scan(sidefiles.sqlite_files(db), ["Use vim"]),
            "the residue report's WAL reading": lambda: sidefiles.wal_state(db),
            # As after a failed write that created both side files: the probe must find
            # the store in use (this transaction) and remove nothing.
            "the failed write's tidy-up": lambda: full_disk.tidy_failed_write(
                db, {"-wal": None, "-shm": None}, {"-wal": 0, "-shm": 32768}
            ),
        }
        for name, look in looks.items():
            look()
            assert other_process_writes(db).startswith("locked out"), (
                f"{name} dropped the transaction's locks"
            )
        assert connection.side_files(db)["-shm"] is not None


def test_a_side_file_the_agent_removes_during_the_scan_is_read_to_its_end(tmp_path):
    """agentao removes its -wal and -shm when its last connection closes; a purge's byte scan
    that had started on one reads what it held (as an open file would), never fails."""
    from dashboard.store.descriptors import KeptReader

    shm = tmp_path / "memory.db-shm"
    shm.write_bytes(b"purged text " * 1000)
    reader = KeptReader(shm)
    shm.unlink()
    assert reader.read(12) == b"purged text "
    assert reader.read().endswith(b"purged text ")
