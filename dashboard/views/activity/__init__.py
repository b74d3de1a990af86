"""Activity: the event log of both stores, newest first, and what changed since a moment.

``/activity`` lists what happened (saved / updated / deleted / restored / approved /
rejected / cleared) and who did it, as far as the files can tell (see
``store.events``), filtered by store and by date, paged.  ``?changed=last`` or
``?changed=<date>`` adds what the agent knows now that it did not know then, and
says where that cannot be reconstructed.  "Your last visit" is remembered per port
in a signed cookie, like the project choice: a page on another port cannot set it.
The page's feed is a ``data-live`` region: the live pulse (``activity/pulse.py``)
refreshes it when the agent writes.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from math import ceil

from flask import Blueprint, abort, request
from flask_babel import gettext as _

from ... import clock
from ...guard.access import chosen, keep_choice
from ...web import number_arg, page, page_route, readable_refs, wants_fragment
from . import log as activity_log

bp = Blueprint("activity", __name__)

PER_PAGE = 50
MAX_PAGE = 200
_SAME_VISIT = timedelta(minutes=30)  # reloads within this keep the visit's baseline


def _visits() -> tuple[str | None, str]:
    """(the moment "since your last visit" compares with, or None; this visit's stamp).

    A visit is page views less than 30 minutes apart: reloads keep comparing with the
    same moment, the next visit compares with the end of this one, and the very first
    visit compares with nothing.  The cookie holds "baseline|last seen"."""
    now = clock.stamp()
    value = chosen("activity")
    if value is None:
        return None, now
    baseline, _sep, seen = value.partition("|")
    try:
        ongoing = clock.local() - datetime.fromisoformat(seen) < _SAME_VISIT
        if baseline:
            datetime.fromisoformat(baseline)
    except ValueError:
        return None, now
    return (baseline or None) if ongoing else seen, now


def _day(name: str) -> str | None:
    raw = request.args.get(name, "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw).isoformat()
    except ValueError:
        abort(400, _("'%(name)s' must be a date like 2026-05-31.", name=name))


@page_route(bp, "/activity")
def index(fmt: str):
    store = request.args.get("store", "")
    if store not in ("", "project", "user"):
        abort(400, _("'store' must be 'project', 'user' or empty for both."))
    since, to = _day("from"), _day("to")
    # The day after ``to``; the last day there is (9999-12-31) has none: no end then.
    until = (
        (date.fromisoformat(to) + timedelta(days=1)).isoformat() if to and to < date.max.isoformat() else None
    )
    page_no = number_arg("page", 1, MAX_PAGE)
    refs = [r for r in readable_refs() if store in ("", r.key)]
    baseline, now = _visits()
    changed_arg = request.args.get("changed", "").strip()
    if changed_arg == "last":
        changed_from = baseline
    elif changed_arg:
        changed_from = _day("changed")
    else:
        changed_from = None
    words = request.args.get("q", "").strip()[:200]
    found = activity_log.feed(refs, since, until, page_no, PER_PAGE, words)
    changes = activity_log.changed_since(refs, changed_from) if changed_from else None
    last_visit = (
        activity_log.changed_since(refs, baseline, limits=False)["counts"]
        if baseline and changes is None and fmt != "json"
        else None
    )
    response = page(
        fmt,
        "activity/index.html",
        "activity/_feed.html",
        to_json=_json,
        items=found["items"],
        total=found["total"],
        page=page_no,
        pages=max(1, ceil(found["total"] / PER_PAGE)),
        store=store,
        filters={"store": store or None, "from": since, "to": to, "q": words or None},
        changes=changes,
        changed_arg=changed_arg,
        baseline=baseline,
        last_visit=last_visit,
        stores=[r.key for r in refs],
    )
    if fmt == "html" and not wants_fragment():  # a person on the page, not its twin or a fragment
        keep_choice(response, "activity", f"{baseline or ''}|{now}")
    return response


def _json(ctx) -> dict:
    changes = ctx["changes"]
    if changes is not None:
        changes = {
            **changes,
            **{g: [m.to_dict() for m in changes[g]] for g in ("added", "changed", "removed")},
        }
    return {
        "stores": ctx["stores"],
        "filters": ctx["filters"],
        "page": ctx["page"],
        "pages": ctx["pages"],
        "total": ctx["total"],
        "items": ctx["items"],
        "last_visit": ctx["baseline"],
        "changed": changes,
    }
