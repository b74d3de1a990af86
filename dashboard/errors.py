"""Error pages: a person gets a sentence, a script gets JSON, nobody gets a traceback."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, make_response, render_template, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext
from werkzeug.exceptions import HTTPException

from .store import StoreProblem
from .web import wants_fragment, wants_json

log = logging.getLogger(__name__)


# The page titles of the statuses the dashboard answers with, in werkzeug's English words
# (``exc.name`` is English only). The JSON twin keeps werkzeug's name in ``error``: a stable
# word scripts may match on.
TITLES = {
    400: lazy_gettext("Bad Request"),
    403: lazy_gettext("Forbidden"),
    404: lazy_gettext("Not Found"),
    405: lazy_gettext("Method Not Allowed"),
    409: lazy_gettext("Conflict"),
    410: lazy_gettext("Gone"),
    413: lazy_gettext("Request Entity Too Large"),
    414: lazy_gettext("Request URI Too Large"),
    415: lazy_gettext("Unsupported Media Type"),
    422: lazy_gettext("Unprocessable Entity"),
    429: lazy_gettext("Too Many Requests"),
    500: lazy_gettext("Internal Server Error"),
    503: lazy_gettext("Service Unavailable"),
    507: lazy_gettext("Insufficient Storage"),
}

# werkzeug's default sentence for a bare ``abort(status)`` (same English, translatable).
DESCRIPTIONS = {
    400: lazy_gettext("The browser (or proxy) sent a request that this server could not understand."),
    403: lazy_gettext(
        "You don't have the permission to access the requested resource. It is either "
        "read-protected or not readable by the server."
    ),
    404: lazy_gettext(
        "The requested URL was not found on the server. If you entered the URL manually "
        "please check your spelling and try again."
    ),
    405: lazy_gettext("The method is not allowed for the requested URL."),
}


# Regions that hold the answer to a question that only reads (the preview's): a failed
# request's sentence takes the answer's place there, so an old answer never stands for it.
ANSWER_REGIONS = frozenset({"preview-result"})


def _respond(status: int, title: str, message: str, code: str | None = None):
    """Every refusal answered in one place: JSON for scripts, for htmx the sentence in the
    pinned #status region (the form stays as it was, to be corrected) and, for a question's
    answer region, in the answer's place; else the page."""
    if wants_json():
        return jsonify({"error": code or title, "message": message, "status": status}), status
    region = request.headers.get("HX-Target")
    if wants_fragment() and region in ANSWER_REGIONS:
        return render_template(
            "partials/error_answer.html", region=region, status=status, message=message
        ), status
    if wants_fragment():
        response = make_response(
            render_template("partials/error.html", status=status, message=message), status
        )
        response.headers["HX-Reswap"] = "none"  # only its out-of-band #status is swapped
        return response
    return render_template("error.html", status=status, title=title, message=message), status


def _http_words(exc: HTTPException) -> tuple[str, str]:
    """The translated title and sentence of an HTTP error (our own sentence passed to abort,
    or ours in place of werkzeug's English default)."""
    status = exc.code or 500
    title = str(TITLES.get(status, exc.name))
    default = type(exc).description
    if exc.description and exc.description != default:
        return title, exc.description
    return title, str(DESCRIPTIONS.get(status, exc.description or title))


def init_app(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        title, message = _http_words(exc)
        response = make_response(_respond(exc.code or 500, title, message, code=exc.name))
        # The exception's own headers say what the status needs: Allow on a 405
        # (RFC 9110 §15.5.6), WWW-Authenticate on a 401, Retry-After on a 503...
        for name, value in exc.get_headers():
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value
        return response

    @app.errorhandler(StoreProblem)
    def _store(exc: StoreProblem):
        status = 409 if exc.kind == "locked" else 503
        return _respond(status, _("Store unavailable"), str(exc))

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unexpected error on %s", request.path)
        return _respond(
            500,
            _("Internal error"),
            _("Something went wrong; nothing was changed. The details are in the server log."),
        )
