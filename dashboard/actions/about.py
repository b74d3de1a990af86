""" "Forget what is about me": which rows are about the person, and the dry run of erasing them.

No Flask.  The scope is decided here once, so the dry run, its confirmation and the purge
cannot disagree.  From who the person is (``actions.person``):

* the user store is the person's own file: every row in it goes;
* in the project store: memories and review items of ``scope='user'``; every memory, review
  item and session summary holding one of the person's contacts (a *personal data* finding of
  the one scan every screen shows); every summary and review item naming them;
* what stays is listed when a person would wonder (someone else's personal data, a project
  credential, a project fact naming the person); other project rows are counted.

Bounded as the findings scan is: past its ``deadline`` a store's rows are read no further, and
its part says how far it read (``rows_read`` of ``rows_total``): what it found goes, counted
exactly, and the count is "at least".  The purge is the forget screen's verified hard purge, one
file at a time.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..findings.rules import scan_text
from ..records import plain
from ..store import StoreRef, scoped
from ..store.plan import DryRun
from ..store.rows import as_text
from . import dryrun, purge
from .person import Person, person

ABOUT_CATEGORIES = ("personal", "secret")  # findings.rows.CATEGORIES that decide a row's fate here
TABLE_OF = {
    "memory": "memories",
    "memory_deleted": "memories",
    "review": "memory_review_queue",
    "summary": "session_summaries",
}
STAYS = {"memory": "memories", "memory_deleted": "soft_deleted", "review": "reviews", "summary": "summaries"}
SHOWN = 50  # rows a list shows (the twin's page too), and rows that stay listed
SENTENCE = 200  # characters of a row's text a list shows


@dataclass
class StorePart:
    """One store's share of the scoped forget: the rows that go and what stays."""

    ref: StoreRef
    rows: DryRun
    categories: tuple[str, ...] = ()
    # (kind, id) -> "user_store" | "user_scope" | "your_contact" | "your_name"
    why: dict[tuple[str, str], str] = field(default_factory=dict)
    stays: dict[str, int] = field(default_factory=dict)  # memories / soft_deleted / reviews / summaries
    # (kind, id) -> (the kind the findings know it by, its text): a sentence when listed (masked)
    texts: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    details: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, id) -> the name or contact
    kept: list[dict[str, str]] = field(default_factory=list)  # listed rows that stay: kind, id, text, why
    kept_total: int = 0
    seen: Seen | None = None  # what masks a listed row's text
    rows_read: int = 0  # memories, suggestions and summaries read to decide: all of them ...
    rows_total: int = 0  # ... unless the time ran out (then ``rows`` holds what was found so far)
    complete: bool = True  # the read's own answer (rows_read and rows_total are for the sentence)

    def sentence(self, key: tuple[str, str]) -> str:
        if key not in self.texts or self.seen is None:
            return ""
        kind, text = self.texts[key]
        return self.seen.sentence(self.ref, kind, key[1], text)

    @cached_property
    def token(self) -> str:
        return dryrun.fingerprint(self.rows)

    @property
    def fits(self) -> bool:
        return dryrun.fits(self.token)

    def goes(self) -> dict[str, int]:
        """Rows that go, by kind (memory, memory_deleted, review, summary, event)."""
        return dict(Counter(r.kind for r in self.rows))

    def to_dict(self, listed: slice = slice(None)) -> dict[str, Any]:
        """The twin's part, its ``rows`` those of ``listed`` (a page: at 100,000 memories the
        20,000 rows of a user store, each masked, were 8.6 MB and a second); events come last."""
        return {
            "store": self.ref.key,
            "kind": self.ref.kind,
            "name": self.ref.name,
            "path": str(self.ref.path),
            "categories": list(self.categories),
            "goes": self.goes(),
            "total": len(self.rows),
            "complete": self.complete,
            "rows_read": self.rows_read,
            "rows_total": self.rows_total,
            "stays": self.stays,
            "fingerprint": self.token if self.fits else None,
            "rows": [
                {
                    **plain(r, "kind", "id", "label", "bytes"),
                    "why": self.why.get((r.kind, r.id), "event"),
                    "text": self.sentence((r.kind, r.id)),
                    "detail": self.details.get((r.kind, r.id), ""),
                }
                for r in self.rows[listed]
            ],
            "kept": self.kept,
            "kept_total": self.kept_total,
        }


def sentence(text: str, mask: bool = True) -> str:
    """A row's text as a list shows it: secrets and personal data masked as Findings masks them
    (when ``mask``: the scan flagged the row, or did not reach every row), cut at ``SENTENCE``
    characters."""
    out, pos = [], 0
    for f in sorted(scan_text(text), key=lambda f: f.start) if mask else ():
        if f.category in ABOUT_CATEGORIES and f.start >= pos:
            out += [text[pos : f.start], f.excerpt]
            pos = f.end
    shown = " ".join(("".join(out) + text[pos:]).split())
    return shown if len(shown) <= SENTENCE else shown[: SENTENCE - 1] + "…"


@dataclass(frozen=True)
class Seen:
    """The one findings scan every screen shows, as the choice reads it: ``flags`` is
    ``Report.by_row`` ((store, table, row id) -> findings), ``complete`` whether
    it read every row."""

    flags: dict[tuple[str, str, str], Any]
    complete: bool = True

    def categories(self, ref: StoreRef, kind: str, row_id: str) -> set[str]:
        return {i.finding.category for i in self.flags.get((ref.key, TABLE_OF[kind], row_id), ())}

    def sentence(self, ref: StoreRef, kind: str, row_id: str, text: str) -> str:
        flagged = self.categories(ref, kind, row_id) & set(ABOUT_CATEGORIES)
        return sentence(text, bool(flagged) or not self.complete)


