"""Scan every store for findings and say where each one sits and how it reaches the model.

Reach follows agentao's prompt path (contract §8–§11):
  stable   in ``<memory-stable>`` every turn: user scope or a structural type or one of the
           3 most recent incidental facts (key, title and the first 240 characters of the
           value), or a summary text inside the 800-character session tail;
  recall   only when a query scores it: the title and the first 200 characters of content;
  disk     never in a prompt but still in the file: soft-deleted rows, review-queue rows
           and their evidence, summaries outside the tail, text beyond the part shown.

Bounded work (issue 19): rows are read in batches (``store.scan.batches``) and
only each live memory's token set and length outlive its batch, at most
``TOKENS_HELD`` tokens in all; with a ``time_limit`` the scan stops reading
when it runs out and says how far it got (``Report.cut``), and between
batches it lets the server's other threads run.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from typing import Callable, Iterable

from ..engine.reach import memory_reach
from ..engine.render import EXCERPT_CHARS, VALUE_PREVIEW
from ..engine.stable import TAIL_CHARS, TAIL_KEPT, TAIL_READ, TAIL_SEPARATOR, all_entries, select
from ..records import Memory
from ..store import StoreProblem
from ..store.registry import StoreRef
from ..store.scan import batches, count_rows, stable_candidates, summary_tail
from . import corpus
from .checks import token_sets
from .duplicates import pairs_of_sets
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
# Token sets kept for the corpus rules, in all (~30 bytes each): 10,000 real
# memories hold ~300,000; past the bound a row takes no part in them, and the
# report says so.
TOKENS_HELD = 3_000_000
_TABLES = ("memories", "memory_review_queue", "session_summaries")


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
    """Everything one scan found, plus what it read, what it could not, and what it left out."""

    items: list[Item] = field(default_factory=list)
    scanned: dict = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)
    rows_total: int = 0
    rows_scanned: int = 0
    cut: list[str] = field(default_factory=list)   # what the bounds left out, plain sentences
    timed_out: bool = False   # rows were left unread: a finding missing here may still exist

    @property
    def complete(self) -> bool:
        """Whether every row was read (the join's own bounds are in ``cut``)."""
        return not self.timed_out


def _memory_reach(m: Memory, because: str | None, f: Finding) -> tuple[str, str]:
    """The finding's reach code (stable | recall | disk) and the words for it."""
    reach = memory_reach(m, because)
    if reach["code"] == "soft_deleted":
        return "disk", f"{reach['text']} (since {m.deleted_at})"
    stable = reach["code"] == "stable"
    shown = VALUE_PREVIEW if stable else EXCERPT_CHARS
    if f.field == "content" and f.start >= shown and f.category != "conflict":
        return "disk", (f"past the first {shown} characters, the only part of the value "
                        f"{'the stable block' if stable else 'recall'} shows; still in the file")
    return ("stable" if stable else "recall"), reach["text"]


def _stable_rules(refs: list[StoreRef]) -> dict[tuple[str, str], str]:
    """(store, id) -> the rule that picks the row for a new session's stable block."""
    project = [m for r in refs if r.kind == "project" for m in stable_candidates(r)]
    user = [m for r in refs if r.kind != "project" for m in stable_candidates(r)]
    return {(m.store, m.id): because for m, because in select(all_entries(project, user))}


def _tail_reach(rows) -> dict[str, int]:
    """For each summary in a brand-new session's tail: the first offset the tail keeps."""
    kept = list(reversed(rows[:TAIL_READ][:TAIL_KEPT]))
    offsets, pos = {}, 0
    for r in kept:
        offsets[r.id] = pos
        pos += len(r.summary_text) + len(TAIL_SEPARATOR)
    total = pos - len(TAIL_SEPARATOR) if kept else 0
    cut = 0
    if total > TAIL_CHARS:
        joined = TAIL_SEPARATOR.join(r.summary_text for r in kept)
        cut = total - TAIL_CHARS
        newline = joined.find("\n", cut)
        cut = newline + 1 if newline != -1 else cut
    return {rid: cut - off for rid, off in offsets.items()}


class _Live:
    """What the corpus rules need of the live memories, kept across batches (no text)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []      # (store, id)
        self.docs = corpus.Docs([], [], [], [], [], [])
        self.held = 0
        self.left_out = 0
        # One string per distinct word across rows (a scan's own, not sys.intern's):
        # 100,000 memories over a ~2,000-word vocabulary hold 3 million word
        # references, each a string of its own as the tokenizer makes them.
        self._words: dict[str, str] = {}

    def add(self, batch: list[Memory]) -> None:
        live = [m for m in batch if getattr(m, "deleted_at", None) is None]
        sets: list = token_sets([m.content for m in live])
        size = sum(map(len, sets))
        if self.held + size <= TOKENS_HELD:   # the usual case, in C
            self.held += size
            sets = list(map(frozenset, map(map, repeat(self._words.setdefault), sets, sets)))
        else:
            for n, tokens in enumerate(sets):
                if self.held + len(tokens) > TOKENS_HELD:
                    sets[n], self.left_out = None, self.left_out + 1
                else:
                    self.held += len(tokens)
                    sets[n] = frozenset(map(self._words.setdefault, tokens, tokens))
        d = self.docs
        self.rows += [(m.store, m.id) for m in live]
        d.keys.extend(m.key_normalized for m in live)
        d.scopes.extend(m.scope for m in live)
        d.types.extend(m.type for m in live)
        d.sets.extend(sets)
        d.lengths.extend(len(m.content) for m in live)


def scan(refs: Iterable[StoreRef], now: datetime, time_limit: float | None = None,
         progress: Callable[[str, float | None], None] | None = None) -> Report:
    """Read every store in batches and run every rule; unreadable stores become problems.

    ``time_limit`` (seconds): stop reading once it is spent and answer with
    what was read, saying so; None reads everything.  ``progress(step,
    fraction)`` is told after each batch (a background job's progress).
    """
    started = time.monotonic()
    # Reading gets three quarters of the budget, the corpus rules the rest.
    deadline = None if time_limit is None else started + 0.75 * time_limit
    report, refs = Report(), list(refs)
    if progress:
        progress("counting rows", 0.0)
    readable, totals = [], {}
    for ref in refs:
        try:
            totals[ref.key] = {t: count_rows(ref, t) for t in _TABLES}
            readable.append(ref)
        except StoreProblem as problem:
            report.problems.append({"store": ref.key, "kind": problem.kind, "message": str(problem)})
    report.rows_total = sum(n for t in totals.values() for n in t.values())
    try:
        because = _stable_rules(readable)
    except StoreProblem as problem:   # a file that broke between two reads
        report.problems.append({"store": "", "kind": problem.kind, "message": str(problem)})
        because = {}
    items, live, approved = report.items, _Live(), _Live()
    approved_rows: list[tuple[str, str]] = []
    out_of_time = False
    for ref in readable:
        scanned = report.scanned.setdefault(ref.key, {"memories": 0, "reviews": 0, "summaries": 0})
        try:
            in_tail = (_tail_reach(summary_tail(ref, TAIL_READ)) if ref.kind == "project" else {})
            for table in _TABLES:
                for batch in batches(ref, table):
                    if table == "memories":
                        _memory_findings(ref.key, batch, because, now, items)
                        live.add(batch)
                    elif table == "memory_review_queue":
                        _review_findings(ref.key, batch, items)
                        chosen = [r for r in batch if r.status == "approved" and r.type == "preference"]
                        approved.add(chosen)
                        approved_rows += [(ref.key, r.id) for r in chosen]
                    else:
                        _summary_findings(ref.key, batch, in_tail, items)
                    scanned[{"memories": "memories", "memory_review_queue": "reviews"}.get(
                        table, "summaries")] += len(batch)
                    report.rows_scanned += len(batch)
                    if progress:
                        progress(f"scanned {report.rows_scanned:,} of {report.rows_total:,} rows",
                                 report.rows_scanned / max(1, report.rows_total))
                    time.sleep(0)   # let the server's other threads have the interpreter
                    if deadline is not None and time.monotonic() > deadline:
                        out_of_time = True
                        break
                if out_of_time:
                    break
        except StoreProblem as problem:
            report.problems.append({"store": ref.key, "kind": problem.kind, "message": str(problem)})
        if out_of_time:
            break
    report.timed_out = out_of_time
    if out_of_time:
        report.cut.append(f"scanned {report.rows_scanned:,} of {report.rows_total:,} rows in the "
                          f"time allowed ({time_limit:g} s)")
    if live.left_out:
        report.cut.append(f"{live.left_out:,} memories took no part in the conflict and duplicate "
                          f"checks (they hold more than {TOKENS_HELD:,} words together)")
    items.sort(key=_order)
    # The corpus rules get what is left of the budget, and at least a tenth of it.
    join_by = None if deadline is None else max(started + time_limit,
                                                time.monotonic() + time_limit / 10)
    conflicts = _corpus(live, approved, approved_rows, because, join_by, report)
    # Conflicts come only from the corpus rules: sorted apart, they go in at their
    # category's place, so the list sorted above stays sorted.
    at = bisect_left(items, _CATEGORY_ORDER["conflict"],
                     key=lambda i: _CATEGORY_ORDER[i.finding.category])
    items[at:at] = conflicts
    return report


def _order(item: Item) -> tuple:
    # The page's order: category, then how the text reaches the model, then place.
    return (_CATEGORY_ORDER[item.finding.category], _REACH_ORDER[item.reach], item.store,
            item.table, item.row_id, item.finding.start)


def _memory_findings(key: str, mems: list[Memory], because: dict, now: datetime,
                     items: list[Item]) -> None:
    # Most rows have nothing to report, so no pass here visits every row in
    # Python: the gate picks the rows the text rules may flag, one comparison
    # in a list comprehension the fresh ones.  A row's findings keep the order
    # text, size, stale, which the final sort keeps among equal keys.
    to_scan = rows_to_scan([m.title + "\n" + m.content for m in mems], DIGIT_RULES)
    oversized = {n for n, m in enumerate(mems) if len(m.content) >= NEAR_LIMIT}
    for n in sorted(to_scan | oversized):
        m = mems[n]
        found = []
        if n in to_scan:
            found = scan_text(m.title, "title") + scan_text(m.content, "content")
        size = near_size_limit(m.content)
        if size is not None:
            found.append(size)
        is_live = m.deleted_at is None
        rule = because.get((key, m.id)) if is_live else None
        state = "live" if is_live else "deleted"
        for f in found:
            reach, detail = _memory_reach(m, rule, f)
            items.append(Item(key, "memories", m.id, m.key_normalized, f, reach, detail, state))
    staleness = Staleness(now)
    fresh_after = staleness.fresh_after
    for m in [m for m in mems if m.deleted_at is None and not (
            m.updated_at > fresh_after and is_canonical_stamp(m.updated_at))]:
        rule = because.get((key, m.id))
        old = staleness(m.updated_at, rule is not None)
        if old is None:
            continue
        items.append(Item(key, "memories", m.id, m.key_normalized, old,
                          *_memory_reach(m, rule, old), "live"))


def _review_findings(key: str, reviews, items: list[Item]) -> None:
    for r in reviews:
        detail = (f"review item ({r.status}): not in any prompt"
                  + ("; becomes a memory if approved" if r.status == "pending" else
                     "; kept in the queue forever after the decision"))
        for name in ("title", "content", "evidence"):
            for f in scan_text(getattr(r, name), name):
                items.append(Item(key, "memory_review_queue", r.id, r.key_normalized, f,
                                  "disk", detail, r.status))


def _summary_findings(key: str, summaries, in_tail: dict[str, int], items: list[Item]) -> None:
    for r in summaries:
        for f in scan_text(r.summary_text, "summary_text"):
            keep_from = in_tail.get(r.id)
            if keep_from is not None and f.end > keep_from:
                reach, detail = "stable", "in the session tail of <memory-stable> every turn"
            else:
                reach, detail = "disk", ("summary outside the 800-character session tail: "
                                         "not in any prompt, still in the file")
            items.append(Item(key, "session_summaries", r.id, r.session_id, f, reach, detail, ""))


def _corpus(live: _Live, approved: _Live, approved_rows, because: dict, deadline: float | None,
            report: Report) -> list[Item]:
    """Conflicts and duplicates among the live rows, as sorted items."""
    docs = live.docs
    pairs, cut = pairs_of_sets(docs.keys, docs.sets, deadline=deadline)
    report.cut += cut.notes()
    found = [*corpus.same_key_both_scopes(docs), *corpus.duplicate_findings(docs, pairs)]
    for _n, f in found:
        f.related = tuple(f"{live.rows[m][0]}/memories/{live.rows[m][1]}" for m in f.related)
    contradicted = list(corpus.contradicted_preferences(docs, approved.docs))
    for _n, f in contradicted:
        f.related = tuple(f"{approved_rows[c][0]}/reviews/{approved_rows[c][1]}" for c in f.related)
    found += contradicted
    out = []
    for n, f in found:
        store, row_id = live.rows[n]
        m = Memory(row_id, docs.scopes[n], docs.types[n], docs.keys[n], "", "", store=store)
        reach, detail = _memory_reach(m, because.get((store, row_id)), f)
        out.append(Item(store, "memories", row_id, docs.keys[n], f, reach, detail, "live"))
    out.sort(key=_order)
    return out
