"""What an action would do to the ``<memory-stable>`` block a brand-new session gets.

"Before" is ``engine.stable_view`` over the rows as they are (with the snapshot's cache).
"After" runs the engine's stable path (``select`` -> ``fit`` -> ``render_stable``) over the
rows as the action would leave them: a save puts in the Memory record built from the very
``PlannedSave`` the write executes (an overwritten row keeps its id, place and
``created_at``; a new row gets ``now``), a soft delete hides the row's id.  Ids and dates
never appear in the block.  The tests pin each prediction to ``preview``'s block over the
files after the real write.
"""

from __future__ import annotations

import difflib
import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..contract import PlannedSave
from ..engine import all_entries, session_tail, stable_view
from ..engine.render import STABLE_BUDGET
from ..engine.stable import BECAUSE, INCIDENTAL_KEPT, STRUCTURAL_TYPES, Fitted, fit, select
from ..preview_source import Snapshot
from ..records import Memory
from ..store.held import held
from ..store.snapshot import sql_order
from ..store.writes import AUTO_CAP
from ..store.writes import now as agentao_now

NEW_ID = "(new)"  # never a real id: agentao's are hex
T = TypeVar("T")


@dataclass(frozen=True)
class BlockEffect:
    """The stable block before and after one action, with its size against the budget."""

    before: str
    after: str
    budget: int
    # The memories each block shows, where known: what actions.warnings compares.
    before_shown: tuple[Memory, ...] = field(default=(), compare=False, repr=False)
    after_shown: tuple[Memory, ...] = field(default=(), compare=False, repr=False)

    @property
    def delta(self) -> int:
        """How many characters the action adds to the block (negative: frees)."""
        return len(self.after) - len(self.before)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def entered(self) -> tuple[Memory, ...]:
        """Memories the block shows after but not before (one that did not fit now does)."""
        return self._moves()[0]

    @property
    def left(self) -> tuple[Memory, ...]:
        """Memories the block shows before but not after (pushed out, or gone)."""
        return self._moves()[1]

    def _moves(self) -> tuple[tuple[Memory, ...], tuple[Memory, ...]]:
        # By row; a key on both sides is a move, not news; a new row is the action's own.
        now, then = ({(m.store, m.id) for m in rows} for rows in (self.before_shown, self.after_shown))
        came = [m for m in self.after_shown if (m.store, m.id) not in now]
        went = [m for m in self.before_shown if (m.store, m.id) not in then]
        both = {m.key_normalized for m in came} & {m.key_normalized for m in went}
        return (
            tuple(m for m in came if m.key_normalized not in both and m.id != NEW_ID),
            tuple(m for m in went if m.key_normalized not in both),
        )

    @property
    def diff(self) -> str:
        """A compact unified diff (one line of context) of the two blocks."""
        return "\n".join(
            difflib.unified_diff(
                self.before.splitlines(),
                self.after.splitlines(),
                "memory-stable now",
                "memory-stable after",
                n=1,
                lineterm="",
            )
        )

    @property
    def token(self) -> str:
        """The predicted block in short (size and digest), for a form to send back with the
        action: the answer can then say whether the block came out as shown."""
        return block_token(self.after)

    def to_dict(self) -> dict[str, Any]:
        return {
            "before_chars": len(self.before),
            "after_chars": len(self.after),
            "budget": self.budget,
            "delta": self.delta,
            "changed": self.changed,
            "diff": self.diff,
            "after": self.after,
            "token": self.token,
        }


def block_token(block: str) -> str:
    """``<chars>-<12 hex>``: a block's size and a digest of its text."""
    return f"{len(block)}-{hashlib.sha256(block.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def current_block(snap: Snapshot) -> str:
    """The block agentao would send a new session now (what ``/memory status`` sizes)."""
    # query="" : the stable block depends on neither the query nor the clock.
    return stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)[0]


def would_save(plan: PlannedSave, existing: Memory | None, stamp: str | None = None) -> Memory:
    """The row ``writes.save_memory(plan)`` would leave: updated in place, or new."""
    stamp = stamp or agentao_now()
    return Memory(
        id=existing.id if existing else NEW_ID,
        scope=plan.scope,
        type=plan.type,
        key_normalized=plan.key_normalized,
        title=plan.title,
        content=plan.content,
        tags=tuple(plan.tags),
        keywords=tuple(plan.keywords),
        source=plan.source,
        confidence=plan.confidence,
        sensitivity="normal",
        created_at=existing.created_at if existing else stamp,
        updated_at=stamp,
        store=plan.store,
    )


def auto_cap_hides(snap: Snapshot, row: Memory) -> list[str]:
    """The ids an auto save of ``row`` makes the write soft-delete (``writes._enforce_auto_cap``)."""
    rows = [row if m.id == row.id else m for m in (snap.user if row.store == "user" else snap.project)]
    auto = {m.id: m for m in rows + [row] if m.scope == row.scope and m.live and m.source == "auto"}
    ranked = sorted(auto.values(), key=lambda m: (m.updated_at, m.created_at))
    return [m.id for m in ranked[: max(0, len(ranked) - AUTO_CAP)]]


