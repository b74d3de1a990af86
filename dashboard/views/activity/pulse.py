"""Live activity: every page learns within ~2 s that the agent wrote.

Why an htmx poll and not Server-Sent Events: waitress serves from a fixed pool of
threads (``--threads``, 4 by default); an open SSE stream holds one of them for as
long as the tab stays open, so four tabs would leave none for the pages.  A poll
holds a thread for the few microseconds it takes to compare file stamps.

base.html carries one hidden element, ``#pulse``, that asks
``GET /activity/pulse?since=<token>`` every 2 s.  The token is each store's
``events.Mark`` (newest event id, change counter, newest review stamp) with a digest
of the file's path, so a project switch never compares two different files.  While
nothing moved the answer is a 204 (htmx swaps nothing) after ``os.stat`` of each
file: no SQL at all.  When a file moved: only the events after the token's id are
read (capped), the review rows after its stamp, and the counter, so a poll is O(1)
in the number of memories.  What this dashboard wrote itself is not announced (its
action already said so).  Otherwise the answer replaces ``#pulse`` (with the new
token), says "The agent just saved 'X'" in #status (out of band) and sends the
``agentWrote`` event naming the regions to refresh (``memories``, ``reviews``,
``activity``); static/live.js refreshes each ``[data-live]`` region that holds no
focused or edited field, and offers a "Show the change" button in those that do.

A hidden tab does not poll: allowEval is false, so htmx's ``[document.visibilityState
== 'visible']`` filter cannot be used; live.js cancels the pulse's request while the
tab is hidden and asks once as soon as it is shown again.
"""

from __future__ import annotations

import base64
import hashlib
import json

from flask import current_app, render_template, url_for
from flask_babel import gettext as _
from flask_babel import ngettext

from ...store import events as log
from ...store.connection import StoreProblem
from ...web import readable_refs
from . import bp

_CAP = 5


def _path_id(ref) -> str:
    return hashlib.sha256(str(ref.path).encode()).hexdigest()[:10]


def _marks() -> dict:
    out = {}
    for ref in readable_refs():
        try:
            out[ref.key] = (_path_id(ref), log.mark_of(ref))
        except StoreProblem:
            pass
    return out


def encode(marks: dict) -> str:
    data = {k: [pid, m.last_event, m.counter, m.reviews] for k, (pid, m) in marks.items()}
    return base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).decode().rstrip("=")


_TOKEN_CHARS = 1024  # two stores' marks take about 250
_BIGGEST = 2**63 - 1  # SQLite's largest integer: an event id or a counter is never more


def _whole(value) -> int:
    if type(value) is not int or not 0 <= value <= _BIGGEST:
        raise ValueError("not a mark")
    return value


def decode(token: str) -> dict | None:
    """The marks a token holds, or None when it is not one of ours.  Its size is checked
    before it is parsed, and each number before it reaches SQLite."""
    if len(token) > _TOKEN_CHARS:
        return None
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return {
            k: (str(v[0]), log.Mark(_whole(v[1]), _whole(v[2]), str(v[3])))
            for k, v in raw.items()
            if k in ("project", "user")
        }
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        return None


def pulse_token() -> str:
    """The token a page is rendered with (a Jinja global: base.html's ``#pulse``)."""
    return encode(_marks())


def _said(news: list[tuple[str, dict]], reviews: list[dict], cleared: int) -> str | None:
    if news:
        store, e = news[0]
        title = e.get("title") or e["memory_id"]
        first = {
            "create": _("The agent just saved '%(title)s'.", title=title),
            "update": _("The agent just updated '%(title)s'.", title=title),
            "soft_delete": _("The agent just deleted '%(title)s'.", title=title),
        }.get(e["event_type"], _("The agent just changed '%(title)s'.", title=title))
        more = len(news) - 1 + len(reviews)
    elif reviews:
        r = reviews[0]
        first = {
            "pending": _("The agent just suggested '%(title)s'.", title=r["title"]),
            "approved": _("The suggestion '%(title)s' was just approved.", title=r["title"]),
            "rejected": _("The suggestion '%(title)s' was just rejected.", title=r["title"]),
        }.get(r["status"], _("The suggestion '%(title)s' just changed.", title=r["title"]))
        more = len(reviews) - 1
    elif cleared:
        return ngettext(
            "%(num)d memory was just cleared or removed.",
            "%(num)d memories were just cleared or removed.",
            cleared,
        )
    else:
        return None
    if more:
        return first + " " + ngettext("%(num)d more change.", "%(num)d more changes.", more)
    return first


def _undone(reviews: list[dict]) -> tuple[str, str, dict] | None:
    """An approval of this dashboard that agentao's reject undid after the answer's read-back
    (``approval.read_back``), said with its fix; None when no moved row is one."""
    from ...actions import approval
    from ..reviews.decide import overridden

    mine = [
        (r, found)
        for r in reviews
        if r["status"] != "approved" and (found := log.own_approval(r["id"])) is not None
    ]
    left = approval.read_back(readable_refs(), [(r["id"], *found) for r, found in mine], wait=0)
    if not left:
        return None
    titles = {r["id"]: r["title"] for r, _found in mine}
    text, fix = overridden(left[0], titles[left[0].item_id])
    return text, "bad", fix


@bp.get("/activity/pulse")
def pulse():
    """The pulse's answer to a page; a person opening this address goes to the Activity page."""
    from flask import abort, redirect, request

    if request.headers.get("HX-Request") != "true":
        return redirect(url_for("activity.index"), code=303)
    since = request.args.get("since", "")
    then = decode(since) if since else {}  # no token yet: the current one, nothing to tell
    if then is None:
        abort(400, _("'since' must be the token the page was given; reload the page."))
    now = _marks()
    if then == now:
        return "", 204
    news, reviews, cleared, regions = [], [], 0, set()
    for key, (pid, mark) in now.items():
        before = (then or {}).get(key)
        if before is None or before[0] != pid or before[1] == mark:
            continue
        ref = next(r for r in readable_refs() if r.key == key)
        try:
            moved = log.news(ref, before[1], _CAP)
        except StoreProblem:
            continue
        theirs = [
            e
            for e in moved["events"]
            if not log.own_event(e["id"], e["memory_id"], e["event_type"], e["timestamp"])
        ]
        news += [(key, e) for e in theirs]
        reviews += [r for r in moved["reviews"] if not log.own_review(r["id"], r["status"], r["updated_at"])]
        unexplained = (mark.counter - before[1].counter) - moved["total"]
        if log.own_counter(ref.path, mark.counter):
            unexplained = 0  # our own purge or wipe moved it last (store.events.note_own_counter)
        cleared += max(0, unexplained)
        if theirs or unexplained > 0:
            regions.add("memories")
        if reviews:
            regions.add("reviews")
    news.sort(key=lambda pair: str(pair[1]["timestamp"]), reverse=True)  # stable: by id within a file
    said = _said(news, reviews, cleared)
    if news or cleared:  # the memory checks this write turned (views/checks)
        from ..checks import after_agent_wrote

        said = " ".join([said, *after_agent_wrote()]) if said else said
    # An approval the person was told of, undone since: said first, with its fix.
    shown = _undone(reviews) or ((said, "live") if said else None)
    body = render_template("activity/_pulse.html", token=encode(now))
    response = current_app.make_response(body)
    if shown:
        regions.add("activity")
        body += render_template("partials/said_oob.html", said=shown)
        response.set_data(body)
        response.headers["HX-Trigger"] = json.dumps({"agentWrote": {"regions": sorted(regions)}})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.app_context_processor
def _pulse_globals():
    return {"pulse_token": pulse_token}
