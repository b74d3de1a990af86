"""Server time of a bulk action's dry run and Apply on a large store.

Builds a project store with N memories (default 100,000) and a user store
(bench_memories.build), then times through the app (Flask test client):

* the dry run of "all matching" for each action (500 rows planned: the cap),
  the list page's filter that selects them, the block effect, the warnings;
* Apply of a soft delete, a tag and a move of those 500 rows (one
  transaction per file, every lock first), each on a fresh copy of the stores.

Apply's time includes reading the changed file back whole (store.snapshot) to
give the block as it really is afterwards, which every single-row action does
too; at 100,000 rows that read is most of it.

Each request does at most ``actions.bulk.CAP`` rows of planning and writing,
whatever N is: the rest is said ("the first 500 of N") and done by running
it again.  Prints seconds per request.

    python bench/bench_bulk.py [--memories 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memories import build  # noqa: E402

from dashboard import create_app  # noqa: E402

HEADERS = {"Accept": "application/json", "Sec-Fetch-Site": "same-origin"}


def client_for(root: Path):
    return create_app(
        {"PROJECT_DIR": root / "project", "USER_DB": root / "user.db", "AUTH_TOKEN": False}
    ).test_client()


def timed(fn, runs):
    out, value = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        value = fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), max(out), value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
    t0 = time.perf_counter()
    build(base / "project" / ".agentao" / "memory.db", args.memories, "project", 1)
    build(base / "user.db", max(1, args.memories // 10), "user", 2)
    print(
        f"built {args.memories:,} project + {max(1, args.memories // 10):,} user memories "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    client = client_for(base)
    client.get("/memories")  # the snapshots, read once as the list page would
    plans = {}
    for action in ("delete", "tag", "move-user", "purge"):
        query = {"action": action, "all": "1", "scope": "project", "add_tag": "bulk-bench"}

        def plan(query=query):
            r = client.post("/memories/bulk/plan.json", data=query, headers=HEADERS)
            assert r.status_code == 200, r.get_data(as_text=True)[:300]
            return r.get_json()

        p50, worst, body = timed(plan, args.runs)
        plans[action] = body
        print(
            f"dry run {action:<10} {body['count']} of {body['total']:,}: p50 {p50:.3f} s, max {worst:.3f} s"
        )
    for action in ("delete", "tag", "move-user"):
        copy = Path(tempfile.mkdtemp(prefix="bench-bulk-copy-"))
        shutil.copytree(base / "project", copy / "project")
        shutil.copy(base / "user.db", copy / "user.db")
        other = client_for(copy)
        other.get("/memories")  # warm, as after the dry run the user just saw
        body = plans[action]
        form = {
            "action": action,
            "add_tag": "bulk-bench",
            "effect": body["effect"]["token"],
            "rows": [r["token"] for r in body["rows"] if r["changes"]],
        }
        t0 = time.perf_counter()
        r = other.post("/memories/bulk.json", data=form, headers=HEADERS)
        took = time.perf_counter() - t0
        assert r.status_code == 200, r.get_data(as_text=True)[:300]
        print(f"apply   {action:<10} {r.get_json()['count']} rows: {took:.3f} s")
        shutil.rmtree(copy)
    # For scale: one row's soft delete from its page, which reads the file back the same way.
    first = plans["delete"]["rows"][0]
    memory = client.get(f"/memories/{first['store']}/{first['id']}.json").get_json()
    t0 = time.perf_counter()
    r = client.post(
        f"/memories/{first['store']}/{first['id']}/delete",
        headers=HEADERS,
        data={"updated_at": memory["write"]["updated_at"], "row": memory["write"]["row"]},
    )
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    print(f"one row's delete (for scale): {time.perf_counter() - t0:.3f} s")
    shutil.rmtree(base)


if __name__ == "__main__":
    main()
