r"""Export: what the agent knows, as JSON, CSV or Markdown text.  Pure: records in, text out.

Safety of each format (memory text is hostile, see STYLE.md §9):

* JSON is ``json.dumps`` — every string is escaped by construction.
* CSV is UTF-8 **with a byte-order mark**, so Excel opens Unicode correctly and
  Python reads it back with ``encoding="utf-8-sig"``.  Spreadsheet formula
  injection: a cell whose text starts with ``= + - @`` (or their full-width and
  small forms ``＝ ＋ － ＠ ﹦ ﹢ ﹣ ﹫``, which spreadsheets read as the ASCII ones),
  TAB or CR is prefixed with one apostrophe, so a spreadsheet shows it as text
  instead of running it; so is one that starts with them after characters that show
  nothing (NUL, a zero-width space, a byte-order mark, a bidi mark...).
  A cell that already starts with an apostrophe gets one too, which makes the
  rule reversible: to recover the stored text, drop one leading ``'``.
* Markdown: memory text (content, evidence, summaries) goes in a fenced block
  whose backtick fence is longer than any backtick run inside it, so nothing
  can close it; one-line fields (titles, keys, tags, ...) have the characters
  that start inline syntax (`` \ ` * _ { } [ ] ( ) < > # ! | ~ & ``) backslash-escaped,
  which CommonMark defines as literal, and line breaks folded to spaces; every
  line starts with text of ours, so no heading, link, list or raw HTML can form.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..guard.invisible import hidden_prefix
from .export_document import INVISIBLE_NOTE, Document, Pieces, Words, build_document, records  # noqa: F401

FORMATS = {"json": "application/json", "csv": "text/csv", "md": "text/markdown"}
CSV_COLUMNS = tuple(
    "section visible_to_agent store store_path scope type id key title content tags keywords source confidence"
    " sensitivity created_at updated_at deleted_at events status evidence occurrences source_session session_id"
    " tokens_before messages_summarized".split()
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
# Characters that start Markdown syntax mid-line: emphasis, code, links, images, autolinks,
# raw HTML, entities, tables, strikethrough, headings.  (Line starts are always ours.)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|~&])")


# -- pieces ---------------------------------------------------------------------------

CHUNK = 1 << 16  # characters per chunk handed to the server: one socket write, not one per row


def _chunks(parts: Iterator[str]) -> Iterator[str]:
    """Small strings joined into chunks of about CHUNK characters."""
    buffer, size = [], 0
    for part in parts:
        buffer.append(part)
        size += len(part)
        if size >= CHUNK:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def events_text(events: dict[str, Any] | None, words: Words | None = None) -> str:
    """An event history summary in one line: '3 events (create 1, update 2), first …, last …'."""
    words = words or Words()
    _, ngettext = words.gettext, words.ngettext
    if not events or not events.get("count"):
        return _("no events")
    kinds = ", ".join("%s %s" % (k, n) for k, n in sorted(events["by_type"].items()))
    return ngettext(
        "%(num)d event (%(kinds)s), first %(first)s, last %(last)s",
        "%(num)d events (%(kinds)s), first %(first)s, last %(last)s",
        events["count"],
        kinds=kinds,
        first=events["first"],
        last=events["last"],
    )


# -- JSON -------------------------------------------------------------------------------


def _lazy(value: Any) -> bool:
    if isinstance(value, Pieces):
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(isinstance(v, (dict, list, Pieces)) and _lazy(v) for v in items)


def _dumps(value: Any, pad: str) -> str:
    # JSON escapes every line break inside strings, so this only indents.
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + pad)


def _json(value: Any, depth: int) -> Iterator[str]:
    """``json.dumps(value, indent=2)`` at ``depth``, in parts, reading ``Pieces`` as it goes."""
    pad = "  " * depth
    if isinstance(value, Pieces):  # its records hold no Pieces: each is dumped whole
        n = -1
        for n, record in enumerate(value):
            yield ("[\n" if n == 0 else ",\n") + pad + "  " + _dumps(record, pad + "  ")
        yield "[]" if n < 0 else "\n" + pad + "]"
    elif isinstance(value, dict) and _lazy(value):
        for n, (key, item) in enumerate(value.items()):
            key_text = json.dumps(key, ensure_ascii=False)
            yield ("{\n" if n == 0 else ",\n") + pad + "  " + key_text + ": "
            yield from _json(item, depth + 1)
        yield "\n" + pad + "}"
    elif isinstance(value, list) and _lazy(value):
        for n, item in enumerate(value):
            yield ("[\n" if n == 0 else ",\n") + pad + "  "
            yield from _json(item, depth + 1)
        yield "\n" + pad + "]"  # not empty: it holds Pieces
    else:
        yield _dumps(value, pad)


def to_json(doc: Document) -> Iterator[str]:
    """The document as indented JSON (non-ASCII kept as is; NUL and friends escaped); what went
    wrong while it was written comes last, as ``incomplete``."""
    for n, (key, item) in enumerate(doc.data.items()):
        yield ("{\n" if n == 0 else ",\n") + "  " + json.dumps(key, ensure_ascii=False) + ": "
        yield from _json(item, 1)
    problems = doc.finish()
    if problems:
        yield ',\n  "incomplete": '
        yield from _json(problems, 1)
    yield "\n}\n"


# -- CSV --------------------------------------------------------------------------------


def csv_cell(value: Any) -> str:
    """One CSV cell: lists as JSON, None as empty, formula-looking text defused with a '."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        value = json.dumps(list(value), ensure_ascii=False)
    text = str(value)
    # NFKC makes each full-width or small form its ASCII self (and "＇" an apostrophe,
    # which keeps "drop one leading '" the exact reverse).
    skip = hidden_prefix(text) if text and not text[0].isalnum() else 0
    first = unicodedata.normalize("NFKC", text[skip : skip + 1])
    return "'" + text if first.startswith(_FORMULA_START) else text


