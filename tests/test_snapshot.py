"""Each file's snapshot of rows: fresh on the next request after agentao writes, in agentao's order."""

from __future__ import annotations

from dashboard.engine import EngineCache
from dashboard.preview_source import snapshot
from dashboard.store.held import held
from dashboard.web import statuses


def test_stable_view_skips_indexing_and_equals_the_full_preview(agent):
    """Screens that only need <memory-stable> must show the very block preview() renders."""
    from datetime import datetime, timezone

    from dashboard.engine import preview, stable_view

    for i in range(12):
        agent.save(f"user_pref_{i}", f"preference {i} " + "detail " * 40, ["user"])
        agent.save(f"note {i}", f"incidental note {i}", ["misc"])
    agent.summary("Earlier session work.", session_id="old-session")
    app = agent.app()
    with app.test_request_context("/"):
        snap = snapshot(statuses())
    hidden = {snap.user[0].id}
    for cache in (None, snap.cache):
        block, fitted = stable_view(snap.project, snap.user, snap.summaries, hidden_ids=hidden, cache=cache)
        full = preview(
            snap.project,
            snap.user,
            snap.summaries,
            query="",
            hidden_ids=hidden,
            now=datetime.now(timezone.utc),
        )
        assert block == full.stable_block
        assert [(e.memory.id, e.shown) for e in fitted] == [
            (e.memory.id, e.shown) for e in full.stable_entries
        ]
        assert any(not e.shown for e in fitted)
    assert snap.cache.builds == 0  # no token index was built


def test_rows_and_stable_block_follow_each_agent_write_in_agentaos_order(seeded):
    # After every kind of write the next request's rows and blocks equal agentao's own.
    from agentao.memory import MemoryPromptRenderer

    mgr, renderer = seeded.manager, MemoryPromptRenderer()
    mgr._session_id = "a-brand-new-session"
    app = seeded.app()
    client = app.test_client()
    client.get("/overview.json")  # the snapshots exist before the writes
    first = mgr.project_store.list_memories()[0]

    def writes():
        yield seeded.save("deploy order", "Staging first, then production.", ["ops"], type="workflow")
        yield seeded.save("editor", "Helix, not vim.", ["tools"], scope="user")
        yield seeded.save(first.title, "Rewritten with a new value.", list(first.tags))
        yield mgr.delete(first.id)
        yield seeded.save("scratch note", "Incidental row, newest update.", ["misc"], type="note")

    for step, _ in enumerate(writes()):
        with app.test_request_context("/preview"):
            snap = snapshot(statuses())
        assert [m.id for m in snap.project] == [m.id for m in mgr.project_store.list_memories()], step
        assert [m.id for m in snap.user] == [m.id for m in mgr.user_store.list_memories()], step
        tail = mgr.get_cross_session_tail()
        block = renderer.render_stable_block(
            renderer.fit_stable_records(mgr.get_stable_entries(), tail), tail
        )
        assert client.get("/overview.json").get_json()["stable_block_chars"] == len(block), step
        assert client.get("/preview.json?q=deploy").get_json()["stable_block"] == block, step


def test_a_write_landing_while_the_rows_are_read_shows_on_the_next_view(seeded, monkeypatch):
    # agentao saves while the dashboard reads the rows (after its SELECT, inside its
    # read): the read is retried or the snapshot keeps the stamp from before it, so
    # the next view shows the save; no row is lost or doubled.
    from dashboard.store import snapshot as module

    real_read, calls = module.read, []

    def read_with_a_write(path, fn, **kw):
        def torn(conn):
            out = fn(conn)
            if not calls:
                calls.append(path)
                seeded.save(
                    "late arrival", "Saved while the dashboard was reading.", ["ops"], scope="project"
                )
            return out

        return real_read(path, torn, **kw)

    client = seeded.app().test_client()
    monkeypatch.setattr(module, "read", read_with_a_write)
    client.get("/memories.json")
    assert calls
    listed = client.get("/memories.json?per_page=200").get_json()["items"]
    assert "Saved while the dashboard was reading." in [m["content"] for m in listed]
    theirs = seeded.manager.get_all_entries()
    assert sorted(m["id"] for m in listed) == sorted(m.id for m in theirs)


