r"""Export: what the agent knows, as JSON, CSV or Markdown text.  Pure: records in, text out.

Safety of each format (memory text is hostile, see STYLE.md §9):

* JSON is ``json.dumps`` — every string is escaped by construction.
* CSV is UTF-8 **with a byte-order mark**, so Excel opens Unicode correctly and
  Python reads it back with ``encoding="utf-8-sig"``.  Spreadsheet formula
  injection: a cell whose text starts with ``= + - @`` (or their full-width and
  small forms ``＝ ＋ － ＠ ﹦ ﹢ ﹣ ﹫``, which spreadsheets read as the ASCII ones),
  TAB or CR is prefixed with one apostrophe, so a spreadsheet shows it as text
  instead of running it.
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

from ..records import Memory, ReviewItem, Summary

FORMATS = {"json": "application/json", "csv": "text/csv", "md": "text/markdown"}
INVISIBLE_NOTE = ("Still in the files but invisible to the agent: agentao never injects these "
                  "into a prompt or lists them as memories.")
SECTIONS = {"memory": "Live memory (the agent sees it)",
            "soft_deleted": "Soft-deleted memory (invisible to the agent, still in the file)",
            "review_item": "Review-queue item (invisible to the agent, still in the file)",
            "session_summary": "Session summary (not a memory, still in the file)"}
CSV_COLUMNS = ("section", "visible_to_agent", "store", "store_path", "scope", "type", "id", "key",
               "title", "content", "tags", "keywords", "source", "confidence", "sensitivity",
               "created_at", "updated_at", "deleted_at", "events", "status", "evidence",
               "occurrences", "source_session", "session_id", "tokens_before",
               "messages_summarized")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
# Characters that start Markdown syntax mid-line: emphasis, code, links, images, autolinks,
# raw HTML, entities, tables, strikethrough, headings.  (Line starts are always ours.)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|~&])")


# -- the document -----------------------------------------------------------------------

def _memory(m: Memory, path: str, events: dict) -> dict:
    return {"id": m.id, "store": m.store, "store_path": path, "scope": m.scope, "type": m.type,
            "key": m.key_normalized, "title": m.title, "content": m.content,
            "tags": list(m.tags), "keywords": list(m.keywords), "source": m.source,
            "confidence": m.confidence, "sensitivity": m.sensitivity,
            "created_at": m.created_at, "updated_at": m.updated_at, "deleted_at": m.deleted_at,
            "events": events.get(m.id, {"count": 0, "by_type": {}, "first": None, "last": None})}


def _review(r: ReviewItem, path: str) -> dict:
    return {"id": r.id, "store": r.store, "store_path": path, "scope": r.scope, "type": r.type,
            "key": r.key_normalized, "title": r.title, "content": r.content, "tags": list(r.tags),
            "confidence": r.confidence, "status": r.status, "evidence": r.evidence,
            "occurrences": r.occurrences, "source_session": r.source_session,
            "created_at": r.created_at, "updated_at": r.updated_at}


def _summary(s: Summary, path: str) -> dict:
    return {"id": s.id, "store": s.store, "store_path": path, "session_id": s.session_id,
            "content": s.summary_text, "tokens_before": s.tokens_before,
            "messages_summarized": s.messages_summarized, "created_at": s.created_at}


def build_document(contents, problems: dict, include_invisible: bool, generated_at: str) -> dict:
    """The export as plain data: stores, live memories grouped by scope then type, and the rest.

    ``contents`` are ``store.export.StoreContents`` (project first); ``problems``
    maps a store key to ``(ref, message)`` for stores that could not be read.
    """
    stores, live = [], []
    for c in contents:
        stores.append({"store": c.ref.key, "kind": c.ref.kind, "name": c.ref.name,
                       "path": str(c.ref.path), "live": len(c.live), "problem": None})
        live += [_memory(m, str(c.ref.path), c.events) for m in c.live]
    for key, (ref, message) in problems.items():
        stores.append({"store": key, "kind": ref.kind, "name": ref.name, "path": str(ref.path),
                       "live": 0, "problem": message})
    groups: dict = {}
    for m in sorted(live, key=lambda m: (m["scope"], m["type"])):  # stable: keeps file order
        groups.setdefault((m["scope"], m["type"]), []).append(m)
    doc = {"export": "agentao memory dashboard", "version": 1, "generated_at": generated_at,
           "include_invisible": include_invisible, "stores": stores, "live_count": len(live),
           "groups": [{"scope": s, "type": t, "memories": ms} for (s, t), ms in groups.items()]}
    if include_invisible:
        doc["invisible"] = {
            "note": INVISIBLE_NOTE,
            "soft_deleted": [_memory(m, str(c.ref.path), c.events)
                             for c in contents for m in c.soft_deleted],
            "review_queue": [_review(r, str(c.ref.path)) for c in contents for r in c.reviews],
            "session_summaries": [_summary(s, str(c.ref.path))
                                  for c in contents for s in c.summaries]}
    return doc


def records(doc: dict) -> list[tuple[str, dict]]:
    """Every record of the document as (section, record), live memories first."""
    out = [("memory", m) for g in doc["groups"] for m in g["memories"]]
    invisible = doc.get("invisible") or {}
    out += [("soft_deleted", m) for m in invisible.get("soft_deleted", [])]
    out += [("review_item", r) for r in invisible.get("review_queue", [])]
    out += [("session_summary", s) for s in invisible.get("session_summaries", [])]
    return out


def events_text(events: dict | None) -> str:
    """An event history summary in one line: '3 events (create 1, update 2), first …, last …'."""
    if not events or not events.get("count"):
        return "no events"
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(events["by_type"].items()))
    return f"{events['count']} events ({kinds}), first {events['first']}, last {events['last']}"


# -- JSON -------------------------------------------------------------------------------

def to_json(doc: dict) -> str:
    """The document as indented JSON (non-ASCII kept as is; NUL and friends escaped)."""
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


# -- CSV --------------------------------------------------------------------------------

def csv_cell(value) -> str:
    """One CSV cell: lists as JSON, None as empty, formula-looking text defused with a '."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        value = json.dumps(list(value), ensure_ascii=False)
    text = str(value)
    # NFKC makes each full-width or small form its ASCII self (and "＇" an apostrophe,
    # which keeps "drop one leading '" the exact reverse).
    return "'" + text if unicodedata.normalize("NFKC", text[:1]).startswith(_FORMULA_START) else text


