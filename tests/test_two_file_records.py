"""A stopped two-file action's record whose fields are missing or wrong (issue 29/30 follow-up).

A record left on disk (``dashboard-intent-<id>.json``) names a known action but a field its
finisher reads is missing, of another type, too long, a lone surrogate, or a path that is not
one of the record's stores.  Finishing it raised: a 500 on every write to the store, and a
dashboard that would not start.  Now it is said, with the field that is wrong; nothing the user
owns is changed, the record stays where it is, writes go on, and once the record is whole
again it is finished as before.
"""

from __future__ import annotations

import hashlib
import json
import signal
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from test_two_file_actions import SPLITS, _intents, served_lines

from dashboard.actions import twofile

JSON = {"Accept": "application/json"}
MISSING = object()
NOT_READ = {"version"}  # a field no finisher reads: changing it changes nothing
# "action" is not tried: a record of an action this dashboard does not know is not its to read.
PATHS = {"source", "dest", "queue", "path"}  # where a finisher writes


def _fields(value, where=""):
    """Every field of a record, as the message names it: ``rows[0].dest``, ``runs.user.token``."""
    if isinstance(value, dict):
        for name, inner in value.items():
            at = f"{where}.{name}" if where else name
            if at not in NOT_READ | {"action"}:
                yield at, inner
                yield from _fields(inner, at)
    elif isinstance(value, list) and value:
        yield f"{where}[0]", value[0]
        yield from _fields(value[0], f"{where}[0]")


def _changed(record, field, value):
    """``record`` with ``field`` set to ``value`` (deleted when MISSING)."""
    record = json.loads(json.dumps(record))
    parts = field.replace("[0]", ".0").split(".")
    holder = record
    for part in parts[:-1]:
        holder = holder[int(part)] if isinstance(holder, list) else holder[part]
    last = int(parts[-1]) if isinstance(holder, list) else parts[-1]
    if value is MISSING:
        del holder[last]
    else:
        holder[last] = value
    return record


def _wrong(record, field, elsewhere):
    """What a person's disk can hold instead: each one must be refused."""
    values = [5, "x" * (1 << 20), "\ud800"]
    if not field.endswith("[0]") and field not in ("runs.project", "runs.user"):
        values.append(MISSING)  # (a store's part left out of a purge is a purge of the other)
    if field.rsplit(".", 1)[-1] in PATHS:
        values.append(elsewhere)  # a store the record does not name
    if field.endswith(".token") and not record["runs"][field.split(".")[1]]["done"]:
        values.append("not a fingerprint")  # (a part purged already is not read again)
    return values


def _files(agent) -> dict[str, str]:
    """What the user owns: both stores' files, byte for byte."""
    found = {}
    for db in (agent.project_db, agent.user_db):
        for side in ("", "-wal"):
            path = Path(str(db) + side)
            if path.exists():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.mark.parametrize("action", list(SPLITS))
def test_a_record_with_a_wrong_field_is_said_not_finished_and_kept(agent, action, tmp_path):
    split, _half, whole = SPLITS[action]
    code, _keys, state = split(agent)
    assert code == -signal.SIGKILL
    [name] = _intents(agent.project_db, agent.user_db)
    path = next(db.parent / name for db in (agent.project_db, agent.user_db) if (db.parent / name).exists())
    genuine = json.loads(path.read_text())
    before, owned = state(), _files(agent)
    app = agent.app()
    elsewhere = str(tmp_path / "elsewhere" / "memory.db")

    tried = 0
    for field, _inner in list(_fields(genuine)):
        for value in _wrong(genuine, field, elsewhere):
            body = json.dumps(_changed(genuine, field, value))
            path.write_text(body)
            shown = "missing" if value is MISSING else repr(value)[:20]
            [report] = twofile.recover(app) or [(field, shown)]
            assert f"“{field}”" in report["text"], (field, shown, report["text"])
            assert not report["finished"] and report["kept"] == str(path), (field, shown)
            assert len(report["text"]) < 1000, (field, shown)  # the value is not quoted
            assert path.read_text() == body, (field, shown)  # left where it was, as it was
            assert state() == before and _files(agent) == owned, (field, shown)
            tried += 1
    assert tried > 20

    # A write goes on past it, the pages say it, and nothing is lost: made whole, it is finished.
    path.write_text(json.dumps(_changed(genuine, "started", "\ud800")))
    client = app.test_client()
    other = agent.save("unrelated", "Another fact.", scope="project")
    r = client.post(
        f"/memories/project/{other.id}/delete", headers=JSON, data={"updated_at": other.updated_at}
    )
    assert r.status_code == 200, r.get_json()
    [said] = client.get("/overview.json").get_json()["recovered"]
    assert said["kept"] == str(path) and "“started”" in said["text"]
    page = BeautifulSoup(client.get("/memories").get_data(as_text=True), "html.parser")
    assert "“started”" in page.select_one(f"[data-recovered={action}]").get_text()
    assert path.exists()
    path.write_text(json.dumps(genuine))
    [report] = twofile.recover(app)
    assert report["finished"] and "kept" not in report, report
    assert set(state()) == ({whole} if action != "purge" else {0})
    assert _intents(agent.project_db, agent.user_db) == []


def test_the_command_line_starts_past_a_record_it_cannot_read_and_prints_why(agent):
    code, _keys, state = SPLITS["move"][0](agent)
    assert code == -signal.SIGKILL
    [name] = _intents(agent.project_db, agent.user_db)
    path = next(db.parent / name for db in (agent.project_db, agent.user_db) if (db.parent / name).exists())
    record = json.loads(path.read_text())
    record["rows"] = 5
    path.write_text(json.dumps(record))
    lines = served_lines(agent)
    assert any("“rows”" in line and str(path) in line for line in lines), lines
    assert set(state()) == {(1, 1)} and path.exists()


def test_a_bulk_purge_whose_second_store_is_gone_is_said_not_a_500(agent):
    code, _keys, _state = SPLITS["purge"][0](agent)
    assert code == -signal.SIGKILL
    for suffix in ("", "-wal", "-shm"):
        Path(str(agent.user_db) + suffix).unlink(missing_ok=True)
    [report] = twofile.recover(agent.app())
    assert report["finished"] and "could not be finished now" in report["text"], report
    assert _intents(agent.project_db, agent.user_db) == []


@pytest.mark.parametrize("action", [["move"], {"move": 1}, 5, None])
def test_a_record_whose_action_is_not_a_name_is_left_alone(agent, action):
    other = agent.save("unrelated", "Another fact.", scope="project")
    record = agent.project_db.parent / "dashboard-intent-odd.json"
    record.write_text(json.dumps({"action": action, "stores": [str(agent.project_db)]}))
    r = (
        agent.app()
        .test_client()
        .post(f"/memories/project/{other.id}/delete", headers=JSON, data={"updated_at": other.updated_at})
    )
    assert r.status_code == 200, r.get_json()
    assert record.exists()
