"""The header's language switcher: a view choice remembered per port, never a store write."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, redirect, request, url_for
from flask_babel import gettext as _

from ..guard.access import sign_preference
from ..guard.localurl import local_url
from ..words import LOCALES, language_cookie

bp = Blueprint("language", __name__)


@bp.post("/language")
def choose():
    """Remember the language chosen in the header, then go back to the page it was on."""
    lang = request.form.get("lang", "")
    if lang not in LOCALES:
        abort(400, _("'%(name)s' must be one of: %(values)s.", name="lang", values=", ".join(LOCALES)))
    # Never copied through: rebuilt by url_for from the route it names (see localurl).
    back = local_url(request.form.get("next")) or url_for("overview.index")
    response = redirect(back, code=303)
    if request.headers.get("HX-Request") == "true":
        response = current_app.make_response(("", 204))
        response.headers["HX-Redirect"] = back
    response.set_cookie(
        language_cookie(),
        sign_preference(lang),
        httponly=True,
        samesite="Strict",
        max_age=60 * 60 * 24 * 365,
        path=current_app.config["URL_PREFIX"] or "/",
    )
    return response
