"""Safe by default: Host allow-list, access token, same-origin writes, limits, headers.

The model is Jupyter's, tightened: the start-up URL carries a one-time code
that ``/login`` trades once for an HttpOnly, SameSite=Strict cookie (named
after the port, so two dashboards on one machine keep separate cookies); the
long-lived token is for scripts (``Authorization``) and the login form, never
a URL.  Every route — pages, JSON twins, downloads and static files — needs
the cookie or the token.  Static files are not exempt: the cookie rides along
with same-origin sub-resource loads anyway, and refusing them keeps other web
sites from fingerprinting a running dashboard with
``<script src="http://127.0.0.1:…/static/…">`` (only the icon is open: browsers
fetch it at the root, where they send no cookie).  ``access.py`` says what the
cookie and the codes are made of.

Cookies ignore ports: every server on 127.0.0.1 gets the cookies of every
other.  So the command line serves the app under a random path drawn at each
start (``URL_PREFIX``, mounted as WSGI ``SCRIPT_NAME`` so ``url_for`` builds
every link under it) and scopes the cookie's Path to it: a browser then sends
the cookie to no server that does not know the path.

Order of checks, cheapest and least revealing first:

1. ``HostGuard`` (WSGI middleware, before Flask routes anything) refuses a Host
   header that is not a loopback name or the configured host — a DNS-rebound
   hostname never reaches a view.  It also stamps the security headers on
   every response, its own refusals and static files included, and mounts the
   prefix.
2. ``_guard`` (before_request): cookie (any valid duplicate) or token; then
   unsafe methods need ``Sec-Fetch-Site: same-origin|none`` or an exact
   same-origin ``Origin`` (a request carrying the token in an
   ``Authorization`` header is exempt: browsers cannot attach that header
   cross-site without a CORS preflight we never grant); then body and
   query-string limits.  ``/login`` skips only the first step.

Refusals before authentication render a standalone page that reads no store,
so an unauthenticated visitor learns nothing about the files (nor the prefix).
"""

from __future__ import annotations

import ipaddress
import secrets

from flask import Flask, current_app, g, request
from flask.sessions import SecureCookieSessionInterface
from flask_babel import gettext as _
from werkzeug.exceptions import abort

from ..web import answer
from .access import COOKIE_LIFETIME, RENEW_AFTER, Access, token_problem

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})
CSP = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    # Other origins may not embed our scripts, styles or JSON as sub-resources.
    ("Cross-Origin-Resource-Policy", "same-origin"),
)
MAX_QUERY_LENGTH = 4096
FAVICON = "favicon.svg"
# Served without a cookie: the icon, and the stylesheet of the login page (nothing in either
# is about the stores; the CORP header keeps other origins from loading them).
OPEN_STATIC = frozenset({FAVICON, "app.css"})


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
            body = (
                b"Refused: this dashboard only answers to its own address "
                b"(for example http://127.0.0.1:<port>/); the Host header was not one of them.\n"
            )
            with_headers(
                "403 Forbidden",
                [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))],
            )
            return [body]
        prefix = self.app.config.get("URL_PREFIX") or ""
        path = environ.get("PATH_INFO", "")
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            # Mounted there: url_for now builds every link under the prefix.  A path
            # without it is served too (scripts holding the cookie or the token may
            # use either), but a browser sends the cookie only under the prefix.
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
            environ["PATH_INFO"] = path[len(prefix) :] or "/"
        return self.wsgi_app(environ, with_headers)


def _denied(message: str, status: int = 403, retry_after: int = 0):
    # Standalone page: it must not include base.html, which reads the stores.
    error = "Too many wrong tokens" if status == 429 else "Token required"
    response = answer(
        {"error": error, "message": message, "status": status},
        status,
        page="security/denied.html",
        message=message,
        next=clean_path(),
        status=status,
    )
    if retry_after:
        response.headers["Retry-After"] = str(retry_after)
    return response


def clean_path() -> str:
    """This request's path and query inside the app, without any credential in it."""
    from urllib.parse import urlencode

    rest = [(k, v) for k, v in request.args.items(multi=True) if k not in ("token", "code")]
    return request.path + ("?" + urlencode(rest) if rest else "")


def inside(path: str) -> str:
    """``path`` (inside the app, starting with one ``/``) as a URL under the prefix."""
    return (current_app.config.get("URL_PREFIX") or "") + path


def _port() -> str:
    return str(current_app.config.get("PORT") or request.environ.get("SERVER_PORT", ""))


def access() -> Access:
    return current_app.extensions["access"]


def cookie_age() -> float | None:
    """Age of this request's youngest valid auth cookie, None when it has none.

    Every duplicate of the name is looked at (``getlist``): one tossed in from
    another port with a narrower Path comes first and must not hide ours.
    """
    return access().cookie_age(request.cookies.getlist(cookie_name(_port())))


