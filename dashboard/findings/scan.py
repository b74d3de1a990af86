"""Scan every store for findings and say where each one sits and how it reaches the model.

Reach follows agentao's prompt path (contract §8–§11):
  stable   in ``<memory-stable>`` every turn: user scope or a structural type or one of the
           3 most recent incidental facts (key, title and the first 240 characters of the
           value), or a summary text inside the 800-character session tail;
  recall   only when a query scores it: the title and the first 200 characters of content;
  disk     never in a prompt but still in the file: soft-deleted rows, review-queue rows
           and their evidence, summaries outside the tail, text beyond the part shown.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Iterable

from ..contract import STABLE_TYPES
from ..engine.render import EXCERPT_CHARS, VALUE_PREVIEW
from ..engine.stable import INCIDENTAL_KEPT, TAIL_CHARS, TAIL_KEPT, TAIL_READ, TAIL_SEPARATOR
from ..store import StoreProblem
from ..store.registry import StoreRef
from ..store.scan import (M_CONTENT, M_DELETED_AT, M_ID, M_KEY, M_SCOPE, M_TITLE, M_TYPE,
                          M_UPDATED_AT, R_CONTENT, R_EVIDENCE, R_ID, R_KEY, R_SCOPE, R_STATUS,
                          R_TITLE, R_TYPE, S_ID, S_SESSION_ID, S_SUMMARY_TEXT, scan_memories,
                          scan_review_items, scan_summaries)
from . import corpus
from .gates import rows_to_scan
from .rules import (DIGIT_RULES, NEAR_LIMIT, Finding, Staleness, is_canonical_stamp, near_size_limit,
                    scan_text)

CATEGORIES = {"secret": "Secrets", "personal": "Personal data",
              "instruction": "Instruction-like content", "conflict": "Conflicts and duplicates",
              "upkeep": "Oversized or stale"}
REACH = {"stable": "stable block every turn", "recall": "recall only",
         "disk": "invisible but still on disk"}
_REACH_ORDER = {"stable": 0, "recall": 1, "disk": 2}
_CATEGORY_ORDER = {c: i for i, c in enumerate(CATEGORIES)}


@dataclass(slots=True)  # not frozen: a frozen __init__ is slower, and scans make many
class Item:
    """One finding located in one row of one store."""

    store: str
    table: str
    row_id: str
    label: str          # key or session id, to recognise the row
    finding: Finding
    reach: str
    reach_detail: str
    state: str          # what the fixes depend on: live | deleted | a review status | ""

    def to_dict(self) -> dict:
        return {"store": self.store, "table": self.table, "row_id": self.row_id,
                "label": self.label, **self.finding.to_dict(), "reach": self.reach,
                "reach_text": REACH[self.reach], "reach_detail": self.reach_detail,
                "state": self.state}


@dataclass
class Report:
    """Everything one scan found, plus what it read and what it could not."""

    items: list[Item] = field(default_factory=list)
    scanned: dict = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)


def _memory_reach(row, stable: bool, f: Finding) -> tuple[str, str]:
    if row[M_DELETED_AT] is not None:
        return "disk", (f"soft-deleted {row[M_DELETED_AT]}: agentao never reads it, "
                        "the text stays in the file")
    shown = VALUE_PREVIEW if stable else EXCERPT_CHARS
    if f.field == "content" and f.start >= shown and f.category != "conflict":
        return "disk", (f"past the first {shown} characters, the only part of the value "
                        f"{'the stable block' if stable else 'recall'} shows; still in the file")
    if stable:
        why = "user scope" if row[M_SCOPE] == "user" else (
            f"type {row[M_TYPE]}" if row[M_TYPE] in STABLE_TYPES else "one of the 3 most recent facts")
        return "stable", f"{why}: in <memory-stable> every turn (unless the 2000-character budget drops it)"
    return "recall", "in <memory-context> only when a query scores it"


def _stable_ids(live: list[tuple[str, tuple]]) -> set[str]:
    """Ids agentao selects for the stable block (contract §9.1), project rows first."""
    ids = {r[M_ID] for _s, r in live if r[M_SCOPE] == "user" or r[M_TYPE] in STABLE_TYPES}
    incidental = [r for _s, r in live if r[M_ID] not in ids]
    # nlargest keeps sorted(reverse=True)'s order among equal stamps, without sorting every row.
    newest = heapq.nlargest(INCIDENTAL_KEPT, incidental, key=itemgetter(M_UPDATED_AT))
    return ids | {r[M_ID] for r in newest}


def _tail_reach(rows) -> dict[str, int]:
    """For each summary in a brand-new session's tail: the first offset the tail keeps."""
    kept = list(reversed(rows[:TAIL_READ][:TAIL_KEPT]))
    offsets, pos = {}, 0
    for r in kept:
        offsets[r[S_ID]] = pos
        pos += len(r[S_SUMMARY_TEXT]) + len(TAIL_SEPARATOR)
    total = pos - len(TAIL_SEPARATOR) if kept else 0
    cut = 0
    if total > TAIL_CHARS:
        joined = TAIL_SEPARATOR.join(r[S_SUMMARY_TEXT] for r in kept)
        cut = total - TAIL_CHARS
        newline = joined.find("\n", cut)
        cut = newline + 1 if newline != -1 else cut
    return {rid: cut - off for rid, off in offsets.items()}


