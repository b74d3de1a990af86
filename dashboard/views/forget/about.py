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

from ... import facts
from ...actions import about as scope
from ...actions import saved
from ...store.held import held
from ...web import page, statuses
from ..findings import current_report
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
    report, when, _reused = current_report(refs)
    # Held while no file moves and the scan shown is the same (bench/results/pages-round9*: 10,000
    # memories, 165 ms a view read every row of both files again); a purge checks its rows anew.
    me, parts = held(
        "about",
        [r.path for r in refs],
        lambda _stamp: scope.plan(refs, scope.Seen(report.by_row, report.complete)),
        key=(tuple(r.key for r in refs), when, report.complete),
    )
    return me, parts, report, unread


def about(fmt: str):
    me, parts, report, unread = _parts()
    data = {
        "person": me.to_dict(),
        "stores": [p.to_dict(None if fmt == "json" else scope.SHOWN) for p in parts],
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
    return forget_jobs.erase_confirmed(
        ABOUT_PHRASE, "forget about me", {"about": True}, lambda texts: saved_files(texts, about=True)
    )
