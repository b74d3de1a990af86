"""Bulk actions from the memories list: the dry run ("Review changes…") and Apply.

Part of the memories screen (``views.memories`` registers the routes):

* ``/memories/bulk/plan`` (POST, ``.json`` twin): the dry run, nothing
  written (a POST because a selection can name 500 rows).  The toolbar (``memories/_bulk_bar.html``) posts the checked rows
  (``ids`` = ``store:id``, the checkboxes carry ``form="bulk"``) or ``all=1``
  with the list's filters, and the action (``delete``, ``move-user``,
  ``move-project``, ``tag`` with ``add_tag``, ``purge``).
* ``/memories/bulk`` (POST, ``.json`` twin): Apply.  The form carries one
  ``rows`` token per row the dry run would change (``actions.bulk.RowPlan.token``)
  and the effect token; a purge also each store's dry-run fingerprint and the
  number of memories typed as confirmation.

No JavaScript: the dry run is a page, Apply answers a result page (a purge
303s to its job page, which polls itself).  htmx: the dry run lands in
``#bulk-review`` above the table; Apply swaps the whole list (refreshed, with
the result said in #status) or, for a purge, the job fragment into
``#bulk-review``.  A refusal keeps its status (htmx swaps 4xx answers too: base.html's
htmx-config).
"""

from __future__ import annotations

import re

from flask import abort, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException

from ...actions import bulk, bulk_apply, purge
from ...actions.effects import block_token
from ...store import StoreProblem
from ...web import answer, readable_refs, render, stores, wants_fragment
from .. import block_effects
from ..outcomes import ID, Blocked, form_values, require_writable
from .page import list_context, parse_filters

_TOKEN = re.compile(r"(project|user):([A-Za-z0-9_-]{1,64}):([0-9a-f]{16}|none)(?::([0-9a-f]{16}|none))?")
_EFFECT = re.compile(r"\d{1,7}-[0-9a-f]{12}")
FILTER_FIELDS = ("q", "scope", "type", "source", "confidence", "tag", "deleted", "sort", "order")


def _values() -> MultiDict:
    """Form fields or a JSON object body (lists for ``ids`` and ``rows``), read as every action
    reads them (``form_values``)."""
    body = form_values()
    if body is request.form:
        return MultiDict(request.form.items(multi=True))
    out = MultiDict()
    for k, v in body.items():
        for item in v if isinstance(v, list) else [v]:
            out.add(k, str(item).lower() if isinstance(item, bool) else str(item))
    return out


def _action(values) -> tuple[str, str | None, str | None]:
    """(action, tag, to) from the form; a 400 with the choices otherwise."""
    raw = values.get("action") or ""
    action, _sep, to = raw.partition("-")
    to = to or values.get("to") or None
    if action not in bulk.ACTIONS:
        abort(400, _("Choose what to do with the memories: soft delete, move, tag or purge."))
    if action == "move" and to not in ("user", "project"):
        abort(400, _("Say where to move them: 'move-user' or 'move-project'."))
    tag = None
    if action == "tag":
        tag = (values.get("add_tag") or "").strip()
        if not tag or len(tag) > bulk.MAX_TAG_CHARS:
            abort(400, _("Type the tag to add (at most %(num)d characters).", num=bulk.MAX_TAG_CHARS))
    return action, tag, to if action == "move" else None


def _chosen(values, action, tag, to):
    """The rows the toolbar names and how many the action would change in all."""
    if values.get("all") in ("1", "true"):
        filters = parse_filters(
            MultiDict([(k, v) for k, v in values.items(multi=True) if k in FILTER_FIELDS])
        )
        return bulk.matching_rows(readable_refs(), filters, action, tag, to)
    picks = []
    for raw in dict.fromkeys(values.getlist("ids")):
        store, _sep, memory_id = str(raw).partition(":")
        if store not in ("project", "user") or not ID.fullmatch(memory_id):
            abort(400, _("'ids' must name rows as store:id, as the checkboxes do."))
        picks.append((store, memory_id))
    if not picks:
        abort(400, _("Tick the memories to change, or “all matching this filter”."))
    return bulk.named_rows(stores(), picks), None


def _query(values) -> str:
    from urllib.parse import urlencode

    return urlencode([(k, v) for k, v in values.items(multi=True) if k in FILTER_FIELDS and v])


def _plan(values):
    action, tag, to = _action(values)
    chosen, total = _chosen(values, action, tag, to)
    return bulk.plan(stores(), block_effects.snapshot(), action, chosen, total, tag, to)


def _plan_context(p, values, said=None):
    runs = bulk_apply.purge_runs(stores(), p.changing) if p.action == "purge" else {}
    prints = {store: purge.fingerprint(run) for store, run in runs.items()}
    try:  # a read-only store: the dry run still shows what would happen, without Apply
        require_writable(*{r.store for r in p.changing}, *([p.to] if p.to else []))
        read_only = None
    except Blocked as blocked:
        read_only = str(blocked)
    return {
        "plan": p,
        "runs": runs,
        "prints": prints,
        "back": _query(values),
        "read_only": read_only,
        "back_fields": [(k, v) for k, v in values.items(multi=True) if k in FILTER_FIELDS and v],
        "action_value": p.action + (f"-{p.to}" if p.to else ""),
        "said": said,
    }


