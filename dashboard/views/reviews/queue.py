"""The review queue's file and tabs, shared by the review and reject-and-erase handlers."""

from __future__ import annotations

from flask import abort
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ...store import StoreRef
from ...web import raise_if_unreadable, status_of, store_by_key

STATUSES = ("pending", "approved", "rejected")
# The tabs read as words ("Waiting (3)"); the query keeps agentao's status codes.
TAB_NAMES = {"pending": _l("Waiting"), "approved": _l("Approved"), "rejected": _l("Rejected")}
EMPTY = {
    "pending": _l("No suggestions wait for you."),
    "approved": _l("Nothing approved yet."),
    "rejected": _l("Nothing rejected yet."),
    "all": _l("No suggestions yet."),
}


def project() -> StoreRef:
    """The project store, which alone holds the queue; a 404 or its problem when it cannot."""
    ref = store_by_key("project")
    if not ref.exists:
        if not ref.missing:  # something else is there: say what, as the overview does
            raise status_of("project").problem
        abort(
            404, _("No project store at %(path)s: agentao creates it the first time it runs.", path=ref.path)
        )
    raise_if_unreadable("project")
    return ref
