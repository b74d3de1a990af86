"""Error pages: a person gets a sentence, a script gets JSON, nobody gets a traceback."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, make_response, render_template, request
from flask_babel import gettext as _
from werkzeug.exceptions import HTTPException

from .store import StoreProblem
from .web import wants_json

log = logging.getLogger(__name__)


def _respond(status: int, title: str, message: str):
    if wants_json():
        return jsonify({"error": title, "message": message, "status": status}), status
    return render_template("error.html", status=status, title=title, message=message), status


def init_app(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        response = make_response(_respond(exc.code or 500, exc.name, exc.description or exc.name))
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
        return _respond(500, _("Internal error"),
                        _("Something went wrong; nothing was changed. The details are in the server log."))