def _answer_plan(ctx):
    def data() -> dict:
        out = ctx["plan"].to_dict() | {
            "purge": {s: {"fingerprint": f, "rows": len(ctx["runs"][s])} for s, f in ctx["prints"].items()}
        }
        out["message"] = ctx["said"][0] if ctx["said"] else None
        if ctx.get("moved"):
            out["moved"] = [{"store": s, "id": i, "why": w} for s, i, w in ctx["moved"]]
        return out

    return answer(data, page="memories/bulk_plan.html", fragment="memories/_bulk_plan.html", **ctx)


def review():
    """The dry run: what the action would do to each row, its block effect and warnings."""
    values = _values()
    try:
        return _answer_plan(_plan_context(_plan(values), values))
    except HTTPException as bad:
        return _refused(bad.code, bad.description)


def _refused(status: int, message: str):
    return answer(
        {"outcome": "refused", "message": message},
        status,
        fragment="memories/_bulk_message.html",
        message=message,
        status=status,
        said=(message, "bad"),
        title=_("Review changes"),
        back=(url_for("memories.index"), _("Back to the memories")),
    )


def _posted(values) -> list[bulk_apply.Posted]:
    out = []
    for raw in values.getlist("rows"):
        found = _TOKEN.fullmatch(str(raw))
        if not found:
            abort(400, _("'rows' must be the row tokens of the dry run, as its form gives them."))
        out.append(bulk_apply.Posted(*found.groups()))
    try:
        out = bulk_apply.distinct(out)
    except ValueError as twice:
        abort(
            400,
            _(
                "The row %(row)s is named twice, as two different states: review the "
                "changes again. Nothing was changed.",
                row=str(twice),
            ),
        )
    if not out:
        abort(400, _("The dry run changes no memory; there is nothing to apply."))
    if len(out) > bulk.CAP:
        abort(400, _("At most %(num)d memories at a time.", num=bulk.CAP))
    return out


def apply():
    """Apply a reviewed bulk action; every row as the dry run saw it, or nothing."""
    values = _values()
    try:
        action, tag, to = _action(values)
        posted = _posted(values)
        touched = {p.store for p in posted} | ({to} if to else set())
        try:
            require_writable(*touched)
        except Blocked as blocked:
            abort(blocked.status, str(blocked))
        if action == "purge":
            return _purge(values, posted)
        shown = values.get("effect") or None
        if shown is not None and not _EFFECT.fullmatch(shown):
            abort(400, _("'effect' must be the effect token as the dry run gave it."))
        if values.get("partial") in ("1", "true"):
            done, left = bulk_apply.apply_unchanged(stores(), action, posted, tag, to)
            if left:
                return _partly(values, action, tag, to, done, left)
        else:
            done = bulk_apply.apply(stores(), action, posted, tag, to)
    except bulk.BulkConflict as moved:
        return _conflict(values, moved)
    except StoreProblem as problem:
        return _refused(409 if problem.kind == "locked" else 503, str(problem))
    except HTTPException as bad:
        return _refused(bad.code, bad.description)
    return _done(values, action, tag, to, done, shown)


def _said(action, n, tag, to) -> str:
    if action == "delete":
        return ngettext(
            "Soft-deleted %(num)d memory; agentao no longer uses it.",
            "Soft-deleted %(num)d memories; agentao no longer uses them.",
            n,
        )
    if action == "tag":
        return ngettext(
            "Added the tag “%(tag)s” to %(num)d memory.",
            "Added the tag “%(tag)s” to %(num)d memories.",
            n,
            tag=tag,
        )
    return ngettext(
        "Moved %(num)d memory to the %(store)s store.",
        "Moved %(num)d memories to the %(store)s store.",
        n,
        store=to,
    )


def _done(values, action, tag, to, done, shown):
    block = block_effects.block_now()
    as_shown = None if shown is None else shown == block_token(block)
    said = _said(action, len(done), tag, to)
    twice = len(values.getlist("rows")) - len(set(values.getlist("rows")))
    if twice:
        said += " " + ngettext(
            "%(num)d row was named twice in the form: it was changed once.",
            "%(num)d rows were named twice in the form: each was changed once.",
            twice,
        )
    if as_shown is False:
        said = (
            said
            + " "
            + _(
                "The prompt block came out otherwise than the dry run showed "
                "(the agent wrote meanwhile): it is now %(num)d characters.",
                num=len(block),
            ),
            "warn",
        )
    if wants_fragment():  # the list, refreshed, with the result said
        return render(
            "memories/index.html",
            "memories/_list.html",
            said=said,
            bulk_done=said,
            **list_context(MultiDict([(k, v) for k, v in values.items(multi=True) if k in FILTER_FIELDS])),
        )
    return answer(
        {
            "outcome": "done",
            "action": action,
            "count": len(done),
            "rows": done,
            "named_twice": twice,
            "stable_block_chars": len(block),
            "effect_as_shown": as_shown,
            "message": said if isinstance(said, str) else said[0],
        },
        page="memories/bulk_done.html",
        said=said,
        done=done,
        action=action,
        back=_query(values),
    )


