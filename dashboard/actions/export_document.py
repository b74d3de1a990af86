"""The export document: its shape from each store's outline, its records read in pieces.

The document is the plain data the JSON download shows, except that each list of records
is a ``Pieces``: its length is known from the outline, its records are read ``PIECE`` rows
at a time while the download is sent (see ``store.export``).  ``finish()``, asked after the
last record, names what went wrong meanwhile, so the file is complete or says it is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from flask_babel import get_locale, get_translations
from flask_babel import lazy_gettext as _l

from ..records import Memory, ReviewItem, Summary, plain
from ..store import StoreProblem
from ..store import export as source
from ..words import said

PIECE = 500  # rows per read: 500 x 4,000 characters is 2 MB and some tens of ms of work
INVISIBLE_NOTE = _l(
    "Still in the files but invisible to the agent: agentao never injects these "
    "into a prompt or lists them as memories."
)


class Words:
    """gettext and ngettext in the locale of the request that asked for the download (the file
    is mostly written after the view returned, where Flask-Babel would answer in English)."""

    def __init__(self) -> None:
        self.translations, self.locale = get_translations(), get_locale()

    def gettext(self, string: str, **variables) -> str:
        return said(self.translations.ugettext(string), variables, self.locale)

    def ngettext(self, singular: str, plural: str, num: int, **variables) -> str:
        variables.setdefault("num", num)
        return said(self.translations.ungettext(singular, plural, num), variables, self.locale)


def _record(row: Memory | ReviewItem | Summary, path: str, *names: str) -> dict:
    """The fields every exported row starts with, then ``names`` as the row holds them."""
    return {"id": row.id, "store": row.store, "store_path": path, **plain(row, *names)}


def memory_record(m: Memory, path: str, events: dict) -> dict:
    return {
        **_record(m, path, "scope", "type"),
        "key": m.key_normalized,
        **plain(m, "title", "content"),
        "tags": list(m.tags),
        "keywords": list(m.keywords),
        **plain(m, "source", "confidence", "sensitivity", "created_at", "updated_at", "deleted_at"),
        "events": events.get(m.id, {"count": 0, "by_type": {}, "first": None, "last": None}),
    }


def review_record(r: ReviewItem, path: str) -> dict:
    return {
        **_record(r, path, "scope", "type"),
        "key": r.key_normalized,
        **plain(r, "title", "content"),
        "tags": list(r.tags),
        **plain(r, "confidence", "status", "evidence", "occurrences", "source_session"),
        **plain(r, "created_at", "updated_at"),
    }


def summary_record(s: Summary, path: str) -> dict:
    return {
        **_record(s, path, "session_id"),
        "content": s.summary_text,
        **plain(s, "tokens_before", "messages_summarized", "created_at"),
    }


@dataclass
class Pieces:
    """Records read piece by piece: ``len()`` without reading, iteration reads.  ``order``: (outline
    index, rowid) per record; ``fetch(outline, rowids)``: rowid -> record.  A row gone since the
    outline is skipped; a piece that cannot be read is skipped and named in ``problems``."""

    outlines: list
    order: list[tuple[int, int]]
    fetch: Callable[[source.Outline, list[int]], dict]
    problems: list[str] = field(default_factory=list)
    words: Words | None = None

    def __len__(self) -> int:
        return len(self.order)

    def __iter__(self) -> Iterator[dict]:
        ngettext = (self.words or Words()).ngettext
        for start in range(0, len(self.order), PIECE):
            piece = self.order[start : start + PIECE]
            found: dict = {}
            for index in dict.fromkeys(i for i, _rowid in piece):
                outline = self.outlines[index]
                try:
                    got = self.fetch(outline, [rowid for i, rowid in piece if i == index])
                except StoreProblem as problem:
                    self.problems.append(
                        ngettext(
                            "%(num)d row of %(path)s could not be read and is missing from this "
                            "file: %(problem)s",
                            "%(num)d rows of %(path)s could not be read and are "
                            "missing from this file: %(problem)s",
                            len(piece),
                            path=outline.ref.path,
                            problem=problem,
                        )
                    )
                    continue
                found.update(((index, rowid), record) for rowid, record in got.items())
            yield from (found[k] for k in piece if k in found)


def _memories(outline, rowids) -> dict:
    found = source.memories(outline.ref, rowids)
    return {rowid: memory_record(m, str(outline.ref.path), outline.events) for rowid, m in found.items()}


def _reviews(outline, rowids) -> dict:
    found = source.reviews(outline.ref, rowids)
    return {rowid: review_record(r, str(outline.ref.path)) for rowid, r in found.items()}


def _summaries(outline, rowids) -> dict:
    found = source.summaries(outline.ref, rowids)
    return {rowid: summary_record(s, str(outline.ref.path)) for rowid, s in found.items()}


@dataclass
class Document:
    """``data`` is the JSON document (with ``Pieces`` for the record lists)."""

    data: dict
    finish: Callable[[], list[str]]
    words: Words = field(default_factory=Words)


def build_document(outlines: list, problems: dict, include_invisible: bool, generated_at: str) -> Document:
    """The export of these stores' outlines (project first); ``problems`` maps a store key to
    ``(ref, message)`` for stores that could not be read."""
    words = Words()
    _ = words.gettext
    shown = [(o.ref.key, o.ref, len(o.live), None) for o in outlines]
    shown += [(key, ref, 0, message) for key, (ref, message) in problems.items()]
    stores = [
        {
            "store": key,
            "kind": ref.kind,
            "name": ref.name,
            "path": str(ref.path),
            "live": n,
            "problem": problem,
        }
        for key, ref, n, problem in shown
    ]
    live = [
        (scope, type_, index, rowid) for index, o in enumerate(outlines) for scope, type_, rowid in o.live
    ]
    groups: dict = {}
    for scope, type_, index, rowid in sorted(live, key=lambda m: m[:2]):  # stable: file order
        groups.setdefault((scope, type_), []).append((index, rowid))
    lists = [Pieces(outlines, order, _memories, words=words) for order in groups.values()]
    data = {
        "export": "agentao memory dashboard",
        "version": 1,
        "generated_at": generated_at,
        "include_invisible": include_invisible,
        "stores": stores,
        "live_count": len(live),
        "groups": [{"scope": s, "type": t, "memories": ms} for (s, t), ms in zip(groups, lists)],
    }
    if include_invisible:
        every = lambda field_: [
            (i, r)
            for i, o in enumerate(outlines)  # noqa: E731
            for r in getattr(o, field_)
        ]
        lists += [
            Pieces(outlines, every("soft_deleted"), _memories, words=words),
            Pieces(outlines, every("reviews"), _reviews, words=words),
            Pieces(outlines, every("summaries"), _summaries, words=words),
        ]
        data["invisible"] = {
            "note": str(INVISIBLE_NOTE),
            "soft_deleted": lists[-3],
            "review_queue": lists[-2],
            "session_summaries": lists[-1],
        }

    def finish() -> list[str]:
        out = [p for pieces in lists for p in pieces.problems]
        for o in outlines:
            try:
                changed = source.version(o.ref) != o.version
            except StoreProblem as problem:
                changed = False
                out.append(
                    _("%(path)s could not be read again: %(problem)s", path=o.ref.path, problem=problem)
                )
            if changed:
                out.append(
                    _(
                        "%(path)s changed while it was exported (something saved, edited or "
                        "deleted meanwhile): rows written then may be missing or shown twice. "
                        "Export again for a consistent copy.",
                        path=o.ref.path,
                    )
                )
        return out

    return Document(data, finish, words)


def records(doc: dict) -> Iterator[tuple[str, dict]]:
    """Every record of the document as (section, record), live memories first."""
    for g in doc["groups"]:
        yield from (("memory", m) for m in g["memories"])
    invisible = doc.get("invisible") or {}
    yield from (("soft_deleted", m) for m in invisible.get("soft_deleted", []))
    yield from (("review_item", r) for r in invisible.get("review_queue", []))
    yield from (("session_summary", s) for s in invisible.get("session_summaries", []))
