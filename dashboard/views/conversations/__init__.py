"""Conversations: every conversation agentao knows of, what the agent kept from it, and
forgetting one (the forget screen's dry run, typed confirmation, job and verified report).

The trail is built by ``actions.provenance``; the erase is ``forget_about``'s path with
this conversation's rows: each store's dry run travels as its fingerprint, and the
purge is ``actions.purge.purge``, one file after the other, in one forget job.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ... import facts
from ...actions import provenance
from ...records import plain
from ...store import StoreProblem, get_memory, held
from ...web import page, page_route, raise_if_unreadable, statuses
from ..forget import about as forget_about
from ..forget import bp as forget_bp
from ..forget import jobs as forget_jobs

bp = Blueprint("conversations", __name__)
PHRASE = _l("forget this conversation")
MAX_ADDED = 200  # memories a person may add to one dry run


def _refs():
    return [st.ref for st in statuses() if st.ref.exists and st.readable]


def trail() -> provenance.Trail:
    """The trail of the files as they are, built again only when a store file or the saved
    conversations moved (a memory's page asks for it on every view)."""
    refs = _refs()
    files = facts.saved()[0]  # itself held: the same object while no saved file moved
    paths, key = [r.path for r in refs], tuple(r.key for r in refs)
    stamp = held.stamps(paths)  # before the work: a write during it makes the next view build again
    found = held.peek("trail", paths, key, stamp)
    if found is not None and found[0] is files:
        return found[1]
    try:
        built = provenance.load(refs, files.files if files is not None else ())
    except StoreProblem as exc:
        abort(503, str(exc))
    held.keep("trail", paths, (files, built), key, stamp)
    return built


def _resolve(trail_, key: str) -> provenance.Conversation:
    found = trail_.find(key)
    if found is None:
        abort(404, _("No conversation '%(id)s' is known to agentao here.", id=key[:80]))
    return found


def _summary(t, c: provenance.Conversation, tail: dict) -> dict:
    return {
        "session_id": c.session_id,
        "key": c.key,
        "first": c.first or None,
        "last": c.last or None,
        "summaries": len(c.summaries),
        "in_tail": sum(1 for s in c.summaries if s.id in tail),
        "suggestions": {
            s: sum(1 for i in c.suggestions if i.status == s) for s in ("pending", "approved", "rejected")
        },
        "approved_memories": len(c.approved),
        "saved_during": t.count_during(c),
        "saved_files": len(c.saved),
        "url": url_for("conversations.detail", key=c.key),
    }


@page_route(bp, "/conversations")
def index(fmt: str):
    raise_if_unreadable("project")  # conversations are read from the project's file
    t = trail()
    tail = t.tail_state()
    convs = [_summary(t, c, tail) for c in t.conversations()]
    return page(
        fmt,
        "conversations/index.html",
        conversations=convs,
        to_json=lambda ctx: {"conversations": ctx["conversations"]},
    )


def _added() -> set:
    pairs = set()
    for value in request.values.getlist("add")[:MAX_ADDED]:
        store, _sep, mid = value.partition(":")
        if store and mid and len(mid) <= 64:
            pairs.add((store, mid))
    return pairs


@page_route(bp, "/conversations/<key>")
def detail(key: str, fmt: str):
    raise_if_unreadable("project")  # conversations are read from the project's file
    t = trail()
    c = _resolve(t, key)
    tail = t.tail_state()
    added = _added()
    parts = provenance.plan(_refs(), t, c, added)
    data = _summary(t, c, tail)
    data.update(
        {
            "summaries": [
                {
                    "id": s.id,
                    "created_at": s.created_at,
                    "text": s.summary_text,
                    "messages_summarized": s.messages_summarized,
                    "in_tail": tail.get(s.id, "no"),
                }
                for s in c.summaries
            ],
            "suggestion_items": [
                {
                    **plain(i, "id", "title", "status", "evidence", "occurrences", "scope", "type"),
                    "suggested_at": i.created_at,
                    "updated_at": i.updated_at,
                    "said_in": t.said_in(i),
                }
                for i in c.suggestions
            ],
            "approved": [
                dict(
                    provenance.memory_link_dict(m, link),
                    suggestion=link.item.id,
                    url=url_for("memories.detail", store=m.store, memory_id=m.id),
                )
                for m, link in c.approved
            ],
            "during": [
                dict(
                    provenance.memory_link_dict(m, None),
                    at=stamp,
                    ambiguous=n > 1,
                    added=(m.store, m.id) in added,
                    url=url_for("memories.detail", store=m.store, memory_id=m.id),
                )
                for m, stamp, n in t.saved_during(c)
            ],
            "saved_by_agent": [
                dict(
                    provenance.memory_link_dict(m, None),
                    **tie.to_dict(),
                    url=url_for("memories.detail", store=m.store, memory_id=m.id),
                )
                for m, tie in c.agent_saved
            ],
            "saved_files": [f.to_dict() for f in c.saved],
            "forget": {
                "action": url_for("forget.erase_conversation", key=c.key),
                "phrase": str(PHRASE),
                "fits": all(p.fits for p in parts),
                "stores": [p.to_dict() for p in parts],
                "fields": _fields(parts),
            },
        }
    )
    copies = forget_about.saved_files(
        [t for p in parts for r in p.rows for t in r.texts], session_id=c.session_id
    )
    plans = copies[1] if copies else []
    data["forget"]["saved_files"] = [f.to_dict() for f in plans]
    return page(
        fmt,
        "conversations/detail.html",
        "conversations/_detail.html",
        conv=data,
        to_json=lambda ctx: ctx["conv"],
        **forget_about.plan_shown(parts, plans),
    )


def _fields(parts) -> dict:
    """The form fields the page posts (``confirm`` left for the person to type)."""
    fields = {f"fingerprint-{p.ref.key}": p.token if p.fits else None for p in parts if p.rows}
    return {"store": [p.ref.key for p in parts if p.rows], "confirm": "", **fields}


def erase_conversation(key: str):
    """Erase a conversation's confirmed dry run: the same checks and job as "forget about me"."""
    return forget_jobs.erase_confirmed(
        PHRASE,
        "forget a conversation",
        {"conversation": key},
        # After the stores' checks: a store that cannot change says so first.
        lambda row_texts: forget_about.saved_files(row_texts, session_id=_resolve(trail(), key).session_id),
    )


# The POST lives with the other forget actions (its URL, its job page and report).
forget_bp.post("/forget/conversations/<key>")(erase_conversation)


def provenance_of(memory) -> dict:
    """A memory's ``provenance`` (its page's section and twin), with its conversations' URLs."""
    t = trail()
    out = t.of_memory(memory)

    def url(key):
        return url_for("conversations.detail", key=key) if key else None

    for item in [out.get("suggestion")] + out.get("other_approvals", []):
        if item:
            item["conversation_url"] = url(item["conversation"])
    for save in out.get("saves", []):
        for a in save["active"]:
            a["url"] = url(a["key"])
    for tie in out.get("saved_by_agent", []):
        tie["url"] = url(tie["conversation"])
    return out


@bp.get("/conversations/of/<table>/<row_id>")
def of_row(table: str, row_id: str):
    """The conversation a suggestion or summary of the project file names (a redirect); for a
    memory, where its page says it came from."""
    raise_if_unreadable("project")
    if table == "memories":  # a memory names no conversation: its page says where it came from
        for st in statuses():
            if st.readable and st.ref.exists and get_memory(st.ref, row_id[:64])[0] is not None:
                return redirect(
                    url_for("memories.detail", store=st.ref.key, memory_id=row_id, _anchor="provenance"), 303
                )
        abort(404, _("No memory '%(id)s' is left here.", id=row_id[:80]))
    t = trail()
    rows = {
        "memory_review_queue": ((i.id, i.source_session) for i in t.items),
        "session_summaries": ((s.id, s.session_id) for s in t.summaries),
    }.get(table, ())
    sid = next((sid for rid, sid in rows if rid == row_id), None)
    if sid is None:
        abort(404, _("No suggestion or summary '%(id)s' is left here.", id=row_id[:80]))
    return redirect(url_for("conversations.detail", key=provenance.url_key(sid)), 303)
