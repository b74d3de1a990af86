"""Session summaries grouped by session, and which of them form the cross-session tail."""

from __future__ import annotations

from flask import Blueprint

from ..engine.stable import TAIL_KEPT, TAIL_READ
from ..store import list_summaries
from ..web import page, page_route, status_of

bp = Blueprint("summaries", __name__)


@page_route(bp, "/summaries")
def index(fmt: str):
    project = status_of("project")
    summaries = list_summaries(project.ref) if project.readable else []
    # A brand-new session's tail: the first 3 of the 10 newest rows (contract §8).
    tail_ids = [s.id for s in summaries[:TAIL_READ][:TAIL_KEPT]]
    sessions: dict[str, list] = {}
    for s in summaries:
        sessions.setdefault(s.session_id, []).append(s)
    groups = [
        {
            "session_id": sid,
            "summaries": items,
            "chars": sum(len(s.summary_text) for s in items),
            "latest": items[0].created_at,
        }
        for sid, items in sessions.items()
    ]
    return page(fmt, "summaries/index.html", to_json=_json, groups=groups, tail_ids=tail_ids, project=project)


def _json(ctx) -> dict:
    project = ctx["project"]
    return {
        "store": project.ref.key,
        "tail_ids": ctx["tail_ids"],
        "problem": None if project.readable else str(project.problem),
        "sessions": ctx["groups"],
    }