def scan(refs: Iterable[StoreRef], now: datetime) -> Report:
    """Read every store once and run every rule; unreadable stores become problems."""
    report = Report()
    data = {}
    for ref in refs:
        try:
            data[ref.key] = (ref, scan_memories(ref), scan_review_items(ref), scan_summaries(ref))
        except StoreProblem as problem:
            report.problems.append({"store": ref.key, "kind": problem.kind, "message": str(problem)})
    items = report.items
    live = [(key, r) for key, (_ref, mems, _rv, _sm) in data.items() for r in mems
            if r[M_DELETED_AT] is None]
    docs = corpus.Docs([r[M_KEY] for _k, r in live], [r[M_SCOPE] for _k, r in live],
                       [r[M_TYPE] for _k, r in live], [r[M_CONTENT] for _k, r in live])
    stable_ids = _stable_ids(live)
    for key, (ref, mems, reviews, summaries) in data.items():
        report.scanned[key] = {"memories": len(mems), "reviews": len(reviews),
                               "summaries": len(summaries)}
        _memory_findings(key, mems, stable_ids, now, items)
        for r in reviews:
            status = r[R_STATUS]
            detail = (f"review item ({status}): not in any prompt"
                      + ("; becomes a memory if approved" if status == "pending" else
                         "; kept in the queue forever after the decision"))
            for name, at in (("title", R_TITLE), ("content", R_CONTENT), ("evidence", R_EVIDENCE)):
                for f in scan_text(r[at], name):
                    items.append(Item(key, "memory_review_queue", r[R_ID], r[R_KEY], f,
                                      "disk", detail, status))
        in_tail = _tail_reach(summaries) if ref.kind == "project" else {}
        for r in summaries:
            for f in scan_text(r[S_SUMMARY_TEXT], "summary_text"):
                keep_from = in_tail.get(r[S_ID])
                if keep_from is not None and f.end > keep_from:
                    reach, detail = "stable", "in the session tail of <memory-stable> every turn"
                else:
                    reach, detail = "disk", ("summary outside the 800-character session tail: "
                                             "not in any prompt, still in the file")
                items.append(Item(key, "session_summaries", r[S_ID], r[S_SESSION_ID], f, reach,
                                  detail, ""))
    items.sort(key=_order)
    # Conflicts come only from the corpus rules: sorted apart, they go in at their
    # category's place, so the list sorted above stays sorted.
    conflicts = _corpus(data, live, stable_ids, docs)
    at = bisect_left(items, _CATEGORY_ORDER["conflict"],
                     key=lambda i: _CATEGORY_ORDER[i.finding.category])
    items[at:at] = conflicts
    return report


