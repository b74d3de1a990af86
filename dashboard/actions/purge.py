"""Forgetting for real: agentao's wipe, the residue report, the hard purge and its proof.

Data flows store -> here -> views.  Texts being erased stay in memory only
(PlanRow.texts, PurgeResult.texts); everything ``to_dict`` returns carries
sha256 hashes and counts instead, so a report can be saved and shared.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from flask_babel import lazy_gettext as _l

from ..store import StoreProblem, StoreRef, writes
from ..store import purge as sql
from . import dryrun, sidefiles, verdicts
from .verdicts import PurgeResult

UNREACHABLE = _l(
    "No program can reach further than these files. Earlier copies of them may survive in "
    "file-system blocks the operating system has released but not overwritten, in flash "
    "cells an SSD has retired by wear levelling, in snapshots, and in backups or synced "
    "copies kept elsewhere (Time Machine, cloud drives, copies you made by hand). Erasing "
    "those needs full-disk encryption, the disk's own secure-erase, or deleting the backups."
)
# -- wipe ----------------------------------------------------------------------------


@dataclass
class WipeResult:
    """agentao's MemoryWipeResult, plus which target was cleared in which file."""

    memories_cleared: int = 0
    summaries_cleared: int = 0
    not_cleared: tuple = ()
    targets: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.not_cleared

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "memories_cleared": self.memories_cleared,
            "summaries_cleared": self.summaries_cleared,
            "not_cleared": list(self.not_cleared),
            "targets": self.targets,
        }


def wipe(refs: list[StoreRef], now: str | None = None) -> WipeResult:
    """What agentao's ``wipe_all`` does to the files (contract §13): each file's own scope
    soft-deleted (no events), the project's session summaries deleted and checked gone, the
    review queue left alone.  Never raises."""
    now = now or writes.now()
    project = next(r for r in refs if r.kind == "project")
    user = next((r for r in refs if r.kind == "user" and r.exists), None)
    result = WipeResult()
    try:
        # Same order as agentao: project, then user; a failure stops the rest.
        for ref in (project, user):
            if ref is not None:
                n = sql.clear_scope(ref, ref.kind, now)
                result.memories_cleared += n
                result.targets.append({"target": "memories", "store": ref.key, "cleared": n})
    except StoreProblem as exc:
        # agentao reports 0 when any part raised; ``targets`` keeps what each file really did.
        result.memories_cleared = 0
        result.not_cleared += ("memories",)
        result.targets.append({"target": "memories", "store": ref.key, "error": str(exc)})
    try:
        result.summaries_cleared = sql.delete_all_summaries(project)
        remain = sql.summaries_remain(project)
        result.targets.append(
            {"target": "session summaries", "store": project.key, "cleared": result.summaries_cleared}
        )
    except StoreProblem as exc:
        remain = True
        result.targets.append({"target": "session summaries", "store": project.key, "error": str(exc)})
    if remain:
        result.not_cleared += ("session summaries",)
    return result


def soft_forget(ref: StoreRef, memory_id: str, now: str | None = None) -> bool:
    """Soft-delete one memory as agentao's ``delete`` does (with its event)."""
    return sql.soft_delete_memory(ref, memory_id, now or writes.now())


# -- residue ---------------------------------------------------------------------------


def residue_report(ref: StoreRef) -> dict:
    """Everything in and around one file that still holds forgotten text. Changes no byte."""
    rows = sql.residue_rows(ref)
    by_status: dict = {}
    for item in rows["reviews"]:
        by_status.setdefault(item["status"], []).append(item)
    files = [
        {"path": str(p), "size": sidefiles.size_of(p), "role": _role(ref.path, p)}
        for p in sidefiles.sqlite_files(ref.path)
    ]
    journal = sidefiles.size_of(Path(str(ref.path) + "-journal"))
    return {
        "store": ref.key,
        "name": ref.name,
        "path": str(ref.path),
        "soft_deleted": {
            "count": len(rows["soft_deleted"]),
            "bytes": sum(r["bytes"] for r in rows["soft_deleted"]),
            "items": rows["soft_deleted"],
        },
        "reviews": {s: {"count": len(items), "items": items} for s, items in by_status.items()},
        "events_of_forgotten": rows["events"],
        "summaries": rows["summaries"],
        "free_pages": {
            "count": rows["freelist_count"],
            "page_size": rows["page_size"],
            "bytes": rows["freelist_count"] * rows["page_size"],
            "page_count": rows["page_count"],
        },
        "wal": sidefiles.wal_state(ref.path),
        "journal": {"exists": journal is not None, "size": journal or 0},
        "files": files,
        "copies": [{"path": str(p), "size": sidefiles.size_of(p)} for p in sidefiles.copies_beside(ref.path)],
        "unreachable": str(UNREACHABLE),
    }


