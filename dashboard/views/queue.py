"""The review queue's file and tabs, shared by the review and reject-and-erase handlers."""

from __future__ import annotations

from flask import abort

from ..store import StoreRef
from ..web import raise_if_unreadable, status_of, store_by_key

STATUSES = ("pending", "approved", "rejected")


def project() -> StoreRef:
    """The project store, which alone holds the queue; a 404 or its problem when it cannot."""
    ref = store_by_key("project")
    if not ref.exists:
        if not ref.missing:   # something else is there: say what, as the overview does
            raise status_of("project").problem
        abort(404, f"No project store at {ref.path}: agentao creates it the first time it runs.")
    raise_if_unreadable("project")
    return ref
