"""Forget's jobs: the page a job is followed on (polled by htmx), its report, a retry,
and how a started job answers (303, htmx fragment with its line in #status, or JSON).

Every answer reads one snapshot of the job (``job_dict``): the job runs in
another thread and could move on between two reads.
"""

from __future__ import annotations

from flask import abort, current_app, request, url_for
from flask_babel import gettext as _

from ... import clock
from ...actions import purge, saved
from ...actions.jobs import Busy, Jobs
from ...records import plain
from ...web import answer, page, stores, twin, wants_fragment
from ...words import label
from .. import resolve


def job(job_id: str, fmt: str):
    found = _job(job_id)
    view = job_dict(found)
    return page(
        fmt,
        None,
        "forget/_job.html",
        title=_("Forget: %(kind)s", kind=found.kind),
        back=(url_for("forget.index"), _("Back to Forget")),
        job=found,
        view=view,
        first=not wants_fragment(),
        said=job_said(view),
        to_json=lambda ctx: ctx["view"],
    )


def report(job_id: str):
    found = _job(job_id)
    if found.state == "running":
        abort(409, _("The action is still running; the report is ready when it ends."))
    response = twin({"report": "agentao memory forget report", "created": clock.stamp(), **job_dict(found)})
    response.headers["Content-Disposition"] = f'attachment; filename="forget-{job_id}.json"'
    return response


# -- actions -----------------------------------------------------------------------------


def retry(job_id: str):
    old = _job(job_id)
    done = (old.result or {}) if old.state == "done" else {}
    results, copies = done.get("results") or [], done.get("saved_again")
    if not results and not copies:
        abort(400, _("Only a finished purge can be retried."))
    refs = {r.key: r for r in stores()}
    for r in results:
        writable_store(r.store)

    def work(job):
        # Same rows again (already gone rows are skipped), and the texts of the
        # first run, which the database no longer holds, are searched for again.
        out = {
            "results": [
                purge.purge(refs[r.store], r.plan, verify_texts=r.texts, progress=job.progress)
                for r in results
            ],
            **{k: done[k] for k in ("about", "memory", "conversation") if k in done},
        }
        if copies:  # the saved conversations too: read again, and what still holds a text redone
            out.update(saved.erased(*saved.again(*copies), progress=job.progress))
        return out

    return start("retry", [r.store for r in results], work)


def _jobs() -> Jobs:
    return current_app.extensions["forget_jobs"]


def _job(job_id: str):
    """The forget job with this id; a 404 when this process does not know it."""
    return _jobs().get(job_id) or abort(
        404, _("That forget action is unknown (the dashboard may have restarted).")
    )


def writable_store(key: str):
    """The store, if it may be changed now; otherwise a 404, 403 or 409 with the reason."""
    try:
        _jobs().check_idle([key])
    except Busy as exc:
        abort(409, str(exc))
    return resolve.writable(key)


def unverified(ref) -> list:
    """Earlier purges of this file whose erased texts were never verified gone.

    Their texts are kept in this process only (never on disk), so the next
    purge of the file can look for them again: a rerun that finds the rows
    already deleted still checks what the first run erased.
    """
    return [
        r
        for j in _jobs().finished()
        for r in (j.result or {}).get("results") or ()
        if r.path == str(ref.path) and not r.verified and r.texts
    ]


def looked_for(earlier: list, result) -> None:
    if result.verified:
        for r in earlier:
            r.texts = ()  # searched for and not found: no reason to keep them in memory


def start(kind, keys, work, background=True, data=None, said=None):
    """Start a purge job and answer with its page; ``data(view)`` and ``said`` (the bulk
    purge's) replace the job's own JSON and sentence."""
    try:
        job_ = _jobs().start(kind, keys, work, background=background)
    except Busy as exc:
        abort(409, str(exc))
    view = job_dict(job_)  # one snapshot: the job runs on in another thread
    return answer(
        (lambda: data(view)) if data else view,
        202 if view["state"] == "running" else 200,
        fragment="forget/_job.html",
        to=url_for("forget.job", job_id=job_.id),
        job=job_,
        view=view,
        first=True,
        said=job_said(view) if said is None else said,
    )


