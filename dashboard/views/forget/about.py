""" "Forget what is about me" (``forget.about``): its dry run, its typed confirmation, its job.

The rows are picked by ``actions.about`` from the stores on screen and the
one findings scan every screen shows; each store's dry run travels in the
form as its fingerprint, so the purge erases exactly what the person saw and
stops if one of those rows changed meanwhile.  The erasure is the forget
screen's verified hard purge, one file after the other, in one job.
"""

from __future__ import annotations

import time
from math import ceil

from flask import current_app, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ... import facts
from ...actions import about as scope
from ...actions import saved
from ...store.held import held
from ...web import number_arg, page, statuses
from ..findings import current_report
from . import jobs as forget_jobs

ABOUT_PHRASE = _l("forget me")
# As the findings scan's: the page reads for this long, its findings scan included, then answers
# with what it found and says so (create_app key FORGET_ABOUT_TIME_LIMIT_MS; None: no limit).
TIME_LIMIT_MS = 2500
MAX_PER_PAGE = 1000  # rows of a store on a page of the twin


def _parts():
    """The dry run over the readable stores on screen, and the stores it cannot read (with why)."""
    limit = current_app.config.get("FORGET_ABOUT_TIME_LIMIT_MS", TIME_LIMIT_MS)
    deadline = None if limit is None else time.monotonic() + limit / 1000
    sts = [st for st in statuses() if st.ref.exists]
    refs = [st.ref for st in sts if st.readable]
    unread = [
        {"store": st.ref.key, "kind": st.ref.kind, "name": st.ref.name, "problem": str(st.problem)}
        for st in sts
        if not st.readable
    ]
    report, when, _reused = current_report(refs)
    # Held while no file moves and the scan shown is the same (bench/results/pages-round9*: 10,000
    # memories, 165 ms a view read every row of both files again); a purge checks its rows anew.
    # A dry run cut by its time limit is not held: the next view reads again, with its own time.
    me, parts = held(
        "about",
        [r.path for r in refs],
        lambda _stamp: scope.plan(refs, scope.Seen(report.by_row, report.complete), deadline),
        key=(tuple(r.key for r in refs), when, report.complete),
        whole=lambda found: all(p.complete for p in found[1]),
    )
    return me, parts, report, unread


def about(fmt: str):
    me, parts, report, unread = _parts()
    # The twin pages each store's rows as the other lists do (page, per_page); the page lists the
    # first SHOWN of each, the rows that are not events coming first.
    at, per_page = number_arg("page", 1, 10**6), number_arg("per_page", scope.SHOWN, MAX_PER_PAGE)
    listed = slice((at - 1) * per_page, at * per_page) if fmt == "json" else slice(scope.SHOWN)
    data = {
        "person": me.to_dict(),
        "complete": all(p.complete for p in parts),
        "page": at,
        "pages": max([1] + [ceil(len(p.rows) / per_page) for p in parts]),
        "per_page": per_page,
        "stores": [p.to_dict(listed) for p in parts],
        "unreadable": unread,
        "phrase": str(ABOUT_PHRASE),
        "findings_complete": report.complete,
        "rows_scanned": report.rows_scanned,
        "rows_total": report.rows_total,
        "finding_categories": list(scope.ABOUT_CATEGORIES),
    }
    copies = saved_files([t for p in parts for r in p.rows for t in r.texts], about=True)
    plans = copies[1] if copies else []
    data["saved_files"] = [f.to_dict() for f in plans]
    return page(
        fmt,
        None,
        "forget/_about_plan.html",
        title=_("Forget what is about you"),
        heading=None,
        about=data,
        shown=scope.SHOWN,
        fits=all(p.fits for p in parts),
        to_json=lambda ctx: ctx["about"],
        **plan_shown(parts, plans),
    )


def plan_shown(parts, plans) -> dict:
    """What a scoped forget's dry run shows of the stores' ``parts`` and the saved files' ``plans``."""
    total = sum(len(p.rows) for p in parts)
    events = sum(p.goes().get("event", 0) for p in parts)
    return dict(
        parts=parts,
        total=total,
        events=events,
        items=total - events,
        saved_files=saved.goes(plans),
        saved_kept=[f for f in plans if f.action == "keep"],
    )


def saved_files(
    row_texts=(), *, about: bool = False, session_id: str | None = None, everything: bool = False
):
    """The saved conversations' share of a forget, as ``erase_confirmed`` takes it:
    ``(root, plans, texts)``, or None when no project is shown.

    The texts of the rows that go are redacted wherever they are; forgetting what is
    ``about`` you also redacts every personal-data or secret finding in them; forgetting a
    conversation (``session_id``) deletes its files whole, and ``everything`` every file."""
    files, found = facts.saved()
    if files is None:
        return None
    texts = saved.targets(found if about else [], row_texts)
    return files.root, saved.plan_files(files, texts, [session_id] if session_id else (), everything), texts


def erase_about():
    # ``partial``: the dry run confirmed was cut short (the report then says more may be about you).
    partial = request.form.get("partial") == "1"
    said = {"about": True, "about_partial": partial}
    return forget_jobs.erase_confirmed(
        ABOUT_PHRASE, "forget about me", said, lambda texts: saved_files(texts, about=True), exact=partial
    )
