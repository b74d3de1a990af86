"""Scan every store for findings: read, run every rule, and say what was left out.

Where each finding sits and how it reaches the model is ``findings.rows``.
Bounded work (issue 19): rows are read in batches (``store.scan.batches``) and
only each live memory's token set and length outlive its batch, at most
``TOKENS_HELD`` tokens in all; with a ``time_limit`` the scan stops reading
when it runs out and says how far it got (``Report.cut``), and between
batches it lets the server's other threads run.  The same budget bounds the
reading of what every prompt carries (``_stable_rules``), which comes first.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from itertools import repeat
from operator import itemgetter

from flask_babel import gettext as _

from ..engine.stable import TAIL_READ, all_entries, select
from ..records import Memory
from ..store import StoreProblem
from ..store.registry import StoreRef
from ..store.scan import batches, count_rows, stable_batches, summary_tail
from ..store.snapshot import sql_order
from ..words import count
from . import corpus
from .checks import token_sets
from .duplicates import pairs_of_sets
from .rows import (
    CATEGORIES,
    CATEGORY_ORDER,
    REACH,
    Item,
    memory_findings,
    memory_item_reach,
    order,
    review_findings,
    summary_findings,
    tail_reach,
)
from .said import Said

__all__ = ["CATEGORIES", "REACH", "Item", "Report", "scan"]

# Token sets kept for the corpus rules, in all (~30 bytes each): 10,000 real
# memories hold ~300,000; past the bound a row takes no part in them, and the
# report says so.
TOKENS_HELD = 3_000_000
_TABLES = ("memories", "memory_review_queue", "session_summaries")
_created_rowid = itemgetter(4, 0)


@dataclass
class Report:
    """Everything one scan found, plus what it read, what it could not, and what it left out."""

    items: list[Item] = field(default_factory=list)
    scanned: dict = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)
    rows_total: int = 0
    rows_scanned: int = 0
    cut: list = field(default_factory=list)  # what the bounds left out: sentences (findings.said.Said)
    timed_out: bool = False  # rows were left unread: a finding missing here may still exist

    @property
    def complete(self) -> bool:
        """Whether every row was read (the join's own bounds are in ``cut``)."""
        return not self.timed_out

    @cached_property
    def by_row(self) -> dict[tuple[str, str, str], tuple[Item, ...]]:
        """The findings by the row they sit in, (store, table, row_id) -> items: every screen
        marks flagged rows from the report the findings page shows.  Made once per report, which
        is held between requests and never changed once made (made per request, its thousands
        of lists at 10,000 memories brought the server's next full collection closer)."""
        out: dict[tuple[str, str, str], list[Item]] = {}
        for item in self.items:
            out.setdefault((item.store, item.table, item.row_id), []).append(item)
        return {row: tuple(items) for row, items in out.items()}


def _counts(**numbers: int) -> dict[str, str]:
    """Numbers for a sentence, with thousands marked (``words.count``)."""
    return {name: count(n) for name, n in numbers.items()}


def _stable_rules(
    refs: list[StoreRef], deadline: float | None = None, total: int = 0
) -> tuple[dict | None, int]:
    """(store, id) -> the rule that picks the row for a new session's stable block, and how
    many memory rows were read for it.

    The rows are read in batches (``store.scan.stable_batches``); with a ``deadline``, the
    reading stops once it passes with rows of the ``total`` left, and the rules are None:
    every row's reach depends on them, so the scan then checks no row and says how far
    this got."""
    read, files = 0, {}
    for ref in refs:
        live = []
        for batch in stable_batches(ref):
            read += len(batch)
            live += [r for r in batch if r[6]]
            time.sleep(0)  # let the server's other threads have the interpreter
            if deadline is not None and read < total and time.monotonic() > deadline:
                return None, read
        try:  # ORDER BY created_at, rowid, as SQLite sorts them
            live.sort(key=_created_rowid)
        except TypeError:  # a column mixing kinds (a hand edit): SQLite's order across kinds
            live.sort(key=lambda r: (sql_order(r[4]), r[0]))
        files[ref.key] = [
            Memory(r[1], r[2], r[3], "", "", "", created_at=r[4], updated_at=r[5], store=ref.key)
            for r in live
        ]
    project = [m for r in refs if r.kind == "project" for m in files[r.key]]
    user = [m for r in refs if r.kind != "project" for m in files[r.key]]
    return {(m.store, m.id): because for m, because in select(all_entries(project, user))}, read


class _Live:
    """What the corpus rules need of the live memories, kept across batches (no text)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []  # (store, id)
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
        if self.held + size <= TOKENS_HELD:  # the usual case, in C
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


def scan(
    refs: Iterable[StoreRef],
    now: datetime,
    time_limit: float | None = None,
    progress: Callable[[str, float | None], None] | None = None,
) -> Report:
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
    if progress:
        progress("finding what every prompt carries", 0.0)
    stable_read, memories_total = 0, sum(t["memories"] for t in totals.values())
    try:
        because, stable_read = _stable_rules(readable, deadline, memories_total)
    except StoreProblem as problem:  # a file that broke between two reads
        report.problems.append({"store": "", "kind": problem.kind, "message": str(problem)})
        because = {}
    items, live, approved = report.items, _Live(), _Live()
    approved_rows: list[tuple[str, str]] = []
    out_of_time = because is None
    if because is None:  # out of time before the block's picks were known: no row is checked
        report.cut.append(
            Said(
                lambda: _(
                    "found what every prompt carries in %(done)s of %(total)s memories, then ran out of time",
                    **_counts(done=stable_read, total=memories_total),
                )
            )
        )
        because = {}
    for ref in readable if not out_of_time else ():
        scanned = report.scanned.setdefault(ref.key, {"memories": 0, "reviews": 0, "summaries": 0})
        try:
            in_tail = tail_reach(summary_tail(ref, TAIL_READ)) if ref.kind == "project" else {}
            for table in _TABLES:
                for batch in batches(ref, table):
                    if table == "memories":
                        memory_findings(ref.key, batch, because, now, items)
                        live.add(batch)
                    elif table == "memory_review_queue":
                        review_findings(ref.key, batch, items)
                        chosen = [r for r in batch if r.status == "approved" and r.type == "preference"]
                        approved.add(chosen)
                        approved_rows += [(ref.key, r.id) for r in chosen]
                    else:
                        summary_findings(ref.key, batch, in_tail, items)
                    scanned[
                        {"memories": "memories", "memory_review_queue": "reviews"}.get(table, "summaries")
                    ] += len(batch)
                    report.rows_scanned += len(batch)
                    if progress:
                        progress(
                            f"scanned {count(report.rows_scanned)} of {count(report.rows_total)} rows",
                            report.rows_scanned / max(1, report.rows_total),
                        )
                    time.sleep(0)  # let the server's other threads have the interpreter
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
        scanned, total = report.rows_scanned, report.rows_total
        report.cut.append(
            Said(
                lambda: _(
                    "scanned %(done)s of %(total)s rows in the time allowed (%(limit)s s)",
                    limit="{:g}".format(time_limit),
                    **_counts(done=scanned, total=total),
                )
            )
        )
    if live.left_out:
        left = live.left_out
        report.cut.append(
            Said(
                lambda: _(
                    "%(num)s memories took no part in the conflict and "
                    "duplicate checks (they hold more than %(words)s words "
                    "together)",
                    **_counts(num=left, words=TOKENS_HELD),
                )
            )
        )
    items.sort(key=order)
    # The corpus rules get what is left of the budget, and at least a tenth of it.
    join_by = None if deadline is None else max(started + time_limit, time.monotonic() + time_limit / 10)
    conflicts = _corpus(live, approved, approved_rows, because, join_by, report)
    # Conflicts come only from the corpus rules: sorted apart, they go in at their
    # category's place, so the list sorted above stays sorted.
    at = bisect_left(items, CATEGORY_ORDER["conflict"], key=lambda i: CATEGORY_ORDER[i.finding.category])
    items[at:at] = conflicts
    return report


def _corpus(
    live: _Live, approved: _Live, approved_rows, because: dict, deadline: float | None, report: Report
) -> list[Item]:
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
        reach, detail = memory_item_reach(m, because.get((store, row_id)), f)
        out.append(Item(store, "memories", row_id, docs.keys[n], f, reach, detail, "live"))
    out.sort(key=order)
    return out
