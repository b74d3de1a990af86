"""Bulk actions on memories: soft delete, move, tag or hard purge many rows at once.

Each row is planned by the code that plans the same action on one row and written by the
statements that write it (``actions.bulk_apply``): a soft delete is ``/memory delete``'s, a
move ``curation.move``'s, a tag a save of the row with one more tag as ``save_memory`` would
(so it becomes ``source='explicit'``, which the dry run says), a purge ``actions.purge``'s.

One request plans and writes at most ``CAP`` rows; "all matching this filter" takes the first
``CAP`` the action would change and running it again takes the next.  The writes happen under
``lockstep.write_all``: one row changed since the dry run refuses the whole action before a
byte is written; the agent saving other rows refuses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from flask_babel import gettext as _
from flask_babel import ngettext

from ..contract import SaveRefused
from ..records import Memory, plain
from ..store import MemoryFilters, list_memories
from ..store.registry import ref_for
from ..store.snapshot import rows_of
from ..store.writes import WriteConflict, fingerprint
from . import curation, effects

ACTIONS = ("delete", "move", "tag", "purge")
CAP = 500  # rows one request plans and writes
MAX_TAG_CHARS = 100
NAMED = 5  # memories a warning names before "and N more"


@dataclass(frozen=True)
class RowPlan:
    """What the action does to one selected row; ``code`` is the action's own when it changes it."""

    store: str
    id: str
    memory: Memory | None
    code: str  # delete | move | tag | purge, or: gone, already_deleted, already_there,
    text: str  # already_tagged, refused
    save: object = None  # the PlannedSave of a move or a tag
    existing: Memory | None = None  # the live row a move replaces in the other store

    @property
    def changes(self) -> bool:
        return self.code in ACTIONS

    @property
    def token(self) -> str:
        """``store:id:fingerprint[:target fingerprint]``: what the Apply form sends back."""
        parts = [self.store, self.id, fingerprint(self.memory)]
        if self.code == "move":
            parts.append(fingerprint(self.existing))
        return ":".join(parts)

    def to_dict(self) -> dict:
        m = self.memory
        return {
            **plain(self, "store", "id", "code", "text", "changes"),
            "token": self.token if self.changes else None,
            "key_normalized": m.key_normalized if m else None,
            "title": m.title if m else None,
            "save": self.save.to_dict() if self.save is not None else None,
            "replaces": self.existing.id if self.existing is not None else None,
        }


@dataclass
class BulkPlan:
    """The dry run of one bulk action: every row, the block effect, the warnings."""

    action: str
    rows: list[RowPlan]
    total: int  # rows the selection would change, beyond the cap too
    tag: str | None = None
    to: str | None = None
    effect: effects.BlockEffect | None = None
    warnings: list[dict] = field(default_factory=list)

    @property
    def changing(self) -> list[RowPlan]:
        return [r for r in self.rows if r.changes]

    def to_dict(self) -> dict:
        return {
            **plain(self, "action", "tag", "to", "total"),
            "count": len(self.changing),
            "cap": CAP,
            "capped": self.total > len(self.changing),
            "rows": [r.to_dict() for r in self.rows],
            "effect": self.effect.to_dict() if self.effect else None,
            "warnings": self.warnings,
        }


class BulkConflict(WriteConflict):
    """Rows changed since the dry run; nothing was written.  ``rows``: (store, id, why)."""

    def __init__(self, rows: list[tuple[str, str, str]]):
        super().__init__(
            "changed",
            ngettext(
                "%(num)d memory changed since the dry run; nothing was changed. Review the changes again.",
                "%(num)d memories changed since the dry run; nothing was changed. Review the changes again.",
                len(rows),
            ),
        )
        self.rows = rows


# -- which rows ------------------------------------------------------------------------


def qualifies(action: str, memory: Memory, tag: str | None, to: str | None) -> bool:
    """Whether the action would change this row at all (a cheap test, before planning)."""
    if action == "purge":
        return True
    if not memory.live:
        return False
    return (
        action == "delete"
        or (action == "move" and memory.store != to)
        or (action == "tag" and tag not in memory.tags)
    )


def named_rows(refs, picks: list[tuple[str, str]]) -> list[tuple[str, str, Memory | None]]:
    """The rows the checkboxes named, from each file's snapshot (None: not there)."""
    by_store = {}
    for store in {s for s, _id in picks}:
        ref = ref_for(refs, store)
        by_store[store] = {m.id: m for m in rows_of(ref).rows} if ref is not None and ref.exists else {}
    return [(s, i, by_store[s].get(i)) for s, i in picks]


def matching_rows(refs, filters: MemoryFilters, action: str, tag=None, to=None):
    """(the first CAP rows of the filter the action changes, how many it changes in all)."""
    everything = list_memories(refs, replace(filters, page=1, per_page=10**9))
    ready = [m for m in everything.items if qualifies(action, m, tag, to)]
    return [(m.store, m.id, m) for m in ready[:CAP]], len(ready)


# -- the dry run -------------------------------------------------------------------------


