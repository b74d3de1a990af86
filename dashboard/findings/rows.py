"""Where each finding sits and how it reaches the model: the per-row rules of a scan.

One ``Item`` per finding in one row of one store, with its reach (contract
§8–§11): ``stable`` (in ``<memory-stable>`` every turn), ``recall`` (only when
a query scores it) or ``disk`` (never in a prompt, still in the file).  The
scan (``findings.scan``) reads the rows in batches and hands each batch here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ..engine.reach import memory_reach, reach_text
from ..engine.render import EXCERPT_CHARS, VALUE_PREVIEW
from ..engine.stable import TAIL_CHARS, TAIL_KEPT, TAIL_READ, TAIL_SEPARATOR
from ..records import Memory, plain
from .rules import Finding, Staleness, is_canonical_stamp, near_size_limit, scan_text
from .why import why_text

CATEGORIES = {
    "secret": _l("Secrets"),
    "personal": _l("Personal data"),
    "instruction": _l("Instruction-like content"),
    "conflict": _l("Conflicts and duplicates"),
    "upkeep": _l("Oversized or stale"),
}
REACH = {
    "stable": _l("stable block every turn"),
    "recall": _l("recall only"),
    "disk": _l("invisible but still on disk"),
}
_REACH_ORDER = {"stable": 0, "recall": 1, "disk": 2}
CATEGORY_ORDER = {c: i for i, c in enumerate(CATEGORIES)}


@dataclass(slots=True)  # not frozen: a frozen __init__ is slower, and scans make many
class Item:
    """One finding located in one row of one store."""

    store: str
    table: str
    row_id: str
    label: str  # key or session id, to recognise the row
    finding: Finding
    reach: str
    reach_detail: Later  # str() it: words in the reader's locale
    state: str  # what the fixes depend on: live | deleted | a review status | ""

    def to_dict(self) -> dict:
        return {
            **plain(self, "store", "table", "row_id", "label"),
            **self.finding.to_dict(),
            "why": why_text(self.finding),
            "reach": self.reach,
            "reach_text": str(REACH[self.reach]),
            "reach_detail": str(self.reach_detail),
            "state": self.state,
        }


class Later:
    """Words put together when they are read, not when the scan made them.

    A scan is kept across requests (and may run in a job thread, outside any), so
    its reach words are said in the locale of whoever reads them. Unlike
    Flask-Babel's lazy strings this is not HTML: Jinja escapes it like any text."""

    __slots__ = ("code", "args")

    def __init__(self, code: str, *args):
        self.code, self.args = code, args

    def __str__(self) -> str:
        if self.code == "soft_deleted":
            return _("%(reach)s (since %(stamp)s)", reach=reach_text("soft_deleted"), stamp=self.args[0])
        if self.code == "past_stable":
            return _(
                "past the first %(num)d characters, the only part of the value the stable "
                "block shows; still in the file",
                num=self.args[0],
            )
        if self.code == "past_recall":
            return _(
                "past the first %(num)d characters, the only part of the value recall "
                "shows; still in the file",
                num=self.args[0],
            )
        if self.code == "review_pending":
            return _(
                "review item (%(status)s): not in any prompt; becomes a memory if approved",
                status=self.args[0],
            )
        if self.code == "review_decided":
            return _(
                "review item (%(status)s): not in any prompt; kept in the queue forever after the decision",
                status=self.args[0],
            )
        if self.code == "summary_tail":
            return _("in the session tail of %(tag)s every turn", tag="<memory-stable>")
        if self.code == "summary_outside":
            return _("summary outside the 800-character session tail: not in any prompt, still in the file")
        return reach_text(self.code, *self.args)

    def __eq__(self, other) -> bool:
        return isinstance(other, Later) and (self.code, self.args) == (other.code, other.args)

    def __hash__(self) -> int:
        return hash((self.code, self.args))

    def __repr__(self) -> str:
        return f"Later({self.code!r}, *{self.args!r})"


def memory_item_reach(m: Memory, because: str | None, f: Finding) -> tuple[str, Later]:
    """The finding's reach code (stable | recall | disk) and the words for it."""
    reach = memory_reach(m, because)
    if reach["code"] == "soft_deleted":
        return "disk", Later("soft_deleted", m.deleted_at)
    stable = reach["code"] == "stable"
    shown = VALUE_PREVIEW if stable else EXCERPT_CHARS
    if f.field == "content" and f.start >= shown and f.category != "conflict":
        return "disk", Later("past_stable" if stable else "past_recall", shown)
    if stable:
        return "stable", Later("stable", because)
    return "recall", Later("recall")


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
    return (
        CATEGORY_ORDER[item.finding.category],
        _REACH_ORDER[item.reach],
        item.store,
        item.table,
        item.row_id,
        item.finding.start,
    )


def memory_findings(key: str, mems: list[Memory], because: dict, now: datetime, items: list[Item]) -> None:
    # The text rules' own gates (``gates.open_families``) stop most fields at one search.
    # A row's findings keep the order text, size, stale, which the final sort keeps among
    # equal keys.
    for m in mems:
        found = scan_text(m.title, "title") + scan_text(m.content, "content")
        size = near_size_limit(m.content)
        if size is not None:
            found.append(size)
        if not found:
            continue
        is_live = m.deleted_at is None
        rule = because.get((key, m.id)) if is_live else None
        state = "live" if is_live else "deleted"
        for f in found:
            reach, detail = memory_item_reach(m, rule, f)
            items.append(Item(key, "memories", m.id, m.key_normalized, f, reach, detail, state))
    staleness = Staleness(now)
    fresh_after = staleness.fresh_after
    for m in [
        m
        for m in mems
        if m.deleted_at is None and not (m.updated_at > fresh_after and is_canonical_stamp(m.updated_at))
    ]:
        rule = because.get((key, m.id))
        old = staleness(m.updated_at, rule is not None)
        if old is None:
            continue
        items.append(
            Item(key, "memories", m.id, m.key_normalized, old, *memory_item_reach(m, rule, old), "live")
        )


def review_findings(key: str, reviews, items: list[Item]) -> None:
    for r in reviews:
        detail = Later("review_pending" if r.status == "pending" else "review_decided", r.status)
        for name in ("title", "content", "evidence"):
            for f in scan_text(getattr(r, name), name):
                items.append(
                    Item(key, "memory_review_queue", r.id, r.key_normalized, f, "disk", detail, r.status)
                )


def summary_findings(key: str, summaries, in_tail: dict[str, int], items: list[Item]) -> None:
    for r in summaries:
        for f in scan_text(r.summary_text, "summary_text"):
            keep_from = in_tail.get(r.id)
            if keep_from is not None and f.end > keep_from:
                reach, detail = "stable", Later("summary_tail")
            else:
                reach, detail = "disk", Later("summary_outside")
            items.append(Item(key, "session_summaries", r.id, r.session_id, f, reach, detail, ""))
