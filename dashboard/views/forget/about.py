""" "Forget what is about me" (``forget.about``): its dry run, its typed confirmation, its job.

The rows are picked by ``actions.about`` from the stores on screen and the
one findings scan every screen shows; each store's dry run travels in the
form as its fingerprint, so the purge erases exactly what the person saw and
stops if one of those rows changed meanwhile.  The erasure is the forget
screen's verified hard purge, one file after the other, in one job.
"""

from __future__ import annotations

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ...actions import about as scope
from ...web import page, statuses
from ..findings import current_report, flags_by_row
from . import jobs as forget_jobs

ABOUT_PHRASE = _l("forget me")


def _parts():
    """The dry run over the readable stores on screen, and the stores it cannot read (with why)."""
    sts = [st for st in statuses() if st.ref.exists]
    refs = [st.ref for st in sts if st.readable]
    unread = [
        {"store": st.ref.key, "kind": st.ref.kind, "name": st.ref.name, "problem": str(st.problem)}
        for st in sts
        if not st.readable
    ]
    report, _when, _reused = current_report(refs)
    me, parts = scope.plan(refs, scope.Seen(flags_by_row(report), report.complete))
    return me, parts, report, unread


def about(fmt: str):
    me, parts, report, unread = _parts()
    data = {
        "person": me.to_dict(),
        "stores": [p.to_dict() for p in parts],
        "unreadable": unread,
        "phrase": str(ABOUT_PHRASE),
        "findings_complete": report.complete,
        "rows_scanned": report.rows_scanned,
        "rows_total": report.rows_total,
        "finding_categories": list(scope.ABOUT_CATEGORIES),
    }
    total = sum(len(p.rows) for p in parts)
    events = sum(p.goes().get("event", 0) for p in parts)
    return page(
        fmt,
        None,
        "forget/_about_plan.html",
        title=_("Forget what is about you"),
        heading=None,
        about=data,
        parts=parts,
        shown=scope.SHOWN,
        total=total,
        events=events,
        items=total - events,
        fits=all(p.fits for p in parts),
        to_json=lambda ctx: ctx["about"],
    )


def erase_about():
    return forget_jobs.erase_confirmed(ABOUT_PHRASE, "forget about me", {"about": True})
