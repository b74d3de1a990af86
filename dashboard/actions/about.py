""" "Forget what is about me": which rows are about the person, and the dry run of erasing them.

No Flask.  The scope is decided here once, so the dry run, its confirmation
and the purge cannot disagree:

* the user store is the person's own file (``~/.agentao/memory.db``, shared by
  every project): every row in it goes — live and soft-deleted memories, their
  events, and anything else the file holds;
* in the project store: memories and review items of ``scope='user'`` (a
  preference the crystallizer drew from the person's words), and every memory,
  review item and session summary carrying a *personal data* or *secret*
  finding of the one scan every screen shows.  Project facts without such a
  finding stay, with their events.

The purge itself is the forget screen's verified hard purge
(``purge.purge``), one file at a time, each with its own dry run's fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..store import StoreRef
from ..store import purge as sql
from ..store.plan import DryRun
from . import dryrun, purge

ABOUT_CATEGORIES = ("personal", "secret")  # findings.rows.CATEGORIES that are about the person
TABLE_OF = {
    "memory": "memories",
    "memory_deleted": "memories",
    "review": "memory_review_queue",
    "summary": "session_summaries",
}


@dataclass
class StorePart:
    """One store's share of the scoped forget: the rows that go and what stays."""

    ref: StoreRef
    rows: DryRun
    categories: tuple[str, ...] = ()
    why: dict[tuple[str, str], str] = field(
        default_factory=dict
    )  # (kind, id) -> "user_store" | "user_scope" | finding category
    stays: dict[str, int] = field(
        default_factory=dict
    )  # memories / soft_deleted / reviews / summaries -> count

    @cached_property
    def token(self) -> str:
        return dryrun.fingerprint(self.rows)

    @property
    def fits(self) -> bool:
        return dryrun.fits(self.token)

    def goes(self) -> dict[str, int]:
        """Rows that go, by kind (memory, memory_deleted, review, summary, event)."""
        counts: dict[str, int] = {}
        for r in self.rows:
            counts[r.kind] = counts.get(r.kind, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.ref.key,
            "kind": self.ref.kind,
            "name": self.ref.name,
            "path": str(self.ref.path),
            "categories": list(self.categories),
            "goes": self.goes(),
            "stays": self.stays,
            "fingerprint": self.token if self.fits else None,
            "rows": [
                {
                    "kind": r.kind,
                    "id": r.id,
                    "label": r.label,
                    "bytes": r.bytes,
                    "why": self.why.get((r.kind, r.id), "event"),
                }
                for r in self.rows
            ],
        }


def plan(refs: list[StoreRef], flags: dict[tuple[str, str, str], Any]) -> list[StorePart]:
    """The dry run of "forget what is about me" over the shown stores (read-only).

    ``flags`` is ``findings.flags_by_row(report)``: (store, table, row id) -> findings.
    """
    parts = []
    for ref in sorted(refs, key=lambda r: r.kind != "user"):  # your own file first
        if ref.exists:
            parts.append(_user_part(ref) if ref.kind == "user" else _project_part(ref, flags))
    return parts


def _user_part(ref: StoreRef) -> StorePart:
    rows = sql.scoped_rows(ref)
    live = [mid for mid, _scope, is_live in rows["memories"] if is_live]
    dry = purge.plan(ref, purge.ALL_CATEGORIES, memory_ids=live)
    return StorePart(
        ref,
        dry,
        tuple(purge.ALL_CATEGORIES),
        {(r.kind, r.id): "user_store" for r in dry if r.kind != "event"},
        {"memories": 0, "soft_deleted": 0, "reviews": 0, "summaries": 0},
    )


def _project_part(ref: StoreRef, flags: dict[tuple[str, str, str], Any]) -> StorePart:
    rows = sql.scoped_rows(ref)

    def finding(table: str, row_id: str) -> str | None:
        found = {i.finding.category for i in flags.get((ref.key, table, row_id), ())}
        return next((c for c in ABOUT_CATEGORIES if c in found), None)

    why: dict[tuple[str, str], str] = {}
    memory_ids: list[str] = []
    review_ids: list[str] = []
    summary_ids: list[Any] = []
    for mid, scope, _live in rows["memories"]:
        reason = "user_scope" if scope == "user" else finding("memories", mid)
        if reason:
            memory_ids.append(mid)
            why["memories", mid] = reason
    for rid, scope in rows["reviews"]:
        reason = "user_scope" if scope == "user" else finding("memory_review_queue", rid)
        if reason:
            review_ids.append(rid)
            why["memory_review_queue", rid] = reason
    for sid in rows["summaries"]:
        reason = finding("session_summaries", sid)
        if reason:
            summary_ids.append(sid)
            why["session_summaries", sid] = reason
    dry = purge.plan(ref, (), memory_ids, review_ids, summary_ids)
    gone = set(memory_ids)
    stays = {
        "memories": sum(1 for m, _s, live in rows["memories"] if live and m not in gone),
        "soft_deleted": sum(1 for m, _s, live in rows["memories"] if not live and m not in gone),
        "reviews": len(rows["reviews"]) - len(review_ids),
        "summaries": len(rows["summaries"]) - len(summary_ids),
    }
    return StorePart(
        ref, dry, (), {(r.kind, r.id): why[TABLE_OF[r.kind], r.id] for r in dry if r.kind != "event"}, stays
    )
