"""The header's language switcher: a view choice remembered per port, never a store write."""

from __future__ import annotations

from flask import Blueprint, abort, request
from flask_babel import gettext as _

from ..guard.access import back_with_choice
from ..words import LOCALES

bp = Blueprint("language", __name__)


@bp.post("/language")
def choose():
    """Remember the language chosen in the header, then go back to the page it was on."""
    lang = request.form.get("lang", "")
    if lang not in LOCALES:
        abort(400, _("'%(name)s' must be one of: %(values)s.", name="lang", values=", ".join(LOCALES)))
    return back_with_choice("lang", lang)
