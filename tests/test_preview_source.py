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
