"""Links back to "the page you were on", rebuilt with url_for so that they cannot leave the dashboard.

The project switcher posts the page it sat on and answers with a redirect
there (a 303, or ``HX-Redirect`` for htmx).  Copying that path through is an
open redirect: browsers read ``/\\evil.example/`` and ``/<TAB>/evil.example/``
as ``//evil.example/``, another site, and a 404 page reached at such a path
used to put exactly that path in the form.  So a path is only ever used to
*find* a GET route of this app; the URL sent back is built by ``url_for`` from
that route's endpoint and arguments and the query's values, all of which
url_for percent-encodes itself.  Anything else (another scheme or host, a
backslash, a control or blank character, a path no route serves) gives None
and the caller falls back to a page of its own.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from flask import current_app, request, url_for
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect

MAX_CHARS = 4000


def _refused(text: str) -> bool:
    # A backslash is a slash to browsers; C* covers tabs, newlines, NUL, bidi and
    # zero-width marks, Z* the blanks (browsers strip some of them from URLs).
    return any(ch == "\\" or unicodedata.category(ch)[0] in "CZ" for ch in text)


def _build(endpoint: str, args: Mapping[str, Any], query: MultiDict[str, str]) -> str | None:
    # url_for reads "_external", "_anchor", "_scheme"... as options, never as data.
    values: dict[str, Any] = {k: query.getlist(k) for k in query if not k.startswith("_") and k not in args}
    try:
        built = url_for(endpoint, **args, **values)
    except Exception:  # noqa: BLE001 - a route that cannot be rebuilt is simply not used
        return None
    parts = urlsplit(built)
    if parts.scheme or parts.netloc or not built.startswith("/") or built.startswith("//"):
        return None  # cannot happen with url_for's relative URLs; checked all the same
    return built


def local_url(raw: str | None) -> str | None:
    """``raw`` as a URL of one of this dashboard's GET pages, rebuilt by url_for; else None."""
    if not raw or len(raw) > MAX_CHARS or _refused(raw):
        return None
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc or not parts.path.startswith("/") or parts.path.startswith("//"):
        return None
    path = unquote(parts.path)
    if _refused(path) or path.startswith("//"):
        return None
    root = request.script_root  # the random prefix the command line serves under
    if root and (path == root or path.startswith(root + "/")):
        path = path[len(root) :] or "/"
    adapter = current_app.url_map.bind_to_environ(request.environ)
    try:
        endpoint, args = adapter.match(path, method="GET")
    except (HTTPException, RequestRedirect):
        return None
    return _build(endpoint, args, MultiDict(parse_qsl(parts.query, keep_blank_values=True)))


def here() -> str:
    """This GET page's own URL, rebuilt by url_for (the overview on error pages and POSTs)."""
    if request.method == "GET" and request.url_rule is not None and request.endpoint:
        built = _build(request.endpoint, dict(request.view_args or {}), request.args)
        if built is not None:
            return built
    return url_for("overview.index")
