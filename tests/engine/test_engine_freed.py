"""A preview is freed the moment it is dropped, not at the cycle collector's next full pass.

A request's preview holds every scored record (thousands at 10,000 memories).  Held in a
reference cycle, each one waited for a full collection of the server's heap, a pause of
50-100 ms that landed inside whichever request came next; so nothing a preview is read
through may point back at what holds it.
"""

from __future__ import annotations

import gc
import weakref
from datetime import datetime, timezone

from dashboard.engine import Tokenizer, preview
from dashboard.records import Memory

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)


def _rows(n: int) -> list[Memory]:
    return [
        Memory(
            id=f"n{i:02d}",
            scope="project",
            type="note",
            key_normalized=f"alpha_{i}",
            title=f"alpha {i}",
            content="alpha beta",
            created_at=f"2025-05-01T00:00:{i:02d}",
            updated_at=f"2025-05-01T00:00:{i:02d}",
        )
        for i in range(n)
    ]


def test_a_preview_read_through_is_freed_without_the_cycle_collector():
    was = gc.isenabled()
    gc.disable()
    try:
        p = preview(_rows(30), [], [], query="alpha beta", now=NOW, tokenizer=Tokenizer(use_jieba=False))
        # Read it as the page and its twin do: the ranked rows, their terms, the marks, the ties.
        rows = [(c.memory.id, c.mark, c.rank, [t.matched for t in c.terms]) for c in p.candidates]
        assert len(rows) == 30 and p.candidates[:5] == list(p.candidates)[:5]
        assert p.candidates.marks() and p.recall.varies is not None and len(p.never_recalled) == 0
        recall, whole = weakref.ref(p.recall), weakref.ref(p)
        del p
        assert recall() is None and whole() is None
    finally:
        if was:
            gc.enable()
