"""The three actions that write both stores, recorded and finished as one (``store.intents``).

A move, an approval whose memory lands in the user store and a bulk purge of both stores
build their record here and have a finisher that completes one stopped half way: a move
soft-deletes the original where the target holds exactly what it saved (an original changed
since is left live and named); an approval marks the item approved where the memory holds
exactly the approved save (an item decided otherwise meanwhile is named); a bulk purge purges
each store's part not yet done again from the confirmed dry run.  Each finisher answers
``{"text", "finished", ...}``.  A record holds ids, paths, fingerprints and digests only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flask import Flask, current_app, has_app_context
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext

from ..contract import PlannedSave
from ..records import Memory, ReviewItem
from ..store import StoreProblem, intents, rows, writes
from ..store.connection import write
from ..store.intents import FLAG, PATH, STORE, TEXT
from ..store.plan import DryRun
from ..store.registry import StoreRef
from ..store.writes import fingerprint
from . import dryrun, purge
from .verdicts import PurgeResult

# Problems that pass: the record waits.  Any other (the store gone, damaged, replaced): the
# finisher says what is left half done and the record goes, so it blocks no write for ever.
TRANSIENT = ("disk_full", "locked", "read_only", "half_done")


def _holds(saved: PlannedSave | Memory) -> str:
    """What a save writes, as a digest a row is checked against (``writes._holds``'s fields)."""
    return intents.digest(
        saved.title,
        saved.content,
        list(saved.tags),
        list(saved.keywords),
        saved.type,
        saved.source,
        saved.confidence,
    )


def _landed(path: str, scope: str, key: str, store: str, holds: str) -> Memory | None:
    """The live row at (scope, key) when it holds exactly the recorded save, else None."""
    row = writes.live_at(Path(path), scope, key, store)
    return row if row is not None and _holds(row) == holds else None


# -- move -----------------------------------------------------------------------------


def move_intent(moves: Iterable[tuple[str, Path, Memory, Path, PlannedSave]], to: str) -> intents.Intent:
    """``moves``: (source store, source path, the row as seen, target path, the PlannedSave)."""
    moves = list(moves)
    stores = sorted({str(m[3]) for m in moves} | {str(m[1]) for m in moves})
    data = {
        "to": to,
        "rows": [
            {
                "store": s,
                "source": str(p),
                "id": row.id,
                "row": fingerprint(row),
                "dest": str(d),
                "scope": save.scope,
                "key": save.key_normalized,
                "holds": _holds(save),
            }
            for s, p, row, d, save in moves
        ],
    }
    source = moves[0][0] if moves else "project"

    def half(reason: str) -> str:
        return ngettext(
            "Moved half way: %(num)d memory is saved in the %(to)s store, but the %(from)s store "
            "could not be written: %(reason)s. So the original is still live there: both stores "
            "hold it for now. The dashboard finishes the move (soft-deletes the original) before "
            "its next write to these stores, and at its next start.",
            "Moved half way: %(num)d memories are saved in the %(to)s store, but the %(from)s "
            "store could not be written: %(reason)s. So the originals are still live there: both "
            "stores hold them for now. The dashboard finishes the move (soft-deletes the "
            "originals) before its next write to these stores, and at its next start.",
            len(data["rows"]),
            to=to,
            reason=reason,
            **{"from": source},
        )

    return intents.Intent("move", stores, data, half)


def _finish_move(data: intents.Record) -> intents.Report:
    rows_, landed = data["rows"], []
    deleted, already, changed = [], [], []
    try:
        landed = [r for r in rows_ if _landed(r["dest"], r["scope"], r["key"], data["to"], r["holds"])]
        by_source: dict[str, list[dict[str, Any]]] = {}
        for r in landed:
            by_source.setdefault(r["source"], []).append(r)
        for source, mine in by_source.items():
            with write(Path(source), settled=True) as conn:
                for r in mine:
                    found = rows.memory_by_id(conn, r["id"], r["store"])
                    if found is None or not found.live:
                        already.append(r["id"])
                    elif fingerprint(found) != r["row"]:
                        changed.append(found.title)
                    else:
                        writes.delete_row(conn, r["id"])
                        deleted.append(r["id"])
    except StoreProblem as problem:
        return {
            "finished": problem.kind not in TRANSIENT,
            "text": ngettext(
                "A move of %(num)d memory to the %(to)s store stopped half way (%(when)s): it is "
                "saved there and still live where it was. It could not be finished now: %(why)s",
                "A move of %(num)d memories to the %(to)s store stopped half way (%(when)s): they "
                "are saved there and still live where they were. It could not be finished now: "
                "%(why)s",
                len(landed or rows_),
                to=data["to"],
                when=data["started"],
                why=problem,
            ),
        }
    if not landed:
        text = _(
            "A move to the %(to)s store was interrupted (%(when)s) before anything was "
            "written: nothing was changed.",
            to=data["to"],
            when=data["started"],
        )
    else:
        text = ngettext(
            "A move to the %(to)s store was interrupted (%(when)s) after %(num)d memory was saved "
            "there; the dashboard finished it: the original is soft-deleted.",
            "A move to the %(to)s store was interrupted (%(when)s) after %(num)d memories were "
            "saved there; the dashboard finished it: the originals are soft-deleted.",
            len(landed),
            to=data["to"],
            when=data["started"],
        )
        if changed:
            text += " " + ngettext(
                "%(num)d original changed since and is left live in both stores: %(names)s.",
                "%(num)d originals changed since and are left live in both stores: %(names)s.",
                len(changed),
                names=", ".join(f"“{t}”" for t in changed),
            )
    return {
        "text": text,
        "completed": deleted,
        "already": already,
        "left": changed,
        "not_written": len(rows_) - len(landed),
    }


# -- approval -------------------------------------------------------------------------


def approve_intent(item: ReviewItem, queue: Path, dest: Path, save: PlannedSave) -> intents.Intent:
    data = {
        "item": item.id,
        "queue": str(queue),
        "seen": fingerprint(item),
        "dest": str(dest),
        "store": save.store,
        "scope": save.scope,
        "key": save.key_normalized,
        "holds": _holds(save),
    }

    def half(reason: str) -> str:
        return _(
            "Approved half way: the memory is saved in the %(store)s store, but the project "
            "store, which holds the suggestion, could not be written: %(reason)s. So the "
            "suggestion still shows as waiting. The dashboard marks it approved before its "
            "next write to these stores, and at its next start.",
            store=save.store,
            reason=reason,
        )

    return intents.Intent("approve", [dest, queue], data, half)


def _finish_approve(data: intents.Record) -> intents.Report:
    try:
        memory = _landed(data["dest"], data["scope"], data["key"], data["store"], data["holds"])
    except StoreProblem as problem:
        return {
            "finished": problem.kind not in TRANSIENT,
            "text": _(
                "An approval stopped half way (%(when)s) and its memory's store cannot be read now: %(why)s",
                when=data["started"],
                why=problem,
            ),
        }
    base = {
        "item": data["item"],
        "memory": None if memory is None else {"store": data["store"], "id": memory.id},
    }
    if memory is None:
        return base | {
            "text": _(
                "An approval was interrupted (%(when)s) before anything was "
                "written: nothing was changed; the suggestion still waits.",
                when=data["started"],
            )
        }
    try:
        with write(Path(data["queue"]), settled=True) as conn:
            item = rows.review_by_id(conn, data["item"], "project")
            status = None if item is None else item.status
            if status == "pending" and fingerprint(item) == data["seen"]:
                writes.mark(conn, data["item"], "approved")
                status = "done"
    except StoreProblem as problem:
        return base | {
            "finished": problem.kind not in TRANSIENT,
            "text": _(
                "An approval stopped half way (%(when)s): its memory “%(title)s” is saved, the "
                "suggestion still waits. It could not be finished now: %(why)s",
                when=data["started"],
                title=memory.title,
                why=problem,
            ),
        }
    if status == "done":
        text = _(
            "An approval was interrupted (%(when)s) after its memory “%(title)s” was saved; "
            "the dashboard finished it: the suggestion is marked approved.",
            when=data["started"],
            title=memory.title,
        )
    else:
        text = _(
            "An approval was interrupted (%(when)s) after its memory “%(title)s” was saved, "
            "and the suggestion was then decided otherwise (%(status)s): the memory is live. "
            "Soft-delete it on its page if the suggestion should not be kept.",
            when=data["started"],
            title=memory.title,
            status=status or "gone",
        )
    return base | {"text": text, "status": status}


# -- bulk purge -----------------------------------------------------------------------


def purge_intent(job_id: str, runs: dict[str, DryRun], refs: dict[str, StoreRef]) -> intents.Intent:
    """``runs``: store key -> the confirmed DryRun; ``refs``: store key -> StoreRef."""
    data = {
        "job": job_id,
        "runs": {
            s: {"path": str(refs[s].path), "token": purge.fingerprint(run), "done": False}
            for s, run in runs.items()
        },
    }
    return intents.Intent("purge", [refs[s].path for s in runs], data, lambda reason: reason)


def _finish_purge(data: intents.Record) -> intents.Report:
    def stopped(store: str, why: object) -> str:
        return _(
            "A bulk purge stopped half way (%(when)s); the %(store)s store's part could not "
            "be finished now: %(why)s",
            when=data["started"],
            store=store,
            why=why,
        )

    left = {s: r for s, r in data["runs"].items() if not r["done"]}
    confirmed = {}
    for store, run in left.items():  # every part read before any is purged
        ref = StoreRef(store, store, Path(run["path"]), store)
        try:
            confirmed[store] = (ref, purge.confirmed(ref, run["token"], ()))
        except ValueError:
            raise intents.Unreadable(f"runs.{store}.token", TOKEN.expected) from None
        except StoreProblem as problem:
            return {"finished": problem.kind not in TRANSIENT, "text": stopped(store, problem)}
    results, finished = [], []
    for store, (ref, run) in confirmed.items():
        result = purge.purge(ref, run)
        if result.status in ("interrupted, retry", *TRANSIENT):
            return {"finished": False, "text": stopped(store, result.message)}
        results.append(result)
        finished.append(store)
    _as_job(data["job"], list(data["runs"]), results)
    done = [s for s, r in data["runs"].items() if r["done"]]
    erased = sum(r.deleted.get("memory", 0) for r in results)
    text = _(
        "A bulk purge was interrupted (%(when)s). The dashboard finished it: the %(stores)s "
        "part is purged now (%(num)d memories erased; %(verdict)s).",
        when=data["started"],
        stores=", ".join(finished) or "-",
        num=erased,
        verdict=purge.overall(results) if results else "-",
    )
    if done:
        text += " " + _("The %(stores)s part had finished before.", stores=", ".join(done))
    return {
        "text": text,
        "job": data["job"],
        "results": [{"store": r.store, "status": r.status, "deleted": r.deleted} for r in results],
    }


def _as_job(job_id: str, stores: list[str], results: list[PurgeResult]) -> None:
    """The interrupted job's page answers again, with what the finish did."""
    if has_app_context() and "forget_jobs" in current_app.extensions:
        current_app.extensions["forget_jobs"].add_done(job_id, "bulk purge", stores, {"results": results})


# Every field each finisher reads (beside ``intents.COMMON``'s): a record that is not so is
# said and left alone, never half read.  Keep them beside what ``*_intent`` writes.
TOKEN = intents.Kind(
    _l("a dry run's fingerprint of that store"),
    lambda v, _r: isinstance(v, str) and len(v) <= dryrun.MAX_TOKEN and v.isascii(),
)
MOVE: dict[str, intents.Spec] = {
    "to": STORE,
    "rows": [
        {
            "store": STORE,
            "source": PATH,
            "id": TEXT,
            "row": TEXT,
            "dest": PATH,
            "scope": STORE,
            "key": TEXT,
            "holds": TEXT,
        }
    ],
}
APPROVE: dict[str, intents.Spec] = {
    "item": TEXT,
    "queue": PATH,
    "seen": TEXT,
    "dest": PATH,
    "store": STORE,
    "scope": STORE,
    "key": TEXT,
    "holds": TEXT,
}
PURGE: dict[str, intents.Spec] = {
    "job": TEXT,
    "runs": intents.ByStore({"path": PATH, "token": TOKEN, "done": FLAG}),
}
intents.FINISHERS.update(
    move=intents.Finisher(_l("move"), MOVE, _finish_move),
    approve=intents.Finisher(_l("approval"), APPROVE, _finish_approve),
    purge=intents.Finisher(_l("bulk purge"), PURGE, _finish_purge),
)


# -- what the pages say ---------------------------------------------------------------


def recover(app: Flask) -> list[intents.Report]:
    """At start: finish every action this dashboard's stores were left with (before serving)."""
    from flask_babel import force_locale

    space = app.extensions["workspace"]
    paths = [r.path for r in space.project_refs()] + ([space.user_db] if space.user_db else [])
    with app.app_context(), force_locale(app.config.get("LANG") or "en"):
        try:
            return intents.settle(*paths)
        except intents.Unfinished as exc:
            return [exc.report]


def recovered(refs: Iterable[StoreRef]) -> list[intents.Report]:
    """What the finishing did on any of ``refs``' stores, for the banner and the twins."""
    shown = {os.path.realpath(r.path) for r in refs}
    return [r for r in intents.reports() if {os.path.realpath(s) for s in r.get("stores") or ()} & shown]
