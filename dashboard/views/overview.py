"""Overview: the dashboard's `/memory status`, per store."""

from __future__ import annotations

from flask import Blueprint, redirect, url_for

from ..engine import stable_block_size
from ..preview_source import snapshot
from ..pictures import overview_pictures
from ..store.timeline import timeline as read_timeline
from ..web import page, page_route, statuses

bp = Blueprint("overview", __name__)


@page_route(bp, "/overview")
def index(fmt: str):
    sts = statuses(deep=True)   # with the memories tally, counted by SQLite on the file
    timeline, problems = read_timeline([st.ref for st in sts if st.readable])
    for st in sts:
        if st.ref.key in problems:
            st.problem = problems[st.ref.key]   # the header reads, the rows do not
    # What `/memory status` calls "Stable block size", for a brand-new session.
    snap = snapshot(sts)
    stable_chars = stable_block_size(snap.project, snap.user, snap.summaries,
                                     cache=snap.cache, version=snap.version)
    return page(fmt, "overview/index.html", "overview/_store_cards.html", to_json=_json,
                statuses=sts, timeline=timeline, stable_block_chars=stable_chars,
                pictures=None if fmt == "json" else overview_pictures(sts, timeline))


def _json(ctx) -> dict:
    return {"stores": ctx["statuses"], "timeline": ctx["timeline"],
            "stable_block_chars": ctx["stable_block_chars"]}


@bp.record_once
def _root(state):
    # "/" is the overview; registered here so the owner of the page owns its URL.
    state.app.add_url_rule("/", "root", lambda: redirect(url_for("overview.index")))