def _place(m: Memory) -> tuple[tuple[int, Any], ...]:
    # The file's listing order (see store.snapshot): created_at, then (scope, key).
    return tuple(map(sql_order, (m.created_at, m.scope, m.key_normalized)))


def _all_saved_in(rows: list[Memory], saved: list[Memory]) -> list[Memory]:
    """A file's live rows in its listing order once ``saved`` are saved there (each after its
    equals, as saving them one after another)."""
    if not saved:
        return rows
    ids = {r.id for r in saved}
    out = [m for m in rows if m.id not in ids]
    # ``rows`` are in that order already (the file's ORDER BY): each saved row goes in
    # by bisection, after its equals, weighing a few rows instead of all of them.
    for row in sorted(saved, key=_place):
        out.insert(bisect_right(out, _place(row), key=_place), row)
    return out


def save_effect(
    snap: Snapshot, plan: PlannedSave, existing: Memory | None, hide: Iterable[str] = ()
) -> BlockEffect:
    """Before/after for a planned save (plus ids soft-deleted by the same action)."""
    row = would_save(plan, existing)
    if plan.source == "auto":
        hide = {*hide, *auto_cap_hides(snap, row)}
    return row_effect(snap, row, hide)


def save_effects(
    snap: Snapshot, saves: dict[str, tuple[PlannedSave, Memory | None]]
) -> dict[str, BlockEffect]:
    """key -> ``save_effect`` of each (plan, existing) alone, over the same rows (a page of cards).

    A save that hides nothing changes the held selection (``EngineCache.stable``) by one row:
    that row goes in at its place and the row it overwrites leaves, so a card costs a copy
    of the selection and the budget's walk, not a pass over every row.  Where the selection
    cannot tell the order alone (a stamp equal to another entry's, an id in both files, a
    recent incidental row overwritten) the card takes the whole walk, ``rows_effect``.
    """
    quick, recent = per_snapshot(snap, "effects", lambda: _quick(snap))
    now = stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)
    out = {}
    for key, (plan, existing) in saves.items():
        row = would_save(plan, existing)
        fitted = _saved_quickly(snap, row, existing, recent) if quick and plan.source != "auto" else None
        out[key] = rows_effect(snap, [row]) if fitted is None else _effect(snap, fitted, now)
    return out


def per_snapshot(snap: Snapshot, name: str, work: Callable[[], T]) -> T:
    """``work()`` done once per state of the snapshot's rows: held (``store.held``) under the
    stamps they were read at, as the engine cache is; worked out again when a file moves."""
    read = [f for f in snap.version if f is not None]
    return held(
        name,
        [path for path, _stamp, _counter in read],
        lambda _stamp: work(),
        stamp=tuple(stamp for _path, stamp, _counter in read),
    )


def _quick(snap: Snapshot) -> tuple[bool, list[tuple[int, int]]]:
    """Whether a card may put its row into the held selection (no id in both files: the full
    walk decides which one it shows), and the selection's recent incidental picks."""
    ids = [m.id for m in (*snap.project, *snap.user)]
    quick = len(set(ids)) == len(ids)
    return quick, _recent(snap.cache.stable()[0]) if quick else []


_RECENT = "recent incidental "


def _created(pair: tuple[Memory, str]) -> Any:
    return pair[0].created_at


def _recent(picked: list[tuple[Memory, str]]) -> list[tuple[int, int]]:
    """(rank, index) of the selection's recent incidental entries, best rank first."""
    found = ((b, n) for n, (_m, b) in enumerate(picked) if b.startswith(_RECENT))
    return sorted((int(b[len(_RECENT) :].split("/")[0]), n) for b, n in found)


def _saved_quickly(
    snap: Snapshot, row: Memory, existing: Memory | None, recent: list[tuple[int, int]]
) -> Fitted | None:
    """The fit after saving ``row`` (over ``existing``, if any), from the held selection; None
    when only the whole walk can tell (see ``save_effects``)."""
    held, held_costs = snap.cache.stable()
    picked, costs = list(held), list(held_costs)
    if not (isinstance(row.created_at, str) and isinstance(row.updated_at, str)):
        return None
    try:
        if existing is not None:
            at = bisect_right(picked, existing.created_at, key=_created) - 1
            while at >= 0 and picked[at][0].created_at == existing.created_at:
                if (picked[at][0].store, picked[at][0].id) == (existing.store, existing.id):
                    break
                at -= 1
            else:
                at = -1
            if at >= 0:
                if picked[at][1].startswith(_RECENT):
                    return None  # a recent incidental row leaves: the next one would come in
                del picked[at], costs[at]
                recent = [(rank, n - (n > at)) for rank, n in recent]
            elif existing.scope == "user" or existing.type in STRUCTURAL_TYPES:
                return None  # an always-shown row the selection does not hold
        always = row.scope == "user" or row.type in STRUCTURAL_TYPES
        because = ("user scope" if row.scope == "user" else f"type {row.type}") if always else ""
        if not always:
            if any(picked[n][0].updated_at == row.updated_at for _rank, n in recent):
                return None  # equal stamps keep the files' order
            rank = 1 + sum(picked[n][0].updated_at > row.updated_at for _rank, n in recent)
            if rank > INCIDENTAL_KEPT:
                return fit(picked, session_tail(snap.summaries, None), costs=costs)
            for old, n in recent:
                if old >= rank:
                    picked[n] = (picked[n][0], f"{_RECENT}{old + 1}/{INCIDENTAL_KEPT}")
            if len(recent) == INCIDENTAL_KEPT:
                dropped = recent[-1][1]
                del picked[dropped], costs[dropped]
            because = f"{_RECENT}{rank}/{INCIDENTAL_KEPT}"
        at = bisect_left(picked, row.created_at, key=_created)
        if at < len(picked) and picked[at][0].created_at == row.created_at:
            return None  # equal stamps keep the files' order
        picked.insert(at, (row, because))
        costs.insert(at, snap.cache.costs(row))
    except TypeError:  # stamps of other kinds (a hand edit): the whole walk orders them as SQLite does
        return None
    return fit(picked, session_tail(snap.summaries, None), costs=costs)