def csv_row(section: str, record: dict[str, Any], words: Words | None = None) -> list[str]:
    """The CSV cells of one record, in CSV_COLUMNS order."""
    values = dict(record, section=section, visible_to_agent="yes" if section == "memory" else "no")
    if "events" in record:
        values["events"] = events_text(record["events"], words)
    return [csv_cell(values.get(column)) for column in CSV_COLUMNS]


def to_csv(doc: Document) -> Iterator[str]:
    """One table of every record (a ``section`` column says which kind), BOM first;
    a store that could not be read comes first, as an ``unreadable_store`` row, and what
    went wrong while the table was written comes last, as ``incomplete`` rows."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")

    def row(cells: Iterable[Any]) -> str:
        out.seek(0)
        out.truncate()
        writer.writerow(cells)
        return out.getvalue()

    yield "\ufeff" + row(CSV_COLUMNS)
    for st in doc.data["stores"]:
        if st["problem"]:
            # A store that could not be read is named in the table, not silently left out.
            yield row(
                csv_row(
                    "unreadable_store",
                    {"store": st["store"], "store_path": st["path"], "content": st["problem"]},
                )
            )
    for section, record in records(doc.data):
        yield row(csv_row(section, record, doc.words))
    for problem in doc.finish():
        yield row(csv_row("incomplete", {"content": problem}))


# -- Markdown ---------------------------------------------------------------------------


def md_inline(value: Any) -> str:
    """One-line text that Markdown shows literally: punctuation escaped, breaks folded."""
    text = " ".join(str("" if value is None else value).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_block(text: str) -> str:
    """Text in a fenced block no line inside can close (fence longer than any backtick run)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _md_entry(title: str, pairs: Iterable[tuple[str, Any]], *blocks: str) -> list[str]:
    """A record: its heading, its fields as a list, then each block followed by a blank line."""
    fields = ["- **%s:** %s" % (label, md_inline(value)) for label, value in pairs]
    return ["#### " + title, "", *fields, "", *(line for block in blocks for line in (block, ""))]


def _md_store(row: dict[str, Any]) -> str:
    return "%s (%s)" % (row["store"], row["store_path"])


Pairs = list[tuple[str, Any]]


def _md_fact(
    row: dict[str, Any], _: Callable[..., str], first: Pairs, middle: Pairs, last: Pairs, *blocks: str
) -> list[str]:
    """A memory or a suggestion: its id, ``first``, where the agent files it, ``middle``, its dates,
    ``last``; then its text blocks."""
    where = [(_("Key"), row["key"]), (_("Scope"), row["scope"]), (_("Type"), row["type"])]
    dates = [(_("Created"), row["created_at"]), (_("Updated"), row["updated_at"])]
    pairs = [(_("ID"), row["id"]), *first, *where, (_("Store"), _md_store(row)), *middle, *dates, *last]
    return _md_entry(md_inline(row["title"]), pairs, *blocks)