def _conflict(values, moved: bulk.BulkConflict):
    message = str(moved)
    changed = {(s, i) for s, i, _w in moved.rows}
    unchanged = [v for v in values.getlist("rows") if tuple(v.split(":")[:2]) not in changed]
    conflict = {
        "outcome": "conflict",
        "message": message,
        "rows": [{"store": s, "id": i, "why": w} for s, i, w in moved.rows],
        "unchanged": len(unchanged),
    }
    # The dry run again, as the files are now, with the rows that moved named.
    try:
        fresh = bulk.plan(stores(), block_effects.snapshot(fresh=True), *_replan_args(values))
    except HTTPException as bad:
        return _refused(bad.code, bad.description)
    ctx = _plan_context(fresh, values, said=(message, "bad"))
    ctx["moved"] = moved.rows
    # The offer: the same Apply with ``partial``, for the rows that did not change.
    ctx["partial"] = {"rows": values.getlist("rows"), "unchanged": len(unchanged)} if unchanged else None
    return answer(conflict, 409, page="memories/bulk_plan.html", fragment="memories/_bulk_plan.html", **ctx)


def _partly(values, action, tag, to, done, left):
    """Applied to the rows that did not change; the dry run again for those that did."""
    said = (
        _said(action, len(done), tag, to)
        + " "
        + ngettext(
            "%(num)d memory changed meanwhile and was left as it is: here is its dry run again.",
            "%(num)d memories changed meanwhile and were left as they are: here is their dry run again.",
            len(left),
        )
    )
    fresh = bulk.plan(
        stores(),
        block_effects.snapshot(fresh=True),
        action,
        bulk.named_rows(stores(), [(s, i) for s, i, _w in left]),
        None,
        tag,
        to,
    )
    ctx = _plan_context(fresh, values, said=(said, "warn"))
    ctx["moved"] = left
    partly = {
        "outcome": "partly_done",
        "action": action,
        "count": len(done),
        "rows": done,
        "message": said,
        "replan": fresh.to_dict(),
        "moved": [{"store": s, "id": i, "why": w} for s, i, w in left],
    }
    return answer(partly, page="memories/bulk_plan.html", fragment="memories/_bulk_plan.html", **ctx)


def _replan_args(values):
    action, tag, to = _action(values)
    picks = [(p.store, p.id) for p in _posted(values)]
    return action, bulk.named_rows(stores(), picks), None, tag, to


def _purge(values, posted):
    """Start the verified purge of the confirmed rows as a forget job (it polls its progress)."""
    if (values.get("confirm") or "").strip() != str(len(posted)):
        abort(
            400,
            ngettext(
                "To confirm, type the number of memories to purge (%(num)d). Nothing was changed.",
                "To confirm, type the number of memories to purge (%(num)d). Nothing was changed.",
                len(posted),
            ),
        )
    runs, refs = {}, {r.key: r for r in stores()}
    for store in sorted({p.store for p in posted}):
        try:
            runs[store] = purge.confirmed(refs[store], values.get(f"fingerprint_{store}") or "", ())
        except ValueError:
            abort(
                400,
                _(
                    "The dry run's fingerprint is missing or damaged: review the changes "
                    "again. Nothing was changed."
                ),
            )
        named = {r.id for r in runs[store] if r.kind == "memory"}
        if named != {p.id for p in posted if p.store == store}:
            abort(400, _("The rows and the dry run's fingerprint disagree: review the changes again."))
        changed = purge.check(refs[store], runs[store]).changed
        if changed:
            abort(
                409,
                ngettext(
                    "%(num)d of the rows you confirmed changed since the dry run. "
                    "Review the changes again. Nothing was changed.",
                    "%(num)d of the rows you confirmed changed since the dry run. "
                    "Review the changes again. Nothing was changed.",
                    len(changed),
                ),
            )
    from ..forget.jobs import start

    def work(job):
        return {"results": bulk_apply.purge_all(refs, runs, job)}

    return start(
        "bulk purge",
        list(runs),
        work,
        data=lambda view: {
            "outcome": "started",
            "action": "purge",
            "count": len(posted),
            "job": view,
            "message": ngettext(
                "Purging %(num)d memory; the job's page says when it is verified.",
                "Purging %(num)d memories; the job's page says when it is verified.",
                len(posted),
            ),
        },
        said=ngettext(
            "Purging %(num)d memory; the result shows here when it is verified.",
            "Purging %(num)d memories; the result shows here when it is verified.",
            len(posted),
        ),
    )
