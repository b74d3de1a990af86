"""Forgetting for real: agentao's wipe, the residue report, the hard purge and its proof.

Data flows store -> here -> views.  Texts being erased stay in memory only
(PlanRow.texts, PurgeResult.texts); everything ``to_dict`` returns carries
sha256 hashes and counts instead, so a report can be saved and shared.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from . import diskscan, sidefiles
from .store import StoreProblem, StoreRef
from .store import purge as sql

UNREACHABLE = (
    "No program can reach further than these files. Earlier copies of them may survive in "
    "file-system blocks the operating system has released but not overwritten, in flash "
    "cells an SSD has retired by wear levelling, in snapshots, and in backups or synced "
    "copies kept elsewhere (Time Machine, cloud drives, copies you made by hand). Erasing "
    "those needs full-disk encryption, the disk's own secure-erase, or deleting the backups.")
KNOWN_TEXTS_ONLY = (
    "The on-disk check can only look for texts it knows: the current text of each erased row. "
    "Older versions of a memory's text left by earlier updates are not in the database any more, "
    "so they cannot be searched for; the VACUUM rebuilds the file without its free pages, "
    "which is what removes them.")


def now_iso() -> str:
    """Local wall-clock time, whole seconds, as agentao writes it (contract §3)."""
    return datetime.now().strftime("%Y-%m-%dT%H:%M:%S")


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
        return {"ok": self.ok, "memories_cleared": self.memories_cleared,
                "summaries_cleared": self.summaries_cleared,
                "not_cleared": list(self.not_cleared), "targets": self.targets}


def wipe(refs: list[StoreRef], now: str | None = None) -> WipeResult:
    """What agentao's ``wipe_all`` does to the files (contract §13). Never raises.

    Memories of each file's own scope are soft-deleted (no events), then every
    session summary of the project file is deleted and the file re-read to
    confirm none remain.  The review queue is left alone, as agentao leaves it.
    """
    now = now or now_iso()
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
        # agentao reports 0 when any part raised, even if the project part
        # committed; ``targets`` keeps what each file really did.
        result.memories_cleared = 0
        result.not_cleared += ("memories",)
        result.targets.append({"target": "memories", "store": ref.key, "error": str(exc)})
    try:
        result.summaries_cleared = sql.delete_all_summaries(project)
        remain = sql.summaries_remain(project)
        result.targets.append({"target": "session summaries", "store": project.key,
                               "cleared": result.summaries_cleared})
    except StoreProblem as exc:
        remain = True
        result.targets.append({"target": "session summaries", "store": project.key,
                               "error": str(exc)})
    if remain:
        result.not_cleared += ("session summaries",)
    return result


def soft_forget(ref: StoreRef, memory_id: str, now: str | None = None) -> bool:
    """Soft-delete one memory as agentao's ``delete`` does (with its event)."""
    return sql.soft_delete_memory(ref, memory_id, now or now_iso())


# -- residue ---------------------------------------------------------------------------

def residue_report(ref: StoreRef) -> dict:
    """Everything in and around one file that still holds forgotten text. Changes no byte."""
    rows = sql.residue_rows(ref)
    by_status: dict = {}
    for item in rows["reviews"]:
        by_status.setdefault(item["status"], []).append(item)
    files = [{"path": str(p), "size": sidefiles.size_of(p), "role": _role(ref.path, p)}
             for p in sidefiles.sqlite_files(ref.path)]
    journal = sidefiles.size_of(Path(str(ref.path) + "-journal"))
    return {
        "store": ref.key, "name": ref.name, "path": str(ref.path),
        "soft_deleted": {"count": len(rows["soft_deleted"]),
                         "bytes": sum(r["bytes"] for r in rows["soft_deleted"]),
                         "items": rows["soft_deleted"]},
        "reviews": {s: {"count": len(items), "items": items} for s, items in by_status.items()},
        "events_of_forgotten": rows["events"], "summaries": rows["summaries"],
        "free_pages": {"count": rows["freelist_count"], "page_size": rows["page_size"],
                       "bytes": rows["freelist_count"] * rows["page_size"],
                       "page_count": rows["page_count"]},
        "wal": sidefiles.wal_state(ref.path),
        "journal": {"exists": journal is not None, "size": journal or 0},
        "files": files,
        "copies": [{"path": str(p), "size": sidefiles.size_of(p)}
                   for p in sidefiles.copies_beside(ref.path)],
        "unreachable": UNREACHABLE,
    }


def _role(db: Path, p: Path) -> str:
    return "database" if p == Path(db) else p.name[len(Path(db).name) + 1:]


# -- hard purge ------------------------------------------------------------------------

@dataclass
class PurgeResult:
    """One file's purge: what went, what the checkpoint said, what the byte scan found."""

    store: str
    path: str
    status: str = "running"
    message: str = ""
    plan: list = field(default_factory=list)
    deleted: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    checkpoint: tuple | None = None
    verification: list = field(default_factory=list)
    files_scanned: list = field(default_factory=list)
    copies_with_hits: list = field(default_factory=list)
    seconds: float = 0.0
    texts: tuple = ()   # kept in memory for a retry, dropped once verified; never serialized
    rows: list = field(default_factory=list)   # the plan as kinds, ids, sizes and hashes

    @property
    def verified(self) -> bool:
        return self.status == "verified erased"

    def to_dict(self) -> dict:
        return {
            "store": self.store, "path": self.path, "status": self.status,
            "message": self.message, "deleted": self.deleted, "skipped": self.skipped,
            "checkpoint": None if self.checkpoint is None else
            dict(zip(("busy", "wal_frames", "checkpointed"), self.checkpoint)),
            "rows": self.rows,
            "verification": self.verification, "files_scanned": self.files_scanned,
            "copies_with_hits": self.copies_with_hits, "seconds": round(self.seconds, 3),
            "limits": KNOWN_TEXTS_ONLY,
        }


