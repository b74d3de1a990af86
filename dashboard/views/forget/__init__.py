"""Forget: residue report, agentao's wipe, hard purge with dry run, and their results.

Every state change is a POST answered by ``jobs.start`` (303, htmx fragment or JSON).  The
pages of ``one.py``, ``about.py`` and ``jobs.py`` have their routes registered here.
"""

from __future__ import annotations

from collections import Counter

from flask import Blueprint, abort, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from markupsafe import Markup

from ...actions import dryrun, purge, saved
from ...actions.about import sentence
from ...actions.jobs import Jobs
from ...guard.textmarks import shown
from ...pictures import residue_bars
from ...store import StoreProblem, scoped
from ...web import current_project, page, page_route, statuses, stores, workspace
from .. import resolve
from . import about as forget_about
from . import jobs as forget_jobs
from . import one as forget_one
from .jobs import looked_for, start, unverified, writable_store

bp = Blueprint("forget", __name__)
EVERYTHING_PHRASE = _l("forget everything")
CATEGORY_LABELS = {
    "soft_deleted": _l("Soft-deleted memories"),
    "review:pending": _l("Suggestions waiting for you"),
    "review:approved": _l("Suggestions approved"),
    "review:rejected": _l("Suggestions rejected"),
    "summaries": _l("Session summaries"),
    "events": _l("History of erased memories"),
}


@bp.record_once
def _init(state):
    state.app.extensions["forget_jobs"] = Jobs()


@bp.app_template_filter("masked")
def masked(text) -> Markup:
    """A saved conversation's title in a forget's dry run (forget/_saved_plan.html): its secrets
    and contacts masked, as the rows listed beside it are."""
    return shown(sentence(str(text)))


def _categories() -> list[str]:
    picked = request.values.getlist("cat")
    if "everything" in picked:
        return list(purge.ALL_CATEGORIES)
    bad = [c for c in picked if c not in purge.ALL_CATEGORIES]
    if bad or not picked:
        abort(400, _("Pick at least one of: %(names)s, everything.", names=", ".join(purge.ALL_CATEGORIES)))
    return picked


# -- pages -----------------------------------------------------------------------------


@page_route(bp, "/forget")
def index(fmt: str):
    sts = statuses()
    everything = everything_dry_run()
    copies = forget_about.saved_files(everything=True)
    everything["saved_files"] = [f.to_dict() for f in (copies[1] if copies else [])]
    return page(
        fmt,
        "forget/index.html",
        sts=sts,
        labels=CATEGORY_LABELS,
        phrase=str(EVERYTHING_PHRASE),
        everything=everything,
        saved_files=copies[1] if copies else [],
        saved_kept=[],
        to_json=lambda ctx: {
            "stores": [
                {
                    "store": s.ref.key,
                    "name": s.ref.name,
                    "path": str(s.ref.path),
                    "readable": s.readable,
                    "writable": s.writable,
                }
                for s in ctx["sts"]
            ],
            "categories": list(purge.ALL_CATEGORIES),
            "everything_phrase": ctx["phrase"],
            "everything": ctx["everything"],
        },
    )


def everything_dry_run() -> dict:
    """What "forget everything" would erase, store by store, and the projects it leaves alone.

    It takes the stores on screen only: this project's and the user store (which every
    project shares).  Other projects the dashboard knows are named, untouched.
    """
    shown = stores()
    out = {"stores": [], "untouched_projects": []}
    for ref in shown:
        entry = {
            "store": ref.key,
            "kind": ref.kind,
            "name": ref.name,
            "path": str(ref.path),
            "exists": ref.exists,
        }
        if ref.exists:
            try:
                # The wipe soft-deletes the rows of the file's own scope; the purge erases
                # every soft-deleted row, the review queue, the summaries and the history.
                entry.update(scoped.scoped_counts(ref))
            except StoreProblem as exc:
                entry["problem"] = str(exc)
        out["stores"].append(entry)
    ws, here = workspace(), current_project()
    out["untouched_projects"] = [
        {"name": name, "path": str(ref.path)}
        for i, (name, ref) in enumerate(zip(ws.project_names(), ws.project_refs()))
        if i != here
    ]
    return out


# Rows a residue page lists per list (soft-deleted memories, each status of suggestions):
# the newest; its JSON twin lists every one.
RESIDUE_LISTED = 50
# Rows a dry run lists on its page (a store of 100,000 listed 5,000: 1.8 MB); its twin every one.
PLAN_LISTED = 200


