"""Odd values in every stored column: every GET page answers, and the other rows keep showing.

agentao writes well-formed rows, but a hand edit, another tool or a bug can
leave anything SQLite accepts: numbers where text belongs, blobs, NUL bytes,
invalid UTF-8, JSON of the wrong shape or nested thousands deep, values of
megabytes.  Each such value goes into one copy of an agentao-written row with
raw SQL; the pages are found from ``app.url_map`` (tests/hostile.py), their
path arguments filled from the odd rows themselves.
"""

from __future__ import annotations

import sqlite3

import pytest
from agentao_world import file_digest, seed_corpus
from hostile import get_routes

DEEP = 5000
SHAPES = {
    "integer": 42,
    "real": -1.5e308,  # (TEXT columns keep numbers as text; INTEGER ones do not)
    "blob": b"\x00\xff\xfebin",
    "nul": "before\x00after",
    "bad_utf8": "bad_utf8",  # replaced below by CAST(bytes AS TEXT)
    "empty": "",
    "huge": "h" * 100_000,  # 25 times what agentao lets a memory hold
    "deep_array": "[" * DEEP + "]" * DEEP,
    "deep_object": '{"a":' * DEEP + "1" + "}" * DEEP,
    "json_object": '{"tag": "x"}',
    "json_mixed": '[1, null, true, [2, ["x"]], {"a": "b"}, "ok"]',
    "date_min": "0001-01-01T00:00:00+01:00",
    "date_max": "9999-12-31T23:59:59-14:00",
    "not_a_date": "yesterday-ish",
    "bidi": "\u202eexe.pdf\u200b",
}
BAD_UTF8 = b"caf\xe9 \xff\xfe \xc3\x28"
TABLES = {  # table -> (columns to spoil, the row to copy, its key column)
    "memories": (
        "id",
        "scope",
        "type",
        "key_normalized",
        "title",
        "content",
        "tags_json",
        "keywords_json",
        "source",
        "confidence",
        "sensitivity",
        "created_at",
        "updated_at",
        "deleted_at",
    ),
    "memory_review_queue": (
        "id",
        "scope",
        "type",
        "key_normalized",
        "title",
        "content",
        "tags_json",
        "evidence",
        "source_session",
        "occurrences",
        "confidence",
        "status",
        "created_at",
        "updated_at",
    ),
    "session_summaries": (
        "id",
        "session_id",
        "summary_text",
        "tokens_before",
        "messages_summarized",
        "created_at",
    ),
    "memory_events": ("memory_id", "event_type", "timestamp", "detail"),
}
SENTINEL = "Sentinel fact that must stay visible."


def spoil(conn, table: str, column: str, shape: str, value, n: int) -> str:
    """Copy the table's first row with ``column`` set to ``value``; the copy's id."""
    cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    first = conn.execute(f"SELECT * FROM {table} ORDER BY rowid LIMIT 1").fetchone()
    row = dict(zip(cols, first))
    new_id = f"odd-{table[:6]}-{column}-{shape}"
    if "id" in row and table != "memory_events":
        row["id"] = new_id
    else:
        row.pop("id", None)
    if "key_normalized" in row:  # unique among pending / live rows
        row["key_normalized"] = f"odd_{n}"
        if table == "memories":
            row["deleted_at"] = None
    row[column] = value
    if table == "memories" and column == "id":
        new_id = value
    names = ", ".join(row)
    marks = ", ".join("CAST(? AS TEXT)" if v is BAD_UTF8 else "?" for v in row.values())
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(row.values()))
    return new_id


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from agentao_world import Agent

    agent = seed_corpus(Agent(tmp_path_factory.mktemp("odd")))
    agent.save("sentinel", SENTINEL, ["keep"])
    odd: dict = {t: [] for t in TABLES}
    conn = sqlite3.connect(agent.project_db)
    odd["agentao_reviews"] = [r[0] for r in conn.execute("SELECT id FROM memory_review_queue")]
    n = 0
    for table, columns in TABLES.items():
        for column in columns:
            for shape, value in SHAPES.items():
                value = BAD_UTF8 if shape == "bad_utf8" else value
                n += 1
                try:
                    odd[table].append(spoil(conn, table, column, shape, value, n))
                except sqlite3.IntegrityError:
                    pass  # NOT NULL / unique / primary key refused it: nobody can store it
    conn.commit()
    conn.close()
    return agent, odd


def urls(app, odd) -> list[str]:
    out = set(
        get_routes(
            app,
            {
                "store": "project",
                "key": "project",
                "memory_id": "x",
                "item_id": "x",
                "job_id": "0" * 12,
                "filename": "app.css",
                "table": "memories",
                "row_id": "x",
            },
        )
    )
    for memory_id in odd["memories"]:
        out.update(
            get_routes(
                app,
                {
                    "store": "project",
                    "key": "project",
                    "memory_id": memory_id,
                    "item_id": "x",
                    "job_id": "0" * 12,
                    "filename": "app.css",
                    "table": "memories",
                    "row_id": memory_id,
                },
            )
        )
    for item_id in odd["memory_review_queue"]:
        out.update(
            get_routes(
                app,
                {
                    "store": "project",
                    "key": "project",
                    "memory_id": "x",
                    "item_id": item_id,
                    "job_id": "0" * 12,
                    "filename": "app.css",
                    "table": "memory_review_queue",
                    "row_id": item_id,
                },
            )
        )
        out.add(f"/reviews/effect?id={item_id}")
    for summary_id in odd["session_summaries"]:
        out.add(f"/findings/check/project/session_summaries/{summary_id}")
    # The edit form's effect needs the new value it would save.
    return sorted(
        u + "?value=new" if u.endswith("/effect") else u for u in out if not u.startswith("/static/")
    )


