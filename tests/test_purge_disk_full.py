"""A hard purge on a really full disk: a tmpfs of a few megabytes, filled to 64–256 KB free.

Two stores, built by agentao, fail at the two places a purge can: one whose
DELETE needs more room than is left (nothing commits), one whose DELETE fits
but whose VACUUM, which rewrites the whole file, does not.  Then the rerun
after space is freed: in the same dashboard (it still knows the texts the
first run erased) and after a restart (it does not, and must say so).
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import warnings
from pathlib import Path

import pytest
from agentao_world import Agent, integrity, wait_for_job
from bs4 import BeautifulSoup

JSON = {"Accept": "application/json"}
WORDS = "alpha bravo delta echo kilo lima oscar tango quartz harbor".split()


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs mounted for this test (the tests run as root), unmounted after."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)], capture_output=True, text=True
    )
    if done.returncode:
        reason = (
            f"cannot mount a tmpfs here ({(done.stderr or done.stdout).strip()}): "
            "the disk-full purge tests need root and mount(8)"
        )
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)
    try:
        yield where
    finally:
        # The dashboard keeps a descriptor on each store it looked at (see
        # store.connection.read_header): detach lazily if it is still open.
        if subprocess.run(["umount", str(where)], capture_output=True).returncode:
            subprocess.run(["umount", "-l", str(where)], check=True)


def leave_free(disk: Path, free: int) -> Path:
    """Fill the file system until ``free`` bytes are left; returns the filler to delete."""
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.write(bytes(shutil.disk_usage(disk).free - free))
    assert abs(shutil.disk_usage(disk).free - free) < 8192
    return filler


def text(rng, n: int) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(n))


def listing(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir())


def dump(db: Path) -> dict:
    """Every row; read with immutable=1 (no side file created), so only when no -wal is left."""
    assert not Path(str(db) + "-wal").exists()
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return {
            t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}")))
            for t in ("memories", "memory_review_queue", "memory_events", "session_summaries")
        }
    finally:
        conn.close()


def purge_soft_deleted(client) -> dict:
    plan = client.get("/forget/plan/project.json?cat=soft_deleted&cat=events").get_json()
    r = client.post(
        "/forget/purge/project",
        headers=JSON,
        data={"cat": ["soft_deleted", "events"], "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
    )
    assert r.status_code in (200, 202), r.get_json()  # 200: it ended before the answer
    job = wait_for_job(client, r.get_json()["url"])
    assert job["state"] == "done", job
    return dict(job["results"][0], url=job["url"])


@pytest.mark.parametrize("free_kb", [64, 256])
def test_a_delete_that_does_not_fit_says_the_disk_is_full_and_changes_nothing(small_disk, free_kb):
    rng = random.Random(1)
    agent = Agent(small_disk)
    for n in range(60):  # 60 soft-deleted rows of ~4 KB: their DELETE rewrites ~75 pages
        agent.manager.delete(agent.save(f"note {n}", text(rng, 400)).id)
    client = agent.app().test_client()
    files = listing(agent.project_db)
    before = dump(agent.project_db)
    filler = leave_free(small_disk, free_kb * 1024)
    result = purge_soft_deleted(client)
    assert result["status"] == "disk_full"
    assert result["message"] == "The disk is full: nothing was changed, free space and try again."
    assert listing(agent.project_db) == files  # no side file left behind
    assert dump(agent.project_db) == before and integrity(agent.project_db, read_only=True) == "ok"
    os.remove(filler)
    again = purge_soft_deleted(client)
    assert again["status"] == "verified erased" and again["deleted"]["memory_deleted"] == 60


def test_a_vacuum_that_does_not_fit_then_the_reruns(small_disk):
    rng = random.Random(2)
    agent = Agent(small_disk)
    for n in range(60):  # live rows: the VACUUM must rewrite all of them
        agent.save(f"note {n}", text(rng, 400))
    secret = "The old staging password hint was the name of the first office cat, Biscuit."
    agent.manager.delete(agent.save("old hint", secret).id)
    agent.crystallize("I prefer zebra striped tables in every report.")
    [item] = agent.manager.list_review_items()
    client = agent.app().test_client()
    files = listing(agent.project_db)
    filler = leave_free(small_disk, 128 * 1024)

    first = purge_soft_deleted(client)
    assert first["message"].startswith("The rows were deleted, but the disk is full")
    assert "Nothing was changed" not in first["message"] and "again" in first["message"]
    assert first["status"] == "interrupted, retry" and first["deleted"]["memory_deleted"] == 1
    # Reject and erase evidence on the same full disk: rejected, deleted, not compacted.
    page = client.get(f"/reviews/erase?ids={item.id}", headers=JSON).get_json()
    r = client.post(
        "/reviews/erase",
        headers=JSON,
        json={"ids": [item.id], "confirm": 1, f"seen-{item.id}": page["items"][0]["seen"]},
    )
    [erased] = r.get_json()["items"]
    assert erased["rejected"] and erased["status"] == "interrupted, retry"
    assert "nothing was changed" not in erased["message"].lower(), erased["message"]
    assert "disk is full" in erased["message"]
    assert listing(agent.project_db) == files
    assert integrity(agent.project_db, read_only=True) == "ok"
    os.remove(filler)

    # A restart: the new dashboard never knew what the first run erased, and says so.
    restarted = agent.app().test_client()
    blind = purge_soft_deleted(restarted)
    assert blind["status"] == "verified erased" and blind["texts_checked"] == 0
    assert "no text was searched for" in blind["message"] and "that list is gone" in blind["message"]
    # The dashboard that ran the first purge still has its texts: its rerun looks for them.
    rerun = purge_soft_deleted(client)
    assert rerun["deleted"] == {} and rerun["status"] == "verified erased"
    assert rerun["texts_checked"] == rerun["earlier_texts_checked"] == 1
    assert "None of the 1 purged text searched for, including the 1 that an earlier" in rerun["message"]
    page = BeautifulSoup(client.get(rerun["url"]).get_data(as_text=True), "html.parser")
    assert (
        page.select_one('[data-field="texts_checked"]').text
        == "1 text searched for (1 of them erased by an earlier, unfinished run)"
    )
    assert secret.encode() not in agent.project_db.read_bytes()
