"""Approving and rejecting review items, and saying beforehand what approval will do.

``plan_approval`` is the single source of truth: the review page shows its result and
``approve`` executes exactly that plan, re-checked inside the write transactions.  agentao
approves by saving the item through its full save pipeline (contract §7.4, source
``crystallized``); approving with edits saves the edited values as ``save_memory`` would
(source ``explicit``) and never writes the unedited row in between.  With another key
(``Edits.key``) the memory at the item's own key stays as it was.

Approval may touch two files: it takes both write locks first (``lockstep.write_all``),
checks that the item is still pending and unchanged and the target is the one the page
showed, then writes the memory's file first and the item's second; approving again after
a crash between the two upserts the same key in place and then marks the item.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace

from flask_babel import gettext as _

from ..contract import PlannedSave, SaveRefused, plan_save
from ..records import Memory, ReviewItem
from ..store import StoreProblem, StoreRef, events, get_memory, read, writes
from ..store.lockstep import write_all
from ..store.registry import ref_for
from ..store.writes import Expect, WriteConflict, fingerprint
from . import twofile, warnings

SAVE_FIELDS = tuple(f.name for f in fields(PlannedSave))
DIFF_FIELDS = ("title", "content", "tags", "keywords", "type", "source", "confidence")


@dataclass(frozen=True)
class Edits:
    """What the person changed on the card before approving; None keeps the proposal's."""

    value: str | None = None
    tags: tuple[str, ...] | None = None
    scope: str | None = None
    type: str | None = None
    key: str | None = None  # saved under this key, as save_memory takes it (None: the item's)

    def against(self, item: ReviewItem) -> Edits | None:
        """These edits if any of them changes ``item``, else None (a plain approval)."""
        changed = (
            (self.value is not None and self.value != item.content)
            or (self.tags is not None and tuple(self.tags) != tuple(item.tags))
            or (self.scope is not None and self.scope != item.scope)
            or (self.type is not None and self.type != item.type)
            or (self.key is not None and self.key != item.key_normalized)
        )
        return self if changed else None

    def to_dict(self) -> dict:
        return dict(vars(self), tags=None if self.tags is None else list(self.tags))


@dataclass(frozen=True)
class ApprovalPlan:
    """What approving ``item`` would write, or why agentao would refuse it."""

    item: ReviewItem
    save: PlannedSave | None
    refusal: str | None
    existing: Memory | None = None  # the live memory it would overwrite
    diff: list[dict] = field(default_factory=list)
    blocked: str | None = None  # the dashboard cannot do it (file missing)
    edits: Edits | None = None  # approved with these edits (None: as proposed)
    warnings: tuple[dict, ...] = ()  # what to know before approving (actions.warnings)

    @property
    def refusal_words(self) -> str | None:
        """``refusal`` (agentao's own words, as the twin keeps them) in the page's language."""
        return warnings.refusal_text(self.refusal) if self.refusal else None

    @property
    def approvable(self) -> bool:
        """Whether approving can write: a save agentao accepts, into a file that can take it."""
        return self.save is not None and not self.refusal and not self.blocked

    @property
    def item_fingerprint(self) -> str:
        return fingerprint(self.item)

    @property
    def target_fingerprint(self) -> str:
        return fingerprint(self.existing)

    def to_dict(self) -> dict:
        s = self.save
        # The save's fields but its content (the item's own, shown beside), None when refused.
        save = s.to_dict() if s else {**dict.fromkeys(SAVE_FIELDS), "downgraded": False}
        save.pop("content", None)
        return {
            "refusal": self.refusal,
            "blocked": self.blocked,
            **save,
            "action": None if s is None else ("update" if self.existing else "create"),
            "overwrites": self.existing.to_dict() if self.existing else None,
            "diff": self.diff,
            "edits": self.edits.to_dict() if self.edits else None,
            "item_fingerprint": self.item_fingerprint,
            "target_fingerprint": self.target_fingerprint,
            "warnings": list(self.warnings),
        }


def has_user_store(refs: list[StoreRef]) -> bool:
    """Whether agentao would have a user store: one is configured (agentao creates the file)."""
    return ref_for(refs, "user") is not None


def planned_save(item: ReviewItem, user_store: bool, edits: Edits | None = None) -> PlannedSave:
    """The save agentao's promote() makes for ``item`` (with ``edits``: ``save_memory``'s of the
    edited values); raises SaveRefused like agentao."""
    e = edits or Edits()
    pick = lambda edited, proposed: proposed if edited is None else edited  # noqa: E731
    return plan_save(
        pick(e.key, item.key_normalized),
        pick(e.value, item.content),
        pick(e.tags, item.tags),
        scope=pick(e.scope, item.scope),
        type_=pick(e.type, item.type),
        source="crystallized" if edits is None else "explicit",
        has_user_store=user_store,
    )


# store key -> (scope, key) -> the live row there: a page's targets, looked up without a read per card.
LiveRows = dict[str, dict[tuple[str, str], Memory]]


def plan_approval(
    refs: list[StoreRef],
    item: ReviewItem,
    problems: dict[str, StoreProblem] | None = None,
    edits: Edits | None = None,
    live: LiveRows | None = None,
) -> ApprovalPlan:
    """What approving ``item`` now would write, what it overwrites, and its own warnings.

    ``problems``: store key -> why it cannot be read (the page's banners).  ``edits``: the card's
    changed values.  ``live``: rows already read whole, where the target is looked up.
    """
    edits = edits.against(item) if edits is not None else None
    plan = _plan(refs, item, problems, edits, live or {})
    # The content the approval would write is what the evidence is read against.
    proposed = item if edits is None or edits.value is None else replace(item, content=edits.value)
    return replace(plan, edits=edits, warnings=warnings.of_plan(proposed, plan.refusal, plan.existing))


