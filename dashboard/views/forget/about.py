""""Forget what is about me" (``forget.about``): its dry run, its typed confirmation, its job.

The rows are picked by ``actions.about`` from the stores on screen and the
one findings scan every screen shows; each store's dry run travels in the
form as its fingerprint, so the purge erases exactly what the person saw and
stops if one of those rows changed meanwhile.  The erasure is the forget
screen's verified hard purge, one file after the other, in one job.
"""

from __future__ import annotations

from flask import abort, request
from flask_babel import gettext as _, lazy_gettext as _l

from .. import resolve
from . import jobs as forget_jobs
from ...actions import about as scope
from ...actions import purge
from ...web import page, statuses, stores
from ..findings import current_report, flags_by_row

ABOUT_PHRASE = _l("forget me")


def _parts():
    """The dry run over the readable stores on screen, and the stores it cannot read (with why)."""
    sts = [st for st in statuses() if st.ref.exists]
    refs = [st.ref for st in sts if st.readable]
    unread = [{"store": st.ref.key, "kind": st.ref.kind, "name": st.ref.name,
               "problem": str(st.problem)} for st in sts if not st.readable]
    report, _when, _reused = current_report(refs)
    return scope.plan(refs, flags_by_row(report)), report, unread


def about(fmt: str):
    parts, report, unread = _parts()
    data = {"stores": [p.to_dict() for p in parts], "unreadable": unread, "phrase": str(ABOUT_PHRASE),
            "findings_complete": report.complete,
            "rows_scanned": report.rows_scanned, "rows_total": report.rows_total,
            "finding_categories": list(scope.ABOUT_CATEGORIES)}
    total = sum(len(p.rows) for p in parts)
    events = sum(p.goes().get("event", 0) for p in parts)
    return page(fmt, None, "forget/_about_plan.html", title=_("Forget what is about you"), heading=None, about=data, parts=parts,
                total=total, events=events, items=total - events, fits=all(p.fits for p in parts), to_json=lambda ctx: ctx["about"])


def erase_about():
    refs = {r.key: r for r in stores() if r.exists}
    keys = request.form.getlist("store")
    for key in keys:   # a store that cannot change says so first, whatever else is wrong
        if key not in refs:
            abort(404, _("There is no store called '%(key)s'.", key=key))
        forget_jobs.writable_store(key)
    resolve.typed(request.form.get("confirm"), ABOUT_PHRASE)
    runs = []
    for key in keys:
        ref = refs[key]
        cats = [c for c in request.form.getlist(f"cat-{key}") if c in purge.ALL_CATEGORIES]
        dry_run = resolve.dry_run(ref, request.form.get(f"fingerprint-{key}"), cats, by_id=True)
        runs.append((ref, dry_run, forget_jobs.unverified(ref)))
    if not runs:
        abort(400, _("The dry run names no store. Nothing was changed."))

    def work(job):
        results = []
        for n, (ref, dry_run, earlier) in enumerate(runs):
            # Texts an earlier, unfinished purge of this file erased are looked for again.
            result = purge.purge(ref, dry_run, verify_texts=[t for r in earlier for t in r.texts],
                                 progress=lambda s, f=None, k=ref.key, n=n: job.progress(
                                     f"{k}: {s}", None if f is None else (n + f) / len(runs)))
            forget_jobs.looked_for(earlier, result)
            results.append(result)
        return {"results": results, "about": True}
    return forget_jobs.start("forget about me", [run[0].key for run in runs], work)