def _effect(snap: Snapshot, after: Fitted, now: tuple[str, Fitted] | None = None) -> BlockEffect:
    before, shown_now = now or stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)
    return BlockEffect(
        before,
        after.block(session_tail(snap.summaries, None)),
        STABLE_BUDGET,
        tuple(s.memory for s in shown_now.shown()),
        tuple(s.memory for s in after.shown()),
    )


def row_effect(snap: Snapshot, row: Memory, hide: Iterable[str] = ()) -> BlockEffect:
    """Before/after for ``row`` live in its file (new, changed or restored), ``hide`` gone."""
    return rows_effect(snap, [row], hide)


def rows_effect(snap: Snapshot, saved: Iterable[Memory], hide: Iterable[str] = ()) -> BlockEffect:
    """Before/after for several rows saved at once, ``hide`` gone (the auto cap is the caller's
    to add: ``auto_cap_hides``)."""
    saved = list(saved)
    hidden = frozenset(hide)
    tail = session_tail(snap.summaries, None)
    now = stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)
    picked = _picked_after(snap, now[1].picked, saved, hidden)
    if picked is None:
        picked = _picked_afresh(snap, saved, hidden)
    # The selection unchanged (a row it does not hold is deleted): the block stays as it is.
    after = now[1] if picked is now[1].picked else fit(picked, tail, snap.cache.costs)
    return _effect(snap, after, now)


def _picked_afresh(snap: Snapshot, saved: list[Memory], hidden: frozenset[str]) -> list[tuple[Memory, str]]:
    """``select`` over the rows as the action leaves them: every live row through the rules."""
    project = _all_saved_in(snap.project, [r for r in saved if r.store != "user"])
    user = _all_saved_in(snap.user, [r for r in saved if r.store == "user"])
    entries = all_entries(project, user)
    if hidden:
        entries = [m for m in entries if m.id not in hidden]
    return select(entries)


def _picked_after(
    snap: Snapshot, picked: Sequence[tuple[Memory, str]], saved: list[Memory], hidden: frozenset[str]
) -> Sequence[tuple[Memory, str]] | None:
    """``select`` over the rows as the action leaves them, worked out from ``picked`` (the
    selection now) without walking every row, when that is certain: every row the action
    touches has an id no other live row holds, none is a recent incidental pick, and every
    saved row is one the always-rules take (user scope or a structural type) at a created_at
    no picked row shares.  Then the other rows keep their rules and their order, and the
    three recent incidental picks stay.  None otherwise: the caller selects afresh."""
    ids = hidden | {r.id for r in saved}
    if not saved and not any(m.id in ids for m, _ in picked):
        return picked  # only rows it does not hold leave (their ids are gone with them)
    if len(ids) < len(hidden) + len(saved):  # a saved row hidden too, or two saved with one id
        return None
    holders = [m for rows in (snap.project, snap.user) for m in rows if m.id in ids]
    if len({m.id for m in holders}) < len(holders):
        return None  # an id in both files: the rules take it once, from whichever comes first
    homes = {r.id: r.store for r in saved}
    if any(homes.get(m.id, m.store) != m.store for m in holders):
        return None  # a saved row beside another file's row with its id
    out = []
    for m, because in picked:
        if m.id in ids:
            if because not in BECAUSE.values() and because != "user scope":
                return None  # a recent incidental pick leaves: the next one comes in
            continue
        out.append((m, because))
    for row in saved:
        if row.scope == "user":
            because = "user scope"
        elif row.type in BECAUSE:
            because = BECAUSE[row.type]
        else:
            return None  # an incidental row: it may enter the three most recent
        at = bisect_left(out, row.created_at, key=lambda pair: pair[0].created_at)
        if at < len(out) and out[at][0].created_at == row.created_at:
            return None  # a tie: the order among equals is the files' (select's) to say
        out.insert(at, (row, because))
    return out


def delete_effect(snap: Snapshot, memory: Memory) -> BlockEffect:
    """Before/after for soft-deleting ``memory`` (its id hidden, as the preview's what-if)."""
    return rows_effect(snap, [], hide={memory.id})