def who(refs: list[StoreRef], seen: Seen) -> Person:
    """The person, from the memories of scope ``user`` in the stores shown (read-only).  Contacts
    are read from the rows the scan flagged: a row it did not reach (the page says so) is not
    read again here, so the dry run costs what the scan allowed."""
    mine: list[tuple[str, str, str, bool]] = []
    for ref in refs:
        if ref.exists:
            for row_id, key, title, content in scoped.user_memory_texts(ref):
                flagged = "personal" in seen.categories(ref, "memory", row_id)
                mine.append((key, title, content, flagged))
    return person(mine)


def plan(refs: list[StoreRef], seen: Seen, deadline: float | None = None) -> tuple[Person, list[StorePart]]:
    """Who the person is, and the dry run of "forget what is about me" over the shown stores
    (read-only), decided with the findings ``seen``.  Past ``deadline`` (``time.monotonic``, asked
    every ``store.plan.STEP`` rows) a store's rows are read no further."""
    up = (lambda: False) if deadline is None else (lambda: time.monotonic() > deadline)
    me = who(refs, seen)
    parts = []
    for ref in sorted(refs, key=lambda r: r.kind != "user"):  # your own file first
        if ref.exists:
            parts.append(
                _user_part(ref, seen, up) if ref.kind == "user" else _project_part(ref, seen, me, up)
            )
    return me, parts


def _text(value: Any) -> str:
    value = as_text(value)
    return value if isinstance(value, str) else ""


def _rows_in(ref: StoreRef) -> int:
    """The memories, suggestions and summaries ``scoped_texts`` would read, counted by SQLite."""
    counted = scoped.scoped_counts(ref)
    return sum(counted[k] for k in ("memories", "memories_kept", "reviews", "summaries"))


def _user_part(ref: StoreRef, seen: Seen, up: Callable[[], bool]) -> StorePart:
    rows = scoped.scoped_rows(ref)
    live = [mid for mid, _scope, is_live in rows["memories"] if is_live]
    dry = purge.plan(ref, purge.ALL_CATEGORIES, memory_ids=live, stop=up)
    # Each row's sentence is its first text (a memory's content, a suggestion's, a summary's),
    # read with the dry run itself.
    texts = {(r.kind, r.id): (r.kind.removesuffix("_deleted"), _text(r.texts[0])) for r in dry if r.texts}
    total = sum(len(rows[k]) for k in ("memories", "reviews", "summaries"))
    return StorePart(
        ref,
        dry,
        tuple(purge.ALL_CATEGORIES),
        dict.fromkeys(texts, "user_store"),
        dict.fromkeys(STAYS.values(), 0),
        texts,
        seen=seen,
        rows_read=total if dry.complete else len(texts),
        rows_total=total,
        complete=dry.complete,
    )


def _project_part(ref: StoreRef, seen: Seen, me: Person, up: Callable[[], bool]) -> StorePart:
    """The project store's rows about ``me``, and the rows that stay, each with why."""
    goes: dict[str, dict[str, tuple[str, str, str]]] = {"memory": {}, "review": {}, "summary": {}}
    kept: list[dict[str, str]] = []
    stays = dict.fromkeys(STAYS.values(), 0)
    kept_total = read = 0

    def begin() -> None:  # a read torn by an agent's write is read again: from nothing
        nonlocal kept_total, read
        for chosen in goes.values():
            chosen.clear()
        kept.clear()
        stays.update(dict.fromkeys(stays, 0))
        kept_total = read = 0

    def visit(kind: str, row_id: str, scope: str, live: bool, texts: tuple[str, ...]) -> None:
        nonlocal kept_total, read
        read += 1
        found = seen.categories(ref, kind, row_id)
        said = texts[1:] if kind == "memory" else texts  # a memory's key repeats its title
        why, detail = "", ""
        if kind != "summary" and scope == "user":
            why = "user_scope"
        elif "personal" in found and (contact := me.contact_in(said)):
            why, detail = "your_contact", contact
        elif kind != "memory" and (name := me.name_in(said)):
            why, detail = "your_name", name
        text = said[-2] if kind == "review" else said[-1] if kind == "memory" else said[0]
        if why == "your_name" and not me.name_in((text,)):
            text = next(t for t in said if me.name_in((t,)))  # the evidence that names them
        if why:
            goes[kind][row_id] = (why, detail, text)
            return
        stays[STAYS[kind if live else "memory_deleted"]] += 1
        if "personal" in found:
            why = "not_yours"
        elif "secret" in found:
            why = "project_secret"
        elif (name := me.name_in(said)) is not None:
            why, detail = "mentions_you", name
        if why:
            kept_total += 1
            if len(kept) < SHOWN:
                kept.append(
                    {
                        "kind": kind if live else "memory_deleted",
                        "id": row_id,
                        "text": seen.sentence(ref, kind, row_id, text),
                        "why": why,
                        "detail": detail,
                    }
                )

    whole = scoped.scoped_texts(ref, visit, begin=begin, stop=up)
    total = read if whole else max(read + 1, _rows_in(ref))  # a cut read always says "of more"
    dry = purge.plan(ref, (), list(goes["memory"]), list(goes["review"]), list(goes["summary"]))
    why: dict[tuple[str, str], str] = {}
    texts: dict[tuple[str, str], tuple[str, str]] = {}
    details: dict[tuple[str, str], str] = {}
    for r in dry:
        if r.kind != "event":
            why[r.kind, r.id], details[r.kind, r.id], text = goes[r.kind.removesuffix("_deleted")][r.id]
            texts[r.kind, r.id] = r.kind, text
    return StorePart(ref, dry, (), why, stays, texts, details, kept, kept_total, seen, read, total, whole)