def _role(db: Path, p: Path) -> str:
    return "database" if p == Path(db) else p.name[len(Path(db).name) + 1 :]


# -- hard purge ------------------------------------------------------------------------


def plan(ref: StoreRef, categories=(), memory_ids=(), review_ids=(), summary_ids=(), stop=None) -> sql.DryRun:
    """The dry run: exactly the rows a purge with these choices erases (``stop()``: when to list
    no further, ``store.plan.rows_for``)."""
    return sql.plan_rows(ref, categories, memory_ids, review_ids, summary_ids, stop)


def fingerprint(rows) -> str:
    """Names a dry run's rows (ids and digests) for the form that confirms it."""
    return dryrun.fingerprint(rows)


def confirmed(ref: StoreRef, token: str, categories) -> sql.DryRun:
    """The dry run a posted fingerprint names for ``ref``, for ``purge``; ValueError when it
    is damaged or names more rows than the store holds."""
    return sql.DryRun(dryrun.rows_of(token, sql.most_rows(ref)), sql.Selection(tuple(categories)))


def confirmed_by_id(ref: StoreRef, token: str, categories=()) -> sql.DryRun:
    """Like ``confirmed``, for a dry run that named rows by id (a scoped forget): the same ids
    again, so a confirmed row the agent changed meanwhile still stops the purge."""
    rows = dryrun.rows_of(token, sql.most_rows(ref))
    ids = {kind: tuple(r.id for r in rows if r.kind == kind) for kind in ("memory", "review", "summary")}
    return sql.DryRun(rows, sql.Selection(tuple(categories), ids["memory"], ids["review"], ids["summary"]))


def check(ref: StoreRef, dry_run: sql.DryRun) -> sql.Comparison:
    """What a purge of ``dry_run`` would do now: erase, skip (gone), keep (arrived), refuse (changed)."""
    return sql.check(ref, dry_run)


def purge(ref: StoreRef, rows, verify_texts=(), progress=lambda step, fraction=None: None) -> PurgeResult:
    """Erase the rows of a dry run (or a list of PlanRows), VACUUM, truncate the WAL, then search
    the files for every text (and ``verify_texts``, from an earlier, interrupted run).

    Rows that arrived since the dry run are kept; a confirmed row that changed stops the purge
    before it writes ("changed").  "verified erased" only when the checkpoint completed and no
    text was found in SQLite's own files; "pending, retry" when the checkpoint was busy.
    """
    from . import diskscan  # numpy: loaded by the first purge, not by every start (RSS)

    started = time.monotonic()
    dry_run = rows if isinstance(rows, sql.DryRun) else sql.DryRun(rows)
    earlier = tuple(t for t in dict.fromkeys(verify_texts) if t)
    result = PurgeResult(ref.key, str(ref.path), plan=dry_run, texts=earlier)
    outcome = sql.EraseOutcome()
    try:
        sql.erase(ref, dry_run, on_step=progress, outcome=outcome)
        failed = None
    except StoreProblem as exc:
        failed = exc
    result.deleted, result.skipped, result.kept = outcome.deleted, outcome.skipped, outcome.kept
    result.checkpoint = outcome.checkpoint
    if outcome.committed:
        # The DELETE is done: a retry only finishes the compaction and verifies.
        result.plan = sql.DryRun([], dry_run.selection)
        erased = [t for r in outcome.erased for t in r.texts if t]
        result.texts = tuple(dict.fromkeys(erased + list(earlier)))
        result.earlier_texts = len(set(earlier) - set(erased))
        result.rows = [
            {
                "kind": r.kind,
                "id": r.id,
                "bytes": r.bytes,
                "sha256": [diskscan.sha256_text(t) for t in r.texts if t],
            }
            for r in outcome.erased
        ]
    if failed is not None:
        result.status, result.message = failed.kind, verdicts.failure(failed, outcome.committed)
        result.reason = verdicts.reason(failed)
        if outcome.committed:
            result.status = "interrupted, retry"
    else:
        progress("scan", 0.0)
        _verify(ref, result, progress)
        if result.verified:
            # Nothing left to retry: do not keep the erased text alive in this process.
            result.texts = ()
    result.seconds = time.monotonic() - started
    return result


