"""Who is let in: a secret drawn at each start, the cookie, one-time login codes, the back-off.

Three credentials, each for one job:

- The access token (``--token``, or a random one): long-lived, for scripts
  (``Authorization: token …``) and for the login form.  It never goes in a URL:
  a URL stays in the browser's history, in scrollback and in synced profiles.
- A one-time code: the start-up URL carries one, and ``agentao-memory-dashboard
  link`` makes more, signed with ``link_key`` (see ``links.py``).  ``/login?code=…`` trades it,
  once, for the cookie and answers 303 to a clean address, so every copy of the
  printed URL is dead after the first visit.
- The cookie, ``<issued>.<mac>``: an HMAC-SHA256 of its issue time keyed with
  ``Access.secret``, drawn at each start.  A restart therefore voids every
  cookie, even with a fixed ``--token``; a cookie older than COOKIE_LIFETIME is
  refused (and carries that Max-Age), and one in use is re-issued every
  RENEW_AFTER seconds, so an unused copy goes stale.

Wrong tokens are counted per process.  After FREE_FAILURES, token checks pause
for a growing time (429 with Retry-After) *without being checked*, so a guesser
learns nothing during a pause.  Cookies and codes are still checked then: they
are random and long, not guessable, so the real user is never locked out.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
import time
from collections import Counter

from flask import current_app, redirect, request, url_for

from .localurl import local_url

COOKIE_LIFETIME = 12 * 3600  # seconds a cookie stays good without use
RENEW_AFTER = 10 * 60  # a cookie in use older than this is re-issued
FREE_FAILURES = 5  # wrong tokens allowed before the pauses start
MAX_PAUSE = 60  # seconds; the pause doubles up to this
FORGET_FAILURES_AFTER = 15 * 60  # seconds without a wrong token reset the count
MIN_TOKEN_CHARS = 16
MIN_TOKEN_BITS = 64


def _now() -> float:
    return time.time()  # tests move this clock


def token_problem(token: str) -> str | None:
    """Why ``token`` is too weak to guard the dashboard, or None.

    Length alone let 16 spaces through.  Now: at least 16 characters of
    printable ASCII (it travels in HTTP headers), no space at either end (a
    header loses it), and an estimated strength of 64 bits or more: the length
    times the Shannon entropy of its characters.  The estimate catches repeats
    and tiny alphabets, not dictionary words.
    """
    if len(token) < MIN_TOKEN_CHARS:
        return f"the token must be at least {MIN_TOKEN_CHARS} characters"
    if any(not " " <= c <= "~" for c in token) or token != token.strip():
        return "the token must be printable ASCII (it is sent in HTTP headers), with no space at either end"
    counts = Counter(token)
    bits = -len(token) * sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    if bits < MIN_TOKEN_BITS:
        return (
            f"the token is too predictable: about {bits:.0f} bits by its length and mix of "
            f"characters, at least {MIN_TOKEN_BITS} needed (a generated one has about 256; "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))' makes one)"
        )
    return None


def new_prefix() -> str:
    """A random path to serve under, so the cookie's Path keeps it from other ports' servers."""
    return "/" + secrets.token_urlsafe(12)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class Access:
    """The per-process credential state; one per app (``app.extensions["access"]``)."""

    def __init__(self) -> None:
        self.secret = secrets.token_bytes(32)
        self.link_key = secrets.token_bytes(32)  # signs the codes of ``link`` (guard/links.py)
        self._spent: set[str] = set()  # nonces of signed codes already used
        self._lock = threading.Lock()
        self._codes: set[str] = set()  # digests of the live one-time codes
        self._failures = 0
        self._last_failure = 0.0

    def _mac(self, purpose: str, text: str) -> str:
        return hmac.new(self.secret, f"{purpose}|{text}".encode(), hashlib.sha256).hexdigest()

    # -- the cookie ----------------------------------------------------------

    def cookie_value(self) -> str:
        issued = str(int(_now()))
        return f"{issued}.{self._mac('cookie', issued)}"

    def cookie_age(self, values) -> float | None:
        """Age of the youngest valid cookie among ``values`` (every duplicate), or None.

        Any valid duplicate counts: a page on another port can add a cookie of
        the same name with a narrower Path, which the browser then sends first.
        """
        ages = []
        for value in values:
            issued, _, mac = value.partition(".")
            if not (issued.isascii() and issued.isdigit() and len(issued) < 12):
                continue
            if hmac.compare_digest(mac.encode(), self._mac("cookie", issued).encode()):
                age = _now() - int(issued)
                if -60 <= age < COOKIE_LIFETIME:  # a minute of clock skew
                    ages.append(max(age, 0.0))
        return min(ages, default=None)

    # -- signed preferences (the project choice) ---------------------------

    def sign(self, text: str) -> str:
        return f"{text}.{self._mac('pref', text)[:32]}"

    def verified(self, values) -> list[str]:
        """The texts of ``values`` this process signed; a tossed or stale value is dropped."""
        out = []
        for value in values:
            text, _, mac = value.rpartition(".")
            if hmac.compare_digest(mac.encode(), self._mac("pref", text)[:32].encode()):
                out.append(text)
        return out

    # -- one-time codes ----------------------------------------------------

    def new_code(self) -> str:
        """A login code that works once, for as long as this process runs."""
        code = secrets.token_urlsafe(32)
        with self._lock:
            self._codes.add(_digest(code))
        return code

    def use_code(self, code: str) -> bool:
        """Spend a printed code, or a code ``link`` signed with ``link_key``; each works once."""
        from .links import sign

        digest = _digest(code)  # set lookup on a digest: nothing to time
        nonce, _, mac = code.partition(".")
        signed = (
            bool(nonce)
            and len(code) < 200
            and hmac.compare_digest(mac.encode(), sign(self.link_key, nonce).encode())
        )
        with self._lock:
            if digest in self._codes:
                self._codes.discard(digest)
                return True
            if signed and nonce not in self._spent:
                self._spent.add(nonce)
                return True
        return False

    # -- the back-off on wrong tokens ---------------------------------------

    def try_token(self, given: str | None, token: str) -> tuple[bool, int]:
        """Check ``given`` against the token unless checks are paused: (ok, retry_after).

        One lock around the pause, the comparison and the count, so parallel
        guesses cannot all slip into the same free moment.
        """
        with self._lock:
            now = _now()
            if now - self._last_failure > FORGET_FAILURES_AFTER:
                self._failures = 0
            if self._failures >= FREE_FAILURES:
                pause = min(2 ** (self._failures - FREE_FAILURES), MAX_PAUSE)
                left = math.ceil(self._last_failure + pause - now)
                if left > 0:
                    return False, left
            if given is not None and hmac.compare_digest(
                given.encode("utf-8", "surrogateescape"), token.encode()
            ):
                self._failures = 0
                return True, 0
            self._failures += 1
            self._last_failure = now
            return False, 0


def sign_preference(value: str) -> str:
    """A preference cookie's value, signed so that one tossed in from another port is ignored."""
    return current_app.extensions["access"].sign(value)