def plan(ref: StoreRef, categories=(), memory_ids=(), review_ids=()) -> list[sql.PlanRow]:
    """The dry run: exactly the rows a purge with these choices erases."""
    return sql.plan_rows(ref, categories, memory_ids, review_ids)


def fingerprint(rows: list[sql.PlanRow]) -> str:
    """Names a dry run, so a purge can refuse to run when the store changed since."""
    return diskscan.sha256_text("\n".join(sorted(f"{r.kind}:{r.id}" for r in rows)))[:16]


def purge(ref: StoreRef, rows: list[sql.PlanRow], verify_texts=(),
          progress=lambda step, fraction=None: None) -> PurgeResult:
    """Erase ``rows``, VACUUM, truncate the WAL, then search the files for every text.

    ``verify_texts`` adds texts from an earlier, interrupted run.  Status is
    "verified erased" only when the checkpoint completed and no text was found
    in SQLite's own files; "pending, retry" when the checkpoint was busy.
    """
    started = time.monotonic()
    texts = tuple(dict.fromkeys([t for r in rows for t in r.texts if t] + list(verify_texts)))
    result = PurgeResult(ref.key, str(ref.path), plan=list(rows), texts=texts, rows=[
        {"kind": r.kind, "id": r.id, "bytes": r.bytes,
         "sha256": [diskscan.sha256_text(t) for t in r.texts if t]} for r in rows])
    reached = []
    try:
        outcome = sql.erase(ref, rows, on_step=lambda s: (reached.append(s), progress(s)))
    except StoreProblem as exc:
        committed = "vacuum" in reached
        result.status = "interrupted, retry" if committed else exc.kind
        result.message = (f"The rows were deleted but the file was not compacted: {exc} "
                          "Run the purge again to finish it." if committed else
                          f"Nothing was changed: {exc}")
        result.seconds = time.monotonic() - started
        return result
    result.deleted, result.skipped, result.checkpoint = outcome.deleted, outcome.skipped, outcome.checkpoint
    progress("scan", 0.0)
    _verify(ref, result, progress)
    if result.verified:
        # Nothing left to retry: do not keep the erased text alive in this process.
        result.texts = ()
        result.plan = [replace(r, texts=()) for r in result.plan]
    result.seconds = time.monotonic() - started
    return result


def _verify(ref: StoreRef, result: PurgeResult, progress) -> None:
    own = sidefiles.sqlite_files(ref.path)
    copies = sidefiles.copies_beside(ref.path)
    hits, scanned = diskscan.scan(own + copies, result.texts, ignore=sql.remaining_text(ref),
                                  progress=lambda done, total: progress("scan", done / total))
    own_names = {str(p) for p in own}
    result.files_scanned = [{"path": str(p), "size": size,
                             "kind": "sqlite" if str(p) in own_names else "copy"}
                            for p, size in scanned]
    found_own, copies_hit = False, set()
    for h in hits.values():
        result.verification.append({"sha256": h.sha256, "bytes": h.bytes,
                                    "still_stored": h.still_stored, "files": h.files})
        found_own |= any(path in own_names for path in h.files)
        copies_hit |= {path for path in h.files if path not in own_names}
    result.copies_with_hits = sorted(copies_hit)
    busy = bool(result.checkpoint and result.checkpoint[0])
    if busy:
        result.status = "pending, retry"
        result.message = ("Another program (probably the agent) is reading the file, so the "
                          "write-ahead log could not be emptied. Retry when it is idle.")
    elif found_own:
        result.status = "found on disk"
        result.message = "Some purged text is still in SQLite's files; run the purge again."
    else:
        result.status = "verified erased"
        result.message = "No purged text was found in the database or its side files."
    if copies_hit:
        result.message += " Copies beside the database still hold purged text: " + \
            ", ".join(sorted(copies_hit)) + ". Delete them yourself if you no longer need them."


def purge_review_items(ref: StoreRef, ids) -> PurgeResult:
    """Erase review-queue rows by id and verify on disk (the review screen's "reject and erase evidence").

    Any status is erased; unknown ids are ignored.  Synchronous: call it from a
    request only for a few rows.  Read ``result.status`` and ``result.message``.
    """
    return purge(ref, plan(ref, review_ids=list(ids)))


def forget_memory(ref: StoreRef, memory_id: str, progress=lambda s, f=None: None) -> PurgeResult:
    """Hard-purge one memory (live or soft-deleted) with its events, then VACUUM and verify."""
    return purge(ref, plan(ref, memory_ids=[memory_id]), progress=progress)


ALL_CATEGORIES = sql.CATEGORIES


def forget_everything(refs: list[StoreRef], progress=lambda s, f=None: None) -> dict:
    """Wipe as agentao does, then purge every category in every store, verified: one report."""
    wiped = wipe(refs)
    results = []
    for ref in (r for r in refs if r.exists):
        try:
            rows = plan(ref, ALL_CATEGORIES)
        except StoreProblem as exc:
            results.append(PurgeResult(ref.key, str(ref.path), status=exc.kind, message=str(exc)))
            continue
        results.append(purge(ref, rows, progress=lambda s, f=None, k=ref.key: progress(f"{k}: {s}", f)))
    return {"wipe": wiped, "results": results}


def overall(results: list[PurgeResult]) -> str:
    """One verdict for several files: the weakest one."""
    order = ["verified erased", "pending, retry", "found on disk", "interrupted, retry"]
    worst = max((order.index(r.status) if r.status in order else len(order) for r in results),
                default=0)
    return order[worst] if worst < len(order) else next(
        r.status for r in results if r.status not in order)
