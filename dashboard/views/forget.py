"""Forget: residue report, agentao's wipe, hard purge with dry run, and their results.

Every state change is a POST: without JavaScript it answers 303 to the job's
page, with htmx the job fragment (which polls itself while the job runs),
with ``Accept: application/json`` the job as JSON.
"""

from __future__ import annotations

import functools
from datetime import datetime

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from ..actions import dryrun
from ..actions import purge
from ..actions.jobs import Busy, Jobs
from ..pictures import residue_bars
from ..store import get_memory
from ..store.purge import count_kinds
from ..web import (wants_json, workspace, page, page_route, raise_if_unreadable, statuses, store_by_key,
                   stores, twin, wants_fragment)

bp = Blueprint("forget", __name__)
EVERYTHING_PHRASE = "forget everything"
CATEGORY_LABELS = {"soft_deleted": "Soft-deleted memories", "review:pending": "Review items: pending",
                   "review:approved": "Review items: approved",
                   "review:rejected": "Review items: rejected",
                   "summaries": "Session summaries", "events": "Events of purged memories"}


@bp.record_once
def _init(state):
    state.app.extensions["forget_jobs"] = Jobs()


def action(rule: str):
    """A POST route; htmx does not swap error responses, so a refused htmx POST
    gets its message as a fragment.  Pages, no-JS forms and JSON keep the status."""
    def decorate(view):
        @functools.wraps(view)
        def wrapper(*args, **kwargs):
            try:
                return view(*args, **kwargs)
            except HTTPException as exc:
                if not wants_fragment() or wants_json():
                    raise
                return render_template("forget/_message.html", status=exc.code,
                                       message=exc.description)
        return bp.post(rule)(wrapper)
    return decorate


def _jobs() -> Jobs:
    return current_app.extensions["forget_jobs"]


def _writable_store(key: str):
    """The store, if it may be changed now; otherwise a 404, 403 or 409 with the reason."""
    try:
        _jobs().check_idle([key])
    except Busy as exc:
        abort(409, str(exc))
    ref = store_by_key(key)
    if ref is None:
        abort(404, f"There is no store called '{key}'.")
    st = next(s for s in statuses() if s.ref.key == key)
    if current_app.config["READ_ONLY"] or not st.writable:
        # The reasons are sentences already: one full stop, not two.
        reason = str(st.problem or st.read_only_reason or "the dashboard runs read-only")
        abort(403, f"The {ref.kind} store cannot be changed: {reason.rstrip('.')}.")
    return ref


def _categories() -> list[str]:
    picked = request.values.getlist("cat")
    if "everything" in picked:
        return list(purge.ALL_CATEGORIES)
    bad = [c for c in picked if c not in purge.ALL_CATEGORIES]
    if bad or not picked:
        abort(400, "Pick at least one of: " + ", ".join(purge.ALL_CATEGORIES) + ", everything.")
    return picked


def _confirmed(expected: str) -> None:
    if (request.form.get("confirm") or "").strip() != expected:
        abort(400, f"To confirm, type “{expected}” exactly. Nothing was changed.")


# -- pages -----------------------------------------------------------------------------

@page_route(bp, "/forget")
def index(fmt: str):
    sts = statuses()
    return page(fmt, "forget/index.html", sts=sts, labels=CATEGORY_LABELS, phrase=EVERYTHING_PHRASE,
                to_json=lambda ctx: {
                    "stores": [{"store": s.ref.key, "name": s.ref.name, "path": str(s.ref.path),
                                "readable": s.readable, "writable": s.writable} for s in ctx["sts"]],
                    "categories": list(purge.ALL_CATEGORIES), "everything_phrase": ctx["phrase"]})


@page_route(bp, "/forget/residue/<key>")
def residue(key: str, fmt: str):
    ref = store_by_key(key) or abort(404, f"There is no store called '{key}'.")
    raise_if_unreadable(key)
    report = purge.residue_report(ref)
    return page(fmt, "forget/residue.html", "forget/_residue.html", report=report, ref=ref,
                residue_picture=None if fmt == "json" else residue_bars(report),
                to_json=lambda ctx: ctx["report"])