def csv_row(section: str, record: dict) -> list[str]:
    """The CSV cells of one record, in CSV_COLUMNS order."""
    values = dict(record, section=section, visible_to_agent="yes" if section == "memory" else "no")
    if "events" in record:
        values["events"] = events_text(record["events"])
    return [csv_cell(values.get(column)) for column in CSV_COLUMNS]


def to_csv(doc: dict) -> str:
    """One table of every record (a ``section`` column says which kind), BOM first;
    a store that could not be read comes first, as an ``unreadable_store`` row."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for st in doc["stores"]:
        if st["problem"]:
            # A store that could not be read is named in the table, not silently left out.
            writer.writerow(csv_row("unreadable_store", {"store": st["store"], "store_path": st["path"],
                                                         "content": st["problem"]}))
    for section, record in records(doc):
        writer.writerow(csv_row(section, record))
    return "\ufeff" + out.getvalue()


# -- Markdown ---------------------------------------------------------------------------

def md_inline(value) -> str:
    """One-line text that Markdown shows literally: punctuation escaped, breaks folded."""
    text = " ".join(str("" if value is None else value).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_block(text: str) -> str:
    """Text in a fenced block no line inside can close (fence longer than any backtick run)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _md_fields(pairs) -> list[str]:
    return [f"- **{label}:** {md_inline(value)}" for label, value in pairs]


def _md_memory(m: dict) -> list[str]:
    return [f"#### {md_inline(m['title'])}", "", *_md_fields([
        ("ID", m["id"]), ("Key", m["key"]), ("Scope", m["scope"]), ("Type", m["type"]),
        ("Store", f"{m['store']} ({m['store_path']})"), ("Source", m["source"]),
        ("Confidence", m["confidence"]), ("Created", m["created_at"]),
        ("Updated", m["updated_at"]), *([("Deleted", m["deleted_at"])] if m["deleted_at"] else []),
        ("Tags", ", ".join(m["tags"]) or "none"), ("Keywords", ", ".join(m["keywords"]) or "none"),
        ("History", events_text(m["events"]))]), "", md_block(m["content"]), ""]


def _md_review(r: dict) -> list[str]:
    return [f"#### {md_inline(r['title'])}", "", *_md_fields([
        ("ID", r["id"]), ("Status", r["status"]), ("Key", r["key"]), ("Scope", r["scope"]),
        ("Type", r["type"]), ("Store", f"{r['store']} ({r['store_path']})"),
        ("Occurrences", r["occurrences"]), ("Source session", r["source_session"]),
        ("Created", r["created_at"]), ("Updated", r["updated_at"])]), "",
        "Content:", "", md_block(r["content"]), "", "Evidence:", "", md_block(r["evidence"]), ""]


def _md_summary(s: dict) -> list[str]:
    return [f"#### Session {md_inline(s['session_id'])}", "", *_md_fields([
        ("ID", s["id"]), ("Store", f"{s['store']} ({s['store_path']})"),
        ("Created", s["created_at"]), ("Tokens before", s["tokens_before"]),
        ("Messages summarized", s["messages_summarized"])]), "", md_block(s["content"]), ""]


def to_markdown(doc: dict) -> str:
    """A readable report: live memories by scope and type, then the invisible rest, labelled."""
    lines = ["# What the agent knows", "", f"Exported {md_inline(doc['generated_at'])} "
             f"by the agentao memory dashboard: {doc['live_count']} live memories.", ""]
    for st in doc["stores"]:
        state = md_inline(st["problem"]) if st["problem"] else f"{st['live']} live memories"
        lines.append(f"- {md_inline(st['kind'])} store {md_inline(st['path'])}: {state}")
    lines.append("")
    scope = None
    for group in doc["groups"]:
        if group["scope"] != scope:
            scope = group["scope"]
            lines += [f"## Scope: {md_inline(scope)}", ""]
        lines += [f"### Type: {md_inline(group['type'])} ({len(group['memories'])})", ""]
        for m in group["memories"]:
            lines += _md_memory(m)
    invisible = doc.get("invisible")
    if invisible is not None:
        lines += ["## Invisible to the agent, still in the files", "", md_inline(invisible["note"]),
                  "", f"### Soft-deleted memories ({len(invisible['soft_deleted'])})", ""]
        for m in invisible["soft_deleted"]:
            lines += _md_memory(m)
        lines += [f"### Review-queue items with evidence ({len(invisible['review_queue'])})", ""]
        for r in invisible["review_queue"]:
            lines += _md_review(r)
        lines += [f"### Session summaries ({len(invisible['session_summaries'])})", ""]
        for s in invisible["session_summaries"]:
            lines += _md_summary(s)
    return "\n".join(lines).rstrip("\n") + "\n"


def render(doc: dict, fmt: str) -> str:
    """The document in one of FORMATS."""
    return {"json": to_json, "csv": to_csv, "md": to_markdown}[fmt](doc)
