"""Reject and erase evidence: confirm, erase, show the on-disk verdict, retry.

Erasing cannot be undone, so it takes two requests: a GET page listing
exactly what will be erased (works without JavaScript; with htmx the bulk
button swaps it in place of the list), then a POST with ``confirm=1``.
The POST answers JSON when asked, a report fragment to htmx, and otherwise
303 to a report page (the report is kept in process memory under a token).
Part of the reviews screen: ``views.reviews`` registers these handlers on its blueprint
(same URL prefix, same template folder).
"""

from __future__ import annotations

from flask import abort, current_app, request, url_for
from flask_babel import gettext as _

from ... import facts
from ...actions import erasure
from ...store import writes
from ...store.writes import fingerprint
from ...web import answer, raise_if_unreadable, render, stores
from ..outcomes import ID, Blocked, form_values, require_writable, strings
from .queue import STATUSES, TAB_NAMES
from .queue import project as _project

MAX_IDS = 100  # each erase rewrites the whole file (VACUUM): keep one request bounded


def _ids(values) -> list[str]:
    ids = list(dict.fromkeys(strings(values, "ids")))
    if not ids:
        abort(400, _("Select at least one review item to erase."))
    if len(ids) > MAX_IDS:
        abort(400, _("At most %(num)d items at a time: each erase rewrites the whole file.", num=MAX_IDS))
    bad = [i for i in ids if not ID.fullmatch(i)]
    if bad:
        abort(400, _("'%(id)s' is not a review item id.", id=bad[0]))
    return ids


def _confirm_context(ids: list[str]) -> dict:
    path = _project().path
    found = [writes.review_item(path, i) for i in ids]
    return {
        "items": [i for i in found if i is not None],
        "missing": [i for i, item in zip(ids, found) if item is None],
        "fingerprints": {i.id: fingerprint(i) for i in found if i is not None},
    }


def erase_confirm():
    """What "reject and erase" would remove, item by item, with the confirming form."""
    ctx = _confirm_context(_ids(request.args))
    # The tabs are on the page so the report's out-of-band counter swap has a target.
    return answer(
        lambda: {
            "items": [dict(i.to_dict(), seen=ctx["fingerprints"][i.id]) for i in ctx["items"]],
            "missing": ctx["missing"],
        },
        page="reviews/erase.html",
        fragment="reviews/_erase_confirm.html",
        **ctx,
        **_tabs(),
    )


def erase():
    values = form_values()
    ids = _ids(values)
    if str(values.get("confirm")) not in ("1", "True", "true"):
        # Never erase on a bare POST: show (or tell) what confirming would remove.
        message = _(
            "Erasing cannot be undone: confirm with %(field)s after reading what goes.", field="confirm=1"
        )
        return answer(
            {"ok": False, "message": message},
            400,
            page="reviews/erase.html",
            problem=message,
            **_confirm_context(ids),
        )
    refused = _not_writable()
    if refused is not None:
        return refused
    seen = {i: values.get(f"seen-{i}") for i in ids}
    report = erasure.erase(stores(), _project(), ids, seen)
    erasure.reports_for(current_app.extensions).keep(report)
    return _answer(report)


def _not_writable():
    try:
        require_writable("project")
    except Blocked as blocked:
        status, message = blocked.status, str(blocked)
        return answer({"ok": False, "message": message}, status, html=lambda: abort(status, message))
    return None


def _answer(report: erasure.EraseReport):
    failed = any(i.status in ("conflict", "not found") for i in report.items)
    return answer(
        lambda: dict(report.to_dict(), ok=not failed),
        409 if failed else 200,
        fragment="reviews/_erase_report.html",
        to=url_for("reviews.erased", report=report.token),
        report=report,
        oob_tabs=True,
        **_tabs(),
    )


def _tabs() -> dict:
    return {"counts": facts.suggestions(), "statuses": STATUSES, "status": None, "tab_names": TAB_NAMES}


def _report(token: str) -> erasure.EraseReport:
    report = erasure.reports_for(current_app.extensions).get(token)
    if report is None:
        abort(
            404,
            _(
                "This erase report is no longer kept (the dashboard restarted or erased "
                "many times since). The review list shows what is left."
            ),
        )
    return report


def erased():
    """The verdict of one erase request, per item (``?report=`` names it).

    Not ``?token=``: that parameter is the dashboard's access token, and the
    guard would refuse the page as a wrong token.
    """
    raise_if_unreadable("project")  # a page about the project's queue: its problem, not zeros
    report = _report(request.args.get("report") or "")
    return render("reviews/erased.html", "reviews/_erase_report.html", report=report, **_tabs())


def erase_retry(token: str):
    report = _report(token)
    if not report.retryable:
        return answer(lambda: dict(report.to_dict(), ok=True), to=url_for("reviews.erased", report=token))
    refused = _not_writable()
    if refused is not None:
        return refused
    fresh = erasure.retry(_project(), report)
    erasure.reports_for(current_app.extensions).keep(fresh)
    return _answer(fresh)
