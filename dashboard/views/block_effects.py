"""The prompt-block effect of review and curation actions: ``actions.effects`` computes it,
this module fetches its inputs for the request and re-reads the files after a write."""

from __future__ import annotations

from flask import g

from ..actions import curation, effects
from ..contract import SaveRefused
from ..engine import stable_view
from ..preview_source import Snapshot
from ..preview_source import snapshot as snapshot_of
from ..store.writes import WriteConflict
from ..web import statuses, stores


def snapshot(fresh: bool = False) -> Snapshot:
    """The rows the engine sees; ``fresh`` after a write in this request (counters moved)."""
    if fresh:
        g.store_statuses = None  # statuses() memoises per request: inspect the files again
    return snapshot_of(statuses())


def block_now() -> str:
    """The stable block as it really is, read back from the files after an action."""
    return effects.current_block(snapshot(fresh=True))


def size_now() -> int:
    """The stable block's real size, read back from the files after an action."""
    return len(block_now())


def shown_now() -> tuple[str, frozenset]:
    """The stable block read back from the files after an action, and the (store, id)
    of the memories it shows: whether an approved memory really entered it."""
    snap = snapshot(fresh=True)
    block, fitted = stable_view(
        snap.project, snap.user, snap.summaries, cache=snap.cache, version=snap.version
    )
    return block, frozenset((s.memory.store, s.memory.id) for s in fitted.shown())


# Each card's effect puts its row into the held selection (the whole walk over every live
# row where that cannot tell: effects.save_effects), and its warnings search every live
# row's content (actions.warnings); past this many rows per page the remaining cards fetch
# their effect when scrolled into view (htmx) or by a link: every card up to 1,500
# memories, 15 at 10,000, 5 at 100,000.
WORK_PER_PAGE = 150_000
MIN_EAGER = 5


def approvable(plans: dict) -> dict:
    return {i: p for i, p in plans.items() if p.approvable}


def for_approvals(plans: dict) -> dict:
    """item id -> BlockEffect for the plans approval could execute, as many as ``WORK_PER_PAGE`` allows."""
    ready = approvable(plans)
    if not ready:
        return {}
    snap = snapshot()  # every card shares the same rows
    eager = max(MIN_EAGER, WORK_PER_PAGE // max(1, len(snap.project) + len(snap.user)))
    ready = dict(list(ready.items())[:eager])
    return effects.save_effects(snap, {i: (p.save, p.existing) for i, p in ready.items()})


def for_delete(memory) -> effects.BlockEffect:
    return effects.delete_effect(snapshot(), memory)


def for_move(memory, move: curation.MovePlan) -> effects.BlockEffect | None:
    if move is None or move.problem:
        return None
    # The move saves in the other store, then soft-deletes this row.
    return effects.save_effect(snapshot(), move.save, move.existing, hide={memory.id})


def for_edit(memory, value: str, tags, type_: str | None):
    """(BlockEffect, None) for this edit, or (None, why agentao or the dashboard would refuse)."""
    try:
        plan = curation.plan_edit(stores(), memory, value, tags, type_)
    except (SaveRefused, WriteConflict) as refused:
        return None, str(refused)
    return effects.save_effect(snapshot(), plan, memory), None
