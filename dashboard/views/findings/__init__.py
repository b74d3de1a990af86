"""Findings: memories that should not be there, where they are, how they reach the model.

``/findings`` lists them; ``/findings/check/...`` re-checks one after a fix; the fix links
are ``links.py``.  One scan is shared by every screen (``current_report``), and what a newer
scan no longer finds stays listed as fixed while the dashboard runs (``findings.fixed``).

A page's scan stops after ``FINDINGS_TIME_LIMIT_MS`` (as Datasette's
``sql_time_limit_ms``) and says how far it got; ``POST /findings/scan`` runs
the full scan as a background job (``actions.jobs``) whose page polls its
progress, and whose report the list then shows.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import Counter
from datetime import datetime

from flask import Blueprint, abort, current_app, g, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ... import facts
from ...actions.jobs import Busy, Job, Jobs
from ...agent_cjk import agent_cjk
from ...clock import now as clock
from ...engine import preview, tokenizer_for
from ...findings.checks import signature_in, signed_here, valid_signature
from ...findings.fixed import Fixed
from ...findings.scan import CATEGORIES, REACH, Item, Report, scan
from ...findings.why import why_text
from ...preview_source import snapshot
from ...store import held
from ...store.scan import SCANNED, scan_row
from ...web import (
    NAV_BADGES,
    number_arg,
    page_route,
    readable_refs,
    status_of,
    statuses,
    store_by_key,
    stores,
    twin,
    wants_fragment,
)
from ...web import page as page_
from ...words import Terms
from .links import actions, check_href, shown

bp = Blueprint("findings", __name__)

PER_PAGE = 40  # a page of findings stays under 100 KB of HTML at 1,000 memories
MAX_PER_PAGE = 1000
# A scan is shown again (another page, another filter) while no file has
# changed, for at most this long: staleness moves with the clock.
REUSE_S = 60
FULL_REUSE_S = 3600  # a background job's full report: minutes of work, kept while no file changes
TIME_LIMIT_MS = 2000  # a page's scan, unless the FINDINGS_TIME_LIMIT_MS config key says otherwise
_scanning = threading.Lock()  # one scan at a time: two at once only share the CPU
_apps = itertools.count()  # each app's scans are held apart (tests run several apps)


def parse_filters(args) -> dict:
    """Query string -> filters; anything unknown is a 400 naming the allowed values."""
    allowed = {"category": list(CATEGORIES), "store": [r.key for r in stores()], "reach": list(REACH)}
    out = {}
    for name, values in allowed.items():
        value = (args.get(name) or "").strip()
        if value and value not in values:
            abort(400, _("'%(name)s' must be one of: %(values)s.", name=name, values=", ".join(values)))
        out[name] = value or None
    return out


def _time_limit() -> float:
    return current_app.config.get("FINDINGS_TIME_LIMIT_MS", TIME_LIMIT_MS) / 1000


def _scan_key(refs, app=None) -> tuple:
    """Where the scan is held (``store.held``: kept while no file moves): the files, and per app."""
    app = app or current_app._get_current_object()
    return [r.path for r in refs], (
        tuple(r.key for r in refs),
        app.extensions.setdefault("findings_held", next(_apps)),
    )


def current_report(refs=None) -> tuple[Report, datetime, bool]:
    """The scan to show, when it ran, and whether it is an earlier one shown again.

    ``?rescan=1`` always scans.  A page's own scan is bounded in time; a
    background job's full report is shown instead while no file has changed.
    """
    refs = readable_refs() if refs is None else refs
    paths, key = _scan_key(refs)
    stamp = held.stamps(paths)  # before the scan: a write during it makes the next view scan again
    with _scanning:
        found = held.peek("findings", paths, key, stamp)
        if (
            found
            and request.args.get("rescan") != "1"
            and time.monotonic() - found[0] < (FULL_REUSE_S if found[3] else REUSE_S)
        ):
            return found[1], found[2], True
        now = clock()
        report = scan(refs, now, time_limit=_time_limit())
        report.problems += unread_stores()
        _hold(current_app, refs, stamp, report, now, False)
        return report, now, False


def unread_stores() -> list[dict]:
    """The shown stores a scan leaves out because they cannot be read (a store with no file
    yet holds nothing to count): a problem of the report, so no count claims to be all."""
    return [
        {"store": st.ref.key, "kind": st.problem.kind, "message": str(st.problem)}
        for st in statuses()
        if st.problem is not None and st.problem.kind != "missing"
    ]


def _fixed(app) -> Fixed:
    return app.extensions.setdefault("findings_fixed", Fixed())


def _hold(app, refs, stamp: tuple, report: Report, now: datetime, full: bool) -> None:
    """Keep a new scan for the screens to share, and note what it no longer finds (under
    ``_scanning``)."""
    _fixed(app).update(report, {r.key: str(r.path) for r in refs}, now)
    paths, key = _scan_key(refs, app)
    held.keep("findings", paths, (time.monotonic(), report, now, full), key, stamp)


def fixed_now() -> list:
    """The findings fixed since the dashboard started, in the stores shown (newest first)."""
    by_path = {str(r.path): r.key for r in readable_refs()}
    # The same file under the same key.
    return [gone for gone in _fixed(current_app).shown(by_path) if gone.item.store == by_path[gone.path]]


def held_report() -> Report | None:
    """The scan already held for the files as they are now, or None; never scans.

    For what every page draws (the Findings tab's count, dashboard/facts.py): a fresh
    scan costs 60-90 ms at 1,000 memories and 0.3-0.6 s at 10,000 (up to its 2 s limit
    on larger stores), paid by the first page after every write; reading the held scan
    costs 0.1-0.4 ms (bench/bench_findings_badge.py, bench/results/findings-badge.txt).
    Any write moves a file's stamp, and a scan of files that have changed is never read.
    """
    found = held.peek("findings", *_scan_key(readable_refs()))
    return found[1] if found else None  # none yet, or a file moved since


def _badge() -> facts.Badge | None:
    # ``badge()`` hands over the scan it ran (a write during it must not ask again and again).
    return facts.risky_badge(g.get("badge_report") or held_report(), url_for("findings.badge"))


NAV_BADGES["findings.index"] = _badge


@bp.get("/findings/badge")
def badge():
    """The Findings tab's count, asked by its stand-in (partials/tabs.html) when no scan is
    held for the files as they are: the page's bounded scan.  The answer is the header's own
    out-of-band redraw (facts._tabs_out_of_band); a browser sent here gets the findings."""
    if not wants_fragment():
        return redirect(url_for("findings.index"), 303)
    g.badge_report = current_report()[0]
    return ""


def report_counts(report: Report) -> dict[str, Counter]:
    """The report's findings per category, store and reach (the filters' counts), in one pass."""
    by: dict[str, Counter] = {"category": Counter(), "store": Counter(), "reach": Counter()}
    category, store, reach = by.values()
    for i in report.items:
        category[i.finding.category] += 1
        store[i.store] += 1
        reach[i.reach] += 1
    return by


def _jobs() -> Jobs:
    return current_app.extensions.setdefault("findings_jobs", Jobs())


def _running_job() -> Job | None:
    return next(iter(_jobs().running()), None)


def cut_facts(report: Report) -> dict:
    return {
        "complete": report.complete,
        "cut": [str(c) for c in report.cut],
        "rows_scanned": report.rows_scanned,
        "rows_total": report.rows_total,
    }


@page_route(bp, "/findings")
def index(fmt: str):

    filters = parse_filters(request.args)
    page = number_arg("page", 1, 10**6)
    per_page = number_arg("per_page", PER_PAGE, MAX_PER_PAGE)
    report, scanned_at, reused = current_report()

    def wanted(i: Item) -> bool:
        return all(
            v is None or v == (i.finding.category if k == "category" else getattr(i, k))
            for k, v in filters.items()
        )

    filtered = any(v is not None for v in filters.values())
    matching = [i for i in report.items if wanted(i)] if filtered else report.items
    fixed = [g for g in fixed_now() if wanted(g.item)]
    pages = max(1, -(-len(matching) // per_page))
    items = matching[(page - 1) * per_page : page * per_page]
    counts = report_counts(report)
    listed = {p["store"] for p in report.problems}
    problems = report.problems + [
        {"store": st.ref.key, "kind": st.problem.kind, "message": str(st.problem)}
        for st in statuses()
        if st.problem and st.ref.key not in listed
    ]
    return page_(
        fmt,
        "findings/index.html",
        "findings/list.html",
        to_json=_list_json,
        items=items,
        filters=filters,
        total=len(matching),
        page=page,
        pages=pages,
        per_page=per_page,
        counts=counts,
        categories=CATEGORIES,
        reaches=REACH,
        report=report,
        actions=actions,
        scanned_at=scanned_at,
        reused=reused,
        job=_running_job(),
        job_view=_job_dict,
        problems=problems,
        store_keys=[r.key for r in stores()],
        fixed=fixed,
        check_href=check_href,
        why_text=why_text,
        term=Terms(),  # forty rows name the same few rules and stores
        risky=facts.risky_in(report),
        saved_hits=facts.saved()[1],
        forget_about="forget.about" in current_app.view_functions,
    )


def _list_json(ctx) -> dict:
    report, job = ctx["report"], ctx["job"]
    return {
        "risky": ctx["risky"].to_dict(),
        "filters": ctx["filters"],
        "total": ctx["total"],
        "all": len(report.items),
        "page": ctx["page"],
        "pages": ctx["pages"],
        "per_page": ctx["per_page"],
        "counts": {k: dict(v) for k, v in ctx["counts"].items()},
        "scanned": report.scanned,
        "scanned_at": ctx["scanned_at"].isoformat(),
        "reused": ctx["reused"],
        **cut_facts(report),
        "items": [shown(i) for i in ctx["items"]],
        "full_scan": url_for("findings.full_scan"),
        "job": _job_dict(job) if job else None,
        "problems": ctx["problems"],
        "saved_conversations": [h.to_dict() for h in ctx["saved_hits"][:200]],
        "fixed": [
            {**g.item.to_dict(), "fixed_at": g.fixed_at.isoformat(), "check": check_href(g.item)}
            for g in ctx["fixed"]
        ],
    }


@bp.post("/findings/scan")
def full_scan():
    """Start the full scan in the background (one at a time); answer its job."""
    app, refs, now = current_app._get_current_object(), readable_refs(), clock()
    stamp, unread = held.stamps(r.path for r in refs), unread_stores()

    def work(job: Job) -> dict:
        report = scan(refs, now, progress=job.progress)
        report.problems += unread
        with _scanning:
            _hold(app, refs, stamp, report, now, True)
        return {"findings": len(report.items), **cut_facts(report)}

    try:
        job = _jobs().start("findings scan", ["findings"], work)
    except Busy:
        job = _running_job()
        if job is None:  # it ended meanwhile: start again
            job = _jobs().start("findings scan", ["findings"], work)
    if request.accept_mimetypes.best == "application/json":
        return twin(_job_dict(job), 202 if job.state == "running" else 200)
    if wants_fragment():
        return render_template("findings/job.html", view=_job_dict(job))
    return redirect(url_for("findings.job", job=job.id), 303)


def _job_dict(job: Job) -> dict:
    """One snapshot of a job (it runs in another thread), for the page and the twin."""
    state, fraction = job.state, job.fraction
    return {
        "id": job.id,
        "state": state,
        "step": job.step,
        "progress": fraction,
        "percent": None if fraction is None else int(fraction * 100),
        "error": job.error,
        "result": job.result if state == "done" else None,
        "url": url_for("findings.job", job=job.id),
        "json_url": url_for("findings.job", fmt="json", job=job.id),
        "findings_url": url_for("findings.index"),
    }


@page_route(bp, "/findings/scan")
def job(fmt: str):
    """A full scan's progress (``?job=<id>``), else the latest one's; none yet is said so."""
    job_id = request.args.get("job")
    if job_id:
        found = _jobs().get(job_id) or abort(
            404, _("That scan is unknown (the dashboard may have restarted).")
        )
    else:
        found = next(iter(_jobs().running()[-1:] or _jobs().finished()[-1:]), None)
    view = _job_dict(found) if found else None
    return page_(
        fmt,
        None,
        "findings/job.html",
        title=_("Findings: full scan"),
        view=view,
        to_json=lambda ctx: ctx["view"] or {"state": "none", "full_scan": url_for("findings.full_scan")},
    )


# -- the re-check of one finding after a fix: the shared scan again, and the flagged text
# looked for, by its keyed digest, in both prompt blocks as the preview engine renders them now.

_RULE = re.compile(r"[a-z]{1,20}\.[a-z0-9_]{1,60}")
_FIELD = re.compile(r"[a-z_]{1,40}")
# The verdict in words, one text for the page and its twin.
VERDICTS = {
    "fixed": _l("Fixed: the row no longer has this finding."),
    "on_disk": _l(
        "Out of the prompt but still in the file: agentao never reads it, the text stays on disk "
        "until it is erased for good."
    ),
    "reaches": _l("Not fixed: the text still reaches the model."),
    "unknown": _l(
        "Not known yet: the scan ran out of time before it reached every row. Run the full scan in "
        "the background from the findings list, then check again."
    ),
}


def _row_state(table: str, row) -> str:
    if row is None:
        return "gone"
    if table == "memories":
        return "live" if row.deleted_at is None else "deleted"
    return row.status if table == "memory_review_queue" else "kept"


def _own_words(table: str, row) -> str:
    """The recall query most likely to bring the row back: its own title and content."""
    if row is None or table == "session_summaries":
        return ""
    return f"{row.title}\n{row.content}"


@page_route(bp, "/findings/check/<store>/<table>/<row_id>")
def check(store: str, table: str, row_id: str, fmt: str):
    ref = store_by_key(store)
    if ref is None or table not in SCANNED or len(row_id) > 200:
        abort(404, _("No scanned table '%(table)s' in store '%(store)s'.", table=table, store=store))
    rule, field, label, sig = (request.args.get(k, "") for k in ("rule", "field", "label", "sig"))
    if not _RULE.fullmatch(rule) or not _FIELD.fullmatch(field):
        abort(400, _("'rule' and 'field' must name a finding, as the findings list links it."))
    if sig and not valid_signature(sig):
        abort(400, _("'sig' is not a signature of flagged text; open the check from the findings list."))
    status = status_of(store)
    if status.problem:
        raise status.problem
    row = scan_row(ref, table, row_id)
    report, scanned_at, reused = current_report()
    on_row = [i for i in report.items if (i.store, i.table, i.row_id) == (store, table, row_id)]
    same = [i for i in on_row if (i.finding.rule, i.finding.field) == (rule, field)]
    # The blocks agentao would send now: <memory-stable> for a new session, and
    # <memory-context> for the row's own words (or its key, once it is gone).
    own = _own_words(table, row)
    query = own or label[:500]
    snap = snapshot(statuses())
    # Tokenised as the agent does (its jieba, or --cjk), as the preview page does.
    blocks_now = preview(
        snap.project,
        snap.user,
        snap.summaries,
        query=query,
        now=clock(),
        cache=snap.cache,
        tokenizer=tokenizer_for(agent_cjk(current_app.config["CJK"]).use),
    )
    looked = bool(sig) and signed_here(sig)
    blocks = [
        {"block": name, "text_found": signature_in(text, sig) if looked else None, "chars": len(text)}
        for name, text in (("stable", blocks_now.stable_block), ("context", blocks_now.context_block))
    ]
    reaching = any(i.reach != "disk" for i in same)
    # The text in a block while this row's own copy does not reach: another row holds it.
    # (Only a complete scan can tell: a cut one may not have reached the row.)
    elsewhere = not reaching and report.complete and any(b["text_found"] for b in blocks)
    found = any(b["text_found"] for b in blocks)
    verdict = (
        "reaches"
        if reaching or elsewhere or found
        else "on_disk"
        if same
        else "fixed"
        if report.complete
        else "unknown"
    )
    data = {
        "store": store,
        "table": table,
        "row_id": row_id,
        "rule": rule,
        "field": field,
        "label": label,
        "row": _row_state(table, row),
        "verdict": verdict,
        "verdict_text": str(VERDICTS[verdict]),
        "still_flagged": bool(same),
        "text_looked_for": looked,
        "signature_expired": bool(sig) and not looked,
        "held_elsewhere": elsewhere,
        "blocks": blocks,
        "query": "the row's own title and content" if own else "the row's label",
        "findings": [shown(i) for i in on_row],
        "scanned_at": scanned_at.isoformat(),
        "reused": reused,
        **cut_facts(report),
    }
    return page_(
        fmt,
        "findings/check.html",
        check=data,
        items=on_row,
        reaches=REACH,
        categories=CATEGORIES,
        scanned_at=scanned_at,
        actions=actions,
        to_json=lambda ctx: ctx["check"],
    )
