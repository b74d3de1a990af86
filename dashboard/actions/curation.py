"""Curating live memories: soft delete, edit, move between the user and project stores.

Every change goes through agentao's save rules (``contract.plan_save``) and the store's
guarded writes: an edit is agentao's upsert onto the same row, a delete is ``/memory
delete``'s soft delete, a move a save in the other store then a soft delete of the original.
Only a change of the action's own rows refuses it, never the agent saving another row.

A move takes both write locks first (``lockstep.write_all``), checks both rows, then
commits the target first: after a crash both rows are live and moving again upserts the
same target key in place before deleting the source; nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask_babel import gettext as _

from ..contract import PlannedSave, SaveRefused, normalize_key, plan_save, title_for
from ..records import Memory
from ..store import StoreProblem, StoreRef, get_memory, writes
from ..store.lockstep import write_all
from ..store.registry import ref_for
from ..store.writes import Expect, WriteConflict, fingerprint
from . import twofile


def resave_key(memory: Memory) -> str:
    """The raw key that saves back onto this row: its title, when that normalises to its key."""
    try:
        if title_for(memory.title) == memory.title and normalize_key(memory.title) == memory.key_normalized:
            return memory.title
    except SaveRefused:
        pass
    return memory.key_normalized


def live_memory(refs: list[StoreRef], store: str, memory_id: str) -> Memory:
    """The live row, or WriteConflict('gone')."""
    ref = ref_for(refs, store)
    memory = get_memory(ref, memory_id)[0] if ref is not None and ref.exists else None
    if memory is None or not memory.live:
        raise WriteConflict(
            "gone",
            _(
                "Memory %(id)s is no longer live in the %(store)s store; nothing was changed.",
                id=memory_id,
                store=store,
            ),
        )
    return memory


def _lands_on(plan: PlannedSave, memory: Memory) -> None:
    # An edit must update this very row; agentao would otherwise create a new one.
    if (plan.store, plan.scope, plan.key_normalized) != (memory.store, memory.scope, memory.key_normalized):
        raise WriteConflict(
            "blocked",
            _(
                "agentao's save rules would put this edit in another row (%(scope)s scope, %(store)s "
                "store, key '%(key)s'), not this one; nothing was changed.",
                scope=plan.scope,
                store=plan.store,
                key=plan.key_normalized,
            ),
        )


def plan_edit(refs: list[StoreRef], memory: Memory, value: str, tags, type_: str | None) -> PlannedSave:
    """The save an edit makes; raises SaveRefused, or WriteConflict when it would miss this row."""
    plan = plan_save(
        resave_key(memory),
        value,
        tags,
        scope=memory.scope,
        type_=type_ or None,
        source="explicit",
        has_user_store=ref_for(refs, "user") is not None,
    )
    _lands_on(plan, memory)
    return plan


def _as_seen(memory: Memory, expect: Expect) -> Expect:
    # The row must still be the one the page showed and the one the plan was made from.
    writes.unchanged_since(memory, expect)
    return Expect(row_id=memory.id, updated_at=memory.updated_at, row=fingerprint(memory))


def edit(
    refs: list[StoreRef], store: str, memory_id: str, value: str, tags, type_: str | None, expect: Expect
) -> writes.Saved:
    """Save new value/tags/type onto the row through agentao's guarded save path."""
    memory = live_memory(refs, store, memory_id)
    seen = _as_seen(memory, expect)
    plan = plan_edit(refs, memory, value, tags, type_)
    return writes.save_memory(ref_for(refs, store).path, plan, seen)


def delete(refs: list[StoreRef], store: str, memory_id: str, expect: Expect) -> bool:
    """Soft-delete one live row as ``/memory delete`` does."""
    seen = _as_seen(live_memory(refs, store, memory_id), expect)
    return writes.soft_delete(ref_for(refs, store).path, memory_id, seen)


@dataclass(frozen=True)
class MovePlan:
    """Where a move would put the memory and what it would overwrite there."""

    to_scope: str
    save: PlannedSave | None = None
    existing: Memory | None = None
    problem: str | None = None

    @property
    def target_fingerprint(self) -> str:
        return fingerprint(self.existing)


def plan_move(refs: list[StoreRef], memory: Memory, target_problem: StoreProblem | None = None) -> MovePlan:
    """The save a move to the other scope makes; ``target_problem``: why the other store cannot
    be read, when the page's banner already says so."""
    to_scope = "project" if memory.scope == "user" else "user"
    target = ref_for(refs, to_scope)
    if target is None:
        return MovePlan(
            to_scope, problem=_("There is no user store, so agentao keeps every memory in the project store.")
        )
    if target.obstacle:
        return MovePlan(
            to_scope,
            problem=_(
                "The %(store)s store cannot be written: %(path)s %(why)s.",
                store=to_scope,
                path=target.path,
                why=target.obstacle,
            ),
        )
    if not target.exists:
        return MovePlan(
            to_scope,
            problem=_(
                "The %(store)s store does not exist yet at %(path)s.", store=to_scope, path=target.path
            ),
        )
    if target.key == memory.store:
        return MovePlan(to_scope, problem=_("This row's scope does not match its file; move is unavailable."))
    try:
        plan = plan_save(
            resave_key(memory),
            memory.content,
            memory.tags,
            scope=to_scope,
            type_=memory.type,
            source=memory.source,
            has_user_store=True,
        )
    except SaveRefused as refused:
        return MovePlan(to_scope, problem=_("agentao would refuse this save: %(why)s", why=refused))
    existing, problem = writes.target_of(target.path, plan, target_problem)
    if problem is not None:
        # A damaged target only takes the move offer away; the memory's page still works.
        return MovePlan(
            to_scope,
            problem=_(
                "The %(store)s store cannot be read, so the memory cannot be moved there: %(why)s",
                store=to_scope,
                why=problem,
            ),
        )
    return MovePlan(to_scope, plan, existing)


def move(
    refs: list[StoreRef], store: str, memory_id: str, expect: Expect, target: str | None
) -> writes.Saved:
    """Save the memory in the other store, then soft-delete the original (see module doc)."""
    memory = live_memory(refs, store, memory_id)
    seen = _as_seen(memory, expect)  # a stale move is refused before any lock is taken
    plan = plan_move(refs, memory)
    if plan.problem:
        raise WriteConflict("blocked", plan.problem)
    source, dest = ref_for(refs, store).path, ref_for(refs, plan.save.store).path
    intent = twofile.move_intent([(store, source, memory, dest, plan.save)], plan.save.store)
    with write_all([dest, source], intent) as conns:  # dest commits first (see module doc)
        writes.row_as_seen(conns[source], seen, store)
        existing = writes.target_as_seen(conns[dest], plan.save, Expect(target=target))
        saved = writes.put(conns[dest], plan.save, existing)
        writes.delete_row(conns[source], memory_id)
    return saved
