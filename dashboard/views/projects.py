"""Several projects: the list, and the switcher that picks the one shown beside the user store."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, request
from flask_babel import gettext as _

from ..guard.access import back_with_choice
from ..store import inspect
from ..web import current_project, page, page_route, whole_number, workspace

bp = Blueprint("projects", __name__)


@page_route(bp, "/projects")
def index(fmt: str):
    ws = workspace()
    rows = []
    for i, (name, ref) in enumerate(zip(ws.project_names(), ws.project_refs())):
        st = inspect(ref, current_app.config["READ_ONLY"], deep=True)
        rows.append(
            {
                "index": i,
                "name": name,
                "dir": str(ws.project_dirs[i]),
                "db": str(ref.path),
                "current": i == current_project(),
                "live": st.live,
                "deleted": st.deleted,
                "pending_reviews": st.pending_reviews,
                "problem": None if st.problem is None else str(st.problem),
            }
        )
    shared = {
        "user_db": None if ws.user_db is None else str(ws.user_db),
        "note": "User-scope memories live in the user store and reach every project.",
    }
    return page(fmt, "projects/index.html", projects=rows, **shared)


@bp.post("/projects/select")
def select():
    """Remember which project to show (a view choice, not a change to any store)."""
    raw = request.form.get("project", "")
    index = whole_number(raw)
    if index is None or index >= len(workspace().project_dirs):
        abort(400, _("'project' must be the number of a project from the list."))
    return back_with_choice("project", str(index))
