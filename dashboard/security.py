"""Safe by default: Host allow-list, access token, same-origin writes, limits, headers.

The model is Jupyter's: a random token printed in the start-up URL is traded
on first visit for an HttpOnly, SameSite=Strict cookie (named after the port,
so two dashboards on one machine keep separate cookies), and every route —
pages, JSON twins, downloads and static files — needs one of the two.  Static
files are not exempt: the cookie rides along with same-origin sub-resource
loads anyway, and refusing them keeps other web sites from fingerprinting a
running dashboard with ``<script src="http://127.0.0.1:…/static/…">``.

Order of checks, cheapest and least revealing first:

1. ``HostGuard`` (WSGI middleware, before Flask routes anything) refuses a Host
   header that is not a loopback name or the configured host — a DNS-rebound
   hostname never reaches a view.  It also stamps the security headers on
   every response, its own refusals and static files included.
2. ``_guard`` (before_request): token or cookie; then unsafe methods need
   ``Sec-Fetch-Site: same-origin|none`` or an exact same-origin ``Origin``
   (a request carrying the token in an ``Authorization`` header is exempt:
   browsers cannot attach that header cross-site without a CORS preflight we
   never grant); then body and query-string limits.

Refusals before authentication render a standalone page that reads no store,
so an unauthenticated visitor learns nothing about the files.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from urllib.parse import urlencode

from flask import Flask, current_app, jsonify, redirect, render_template, request
from werkzeug.exceptions import abort

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})
CSP = ("default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    # Other origins may not embed our scripts, styles or JSON as sub-resources.
    ("Cross-Origin-Resource-Policy", "same-origin"),
)
MAX_QUERY_LENGTH = 4096
_COOKIE_SALT = b"agentao-memory-dashboard cookie v1"


def generate_token() -> str:
    """A fresh access token: 32 random bytes (256 bits), URL-safe."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether an address or name only ever reaches this machine."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> list[str]:
    """Host header values accepted for a server listening on ``host:port``."""
    names = list(LOOPBACK_NAMES)
    bare = host.strip("[]").lower()
    if bare not in ("0.0.0.0", "::"):
        names.append(f"[{bare}]" if ":" in bare else bare)
    else:
        import socket  # a wildcard bind is reached by this machine's own name
        names += [socket.gethostname().lower(), socket.getfqdn().lower()]
    return sorted({f"{n}:{port}" for n in names})


def cookie_name(port) -> str:
    return f"agentao_dashboard_{port}"


def _cookie_value(token: str) -> str:
    # The cookie holds a digest, not the token, so it cannot be replayed as ?token=.
    return hmac.new(token.encode(), _COOKIE_SALT, hashlib.sha256).hexdigest()


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def _host_ok(host: str, allowed) -> bool:
    host = host.lower()
    if allowed is not None:
        return host in allowed
    # Embedded or under test, the port is unknown: any port on a loopback name.
    # The name is what DNS rebinding changes, so this still refuses a rebound host.
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in LOOPBACK_NAMES


class HostGuard:
    """WSGI middleware: refuse unknown Host headers; add security headers to everything."""

    def __init__(self, wsgi_app, app: Flask):
        self.wsgi_app = wsgi_app
        self.app = app

    def __call__(self, environ, start_response):
        def with_headers(status, headers, exc_info=None):
            present = {name.lower() for name, _ in headers}
            headers = list(headers) + [h for h in HEADERS if h[0].lower() not in present]
            return start_response(status, headers, exc_info)

        host = environ.get("HTTP_HOST", "")
        if not _host_ok(host, self.app.config.get("ALLOWED_HOSTS")):
            body = (b"Refused: this dashboard only answers to its own address "
                    b"(for example http://127.0.0.1:<port>/); the Host header was not one of them.\n")
            with_headers("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8"),
                                           ("Content-Length", str(len(body)))])
            return [body]
        return self.wsgi_app(environ, with_headers)


def _wants_json() -> bool:
    return request.path.endswith(".json") or request.accept_mimetypes.best == "application/json"


def _denied(message: str):
    # Standalone page: it must not include base.html, which reads the stores.
    if _wants_json():
        response = jsonify({"error": "Token required", "message": message, "status": 403})
    else:
        response = current_app.make_response(render_template("security/denied.html",
                                                             message=message))
    response.status_code = 403
    return response


def _url_without_token() -> str:
    rest = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
    return request.path + ("?" + urlencode(rest) if rest else "")


def _port() -> str:
    return str(current_app.config.get("PORT") or request.environ.get("SERVER_PORT", ""))


def _check_token():
    """None when the request may go on; otherwise the response to send."""
    token = current_app.config.get("AUTH_TOKEN")
    if not token:
        return None
    given = request.args.get("token")
    if given is not None:
        if not _same(given, token):
            return _denied("The token in this URL is not the one the running dashboard printed "
                           "at start-up. Use the URL it printed (restarting it makes a new token).")
        response = redirect(_url_without_token(), 303) if request.method in ("GET", "HEAD") else None
        if response is not None:
            response.set_cookie(cookie_name(_port()), _cookie_value(token), httponly=True,
                                samesite="Strict", secure=request.is_secure, path="/")
        return response
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() in ("token", "bearer") and _same(value.strip(), token):
        request.environ["dashboard.token_header"] = True
        return None
    if _same(request.cookies.get(cookie_name(_port())), _cookie_value(token)):
        return None
    return _denied("This dashboard needs its access token. Open the URL that "
                   "agentao-memory-dashboard printed when it started (it ends in ?token=…).")


def _same_origin() -> bool:
    if request.environ.get("dashboard.token_header"):
        return True
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site.lower() in SAME_ORIGIN_FETCH
    origin = request.headers.get("Origin")
    return origin is not None and origin.lower() == f"{request.scheme}://{request.host}".lower()


def _guard():
    refused = _check_token()
    if refused is not None:
        return refused
    if request.method not in SAFE_METHODS and not _same_origin():
        abort(403, "Refused: changes are only accepted from the dashboard's own pages "
                   "(the request's Sec-Fetch-Site/Origin headers said it came from elsewhere).")
    limit = current_app.config["MAX_QUERY_LENGTH"]
    if len(request.query_string) > limit:
        abort(414, f"The query string is longer than {limit} characters; shorten the filters.")
    body_limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if body_limit is not None and (request.content_length or 0) > body_limit:
        abort(413, f"The request body is larger than {body_limit} bytes; nothing was changed.")
    return None


def _no_store(response):
    # Memory text should not linger in the browser's disk cache.
    if request.endpoint != "static":
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def init_app(app: Flask) -> None:
    """Install the checks; AUTH_TOKEN None means "make one" (read it back from app.config)."""
    app.config.setdefault("ALLOWED_HOSTS", None)
    app.config.setdefault("MAX_QUERY_LENGTH", MAX_QUERY_LENGTH)
    if app.config.get("AUTH_TOKEN") is None:
        app.config["AUTH_TOKEN"] = generate_token()
    app.wsgi_app = HostGuard(app.wsgi_app, app)
    app.before_request(_guard)
    app.after_request(_no_store)