def _md_memory(m: dict[str, Any], words: Words) -> list[str]:
    _ = words.gettext
    deleted = [(_("Deleted"), m["deleted_at"])] if m["deleted_at"] else []
    tags, keywords = (", ".join(m[k]) or _("none") for k in ("tags", "keywords"))
    history = events_text(m["events"], words)
    return _md_fact(
        m,
        _,
        [],
        [(_("Source"), m["source"]), (_("Confidence"), m["confidence"])],
        [*deleted, (_("Tags"), tags), (_("Keywords"), keywords), (_("History"), history)],
        md_block(m["content"]),
    )


def _md_review(r: dict[str, Any], words: Words) -> list[str]:
    _ = words.gettext
    middle = [(_("Occurrences"), r["occurrences"]), (_("Source session"), r["source_session"])]
    text = (_("Content:"), md_block(r["content"]), _("Evidence:"), md_block(r["evidence"]))
    return _md_fact(r, _, [(_("Status"), r["status"])], middle, [], *text)


def _md_summary(s: dict[str, Any], words: Words) -> list[str]:
    _ = words.gettext
    return _md_entry(
        _("Session %(id)s", id=md_inline(s["session_id"])),
        [
            (_("ID"), s["id"]),
            (_("Store"), _md_store(s)),
            (_("Created"), s["created_at"]),
            (_("Tokens before"), s["tokens_before"]),
            (_("Messages summarized"), s["messages_summarized"]),
        ],
        md_block(s["content"]),
    )


def _md_lines(doc: Document) -> Iterator[str]:
    data, words = doc.data, doc.words
    _, ngettext = words.gettext, words.ngettext
    yield from [
        "# " + _("What the agent knows"),
        "",
        ngettext(
            "Exported %(stamp)s by the agentao memory dashboard: %(num)d live memory.",
            "Exported %(stamp)s by the agentao memory dashboard: %(num)d live memories.",
            data["live_count"],
            stamp=md_inline(data["generated_at"]),
        ),
        "",
    ]
    for st in data["stores"]:
        state = (
            md_inline(st["problem"])
            if st["problem"]
            else ngettext("%(num)d live memory", "%(num)d live memories", st["live"])
        )
        yield "- " + _(
            "%(kind)s store %(path)s: %(state)s",
            kind=md_inline(st["kind"]),
            path=md_inline(st["path"]),
            state=state,
        )
    yield ""
    scope = None
    for group in data["groups"]:
        if group["scope"] != scope:
            scope = group["scope"]
            yield from ["## " + _("Scope: %(scope)s", scope=md_inline(scope)), ""]
        yield from [
            "### " + _("Type: %(type)s (%(num)d)", type=md_inline(group["type"]), num=len(group["memories"])),
            "",
        ]
        for m in group["memories"]:
            yield from _md_memory(m, words)
    invisible = data.get("invisible")
    if invisible is not None:
        yield from [
            "## " + _("Invisible to the agent, still in the files"),
            "",
            md_inline(invisible["note"]),
            "",
            "### " + _("Soft-deleted memories (%(num)d)", num=len(invisible["soft_deleted"])),
            "",
        ]
        for m in invisible["soft_deleted"]:
            yield from _md_memory(m, words)
        yield from [
            "### " + _("Review-queue items with evidence (%(num)d)", num=len(invisible["review_queue"])),
            "",
        ]
        for r in invisible["review_queue"]:
            yield from _md_review(r, words)
        yield from ["### " + _("Session summaries (%(num)d)", num=len(invisible["session_summaries"])), ""]
        for s in invisible["session_summaries"]:
            yield from _md_summary(s, words)
    problems = doc.finish()
    if problems:
        yield from ["## " + _("This export is incomplete"), "", *("- " + md_inline(p) for p in problems)]


def to_markdown(doc: Document) -> Iterator[str]:
    """A readable report: live memories by scope and type, then the invisible rest, labelled;
    what went wrong while it was written comes last."""
    lines = _md_lines(doc)
    yield next(lines)
    blank = 0  # blank lines are held back: the report ends with exactly one line break
    for line in lines:
        if line:
            yield "\n" * (blank + 1) + line
            blank = 0
        else:
            blank += 1
    yield "\n"


def encoded(chunks: Iterator[str]) -> Iterator[bytes]:
    """The chunks as UTF-8; a lone surrogate (agentao stores one from a model's tool call) is
    written as its JSON escape, ``\\ud800``: in the JSON file that is the stored value exactly."""
    for chunk in chunks:
        yield chunk.encode("utf-8", "backslashreplace")


def render(doc: Document, fmt: str) -> Iterator[str]:
    """The document in one of FORMATS, as chunks of text to send one after the other."""
    return _chunks({"json": to_json, "csv": to_csv, "md": to_markdown}[fmt](doc))