def _verify(ref: StoreRef, result: PurgeResult, progress) -> None:
    from . import diskscan

    own = sidefiles.sqlite_files(ref.path)
    copies = sidefiles.copies_beside(ref.path)
    hits, scanned = diskscan.scan(
        own + copies,
        result.texts,
        ignore=sql.remaining_text(ref),
        progress=lambda done, total: progress("scan", done / total),
        live_again=lambda: _live_text(ref),
    )
    own_names = {str(p) for p in own}
    result.files_scanned = [
        {"path": str(p), "size": size, "kind": "sqlite" if str(p) in own_names else "copy"}
        for p, size in scanned
    ]
    fields = ("sha256", "bytes", "still_stored", "saved_again", "files")
    result.verification += [{f: getattr(h, f) for f in fields} for h in hits.values()]
    found_own = any(path in own_names for h in hits.values() for path in h.files)
    copies_hit = {path for h in hits.values() for path in h.files if path not in own_names}
    result.copies_with_hits = sorted(copies_hit)
    busy = bool(result.checkpoint and result.checkpoint[0])
    result.status = "pending, retry" if busy else "found on disk" if found_own else "verified erased"
    result.message = verdicts.scanned(result, copies_hit)


def _live_text(ref: StoreRef) -> bytes:
    # Rows the agent saved while the scan ran hold live text; unreadable now: no excuse.
    try:
        return sql.remaining_text(ref)
    except StoreProblem:
        return b""


def purge_review_items(ref: StoreRef, ids) -> PurgeResult:
    """Erase review-queue rows by id (any status; unknown ids ignored) and verify on disk."""
    return purge(ref, plan(ref, review_ids=list(ids)))


def forget_memory(ref: StoreRef, memory_id: str, progress=lambda s, f=None: None) -> PurgeResult:
    """Hard-purge one memory (live or soft-deleted) with its events, then VACUUM and verify."""
    return purge(ref, plan(ref, memory_ids=[memory_id]), progress=progress)


ALL_CATEGORIES = sql.CATEGORIES


def forget_everything(refs: list[StoreRef], progress=lambda s, f=None: None, earlier=lambda ref: ()) -> dict:
    """Wipe as agentao does, then purge every category in every store, verified: one report
    (``earlier(ref)``: texts an unfinished purge of that store erased, to look for again)."""
    wiped = wipe(refs)
    results = []
    for ref in (r for r in refs if r.exists):
        try:
            rows = plan(ref, ALL_CATEGORIES)
        except StoreProblem as exc:
            results.append(PurgeResult(ref.key, str(ref.path), status=exc.kind, message=str(exc)))
            continue
        results.append(
            purge(
                ref,
                rows,
                verify_texts=earlier(ref),
                progress=lambda s, f=None, k=ref.key: progress(f"{k}: {s}", f),
            )
        )
    return {"wipe": wiped, "results": results}


def overall(results: list[PurgeResult]) -> str:
    """One verdict for several files: the weakest one."""
    order = ["verified erased", "pending, retry", "found on disk", "interrupted, retry"]
    worst = max((order.index(r.status) if r.status in order else len(order) for r in results), default=0)
    return order[worst] if worst < len(order) else next(r.status for r in results if r.status not in order)