def choice_cookie(name: str) -> str:
    """The cookie keeping the view choice ``name``: one dashboard per port, so two instances
    on one host do not share it."""
    return f"agentao_memory_{name}_{request.host.rpartition(':')[2] or 'default'}"


def chosen(name: str, among=None) -> str | None:
    """The view choice ``name`` (one of ``among``) as this process signed it; None when it is
    absent or its copies disagree (one tossed in from another port is not signed by us)."""
    values = set(verified_preferences(request.cookies.getlist(choice_cookie(name))))
    if among is not None:
        values &= set(among)
    return values.pop() if len(values) == 1 else None


def keep_choice(response, name: str, value: str):
    """Remember the view choice ``name`` (language, project, last visit) for a year, signed,
    on this dashboard's path; the response."""
    prefix = current_app.config["URL_PREFIX"] or "/"
    response.set_cookie(
        choice_cookie(name),
        sign_preference(value),
        httponly=True,
        samesite="Strict",
        max_age=365 * 86400,
        path=prefix,
    )
    return response


def back_with_choice(name: str, value: str):
    """Back to the page the choice was made on, remembering it: a 303, for htmx a 204 with
    HX-Redirect.  ``next`` is never copied through: url_for rebuilds it (see localurl)."""
    back = local_url(request.form.get("next")) or url_for("overview.index")
    response = redirect(back, code=303)
    if request.headers.get("HX-Request") == "true":
        response = current_app.make_response(("", 204))
        response.headers["HX-Redirect"] = back
    return keep_choice(response, name, value)


def verified_preferences(values) -> list[str]:
    """The values of a preference cookie's copies that this process signed."""
    return current_app.extensions["access"].verified(values)
