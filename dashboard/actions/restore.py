"""Restoring a soft-deleted memory (``store.undelete.restore``): the offer the detail page
shows before the click, and its effect on the ``<memory-stable>`` block."""

from __future__ import annotations

from dataclasses import dataclass, replace

from flask_babel import gettext as _

from ..preview_source import Snapshot
from ..records import Memory
from ..store import StoreProblem, StoreRef, writes
from ..store.registry import ref_for
from ..store.undelete import restore as restore_row
from ..store.undelete import restore_obstacle
from ..store.writes import Expect
from . import effects


@dataclass(frozen=True)
class RestorePlan:
    """Whether the row can be restored now; ``problem`` says why not."""

    memory: Memory
    problem: str | None = None

    @property
    def restored(self) -> Memory:
        """The row as the restore leaves it: live, updated now, everything else kept."""
        return replace(self.memory, deleted_at=None, updated_at=writes.now())


def plan_restore(refs: list[StoreRef], memory: Memory) -> RestorePlan:
    """The restore offer for a soft-deleted row, read from its file."""
    ref = ref_for(refs, memory.store)
    try:
        return RestorePlan(memory, restore_obstacle(ref.path, memory))
    except StoreProblem as unreadable:
        return RestorePlan(
            memory, _("The %(store)s store cannot be read: %(why)s", store=memory.store, why=unreadable)
        )


def restore_effect(snap: Snapshot, plan: RestorePlan) -> effects.BlockEffect:
    """Before/after for restoring: the row is back among the live ones, in its old place."""
    return effects.row_effect(snap, plan.restored)


def restore(refs: list[StoreRef], store: str, memory_id: str, expect: Expect) -> writes.Saved:
    """Restore the row if it is still the soft-deleted one the page showed and nothing holds its key."""
    return restore_row(
        ref_for(refs, store).path,
        Expect(row_id=memory_id, updated_at=expect.updated_at, row=expect.row),
        store,
    )
