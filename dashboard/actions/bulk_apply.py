"""Applying a reviewed bulk action (see ``actions.bulk`` for what each action writes, and why).

Every posted row is planned again against the files, then checked against the dry run while
every file's lock is held, and only then written: one row that moved refuses everything
(``BulkConflict``).  ``apply_unchanged``, offered with that refusal (an agent re-saving one
row every half second would refuse every Apply), writes the rows still as seen and names
the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask_babel import gettext as _

from ..records import plain
from ..store import intents, writes
from ..store.lockstep import write_all
from ..store.registry import ref_for
from ..store.writes import Expect, WriteConflict, fingerprint
from . import twofile
from .bulk import BulkConflict, RowPlan, named_rows, plan_row


@dataclass(frozen=True)
class Posted:
    """One row of the Apply form: the row as the dry run saw it."""

    store: str
    id: str
    row: str
    target: str | None = None


def distinct(posted: list[Posted]) -> list[Posted]:
    """The rows once each, in the order first posted (a form or a script may name a row
    twice: it is written once).  ValueError when one row is posted as two different states."""
    seen: dict = {}
    for p in posted:
        if seen.setdefault((p.store, p.id), p) != p:
            raise ValueError(f"{p.store}:{p.id}")
    return list(seen.values())


def _planned_again(refs, action, posted: list[Posted], tag, to, partial=False):
    """Each posted row planned against the files now; BulkConflict names those that moved
    (``partial``: (rows and posted still as seen, the stale ones) instead)."""
    now = named_rows(refs, [(p.store, p.id) for p in posted])
    stale, rows = [], []
    for p, (_s, _i, m) in zip(posted, now):
        r = plan_row(refs, action, p.store, p.id, m, tag, to)
        if m is None or fingerprint(m) != p.row or not r.changes:
            stale.append((p.store, p.id, r.text if not r.changes else _("changed since the dry run")))
        elif action == "move" and fingerprint(r.existing) != p.target:
            stale.append((p.store, p.id, _("its place in the %(store)s store changed", store=to)))
        rows.append(r)
    if partial:
        named = {(s, i) for s, i, _w in stale}
        keep = [(r, p) for r, p in zip(rows, posted) if (p.store, p.id) not in named]
        return [r for r, _p in keep], [p for _r, p in keep], stale
    if stale:
        raise BulkConflict(stale)
    return rows


def apply(refs, action: str, posted: list[Posted], tag=None, to=None) -> list[dict]:
    """Write a bulk soft delete, move or tag; returns one ``{store, id, memory_id, event}`` per row.

    Raises BulkConflict (nothing written) when a row is not as the dry run saw it.
    """
    return _apply(refs, action, posted, tag, to, partial=False)[0]


def apply_unchanged(refs, action: str, posted: list[Posted], tag=None, to=None):
    """Write the rows still as the dry run saw them; (what ``apply`` returns, the rows
    left out because they moved: (store, id, why))."""
    return _apply(refs, action, posted, tag, to, partial=True)


def _apply(refs, action, posted, tag, to, partial):
    assert action in ("delete", "move", "tag")
    if partial:
        rows, posted, left = _planned_again(refs, action, posted, tag, to, partial=True)
        if not rows:
            return [], left
    else:
        rows, left = _planned_again(refs, action, posted, tag, to), []
    stores = sorted({r.store for r in rows}, key=("project", "user").index)
    paths = [ref_for(refs, s).path for s in stores]
    if action == "move":
        paths = [ref_for(refs, to).path] + paths  # the target commits first (see module doc)
    done, stale = [], []
    intent = (
        None
        if action != "move"
        else twofile.move_intent(
            [(r.store, ref_for(refs, r.store).path, r.memory, ref_for(refs, to).path, r.save) for r in rows],
            to,
        )
    )
    with write_all(paths, intent) as conns:
        checked = []
        for r, p in zip(rows, posted):
            conn = conns[ref_for(refs, r.store).path]
            try:
                writes.row_as_seen(conn, Expect(row_id=r.id, row=p.row), r.store)
                target = None
                if action == "move":
                    target = writes.target_as_seen(
                        conns[ref_for(refs, to).path], r.save, Expect(target=p.target)
                    )
                elif action == "tag":
                    target = writes.target_as_seen(conn, r.save, Expect(row_id=r.id))
                checked.append((r, conn, target))
            except WriteConflict as moved:
                stale.append((r.store, r.id, str(moved)))
        if stale and not partial:
            raise BulkConflict(stale)  # inside write_all: every file rolls back
        left += stale
        if intent is not None and stale:  # the record names the rows written only
            kept = {r.id for r, _c, _t in checked}
            intent.data["rows"] = [x for x in intent.data["rows"] if x["id"] in kept]
        for r, conn, target in checked:
            if action == "delete":
                writes.delete_row(conn, r.id)
                done.append({"store": r.store, "id": r.id, "memory_id": r.id, "event": "soft_delete"})
                continue
            saved = writes.put(conns[ref_for(refs, to).path] if action == "move" else conn, r.save, target)
            if action == "move":
                writes.delete_row(conn, r.id)
            done.append(
                {
                    **plain(r, "store", "id"),
                    "memory_id": saved.memory_id,
                    "event": saved.event,
                    "memory_store": to or r.store,
                }
            )
    return done, left


def purge_runs(refs, rows: list[RowPlan]) -> dict:
    """store -> the purge's DryRun of these rows (each memory with its events)."""
    from . import purge

    out = {}
    for store in ("project", "user"):
        ids = [r.id for r in rows if r.store == store and r.code == "purge"]
        if ids:
            out[store] = purge.plan(ref_for(refs, store), memory_ids=ids)
    return out


def purge_all(refs: dict, runs: dict, job) -> list:
    """The verified purge of each store's confirmed rows, one store after the other.

    Across two stores the job is recorded first (``twofile.purge_intent``), so that a dashboard
    stopped between the two purges finishes the second later and the job's page answers again.
    """
    from . import purge

    intent = twofile.purge_intent(job.id, runs, refs) if len(runs) > 1 else None
    if intent is not None:
        intent.record(refs[next(iter(runs))].path)
    results = []
    try:
        for n, (store, run) in enumerate(runs.items()):
            results.append(purge.purge(refs[store], run, progress=job.progress))
            if intent is not None and n < len(runs) - 1:
                intent.update(
                    runs={**intent.data["runs"], store: {**intent.data["runs"][store], "done": True}}
                )
                intents.fault("between_commits")
    finally:
        if intent is not None:
            intent.close(finished=True)
    return results