def set_auth_cookie(response) -> None:
    response.set_cookie(
        cookie_name(_port()),
        access().cookie_value(),
        max_age=COOKIE_LIFETIME,
        httponly=True,
        samesite="Strict",
        secure=request.is_secure,
        path=current_app.config.get("URL_PREFIX") or "/",
    )


def check_token(given: str | None):
    """None when ``given`` is the token; otherwise the refusal (403, or 429 while paused)."""
    ok, wait = access().try_token(given, current_app.config["AUTH_TOKEN"])
    if ok:
        return None
    if wait:
        return _denied(
            _(
                "Too many wrong access tokens: the dashboard checks none for %(num)d s "
                "(a logged-in browser and the one-time link keep working).",
                num=wait,
            ),
            429,
            wait,
        )
    return _denied(
        _(
            "That is not the access token of the running dashboard (a restart without "
            "%(option)s makes a new one).",
            option="--token",
        )
    )


def _check_token():
    """None when the request may go on; otherwise the response to send."""
    if not current_app.config.get("AUTH_TOKEN"):
        return None
    if "token" in request.args:
        # Not even checked: a URL stays in history, so the long-lived token never goes in one.
        return _denied(
            _(
                "The access token does not go in a URL (browsers keep URLs in their "
                "history). Open the one-time link the dashboard printed at start-up, "
                "or enter the token below; scripts send it as %(header)s.",
                header="'Authorization: token …'",
            )
        )
    age = cookie_age()
    if age is not None:
        g.renew_auth_cookie = age > RENEW_AFTER
        return None
    if request.endpoint == "login.login":
        return None  # the login page checks what it is given itself
    if request.endpoint == "favicon" or (
        request.endpoint == "static" and (request.view_args or {}).get("filename") in OPEN_STATIC
    ):
        # Browsers fetch /favicon.ico at the root, outside the random path, where they
        # send no cookie (and log the 403).  The icon tells a visitor no more than the
        # login page does, and its CORP header keeps other origins from loading it.
        return None
    scheme, _sep, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() in ("token", "bearer"):
        refused = check_token(value.strip())
        if refused is None:
            request.environ["dashboard.token_header"] = True
        return refused
    return _denied(
        _(
            "This address needs a login first: this browser has not opened a login link of the "
            "running dashboard yet (or its login has ended)."
        )
    )


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
        abort(
            403,
            _(
                "Refused: changes are only accepted from the dashboard's own pages "
                "(the request's Sec-Fetch-Site/Origin headers said it came from elsewhere)."
            ),
        )
    limit = current_app.config["MAX_QUERY_LENGTH"]
    if len(request.query_string) > limit:
        abort(414, _("The query string is longer than %(num)d characters; shorten the filters.", num=limit))
    body_limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if body_limit is not None and (request.content_length or 0) > body_limit:
        abort(413, _("The request body is larger than %(num)d bytes; nothing was changed.", num=body_limit))
    return None


def _after(response):
    # Memory text should not linger in the browser's disk cache.
    if request.endpoint != "static":
        response.headers.setdefault("Cache-Control", "no-store")
    if g.get("renew_auth_cookie"):  # sliding expiry: a cookie in use stays good
        set_auth_cookie(response)
    return response


class _Session(SecureCookieSessionInterface):
    """The signed session cookie, named after the port and scoped to the prefix like the
    login cookie, so two dashboards on one machine never read each other's."""

    def get_cookie_name(self, app: Flask) -> str:
        return cookie_name(_port()) + "_said"

    def get_cookie_path(self, app: Flask) -> str:
        return app.config.get("URL_PREFIX") or "/"

    def get_cookie_samesite(self, app: Flask) -> str:
        return "Strict"


def init_app(app: Flask) -> None:
    """Install the checks; AUTH_TOKEN None means "make one" (read it back from app.config)."""
    app.config.setdefault("ALLOWED_HOSTS", None)
    app.config.setdefault("MAX_QUERY_LENGTH", MAX_QUERY_LENGTH)
    app.config.setdefault("URL_PREFIX", "")
    if app.config.get("AUTH_TOKEN") is None:
        app.config["AUTH_TOKEN"] = generate_token()
    elif app.config["AUTH_TOKEN"] and token_problem(app.config["AUTH_TOKEN"]):
        raise ValueError(f"AUTH_TOKEN: {token_problem(app.config['AUTH_TOKEN'])}")
    app.extensions["access"] = Access()
    # Flask's session carries only the one-shot result of an action across its redirect
    # (web.answer / web.landed); its key is drawn at each start, like the login cookie's.
    app.secret_key = secrets.token_bytes(32)
    app.session_interface = _Session()
    app.wsgi_app = HostGuard(app.wsgi_app, app)  # type: ignore[method-assign]  # Flask's documented way to wrap its WSGI app
    app.before_request(_guard)
    app.after_request(_after)