@page_route(bp, "/forget/residue/<key>")
def residue(key: str, fmt: str):
    ref = resolve.store(key)
    report = purge.residue_report(ref)
    return page(
        fmt,
        None,
        "forget/_residue.html",
        report=report,
        ref=ref,
        title=(
            _("What is left in your user store")
            if ref.kind == "user"
            else _("What is left in this project's store")
        ),
        back=(url_for("forget.index"), _("Back to Forget")),
        residue_picture=None if fmt == "json" else residue_bars(report),
        listed=RESIDUE_LISTED,
        to_json=lambda ctx: ctx["report"],
    )


@page_route(bp, "/forget/plan/<key>")
def plan(key: str, fmt: str):
    ref = resolve.store(key)
    cats = _categories()
    rows = purge.plan(ref, cats)
    token = purge.fingerprint(rows)
    data = {
        "store": key,
        "name": ref.name,
        "categories": cats,
        "fingerprint": token if dryrun.fits(token) else None,
        "rows": [{"kind": r.kind, "id": r.id, "label": r.label, "bytes": r.bytes} for r in rows],
    }
    if data["fingerprint"] is None:
        data["too_large"] = _(
            "This dry run lists %(n)d rows, more than one form can confirm: "
            "erase a category at a time, or use “Forget everything”.",
            n=len(rows),
        )
    kinds = Counter(r.kind for r in rows)
    user = ref.kind == "user"
    return page(
        fmt,
        None,
        "forget/_plan.html",
        plan=data,
        ref=ref,
        kinds=kinds,
        title=_("Dry run: your user store") if user else _("Dry run: this project's store"),
        heading=(
            _("Dry run: erase from your user store")
            if user
            else _("Dry run: erase from this project's store")
        ),
        labels=CATEGORY_LABELS,
        listed=PLAN_LISTED,
        to_json=lambda ctx: ctx["plan"],
    )


def _all_writable() -> list:
    every = stores()
    for ref in every:
        if not ref.missing:  # a folder or a socket at the path is refused with its reason
            writable_store(ref.key)
    return every


@bp.post("/forget/wipe")
def wipe():
    every = _all_writable()
    if request.form.get("confirm") != "yes":
        abort(400, _("Tick the box to confirm the wipe. Nothing was changed."))
    return start("wipe", [r.key for r in every], lambda job: {"wipe": purge.wipe(every)}, background=False)


@bp.post("/forget/purge/<key>")
def purge_store(key: str):
    ref = writable_store(key)
    cats = _categories()
    resolve.typed(request.form.get("confirm"), ref.name)
    # The rows the user saw: only they go.  Rows that arrived since are kept
    # (and reported); a confirmed row that changed is a reason to look again.
    dry_run = resolve.dry_run(ref, request.form.get("fingerprint"), cats)
    earlier = unverified(ref)

    def work(job):
        result = purge.purge(
            ref, dry_run, verify_texts=[t for r in earlier for t in r.texts], progress=job.progress
        )
        looked_for(earlier, result)
        return {"results": [result]}

    return start("purge", [key], work)


@bp.post("/forget/everything")
def everything():
    """Wipe and erase the stores on screen (this project's and the user store), verified.

    Other projects are never touched (#21: it used to purge a project not on
    screen without a word); the dry run on the forget page names them.
    """
    every = _all_writable()  # the worker thread has no app context
    shown = request.form.get("project")
    if shown is not None and shown != str(every[0].path):
        abort(
            409,
            _(
                "The project on screen changed since this page was shown (another tab?). "
                "Look at the forget page again. Nothing was changed."
            ),
        )
    resolve.typed(request.form.get("confirm"), EVERYTHING_PHRASE)
    refs = [r for r in every if r.exists]
    earlier = {str(r.path): unverified(r) for r in every}

    def texts(ref):
        return [t for r in earlier.get(str(ref.path), ()) for t in r.texts]

    copies = forget_about.saved_files(everything=True)

    def run(job):
        report = purge.forget_everything(every, progress=job.progress, earlier=texts)
        for result in report["results"]:
            looked_for(earlier.get(result.path, []), result)
        if copies is not None:  # agentao's saved conversations: every file goes
            report.update(saved.erased(*copies, progress=job.progress))
        return report

    return start("forget everything", [r.key for r in refs], run)


# The other forget pages: their views live beside this module, their routes here.
page_route(bp, "/forget/jobs/<job_id>")(forget_jobs.job)
bp.get("/forget/jobs/<job_id>/report.json")(forget_jobs.report)
bp.post("/forget/jobs/<job_id>/retry")(forget_jobs.retry)
page_route(bp, "/forget/about")(forget_about.about)
bp.post("/forget/about")(forget_about.erase_about)
page_route(bp, "/forget/memory/<key>/<memory_id>")(forget_one.memory)
bp.post("/forget/memory/<key>/<memory_id>")(forget_one.forget_memory)