def erase_confirmed(phrase, kind: str, extra: dict, saved_files=None, exact: bool = False):
    """A scoped forget's POST (forget about me, forget a conversation): every named store
    writable, the typed ``phrase``, each store's dry run still true (``resolve.dry_run``),
    then one job purging them one after the other, verified; ``extra`` joins its result.
    ``exact``: the dry runs were cut short by their time limit, so each erases exactly the
    rows it listed, and a row it never read is not called one that arrived since.
    ``saved_files(row_texts)`` gives the saved conversations' share, another kind of copy:
    ``(root, plans, texts)`` for ``actions.saved.erase``, run after the stores."""
    refs = {r.key: r for r in stores() if r.exists}
    keys = request.form.getlist("store")
    for key in keys:  # a store that cannot change says so first, whatever else is wrong
        if key not in refs:
            abort(404, _("There is no store called '%(key)s'.", key=key))
        writable_store(key)
    resolve.typed(request.form.get("confirm"), phrase)
    runs = []
    for key in keys:
        ref = refs[key]
        cats = [c for c in request.form.getlist(f"cat-{key}") if c in purge.ALL_CATEGORIES]
        fingerprint = request.form.get(f"fingerprint-{key}")
        dry_run = resolve.dry_run(ref, fingerprint, () if exact else cats, by_id=not exact)
        runs.append((ref, dry_run, unverified(ref)))
    copies = (
        saved_files([t for _r, dry, _e in runs for row in dry for t in row.texts]) if saved_files else None
    )
    if not runs and not (copies and saved.goes(copies[1])):  # only saved conversations is enough
        abort(400, _("The dry run names no store. Nothing was changed."))

    def work(job):
        results = []
        for n, (ref, dry_run, earlier) in enumerate(runs):
            # Texts an earlier, unfinished purge of this file erased are looked for again.
            result = purge.purge(
                ref,
                dry_run,
                verify_texts=[t for r in earlier for t in r.texts],
                progress=lambda s, f=None, k=ref.key, n=n: job.progress(
                    f"{k}: {s}", None if f is None else (n + f) / len(runs)
                ),
            )
            looked_for(earlier, result)
            results.append(result)
        if copies is not None:
            return {"results": results, **saved.erased(*copies, progress=job.progress), **extra}
        return {"results": results, **extra}

    return start(kind, [run[0].key for run in runs], work)


def job_said(view: dict):
    """The job's state in one line for the pinned #status: progress while it runs, then the verdict."""
    if view["state"] == "running":
        if view["percent"] is None:
            return _("Working: %(step)s…", step=view["step"])
        return _("Working: %(step)s, %(percent)d%%…", step=view["step"], percent=view["percent"])
    if view["state"] == "error":
        return _("The action failed: %(error)s", error=view["error"]), "bad"
    if view.get("verdict"):
        return label("purge_verdict", view["verdict"]), (
            "ok" if view["verdict"] == "verified erased" else "bad"
        )
    if view.get("wipe"):
        return (
            _("Wiped: %(n)d memories soft-deleted.", n=view["wipe"]["memories_cleared"]),
            "ok" if view["wipe"]["ok"] else "bad",
        )
    if "soft_deleted" in view:
        return (
            _("Soft-deleted: the agent no longer sees it.")
            if view["soft_deleted"]
            else (_("Nothing changed: the memory was not live."), "warn")
        )
    return None


def job_dict(job_) -> dict:
    """A job as JSON: state, progress, and results without any erased text."""
    out = {
        "id": job_.id,
        "kind": job_.kind,
        "stores": list(job_.stores),
        **plain(job_, "state", "step", "percent", "error"),
        "url": url_for("forget.job", job_id=job_.id),
        "report_url": url_for("forget.report", job_id=job_.id),
    }
    res = job_.result or {}
    if res.get("wipe") is not None:
        out["wipe"] = res["wipe"].to_dict()
    if "soft_deleted" in res:
        out["soft_deleted"] = res["soft_deleted"]
    if res.get("results"):
        out["verdict"] = purge.overall(res["results"])
        out["verdict_text"] = label("purge_verdict", out["verdict"])
        out["results"] = [r.to_dict() for r in res["results"]]
    if res.get("saved_files") is not None:
        out["saved_files"] = [r.to_dict() for r in res["saved_files"]]
        out.setdefault("verdict", "verified erased")  # a forget of saved conversations only
        out.setdefault("results", [])
        if out["verdict"] == "verified erased" and any(r.status == "still holds" for r in res["saved_files"]):
            out["verdict"] = "found on disk"  # a saved conversation still holds an erased text
            out["verdict_text"] = label("purge_verdict", out["verdict"])
    if res.get("about"):
        out["about"] = True  # "forget what is about me"
        out["about_partial"] = bool(res.get("about_partial"))  # of a dry run cut short
    if res.get("memory"):
        out["memory"] = res["memory"]  # which memory a one-memory purge erased (ids only)
    out["store_names"] = {r.key: r.name for r in stores() if r.key in job_.stores}
    return out
