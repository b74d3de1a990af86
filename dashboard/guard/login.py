"""``/login``: the one-time code from the start-up URL, or the token typed into a form.

Both end the same way: the cookie, and a 303 to a clean address under the
prefix, so no credential stays in the address bar or history.  The guard lets
this route through without a cookie; the same-origin rule for POST and the
body limits still apply to it.
"""

from __future__ import annotations

from flask import Blueprint, current_app, redirect, render_template, request
from flask_babel import gettext as _

from . import security

bp = Blueprint("login", __name__)


def _next() -> str:
    """Where to go after logging in: a path inside the app, or ``/``.

    Only a plain local path is kept — one leading ``/``, no backslash, no
    control character — so a crafted link cannot send a fresh login elsewhere.
    """
    wanted = request.values.get("next", "")
    local = (
        wanted.startswith("/")
        and not wanted.startswith("//")
        and len(wanted) < 2048
        and not any(c == "\\" or ord(c) < 0x20 or ord(c) == 0x7F for c in wanted)
    )
    return wanted if local else "/"


def _logged_in():
    response = redirect(security.inside(_next()), 303)
    security.set_auth_cookie(response)
    return response


def _page(message: str | None, status: int):
    page = render_template("security/denied.html", message=message, next=_next(), status=status)
    return current_app.make_response((page, status))


@bp.route("/login", methods=["GET", "POST"])
def login():
    if not current_app.config.get("AUTH_TOKEN"):
        return redirect(security.inside(_next()), 303)
    if request.method == "POST":
        refused = security.check_token(request.form.get("token"))
        return _logged_in() if refused is None else refused
    code = request.args.get("code")
    # Only GET spends a code: a HEAD (link previews, some prefetchers) must not.
    if code is not None and request.method == "GET" and security.access().use_code(code):
        return _logged_in()
    if security.cookie_age() is not None:
        return redirect(security.inside(_next()), 303)  # already in (a used link reopened)
    if code is not None:
        return _page(
            _(
                "This login link has already been used, or is from an earlier start of "
                "the dashboard: each link works once. Get a new one as said below."
            ),
            403,
        )
    return _page(None, 200)
