"""Overview: the dashboard's `/memory status`, per store."""

from __future__ import annotations

from flask import Blueprint, current_app, redirect, url_for

from ..engine import stable_block_size
from ..preview_source import source_for
from ..pictures import overview_pictures
from ..store.timeline import overview_tallies
from ..web import mirror, page, page_route, statuses

bp = Blueprint("overview", __name__)


@page_route(bp, "/overview")
def index(fmt: str):
    sts = statuses(deep=True, memory_counts=False)
    # The memories tally and timeline come from the in-memory copy, which keeps
    # them row by row: counting 100,000 rows on the file per view is too slow
    # while an agent keeps writing.
    kinds, timeline, problems = overview_tallies(mirror(), [st.ref for st in sts if st.readable])
    for st in sts:
        if st.ref.key in kinds:
            st.take_counts(kinds[st.ref.key])
        elif st.ref.key in problems:
            st.problem = problems[st.ref.key]   # the header reads, the rows do not
    # What `/memory status` calls "Stable block size", for a brand-new session.
    snap = source_for(current_app.extensions).snapshot(sts)
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
