"""Several projects: the list, and the switcher that picks the one shown beside the user store."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, redirect, request, url_for
from flask_babel import gettext as _

from ..guard.access import sign_preference
from ..guard.localurl import local_url
from ..store import inspect
from ..web import current_project, page, page_route, project_cookie, wants_fragment, whole_number, workspace

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
    # Never copied through: rebuilt by url_for from the route it names (see localurl).
    back = local_url(request.form.get("next")) or url_for("overview.index")
    response = redirect(back, code=303)
    if wants_fragment() or request.headers.get("HX-Request") == "true":
        response = current_app.make_response(("", 204))
        response.headers["HX-Redirect"] = back
    response.set_cookie(
        project_cookie(),
        sign_preference(str(index)),
        httponly=True,
        samesite="Strict",
        max_age=60 * 60 * 24 * 365,
        path=current_app.config["URL_PREFIX"] or "/",
    )
    return response
