"""Reject and erase evidence: the review screen's use of the forget screen's purge.

A pending item is first rejected exactly as the Reject button does, then every chosen row is
erased for good by ``purge.purge_review_items``; its file-wide ``PurgeResult`` becomes a
verdict per item, by the sha256 of each row's texts.  Reports are kept in process memory (a
handful) for the no-JavaScript redirect and a later re-verify of a "pending, retry"; the
texts never leave the process (``to_dict`` has ids, verdicts, paths).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _

from ..records import plain
from ..store import StoreProblem, StoreRef, writes
from ..store.writes import WriteConflict
from . import approval, purge
from .verdicts import PurgeResult

KEEP_REPORTS = 20
ERASED = "verified erased"
RETRY = "pending, retry"


@dataclass
class ItemErasure:
    """What happened to one review item."""

    id: str
    was: str | None  # its status before: pending / approved / rejected
    rejected: bool = False  # we rejected it first
    status: str = "not erased"  # verified erased, pending, retry, found on disk, conflict, ...
    message: str = ""
    copies: list[str] = field(default_factory=list)  # files beside the db still holding its text
    shared: bool = False  # a remaining row holds the same text (not residue)
    saved_again: bool = False  # ... a row the agent saved while the erase ran

    def to_dict(self) -> dict[str, Any]:
        return {
            **plain(self, "id", "was", "rejected", "status", "message"),
            "copies_with_hits": self.copies,
            "text_still_in_use": self.shared,
            "saved_again": self.saved_again,
        }


@dataclass
class EraseReport:
    """One erase request: a verdict per item and the purge's own summary."""

    token: str
    store: str
    items: list[ItemErasure]
    status: str = "not run"
    message: str = ""
    checkpoint: dict[str, Any] | None = None
    texts: tuple[str, ...] = ()  # kept only while a retry may need them; never serialized
    hashes: dict[str, str] = field(default_factory=dict)  # item id -> sha256 of its texts

    @property
    def retryable(self) -> bool:
        return bool(self.texts) and any(i.status == RETRY for i in self.items)

    def to_dict(self) -> dict[str, Any]:
        return {
            **plain(self, "token", "store", "status", "message", "checkpoint", "retryable"),
            "items": [i.to_dict() for i in self.items],
        }


class Reports:
    """The last few reports, shared by waitress threads (hence the lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, EraseReport] = OrderedDict()

    def keep(self, report: EraseReport) -> None:
        with self._lock:
            self._kept[report.token] = report
            while len(self._kept) > KEEP_REPORTS:
                self._kept.popitem(last=False)

    def get(self, token: str) -> EraseReport | None:
        with self._lock:
            return self._kept.get(token)


def reports_for(extensions: dict[str, Any]) -> Reports:
    """The app's report keeper, created on first use."""
    reports: Reports = extensions.setdefault("erase_reports", Reports())
    return reports


def erase(
    refs: list[StoreRef], project: StoreRef, ids: list[str], seen: dict[str, str | None]
) -> EraseReport:
    """Reject the pending ones among ``ids`` (checking ``seen``), then purge them all, verified."""
    report = EraseReport(secrets.token_urlsafe(12), project.key, [])
    chosen = []
    for item_id in ids:
        item = writes.review_item(project.path, item_id)
        done = ItemErasure(item_id, item.status if item else None)
        report.items.append(done)
        if item is None:
            done.status, done.message = "not found", _("No such review item; nothing was erased.")
            continue
        if item.status == "pending":
            try:
                approval.reject(refs, item_id, seen.get(item_id))
            except (WriteConflict, StoreProblem) as exc:
                done.status, done.message = "conflict", _("%(error)s Nothing was erased.", error=exc)
                continue
            done.rejected = True
        chosen.append(item_id)
    if chosen:
        _apply(report, purge.purge_review_items(project, chosen), chosen)
    return report


def retry(project: StoreRef, report: EraseReport) -> EraseReport:
    """Run the checkpoint and the byte scan again for a report that was "pending, retry"."""
    waiting = [i.id for i in report.items if i.status == RETRY]
    result = purge.purge(project, [], verify_texts=report.texts)
    fresh = EraseReport(report.token, report.store, report.items, hashes=report.hashes)
    _judge(fresh, result, waiting)
    return fresh


def _apply(report: EraseReport, result: PurgeResult, chosen: list[str]) -> None:
    # An id missing from the rows was gone before the purge reached it: nothing to find.
    report.hashes = {r["id"]: r["sha256"] for r in result.rows if r["kind"] == "review"}
    _judge(report, result, chosen)


def _judge(report: EraseReport, result: PurgeResult, chosen: list[str]) -> None:
    report.status, report.message = result.status, result.message
    report.checkpoint = result.to_dict()["checkpoint"]
    report.texts = result.texts if result.status == RETRY else ()
    own = {f["path"] for f in result.files_scanned if f["kind"] == "sqlite"}
    found = {v["sha256"]: v for v in result.verification}
    for done in report.items:
        if done.id not in chosen:
            continue
        hits = [found[h] for h in report.hashes.get(done.id, []) if h in found]
        paths = {p for h in hits for p in h["files"]}
        done.copies = sorted(paths - own)
        done.shared = any(h["still_stored"] for h in hits)
        done.saved_again = any(h.get("saved_again") for h in hits)
        if result.status == RETRY:
            done.status = RETRY
            done.message = _(
                "Erased from the table, but the agent (or another program) is reading "
                "the file, so the write-ahead log still holds the text. Retry when it "
                "is idle."
            )
        elif result.status not in (ERASED, "found on disk"):
            done.status = result.status
            if done.rejected and result.status != "interrupted, retry":  # no delete committed
                done.message = _(
                    "It was rejected, but not erased: %(reason)s Erase it again.", reason=result.reason
                )
            elif done.rejected:
                done.message = _("It was rejected first. %(verdict)s", verdict=result.message)
            else:
                done.message = result.message
        elif paths & own:
            done.status = "found on disk"
            done.message = _("Its text is still in SQLite's files; erase again.")
        else:
            done.status = ERASED
            done.message = _(
                "Its content and evidence are no longer anywhere in the database or its side files."
            )
        # Each further fact is a sentence of its own, added after the verdict.
        if done.copies and done.status == ERASED:
            done.message += " " + _(
                "Copies beside the database still hold it: %(files)s.", files=", ".join(done.copies)
            )
        if done.saved_again:
            done.message += " " + _(
                "The agent saved the same text again while it was being "
                "erased: a live row holds it now, so it stays in the file (not "
                "residue)."
            )
        elif done.shared:
            done.message += " " + _("Another review item still holds the same text, so it stays in the file.")
