"""The preview's row source under a writing agent: fresh when it can, never a pile-up."""

from __future__ import annotations

from dashboard.preview_source import source_for
from dashboard.web import statuses


def test_rows_follow_the_counter_and_a_busy_reread_answers_stale(seeded):
    app = seeded.app()
    with app.test_request_context("/preview"):
        source = source_for(app.extensions)
        first = source.snapshot(statuses())
        assert not first.stale
        assert "uv" in " ".join(m.content for m in first.project)
    seeded.save("cache layer", "Redis caches sessions.", ["infra"])
    with app.test_request_context("/preview"):
        source._lock.acquire()        # as if another thread were re-reading right now
        try:
            busy = source.snapshot(statuses())
        finally:
            source._lock.release()
        assert busy.stale and busy.version == first.version
        assert "Redis caches sessions." not in [m.content for m in busy.project]
    with app.test_request_context("/preview"):
        fresh = source.snapshot(statuses())
        assert not fresh.stale and fresh.version != first.version
        assert "Redis caches sessions." in [m.content for m in fresh.project]
    assert app.test_client().get("/preview.json?q=redis").get_json()["stale_rows"] is False


def test_stable_view_skips_indexing_and_equals_the_full_preview(agent):
    """Screens that only need <memory-stable> must show the very block preview() renders."""
    from datetime import datetime, timezone

    from dashboard.engine import EngineCache, preview, stable_view
    for i in range(12):
        agent.save(f"user_pref_{i}", f"preference {i} " + "detail " * 40, ["user"])
        agent.save(f"note {i}", f"incidental note {i}", ["misc"])
    agent.summary("Earlier session work.", session_id="old-session")
    app = agent.app()
    with app.test_request_context("/"):
        snap = source_for(app.extensions).snapshot(statuses())
    cache = EngineCache()
    hidden = {snap.user[0].id}
    block, fitted = stable_view(snap.project, snap.user, snap.summaries, hidden_ids=hidden,
                                cache=cache, version=snap.version)
    assert cache.builds == 0                      # no token index was built
    full = preview(snap.project, snap.user, snap.summaries, query="", hidden_ids=hidden,
                   now=datetime.now(timezone.utc))
    assert block == full.stable_block
    assert [(e.memory.id, e.shown) for e in fitted] == [(e.memory.id, e.shown) for e in full.stable_entries]
    assert any(not e.shown for e in fitted)


def test_rows_and_stable_block_follow_each_agent_write_in_agentaos_order(seeded):
    # The copy patches its ordered rows and the engine patches its selection
    # per change; after every kind of write both must equal agentao's own.
    from agentao.memory import MemoryPromptRenderer
    mgr, renderer = seeded.manager, MemoryPromptRenderer()
    mgr._session_id = "a-brand-new-session"
    app = seeded.app()
    client = app.test_client()
    client.get("/overview.json")        # the copy and the selection exist before the writes
    first = mgr.project_store.list_memories()[0]

    def writes():
        yield seeded.save("deploy order", "Staging first, then production.", ["ops"], type="workflow")
        yield seeded.save("editor", "Helix, not vim.", ["tools"], scope="user")
        yield seeded.save(first.title, "Rewritten with a new value.", list(first.tags))
        yield mgr.delete(first.id)
        yield seeded.save("scratch note", "Incidental row, newest update.", ["misc"], type="note")
    for step, _ in enumerate(writes()):
        with app.test_request_context("/preview"):
            snap = source_for(app.extensions).snapshot(statuses())
        assert [m.id for m in snap.project] == [m.id for m in mgr.project_store.list_memories()], step
        assert [m.id for m in snap.user] == [m.id for m in mgr.user_store.list_memories()], step
        tail = mgr.get_cross_session_tail()
        block = renderer.render_stable_block(
            renderer.fit_stable_records(mgr.get_stable_entries(), tail), tail)
        assert client.get("/overview.json").get_json()["stable_block_chars"] == len(block), step
        assert client.get("/preview.json?q=deploy").get_json()["stable_block"] == block, step


def test_a_whole_load_in_pieces_with_an_agent_writing_between_them(seeded, monkeypatch):
    # The copy loads a file in short reads; rows agentao changes between two of
    # them must be right on the next view, and none may be lost or doubled.
    from dashboard.store import mirror as mirror_module
    monkeypatch.setattr(mirror_module, "_PIECE", 2)
    first = seeded.manager.project_store.list_memories()[0]
    real_read, calls = mirror_module.read, []

    def read_and_write_once(path, fn, **kw):
        calls.append(path)
        if len(calls) == 3:     # after the probe and the first piece
            seeded.save("deploy order", "Staging first, then production.", ["ops"])
            seeded.save(first.title, "Rewritten while the copy was loading.", list(first.tags))
        return real_read(path, fn, **kw)
    monkeypatch.setattr(mirror_module, "read", read_and_write_once)
    client = seeded.app().test_client()
    client.get("/memories.json?per_page=200")       # the load, torn by the writes
    listed = client.get("/memories.json?per_page=200&deleted=1").get_json()["items"]
    theirs = seeded.manager.get_all_entries()
    assert sorted(m["id"] for m in listed if m["deleted_at"] is None) == sorted(m.id for m in theirs)
    assert len({(m["store"], m["id"]) for m in listed}) == len(listed)
    assert {m["id"]: m["content"] for m in listed}[first.id] == "Rewritten while the copy was loading."