def _order(item: Item) -> tuple:
    # The page's order: category, then how the text reaches the model, then place.
    return (_CATEGORY_ORDER[item.finding.category], _REACH_ORDER[item.reach], item.store,
            item.table, item.row_id, item.finding.start)


def _memory_findings(key: str, mems: list[tuple], stable_ids: set[str], now: datetime,
                     items: list[Item]) -> None:
    # Most rows have nothing to report, so no pass here visits every row in
    # Python: the gate picks the rows the text rules may flag, one comparison
    # in a list comprehension the fresh ones.  A row's findings keep the order
    # text, size, stale, which the final sort keeps among equal keys.
    to_scan = rows_to_scan([r[M_TITLE] + "\n" + r[M_CONTENT] for r in mems], DIGIT_RULES)
    oversized = {n for n, r in enumerate(mems) if len(r[M_CONTENT]) >= NEAR_LIMIT}
    for n in sorted(to_scan | oversized):
        r = mems[n]
        found = []
        if n in to_scan:
            found = scan_text(r[M_TITLE], "title") + scan_text(r[M_CONTENT], "content")
        size = near_size_limit(r[M_CONTENT])
        if size is not None:
            found.append(size)
        is_live = r[M_DELETED_AT] is None
        stable = is_live and r[M_ID] in stable_ids
        state = "live" if is_live else "deleted"
        for f in found:
            reach, detail = _memory_reach(r, stable, f)
            items.append(Item(key, "memories", r[M_ID], r[M_KEY], f, reach, detail, state))
    staleness = Staleness(now)
    fresh_after = staleness.fresh_after
    # A stale finding is on a live row and not on its content, so its reach
    # depends only on whether the row is stable, its scope and its type.
    reaches: dict[tuple, tuple[str, str]] = {}
    for r in [r for r in mems if r[M_DELETED_AT] is None and not (
            r[M_UPDATED_AT] > fresh_after and is_canonical_stamp(r[M_UPDATED_AT]))]:
        stable = r[M_ID] in stable_ids
        old = staleness(r[M_UPDATED_AT], stable)
        if old is None:
            continue
        where = (stable, r[M_SCOPE], r[M_TYPE])
        reach = reaches.get(where) or reaches.setdefault(where, _memory_reach(r, stable, old))
        items.append(Item(key, "memories", r[M_ID], r[M_KEY], old, *reach, "live"))


def _corpus(data, live, stable_ids, docs: corpus.Docs) -> list[Item]:
    """Conflicts and duplicates among the live rows (``docs``, in ``live``'s order), as sorted items."""
    approved = [(key, r) for key, (_ref, _m, reviews, _s) in data.items() for r in reviews
                if r[R_STATUS] == "approved"]
    found = [*corpus.same_key_both_scopes(docs),
             *corpus.near_duplicates(docs)]
    for _n, f in found:
        f.related = tuple(f"{live[m][0]}/memories/{live[m][1][M_ID]}" for m in f.related)
    contradicted = list(corpus.contradicted_preferences(docs, corpus.Docs.of(
        [(r[R_KEY], r[R_SCOPE], r[R_TYPE], r[R_CONTENT]) for _k, r in approved])))
    for _n, f in contradicted:
        f.related = tuple(f"{approved[c][0]}/reviews/{approved[c][1][R_ID]}" for c in f.related)
    found += contradicted
    out = []
    for n, f in found:
        key, r = live[n]
        reach, detail = _memory_reach(r, r[M_ID] in stable_ids, f)
        out.append(Item(key, "memories", r[M_ID], r[M_KEY], f, reach, detail, "live"))
    out.sort(key=_order)
    return out
