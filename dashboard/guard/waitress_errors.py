"""waitress's own error answers, with the same security headers as every answer of the app.

waitress answers a request it cannot parse (400: a bad request line, a
malformed header — whose text it quotes back — bad chunking; 413 over
``max_request_body_size``; 431 header fields too large) itself, before any
WSGI code runs, so neither Flask nor ``security.HostGuard`` ever sees those
answers, and waitress (3.0) has no setting for their headers: its
Adjustments only offer ``ident``.  What it does have is two class
attributes: the server makes its connections from ``channel_class`` and a
connection writes such an answer with its ``error_task_class``.  ``harden``
points them, on this one server object (no global patch), at subclasses
that add ``security.HEADERS`` and ``Cache-Control: no-store``.

These are undocumented attributes of waitress's internals; ``harden`` checks
they are there and says so when they are not, and tests/test_odd_input.py
sends a malformed request to a real server to prove the headers arrive.

The same connection class bounds how long a request line and its headers may
take to arrive (``HEADER_SECONDS``).  waitress serves at most 100 connections
(``connection_limit``) and closes one only after ``channel_timeout`` (120 s)
without a byte, so 110 local connections sending a header byte every 5 s kept
it from answering anyone.  A connection still short of the end of its headers
that long after their first byte (or after it opened, if nothing came) is
closed; its main loop asks each connection ``readable()`` at least once a
second (``asyncore_loop_timeout``), which is where it is checked.
"""

from __future__ import annotations

import time

from waitress.channel import HTTPChannel
from waitress.task import ErrorTask

from .security import HEADERS

EXTRA = (("Cache-Control", "no-store"),)


class SecureErrorTask(ErrorTask):
    """waitress's error answer, plus the app's security headers."""

    def execute(self):
        # ErrorTask.execute adds its Content-Type and writes the body; the header
        # block is built at that first write, from response_headers as they are then.
        self.response_headers.extend(HEADERS + EXTRA)
        super().execute()


HEADER_SECONDS = 10


class SecureChannel(HTTPChannel):
    error_task_class = SecureErrorTask
    headers_since: float | None = None  # the first byte of headers still arriving

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.headers_since = self.creation_time  # a new connection owes its first request

    def received(self, data):
        before = self.request
        done = super().received(data)
        if self.request is None or self.request.headers_finished:
            self.headers_since = None  # between requests (keep-alive), or reading a body
        elif self.request is not before or self.headers_since is None:
            self.headers_since = time.time()  # a new request's first bytes
        return done

    def readable(self):
        if (
            self.headers_since is not None
            and not self.will_close
            and time.time() - self.headers_since > HEADER_SECONDS
        ):
            self.will_close = True  # written out by waitress's own close path
        return super().readable()


def harden(server) -> bool:
    """Make ``server`` (what ``waitress.create_server`` returned) answer its own errors with
    the security headers; False if this waitress has no ``channel_class`` to point."""
    servers = (
        [server]
        if hasattr(server, "channel_class")
        else [s for s in getattr(server, "map", {}).values() if hasattr(s, "channel_class")]
    )
    if not servers or not hasattr(HTTPChannel, "error_task_class"):
        return False
    for s in servers:
        s.channel_class = SecureChannel
    return True