@page_route(bp, "/forget/plan/<key>")
def plan(key: str, fmt: str):
    ref = store_by_key(key) or abort(404, f"There is no store called '{key}'.")
    raise_if_unreadable(key)
    cats = _categories()
    rows = purge.plan(ref, cats)
    token = purge.fingerprint(rows)
    data = {"store": key, "name": ref.name, "categories": cats,
            "fingerprint": token if dryrun.fits(token) else None,
            "rows": [{"kind": r.kind, "id": r.id, "label": r.label, "bytes": r.bytes} for r in rows]}
    if data["fingerprint"] is None:
        data["too_large"] = (f"This dry run lists {len(rows)} rows, more than one form can confirm: "
                             "erase a category at a time, or use “Forget everything”.")
    return page(fmt, "forget/plan.html", "forget/_plan.html", plan=data, ref=ref,
                labels=CATEGORY_LABELS, to_json=lambda ctx: ctx["plan"])


@page_route(bp, "/forget/memory/<key>/<memory_id>")
def memory(key: str, memory_id: str, fmt: str):
    ref = store_by_key(key) or abort(404, f"There is no store called '{key}'.")
    raise_if_unreadable(key)
    mem, _events = get_memory(ref, memory_id)
    if mem is None:
        abort(404, f"No memory {memory_id} in the {key} store.")
    return page(fmt, "forget/memory.html", mem=mem, ref=ref, limits=purge.KNOWN_TEXTS_ONLY,
                to_json=lambda ctx: {"memory": ctx["mem"], "limits": ctx["limits"]})


@page_route(bp, "/forget/jobs/<job_id>")
def job(job_id: str, fmt: str):
    found = _jobs().get(job_id) or abort(404, "That forget action is unknown (the dashboard may have restarted).")
    return page(fmt, "forget/job.html", "forget/_job.html", job=found, view=job_dict(found),
                to_json=lambda ctx: ctx["view"])


@bp.get("/forget/jobs/<job_id>/report.json")
def report(job_id: str):
    found = _jobs().get(job_id) or abort(404, "That forget action is unknown.")
    if found.state == "running":
        abort(409, "The action is still running; the report is ready when it ends.")
    response = twin({"report": "agentao memory forget report",
                     "created": datetime.now().isoformat(timespec="seconds"), **job_dict(found)})
    response.headers["Content-Disposition"] = f'attachment; filename="forget-{job_id}.json"'
    return response


# -- actions -----------------------------------------------------------------------------

@action("/forget/wipe")
def wipe():
    for ref in stores():
        if not ref.missing:   # a folder or a socket at the path is refused with its reason
            _writable_store(ref.key)
    if request.form.get("confirm") != "yes":
        abort(400, "Tick the box to confirm the wipe. Nothing was changed.")
    every = stores()
    return _start("wipe", [r.key for r in every], lambda job: {"wipe": purge.wipe(every)},
                  background=False)


@action("/forget/purge/<key>")
def purge_store(key: str):
    ref = _writable_store(key)
    cats = _categories()
    _confirmed(ref.name)
    try:
        # The rows the user saw: only they go.  Rows that arrived since are kept
        # (and reported); a confirmed row that changed is a reason to look again.
        dry_run = purge.confirmed(request.form.get("fingerprint") or "", cats)
    except ValueError:
        abort(400, "The dry run's fingerprint is missing or damaged: look at the dry run again. "
                   "Nothing was changed.")
    changed = purge.check(ref, dry_run).changed
    if changed:
        abort(409, f"{len(changed)} of the rows you confirmed changed since the dry run "
                   f"({count_kinds(changed)}). Look at the new dry run before purging. "
                   "Nothing was changed.")
    earlier = _unverified(ref)

    def work(job):
        result = purge.purge(ref, dry_run, verify_texts=[t for r in earlier for t in r.texts],
                             progress=job.progress)
        _looked_for(earlier, result)
        return {"results": [result]}
    return _start("purge", [key], work)


