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
"""

from __future__ import annotations

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


class SecureChannel(HTTPChannel):
    error_task_class = SecureErrorTask


def harden(server) -> bool:
    """Make ``server`` (what ``waitress.create_server`` returned) answer its own errors with
    the security headers; False if this waitress has no ``channel_class`` to point."""
    servers = [server] if hasattr(server, "channel_class") else [
        s for s in getattr(server, "map", {}).values() if hasattr(s, "channel_class")]
    if not servers or not hasattr(HTTPChannel, "error_task_class"):
        return False
    for s in servers:
        s.channel_class = SecureChannel
    return True