def plan_row(refs, action: str, store: str, memory_id: str, m: Memory | None, tag, to) -> RowPlan:
    def row(code: str, text: str, *more) -> RowPlan:
        return RowPlan(store, memory_id, m, code, text, *more)

    if m is None:
        return row("gone", _("Not in the %(store)s store (any more); left out.", store=store))
    if action == "purge":
        return row(
            "purge",
            _(
                "Erased from the file with its history, "
                "then the disk is checked for its text. Cannot be undone."
            ),
        )
    if not m.live:
        return row("already_deleted", _("Soft-deleted already; left as it is."))
    if action == "delete":
        return row("delete", _("Soft-deleted: agentao stops using it; its page can restore it."))
    if action == "tag":
        if tag in m.tags:
            return row("already_tagged", _("Has the tag already; left as it is."))
        try:
            save = curation.plan_edit(refs, m, m.content, [*m.tags, tag], m.type)
        except (SaveRefused, WriteConflict) as refused:
            return row("refused", _("Left as it is: %(why)s", why=str(refused)))
        return row(
            "tag",
            _("Saved again with the tag added: %(tags)s.", tags=", ".join(save.tags)),
            save,
        )
    if m.store == to:
        return row("already_there", _("In the %(store)s store already; left as it is.", store=to))
    move = curation.plan_move(refs, m)
    if move.problem:
        return row("refused", _("Left as it is: %(why)s", why=move.problem))
    if move.existing is not None:
        text = _(
            "Saved in the %(store)s store over its memory “%(title)s”, then soft-deleted here.",
            store=to,
            title=move.existing.title,
        )
    else:
        text = _("Saved in the %(store)s store as a new memory, then soft-deleted here.", store=to)
    return row("move", text, move.save, move.existing)


def plan(refs, snap, action: str, chosen, total: int | None = None, tag=None, to=None) -> BulkPlan:
    """The dry run over ``chosen`` ((store, id, Memory|None) triples, at most CAP are planned)."""
    rows = [plan_row(refs, action, s, i, m, tag, to) for s, i, m in chosen[:CAP]]
    changing = [r for r in rows if r.changes]
    if total is None:
        total = len(changing) + sum(1 for _s, _i, m in chosen[CAP:] if m and qualifies(action, m, tag, to))
    out = BulkPlan(action, rows, total, tag, to)
    if changing:
        out.effect = _effect(snap, action, changing)
    out.warnings = _warnings(out)
    return out


def _effect(snap, action: str, changing: list[RowPlan]) -> effects.BlockEffect:
    ids = {r.id for r in changing}
    if action in ("delete", "purge"):
        return effects.rows_effect(snap, [], hide=ids)
    saved, hide = [], set(ids) if action == "move" else set()
    for n, r in enumerate(changing):
        row = effects.would_save(r.save, r.existing if action == "move" else r.memory)
        if row.id == effects.NEW_ID:
            row = replace(row, id=f"{effects.NEW_ID}{n}")  # each new row its own stand-in
        saved.append(row)
        if row.source == "auto":
            hide.update(effects.auto_cap_hides(snap, row))
    return effects.rows_effect(snap, saved, hide=hide)


def _names(memories) -> str:
    shown = ", ".join(f"“{m.title}”" for m in memories[:NAMED])
    more = len(memories) - NAMED
    return shown if more <= 0 else _("%(names)s and %(num)d more", names=shown, num=more)


def _warnings(p: BulkPlan) -> list[dict]:
    out: list[dict] = []
    changing = p.changing

    def warn(code: str, text: str) -> None:
        out.append({"code": code, "text": text})

    if p.total > len(changing):
        warn(
            "capped",
            _(
                "This handles the first %(num)d of %(total)d memories; run it again for the rest.",
                num=len(changing),
                total=p.total,
            ),
        )
    refused = [r for r in p.rows if r.code == "refused"]
    if refused:
        warn(
            "refused",
            ngettext(
                "%(num)d memory cannot be changed this way and is left as it is (see its row).",
                "%(num)d memories cannot be changed this way and are left as they are (see their rows).",
                len(refused),
            ),
        )
    effect, acted = p.effect, {(r.store, r.id) for r in changing}
    if effect is not None:
        after = {(m.store, m.id) for m in effect.after_shown}
        leaving = [
            m
            for m in effect.before_shown
            if (m.store, m.id) in acted and p.action != "tag" and p.action != "move"
        ]
        if leaving:
            warn(
                "leaves_block",
                ngettext(
                    "%(num)d of them is in every new session's prompt now and will not be: %(names)s.",
                    "%(num)d of them are in every new session's prompt now and will not be: %(names)s.",
                    len(leaving),
                    names=_names(leaving),
                ),
            )
        pushed = [
            m
            for m in effect.before_shown
            if m.source == "explicit" and (m.store, m.id) not in acted and (m.store, m.id) not in after
        ]
        if pushed:
            warn(
                "evicts_explicit",
                _(
                    "This pushes memories you saved yourself out of the always-on %(tag)s block: %(names)s.",
                    tag="<memory-stable>",
                    names=_names(pushed),
                ),
            )
    replaced = [r.existing for r in changing if r.existing is not None]
    if replaced:
        warn(
            "overwrites",
            ngettext(
                "Moving replaces %(num)d live memory in the %(store)s store: %(names)s.",
                "Moving replaces %(num)d live memories in the %(store)s store: %(names)s.",
                len(replaced),
                store=p.to,
                names=_names(replaced),
            ),
        )
    if p.action == "tag":
        becoming = [r.memory for r in changing if r.memory.source != "explicit"]
        if becoming:
            warn(
                "becomes_explicit",
                _(
                    "Tagging saves each memory as agentao's save_memory does, so these then count as "
                    "saved by you (source explicit): %(names)s.",
                    names=_names(becoming),
                ),
            )
    if p.action == "purge" and changing:
        warn(
            "irreversible",
            _("A hard purge cannot be undone: the memories and their history leave the file for good."),
        )
    return out