def test_every_page_answers_over_odd_rows_and_the_others_stay(world):
    agent, odd = world
    before = file_digest(agent.project_db, agent.user_db)
    app = agent.app()
    client = app.test_client()
    failures = []
    for url in urls(app, odd):
        lists = url.count("/") == 1 and "?" not in url  # the pages that show every row
        for extra in ("", "?per_page=1000&deleted=1", "?status=approved") if lists else ("",):
            r = client.get(url + extra)
            if r.status_code >= 500 or b"Traceback" in r.data:
                failures.append((r.status_code, url + extra))
    assert not failures, failures
    assert file_digest(agent.project_db, agent.user_db) == before

    listed = [
        m
        for p in (1, 2, 3)
        for m in client.get(f"/memories.json?per_page=200&deleted=1&page={p}").get_json()["items"]
    ]
    ids = {m["id"] for m in listed}
    assert SENTINEL in {m["content"] for m in listed}
    # The odd rows are listed too, each with what it holds.
    assert {
        "odd-memori-tags_json-deep_array",
        "odd-memori-keywords_json-deep_object",
        "odd-memori-content-blob",
        "odd-memori-title-huge",
    } <= ids
    deep = next(m for m in listed if m["id"] == "odd-memori-tags_json-deep_array")
    assert deep["tags"] == ["[" * DEEP + "]" * DEEP]  # shown as the raw text it is
    blob = next(m for m in listed if m["id"] == "odd-memori-content-blob")
    assert blob["content"] == "\x00\ufffd\ufffdbin"
    assert SENTINEL in client.get("/export/memories.md").get_data(as_text=True)
    assert SENTINEL in client.get("/export/memories.csv").get_data(as_text=True)
    pending = client.get("/reviews.json?per_page=200").get_json()["items"]
    assert "odd-memory-tags_json-deep_array" in {i["id"] for i in pending}
    assert set(odd["agentao_reviews"]) <= {i["id"] for i in pending}  # agentao's own two
    page = client.get("/memories/project/odd-memori-keywords_json-deep_object.json").get_json()
    assert page["memory"]["keywords"] == ['{"a":' * DEEP + "1" + "}" * DEEP]


def test_one_row_nested_5000_deep_costs_only_its_own_display(agent):
    seed_corpus(agent)
    agent.save("sentinel", SENTINEL, ["keep"])
    deep = "[" * DEEP + "]" * DEEP
    with sqlite3.connect(agent.project_db) as conn:
        mid = conn.execute("SELECT id FROM memories WHERE key_normalized = 'database'").fetchone()[0]
        conn.execute("UPDATE memories SET tags_json = ?, keywords_json = ? WHERE id = ?", (deep, deep, mid))
        conn.execute("UPDATE memory_review_queue SET tags_json = ?", (deep,))
    conn.close()
    client = agent.app().test_client()
    for url in (
        "/overview",
        "/overview.json",
        "/memories",
        "/memories.json",
        "/reviews",
        "/reviews.json",
        "/preview",
        "/preview.json",
        "/export/memories.json",
        "/export/memories.csv",
        "/export/memories.md",
        f"/memories/project/{mid}",
        f"/memories/project/{mid}.json",
        f"/memories/project/{mid}/effect?value=v",
    ):
        r = client.get(url)
        assert r.status_code == 200, url
    listed = client.get("/memories.json").get_json()["items"]
    assert SENTINEL in {m["content"] for m in listed}
    assert next(m for m in listed if m["id"] == mid)["tags"] == [deep]
    reviews = client.get("/reviews.json").get_json()["items"]
    assert len(reviews) == 2 and all(i["tags"] == [deep] for i in reviews)
    assert SENTINEL in client.get("/export/memories.csv").get_data(as_text=True)


@pytest.mark.parametrize("shape", ["²", "١٢", "-3", "9" * 40, "blob", "bad_utf8", "deep_array"])
def test_an_odd_change_counter_leaves_every_page_answering(agent, shape):
    seed_corpus(agent)
    value = {"blob": SHAPES["blob"], "bad_utf8": BAD_UTF8, "deep_array": SHAPES["deep_array"]}.get(
        shape, shape
    )
    with sqlite3.connect(agent.project_db) as conn:
        mid = conn.execute("SELECT id FROM memories WHERE deleted_at IS NULL").fetchone()[0]
        cast = "CAST(? AS TEXT)" if value is BAD_UTF8 else "?"
        conn.execute(f"UPDATE schema_meta SET value = {cast} WHERE key = 'memories_change'", (value,))
    conn.close()
    client = agent.app().test_client()
    for url in (
        "/overview",
        "/overview.json",
        "/memories",
        "/memories.json",
        f"/memories/project/{mid}",
        "/reviews",
        "/findings",
        "/preview",
        "/export/memories.csv",
    ):
        assert client.get(url).status_code == 200, url