def _unverified(ref) -> list:
    """Earlier purges of this file whose erased texts were never verified gone.

    Their texts are kept in this process only (never on disk), so the next
    purge of the file can look for them again: a rerun that finds the rows
    already deleted still checks what the first run erased.
    """
    return [r for j in _jobs().finished() for r in (j.result or {}).get("results") or ()
            if r.path == str(ref.path) and not r.verified and r.texts]


def _looked_for(earlier: list, result) -> None:
    if result.verified:
        for r in earlier:
            r.texts = ()   # searched for and not found: no reason to keep them in memory


@action("/forget/memory/<key>/<memory_id>")
def forget_memory(key: str, memory_id: str):
    ref = _writable_store(key)
    mode = request.form.get("mode")
    if mode == "soft":
        return _start("soft delete", [key], lambda job: {
            "soft_deleted": purge.soft_forget(ref, memory_id)}, background=False)
    if mode != "purge":
        abort(400, "'mode' must be 'soft' or 'purge'.")
    _confirmed(ref.name)
    return _start("memory purge", [key], lambda job: {
        "results": [purge.forget_memory(ref, memory_id, progress=job.progress)]})


@action("/forget/everything")
def everything():
    for ref in stores():
        if not ref.missing:
            _writable_store(ref.key)
    refs = [r for r in stores() if r.exists]
    _confirmed(EVERYTHING_PHRASE)
    every = stores()   # the worker thread has no app context
    # Several projects open: the user store goes once, every project's store too.
    others = [r for r in workspace().project_refs() if r.path != every[0].path and r.exists]
    earlier = {str(r.path): _unverified(r) for r in every + others}

    def texts(ref):
        return [t for r in earlier.get(str(ref.path), ()) for t in r.texts]

    def run(job):
        report = purge.forget_everything(every, progress=job.progress, earlier=texts)
        for ref in others:
            more = purge.forget_everything([ref], progress=job.progress, earlier=texts)
            report["results"] += more["results"]
            report.setdefault("other_projects", []).append(
                {"store": ref.name, "path": str(ref.path), "wipe": more["wipe"]})
        for result in report["results"]:
            _looked_for(earlier.get(result.path, []), result)
        return report
    return _start("forget everything", [r.key for r in refs], run)


@action("/forget/jobs/<job_id>/retry")
def retry(job_id: str):
    old = _jobs().get(job_id) or abort(404, "That forget action is unknown.")
    results = (old.result or {}).get("results") if old.state == "done" else None
    if not results:
        abort(400, "Only a finished purge can be retried.")
    refs = {r.key: r for r in stores()}
    for r in results:
        _writable_store(r.store)

    def work(job):
        # Same rows again (already gone rows are skipped), and the texts of the
        # first run, which the database no longer holds, are searched for again.
        return {"results": [purge.purge(refs[r.store], r.plan, verify_texts=r.texts,
                                        progress=job.progress) for r in results]}
    return _start("retry", [r.store for r in results], work)


def _start(kind, keys, work, background=True):
    try:
        job_ = _jobs().start(kind, keys, work, background=background)
    except Busy as exc:
        abort(409, str(exc))
    if wants_json():
        return twin(job_dict(job_), 202 if job_.state == "running" else 200)
    if wants_fragment():
        return render_template("forget/_job.html", job=job_, view=job_dict(job_))
    return redirect(url_for("forget.job", job_id=job_.id), 303)


def job_dict(job_) -> dict:
    """A job as JSON: state, progress, and results without any erased text."""
    out = {"id": job_.id, "kind": job_.kind, "stores": list(job_.stores), "state": job_.state,
           "step": job_.step, "percent": job_.percent, "error": job_.error,
           "url": url_for("forget.job", job_id=job_.id),
           "report_url": url_for("forget.report", job_id=job_.id)}
    res = job_.result or {}
    if res.get("wipe") is not None:
        out["wipe"] = res["wipe"].to_dict()
    if "soft_deleted" in res:
        out["soft_deleted"] = res["soft_deleted"]
    if res.get("results"):
        out["verdict"] = purge.overall(res["results"])
        out["results"] = [r.to_dict() for r in res["results"]]
    return out
