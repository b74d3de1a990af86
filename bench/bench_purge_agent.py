"""Hard purges of "everything" while a real agentao process keeps working on the same file.

    /work/main/.venv/bin/python bench/bench_purge_agent.py              # 20 s
    /work/main/.venv/bin/python bench/bench_purge_agent.py --seconds 60 --pause 1

A child process runs agentao's MemoryManager in a loop (--agent-pause
between writes): it crystallizes new review candidates, saves memories,
forgets some, and one write in --repeat-every says an earlier sentence
again (agentao folds that into its pending item: a row a dry run may list
changes, and a purge that confirmed it must refuse).
Meanwhile the dashboard (its app, in this process) does what a person does:
dry run of everything, reads it for --pause seconds, then the purge form,
and waits for the job.  Prints
the agent's writes attempted / found afterwards, the purges attempted /
done / refused by reason, their verdicts, rows erased and kept, false
residue verdicts ("found on disk" for a text a live row holds after the
scan: must be 0) and PRAGMA integrity_check.  Bounded by --seconds.
"""

from __future__ import annotations

import argparse
import collections
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

AGENT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from agentao.memory import MemoryManager, SQLiteMemoryStore
    from agentao.memory.models import SaveMemoryRequest
    stop, REPEAT, PAUSE = Path(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    m = MemoryManager(SQLiteMemoryStore.open(sys.argv[1]), SQLiteMemoryStore.open(sys.argv[2]))
    tries = ok = notes = 0
    said = []
    print("ready", flush=True)
    while not stop.exists():
        n = tries
        word = "".join(chr(97 + int(d)) for d in f"{n:05d}")
        try:
            tries += 1
            if n % REPEAT == REPEAT - 1 and said:   # the user says it again: a fold
                m.crystallize_user_messages([{"role": "user", "content": said[n % len(said)]}])
            elif n % 3 == 0:
                said.append(f"I prefer {word} striped tables in reports.")
                m.crystallize_user_messages([{"role": "user", "content": said[-1]}])
            elif n % 3 == 1:
                m.upsert(SaveMemoryRequest(key=f"note {word}", value=f"Kept note {word}."))
                notes += 1
            else:
                m.delete(m.upsert(SaveMemoryRequest(key=f"old {word}", value=f"Old {word}.")).id)
            ok += 1
        except Exception as exc:
            print(f"write {n} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        time.sleep(PAUSE)
    print(f"{tries} {ok} {notes}", flush=True)
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--pause",
        type=float,
        default=0.2,
        help="seconds between the dry run and the click (a person reading it)",
    )
    parser.add_argument(
        "--agent-pause", type=float, default=0.01, help="seconds the agent waits between two writes"
    )
    parser.add_argument(
        "--repeat-every",
        type=int,
        default=40,
        help="one agent write in this many repeats an earlier sentence",
    )
    args = parser.parse_args()
    from agentao_world import Agent, integrity, seed_corpus

    with tempfile.TemporaryDirectory() as tmp:
        world = seed_corpus(Agent(Path(tmp)))
        stop = Path(tmp) / "stop"
        agent = subprocess.Popen(
            [
                sys.executable,
                "-c",
                AGENT,
                str(world.project_db),
                str(world.user_db),
                str(stop),
                str(args.repeat_every),
                str(args.agent_pause),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert agent.stdout.readline().strip() == "ready"
        try:
            report = drive(world, args.seconds, args.pause)
        finally:
            stop.touch()  # whatever happened, the agent stops before its folder goes
            tries, ok, notes = map(int, agent.stdout.readline().split() or (0, 0, 0))
            agent.wait(timeout=30)
        conn = sqlite3.connect(world.project_db)
        found = conn.execute(
            "SELECT count(*) FROM memories WHERE title LIKE 'note %' AND deleted_at IS NULL"
        ).fetchone()[0]
        conn.close()
        # Live memories are never in a purge of "everything": every one saved must be there.
        print(f"agent writes attempted {tries}, committed {ok}; live notes saved {notes}, found {found}")
        print(report)
        print(f"integrity_check: {integrity(world.project_db)}")


def drive(world, seconds: float, pause: float) -> str:
    """Dry run and purge of everything, again and again, for ``seconds``; the figures as text."""
    from dashboard.store import purge as sql

    app = world.app()
    client = app.test_client()
    counts, verdicts = collections.Counter(), collections.Counter()
    erased = kept = false_residue = again = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        plan = client.get("/forget/plan/project.json?cat=everything").get_json()
        counts["attempted"] += 1
        time.sleep(pause)
        r = client.post(
            "/forget/purge/project",
            headers={"Accept": "application/json"},
            data={"cat": "everything", "fingerprint": plan["fingerprint"], "confirm": plan["name"]},
        )
        if r.status_code not in (200, 202):
            reason = r.get_json()["message"]
            counts[
                "refused: "
                + (
                    "a confirmed row changed"
                    if "rows you confirmed changed" in reason
                    else reason.split(". ")[0]
                )
            ] += 1
            continue
        job_id = r.get_json()["id"]
        while (job := app.extensions["forget_jobs"].get(job_id)).state == "running":
            time.sleep(0.01)
        [result] = job.result["results"]
        counts["done" if result.status not in ("changed",) else "refused in the job: changed"] += 1
        verdicts[result.status] += 1
        erased += sum(result.deleted.values())
        kept += len(getattr(result, "kept", ()))  # (main's results had no ``kept``)
        again += sum(1 for v in result.verification if v.get("saved_again"))
        if result.status == "found on disk":
            live = sql.remaining_text(_ref(world))
            texts = {h: t for t in result.texts for h in [_sha(t)]}
            hits = [v for v in result.verification if v["files"]]
            if all(texts.get(v["sha256"], "\0").encode() in live for v in hits):
                false_residue += 1
    return "\n".join(
        [
            f"purges attempted {counts.pop('attempted')}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
            "verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
            f"rows erased {erased}, rows kept because they arrived after the dry run {kept}",
            f"texts saved again by the agent during a scan {again}; "
            f"false residue verdicts {false_residue} (must be 0)",
        ]
    )


def _ref(world):
    from dashboard.store import build_refs

    return next(r for r in build_refs(world.project_dir, world.user_db) if r.kind == "project")


def _sha(text: str) -> str:
    from dashboard.actions.diskscan import sha256_text

    return sha256_text(text)


if __name__ == "__main__":
    main()