def _plan(refs, item, problems, edits, live: LiveRows) -> ApprovalPlan:
    try:
        save = planned_save(item, has_user_store(refs), edits)
    except SaveRefused as refused:
        return ApprovalPlan(item, None, str(refused))
    ref = ref_for(refs, save.store)
    blocked = None
    if ref.obstacle:
        blocked = _(
            "The %(store)s store cannot be written: %(path)s %(reason)s.",
            store=save.store,
            path=ref.path,
            reason=ref.obstacle,
        )
    elif not ref.exists:  # agentao would create the file on open; the dashboard never does
        blocked = _(
            "The %(store)s store does not exist yet at %(path)s; agentao creates it the first time it runs.",
            store=save.store,
            path=ref.path,
        )
    else:
        known = (problems or {}).get(save.store)
        rows = live.get(save.store) if known is None else None
        if rows is not None:
            existing, problem = rows.get((save.scope, save.key_normalized)), None
        else:
            existing, problem = writes.target_of(ref.path, save, known)
        if problem is not None:  # blocks this item only; the rest of the queue stays usable
            blocked = _(
                "The %(store)s store cannot be read, so this item cannot be approved now: %(problem)s",
                store=save.store,
                problem=problem,
            )
    if blocked is not None:
        return ApprovalPlan(item, save, None, blocked=blocked)
    pairs = [(n, getattr(existing, n), getattr(save, n)) for n in DIFF_FIELDS] if existing is not None else []
    diff = [{"field": n, "before": _show(b), "after": _show(a)} for n, b, a in pairs if b != a]
    return ApprovalPlan(item, save, None, existing, diff)


def _show(value) -> str:
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def _pending_item(refs: list[StoreRef], item_id: str, seen: str | None) -> ReviewItem:
    return read(ref_for(refs, "project").path, lambda conn: writes.pending_as_seen(conn, item_id, seen))


def approve(
    refs: list[StoreRef],
    item_id: str,
    seen: str | None = None,
    target: str | None = None,
    may_write=None,
    edits: Edits | None = None,
) -> tuple[ApprovalPlan, writes.Saved]:
    """Approve one pending item exactly as agentao would; returns the plan and the write.

    ``seen`` / ``target``: the item's and the overwritten memory's fingerprints as the page
    showed them (None = do not check).  ``may_write(store_key)`` raises to refuse before
    anything is locked.  Raises SaveRefused (item stays pending) or WriteConflict.
    """
    item = _pending_item(refs, item_id, seen)
    plan = plan_approval(refs, item, edits=edits)
    if may_write is not None and plan.save is not None:
        may_write(plan.save.store)  # a read-only store says so before any other reason
    if plan.refusal:
        raise SaveRefused.of(plan.refusal)
    if plan.blocked:
        raise WriteConflict("blocked", plan.blocked)
    queue, dest = ref_for(refs, "project").path, ref_for(refs, plan.save.store).path
    intent = twofile.approve_intent(item, queue, dest, plan.save)
    with write_all([dest, queue], intent) as conns:  # the memory commits first (see module doc)
        # The item first: another decision's memory is then never taken for a retry of this one.
        writes.pending_as_seen(conns[queue], item_id, fingerprint(item))
        existing = writes.target_as_seen(conns[dest], plan.save, Expect(target=target))
        saved = writes.put(conns[dest], plan.save, existing)
        writes.mark(conns[queue], item_id, "approved")
    events.note_own_approval(item_id, plan.save.store, saved.memory_id)  # for a later reject (read_back)
    return plan, saved


def reject(refs: list[StoreRef], item_id: str, seen: str | None = None) -> str:
    """Reject one pending item (status only, no event, no memory write)."""
    return writes.set_review_status(ref_for(refs, "project").path, item_id, "rejected", seen)


# agentao's reject_review_item reads the status, then writes "rejected" in a second
# transaction without looking again: started before an approval committed, its write
# lands right after (within its busy wait, a few tens of milliseconds) and undoes the
# decision the person was just told of.  Approvals are read back after this long; a
# reject that lands later still (agentao's process held up between its read and its
# write) is told by the live pulse of every open page (views/activity/pulse.py), which
# reads back the approvals this dashboard made (``events.own_approval``) when one moves.
READ_BACK_S = 0.2


@dataclass(frozen=True)
class Overridden:
    """An approval another program undid at once: the item's status now and its live memory."""

    item_id: str
    status: str
    memory: Memory


def read_back(
    refs: list[StoreRef], approved: list[tuple[str, str, str]], wait: float = READ_BACK_S
) -> list[Overridden]:
    """The approvals (item id, memory store, memory id) that are no longer approved once
    agentao's reject has had ``wait`` seconds to land, each with the memory the approval left live."""
    if not approved:
        return []
    time.sleep(wait)
    out = []
    for item_id, store, memory_id in approved:
        try:
            item = writes.review_item(ref_for(refs, "project").path, item_id)
            memory = get_memory(ref_for(refs, store), memory_id)[0]
        except StoreProblem:
            continue  # unreadable now: the banner says so; nothing to claim either way
        if item is not None and item.status != "approved" and memory is not None and memory.live:
            out.append(Overridden(item_id, item.status, memory))
    return out
