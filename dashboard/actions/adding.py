"""Adding a memory by hand, as agentao's ``save_memory`` tool would save it.

``contract.plan_save`` is the tool's pipeline and ``writes.save_memory`` its upsert, so a
hand-added memory is byte for byte what the agent would write (tests/test_adding.py).  The
plan (key, title, file, scope, type, the live row it overwrites) is shown before the click;
the form sends back that row's fingerprint, so a save of the same key meanwhile refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask_babel import gettext as _

from ..contract import PlannedSave, plan_save
from ..records import Memory
from ..store import StoreRef, writes
from ..store.registry import ref_for
from ..store.writes import Expect, fingerprint


@dataclass(frozen=True)
class AddPlan:
    """What adding would write, and over which live row (None: a new row)."""

    save: PlannedSave
    existing: Memory | None = None
    problem: str | None = None  # the target file cannot be read or written

    @property
    def action(self) -> str:
        return "update" if self.existing is not None else "create"

    @property
    def target_fingerprint(self) -> str:
        return fingerprint(self.existing)

    def to_dict(self) -> dict:
        return {
            "action": self.action,
            **self.save.to_dict(),
            "overwrites": self.existing,
            "target": self.target_fingerprint,
            "problem": self.problem,
        }


def plan_add(
    refs: list[StoreRef], key: str, value: str, tags, scope: str | None, type_: str | None
) -> AddPlan:
    """agentao's save pipeline on the inputs; raises SaveRefused as agentao would refuse."""
    save = plan_save(
        key,
        value,
        tags,
        scope=scope,
        type_=type_,
        source="explicit",
        has_user_store=ref_for(refs, "user") is not None,
    )
    target = ref_for(refs, save.store)
    if not target.exists:
        # agentao would create the file; the dashboard never creates a store.
        return AddPlan(
            save,
            problem=_(
                "There is no %(store)s store file yet (%(path)s); "
                "agentao creates it the first time it saves a memory "
                "there, and the dashboard never creates one.",
                store=save.store,
                path=target.path,
            ),
        )
    existing, problem = writes.target_of(target.path, save)
    return AddPlan(save, existing, str(problem) if problem is not None else None)


def add(refs: list[StoreRef], plan: AddPlan, target: str | None) -> writes.Saved:
    """Write ``plan``; ``target`` is the fingerprint of the row the page said it overwrites."""
    return writes.save_memory(ref_for(refs, plan.save.store).path, plan.save, Expect(target=target))
