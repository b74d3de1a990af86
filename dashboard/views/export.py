"""Export: a page of choices, and downloads of everything the agent knows (JSON, CSV, Markdown).

Downloads are GET requests (they change nothing) answered as attachments, so a
browser saves them instead of showing them, and ``nosniff`` (security.py) stops
it guessing HTML from memory text.
"""

from __future__ import annotations

import re
from datetime import datetime

from flask import Blueprint, abort, current_app, request, url_for
from flask_babel import lazy_gettext as _l

from .. import clock
from ..actions import export
from ..store import StoreProblem
from ..store.export import outline
from ..web import page, page_route, statuses

bp = Blueprint("export", __name__)
# format -> (the link's words, what the file is for)
FORMAT_LABELS = {
    "json": (_l("JSON"), _l("for programs and scripts")),
    "csv": (_l("CSV"), _l("opens in a spreadsheet such as Excel (UTF-8)")),
    "md": (_l("Markdown"), _l("to read, or keep beside your notes")),
}


def _include_invisible() -> bool:
    value = request.args.get("include_invisible", "0")
    if value not in ("0", "1", ""):
        abort(400, "include_invisible must be 1 (include what the agent cannot see) or 0.")
    return value == "1"


def _downloads(include_invisible: bool) -> dict:
    extra = {"include_invisible": 1} if include_invisible else {}
    return {fmt: url_for("export.download", fmt=fmt, **extra) for fmt in export.FORMATS}


@page_route(bp, "/export")
def index(fmt: str):
    include_invisible = _include_invisible()
    return page(
        fmt,
        "export/index.html",
        to_json=_json,
        sts=statuses(deep=True),
        downloads=_downloads(include_invisible),
        labels=FORMAT_LABELS,
        include_invisible=include_invisible,
    )


def _json(ctx) -> dict:
    return {
        "include_invisible": ctx["include_invisible"],
        "downloads": ctx["downloads"],
        "stores": [
            {
                "store": st.ref.key,
                "kind": st.ref.kind,
                "path": str(st.ref.path),
                "readable": st.readable,
                "live": st.live,
                "deleted": st.deleted,
                "reviews": sum(st.reviews_by_status.values()),
                "summaries": st.summaries,
            }
            for st in ctx["sts"]
        ],
    }


def _filename(fmt: str, include_invisible: bool, now: datetime) -> str:
    projects = [st.ref.name for st in statuses() if st.ref.kind == "project"]
    name = projects[0] if len(projects) == 1 else f"{len(projects)}-projects"
    # Only characters that are safe in a header and on every file system.
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or "project"
    suffix = "-with-invisible" if include_invisible else ""
    return f"agentao-memory-{name}-{now:%Y%m%d-%H%M%S}{suffix}.{fmt}"


def download(fmt: str):
    """The export file, streamed; stores that cannot be read are named in it, not silently
    dropped, and what went wrong while it was sent is named at its end (actions.export)."""
    include_invisible = _include_invisible()
    outlines, problems = [], {}
    for st in statuses():
        if not st.readable:
            if st.problem.kind != "missing":
                problems[st.ref.key] = (st.ref, str(st.problem))
            continue
        try:
            outlines.append(outline(st.ref, include_invisible))
        except StoreProblem as problem:
            problems[st.ref.key] = (st.ref, str(problem))
    now = clock.local()
    doc = export.build_document(outlines, problems, include_invisible, now.isoformat(timespec="seconds"))
    # A generator: each piece of rows is read, rendered and sent before the next is read,
    # so memory stays bounded and no step holds the other requests' GIL for long.
    response = current_app.response_class(
        export.encoded(export.render(doc, fmt)), content_type=f"{export.FORMATS[fmt]}; charset=utf-8"
    )
    response.headers["Content-Disposition"] = (
        f'attachment; filename="{_filename(fmt, include_invisible, now)}"'
    )
    response.headers["Cache-Control"] = "no-store"  # memory text should not linger in caches
    return response


for _fmt in export.FORMATS:
    bp.add_url_rule(f"/export/memories.{_fmt}", view_func=download, defaults={"fmt": _fmt}, methods=["GET"])
