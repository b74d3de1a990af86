"""Where each finding sits and how it reaches the model: the per-row rules of a scan.

One ``Item`` per finding in one row of one store, with its reach (contract
§8–§11): ``stable`` (in ``<memory-stable>`` every turn), ``recall`` (only when
a query scores it) or ``disk`` (never in a prompt, still in the file).  The
scan (``findings.scan``) reads the rows in batches and hands each batch here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..engine.reach import memory_reach
from ..engine.render import EXCERPT_CHARS, VALUE_PREVIEW
from ..engine.stable import TAIL_CHARS, TAIL_KEPT, TAIL_READ, TAIL_SEPARATOR
from ..records import Memory
from .gates import rows_to_scan
from .rules import (DIGIT_RULES, NEAR_LIMIT, Finding, Staleness, is_canonical_stamp, near_size_limit,
                    scan_text)

CATEGORIES = {"secret": "Secrets", "personal": "Personal data",
              "instruction": "Instruction-like content", "conflict": "Conflicts and duplicates",
              "upkeep": "Oversized or stale"}
REACH = {"stable": "stable block every turn", "recall": "recall only",
         "disk": "invisible but still on disk"}
_REACH_ORDER = {"stable": 0, "recall": 1, "disk": 2}
CATEGORY_ORDER = {c: i for i, c in enumerate(CATEGORIES)}

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


def memory_item_reach(m: Memory, because: str | None, f: Finding) -> tuple[str, str]:
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


def tail_reach(rows) -> dict[str, int]:
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


def order(item: Item) -> tuple:
    # The page's order: category, then how the text reaches the model, then place.
    return (CATEGORY_ORDER[item.finding.category], _REACH_ORDER[item.reach], item.store,
            item.table, item.row_id, item.finding.start)


def memory_findings(key: str, mems: list[Memory], because: dict, now: datetime,
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
            reach, detail = memory_item_reach(m, rule, f)
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
                          *memory_item_reach(m, rule, old), "live"))


def review_findings(key: str, reviews, items: list[Item]) -> None:
    for r in reviews:
        detail = (f"review item ({r.status}): not in any prompt"
                  + ("; becomes a memory if approved" if r.status == "pending" else
                     "; kept in the queue forever after the decision"))
        for name in ("title", "content", "evidence"):
            for f in scan_text(getattr(r, name), name):
                items.append(Item(key, "memory_review_queue", r.id, r.key_normalized, f,
                                  "disk", detail, r.status))


def summary_findings(key: str, summaries, in_tail: dict[str, int], items: list[Item]) -> None:
    for r in summaries:
        for f in scan_text(r.summary_text, "summary_text"):
            keep_from = in_tail.get(r.id)
            if keep_from is not None and f.end > keep_from:
                reach, detail = "stable", "in the session tail of <memory-stable> every turn"
            else:
                reach, detail = "disk", ("summary outside the 800-character session tail: "
                                         "not in any prompt, still in the file")
            items.append(Item(key, "session_summaries", r.id, r.session_id, f, reach, detail, ""))