def test_the_status_of_a_store_follows_its_file(seeded):
    # status.inspect reuses its reading while the stamp holds: each save must still show.
    import sqlite3

    client = seeded.app().test_client()

    def project():
        return next(s for s in client.get("/overview.json").get_json()["stores"] if s["store"] == "project")

    before = project()
    for n in range(3):
        seeded.save(f"one more {n}", "A new project fact.", ["ops"], scope="project")
        seeded.summary(f"Session {n}.", session_id=f"s-{n}")
        now = project()
        conn = sqlite3.connect(seeded.project_db)
        (counter,) = conn.execute("SELECT value FROM schema_meta WHERE key = 'memories_change'").fetchone()
        conn.close()
        assert now["live"] == before["live"] + n + 1
        assert now["summaries"] == before["summaries"] + n + 1
        assert str(now["change_counter"]) == str(counter)


def test_the_engine_cache_is_held_for_the_rows_it_was_read_with(agent):
    """One rule: the cache is kept under the stamps its rows were read at. Rows read before a
    write give the cache of the old rows; the next request's rows, a new cache that recalls
    the new memory (with its index built once per state of the files)."""
    from dashboard.engine import default_tokenizer
    from dashboard.store.snapshot import rows_of

    agent.save("redis", "Redis runs on port 6379.", ["infra"])
    app = agent.app()
    tok = default_tokenizer()
    with app.test_request_context("/"):
        before = [rows_of(st.ref) for st in statuses() if st.readable]
        agent.save("kafka", "Kafka brokers listen on port 9092.", ["infra"])
        late = held(
            "engine",
            [f.path for f in before],
            lambda _stamp: EngineCache(before[0].live, before[1].live),
            stamp=tuple(f.stamp for f in before),
        )  # the old rows, asked for after the write: held under their own stamps
        now = snapshot(statuses())
        assert now.cache is not late and now.cache is snapshot(statuses()).cache
        assert now.project is now.cache.project
        assert "kafka" in {m.title for m in now.cache.state(tok).records.values()}
        assert "kafka" not in {m.title for m in late.state(tok).records.values()}
        now.cache.state(tok)
        assert now.cache.builds == 1


def test_work_cut_short_answers_the_requests_that_waited_for_it_and_no_later_one(tmp_path):
    """Two views of a page whose work runs out of time (a dry run at 100,000 memories): the one
    that waited for the first gets its answer at once instead of starting over with no time
    left; a view asked after both does the work again."""
    import threading

    from dashboard.store import held as table

    class Gate:  # the name's lock, saying when a second thread waits on it
        def __init__(self):
            self.lock, self.waiting = threading.Lock(), threading.Event()

        def __enter__(self):
            if self.lock.locked():
                self.waiting.set()
            self.lock.acquire()

        def __exit__(self, *_exc):
            self.lock.release()

    gate, started, finish, calls = Gate(), threading.Event(), threading.Event(), []
    table._working["cut-test"] = gate
    path = tmp_path / "f.db"
    path.write_bytes(b"x")

    def work(_stamp):
        calls.append(1)
        started.set()
        finish.wait(10)
        return ("partial", len(calls))

    def view(out):
        out.append(table.held("cut-test", [path], work, whole=lambda _v: False))

    first, second = [], []
    a = threading.Thread(target=view, args=(first,))
    a.start()
    started.wait(10)
    b = threading.Thread(target=view, args=(second,))
    b.start()
    gate.waiting.wait(10)
    finish.set()
    a.join(10)
    b.join(10)
    assert first == second == [("partial", 1)] and len(calls) == 1
    assert table.held("cut-test", [path], work, whole=lambda _v: False) == ("partial", 2)
