"""Review queue: pending / approved / rejected, what approval will do, approve and reject.

Every pending item is shown with its ``ApprovalPlan`` (dashboard.actions.approval),
and the approve button executes that same plan.  Each form carries the
item's fingerprint and the fingerprint of the memory the plan would
overwrite; if either moved before the click, the answer is a 409 and the
row is re-rendered with the fresh plan so the person can decide again.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_babel import ngettext

from ..actions import approval, warnings
from . import block_effects, review_edits, review_erase, review_words
from .queue import EMPTY, STATUSES, TAB_NAMES, project as _project
from ..store import list_review_items
from ..store import writes
from ..contract import SaveRefused
from ..web import (NAV_BADGES, number_arg, page, page_route, render, wants_json, status_of,
                   statuses, store_by_key, stores, twin, wants_fragment, whole_number)
from .outcomes import ID, Blocked, Outcome, failure, form_values, overall_status, require_writable

bp = Blueprint("reviews", __name__)

ALL = "all"   # every item, newest first: agentao's list_review_items(status=None) order
ACTIONS = ("approve", "reject")
# Reject-and-erase is part of this screen (views.review_erase holds the handlers).
bp.add_url_rule("/reviews/erase", "erase_confirm", review_erase.erase_confirm, methods=["GET"])
bp.add_url_rule("/reviews/erase", "erase", review_erase.erase, methods=["POST"])
bp.add_url_rule("/reviews/erased", "erased", review_erase.erased, methods=["GET"])
bp.add_url_rule("/reviews/erased/<token>/retry", "erase_retry", review_erase.erase_retry,
                methods=["POST"])


def _plans(items, edits: dict | None = None) -> dict:
    # A damaged target store blocks its cards with the banner's words; the rest stay usable.
    unreadable = {st.ref.key: st.problem for st in statuses()
                  if st.problem is not None and st.problem.kind != "missing"}
    edits = edits or {}
    return {i.id: approval.plan_approval(stores(), i, unreadable, edits.get(i.id))
            for i in items if i.status == "pending"}


def _warned(plans: dict, found: dict) -> dict:
    """The warnings that need the live rows and the block effect (actions.warnings), for
    the cards whose effect this page computed (a bounded number: block_effects); the
    others get them with their effect (/reviews/effect), and their twin says so."""
    weighed = {i: p for i, p in plans.items() if i in found}
    if not block_effects.approvable(weighed):
        return plans   # nothing to weigh against the store: do not read it
    return {**plans, **warnings.with_store(weighed, found, block_effects.snapshot())}


def _context(status: str, outcomes: dict | None = None, with_effects: bool = True,
             items=None, edits: dict | None = None) -> dict:
    """The tab's items (or just ``items``), each pending one with its plan and effect.

    ``edits``: item id -> Edits being previewed (or refused): that card shows the
    edited plan, and its form keeps the values typed.
    """
    project = _project()
    paged = {"page": 1, "pages": 1, "per_page": PER_PAGE, "total": None}
    if items is None:
        # A page of the tab: each card's plan reads the target file, so a page is bounded.
        items = list_review_items(project, None if status == ALL else status)
        per_page = number_arg("per_page", PER_PAGE, MAX_PER_PAGE)
        pages = max(1, -(-len(items) // per_page))
        at = min(number_arg("page", 1, 10**6), pages)
        paged = {"page": at, "pages": pages, "per_page": per_page, "total": len(items)}
        items = items[(at - 1) * per_page:at * per_page]
    plans = _plans(items, edits)
    found = block_effects.for_approvals(plans) if with_effects else {}
    plans = _warned(plans, found)
    return {"status": status, "items": items, "plans": plans, "effects": found,
            "counts": writes.review_counts(project.path), "outcomes": outcomes or {},
            "statuses": STATUSES, "read_only": not status_of("project").writable, **paged,
            "tab_names": TAB_NAMES, "empty_words": EMPTY, "focus_first": False,
            "consequences": review_words.consequences,
            "edit_form": lambda item: review_edits.form_defaults(
                item, plans[item.id].edits if item.id in plans else None)}


PER_PAGE, MAX_PER_PAGE = 50, 200


def _tab() -> str:
    status = request.args.get("status") or "pending"
    if status not in (*STATUSES, ALL):
        abort(400, "'status' must be one of: pending, approved, rejected, all.")
    return status


@page_route(bp, "/reviews")
def index(fmt: str):
    status = _tab()
    ctx = _context(status)
    said, size = _said_after_redirect()
    # After a decision the keyboard goes on with the first card (a page load honours autofocus).
    ctx["focus_first"] = said is not None
    return page(fmt, "reviews/index.html", "reviews/_list.html", to_json=_list_json,
                said=said, stable_after=size, **ctx)


def _said_after_redirect():
    """(words for #status, the block's size now) on the page a no-JavaScript decision lands
    on (``?done=approved&n=1&item=…&memory=store:id``); (None, None) on a plain visit."""
    done, n = request.args.get("done"), whole_number(request.args.get("n"))
    if done not in ("approved", "rejected") or n is None:
        return None, None
    block, shown = block_effects.shown_now() if done == "approved" else (None, None)
    item_id = request.args.get("item") or ""
    item = writes.review_item(_project().path, item_id) if ID.fullmatch(item_id) else None
    if n != 1 or item is None or item.status != done:
        return review_words.done_counted(done, n), None if block is None else len(block)
    store, _sep, memory_id = (request.args.get("memory") or "").partition(":")
    said = review_words.decided([Outcome(item.id, done, "", memory_id=memory_id or None,
                                         memory_store=store or None)], {item.id: item.title},
                                shown, edited=request.args.get("edited") == "1")
    return said, None if block is None else len(block)


def _plan_json(plan) -> dict:
    return dict(plan.to_dict(), refusal_error=SaveRefused.error_for(plan.refusal))


def _list_json(ctx) -> dict:
    plans, effects = ctx["plans"], ctx["effects"]
    return {"status": ctx["status"], "counts": ctx["counts"], "page": ctx["page"],
            "pages": ctx["pages"], "per_page": ctx["per_page"], "total": ctx["total"],
            "items": [dict(i.to_dict(), plan=_plan_json(plans[i.id]) if i.id in plans else None,
                           stable_effect=effects.get(i.id),
                           # the card's lines in words, beside the codes they come from
                           consequences=review_words.to_json(review_words.consequences(
                               plans[i.id], effects.get(i.id))) if i.id in plans else None,
                           # "plan": only the warnings the plan tells by itself; the rest come
                           # with the effect, from /reviews/effect.json?id=…
                           warnings_checked=None if i.id not in plans
                           else "all" if i.id in effects else "plan")
                      for i in ctx["items"]]}


@page_route(bp, "/reviews/effect")
def effect(fmt: str):
    """One pending item's effect on the stable block (for cards the list left without one).

    With edit fields (the card's "Preview edits", or ``value``/``tags``/``scope``/
    ``type`` from a script) it is the plan and effect of approving with those
    edits; the page and the htmx answer are the card showing that plan, with
    the button that approves exactly it.  Nothing is written.
    """
    item_id = request.args.get("id") or ""
    item = writes.review_item(_project().path, item_id) if ID.fullmatch(item_id) else None
    if item is None or item.status != "pending":
        abort(404, f"No pending review item '{item_id}'.")
    try:
        edits = review_edits.edits_from(request.args, item)
    except Blocked as bad:
        abort(bad.status, str(bad))
    ctx = _context("pending", items=[item], edits=None if edits is None else {item.id: edits})
    if fmt != "json" and (edits is not None or wants_fragment()):
        # htmx asks for the whole card: a card scrolled into view fetches its effect.
        if wants_fragment():
            return render_template("reviews/_item.html", item=item, **ctx)
        return render_template("reviews/edited.html", item=item, **ctx)
    return page(fmt, "reviews/effect.html", item=item, plan=ctx["plans"][item.id],
                effect=ctx["effects"].get(item.id),
                to_json=lambda ctx: {"id": ctx["item"].id, "plan": _plan_json(ctx["plan"]),
                                     "stable_effect": ctx["effect"]})


def _decide(item_id: str, action: str, values, edits=None) -> Outcome:
    """Run one approve/reject with the tokens the page was rendered with.

    ``edits``: approve with these values changed (``target`` is then the token
    of the edited plan, as the preview gave it).
    """
    seen = values.get(f"seen-{item_id}") or values.get("seen")
    target = values.get(f"target-{item_id}") or values.get("target")
    try:
        if not ID.fullmatch(item_id):
            raise Blocked(400, f"'{item_id}' is not a review item id.")
        if not seen or (action == "approve" and not target):
            decided = _decided(item_id)   # nothing to confirm: say what it is now
            if decided is not None:
                return decided
            raise Blocked(400, "The form did not say which version you saw (missing 'seen'"
                          + (" or 'target'" if action == "approve" else "") + "); reload the page.")
        require_writable("project")
        if action == "reject":
            approval.reject(stores(), item_id, seen)
            return Outcome(item_id, "rejected", "Rejected")
        plan, saved = approval.approve(stores(), item_id, seen, target, may_write=require_writable,
                                       edits=edits)
        return Outcome(item_id, "approved",
                       f"Approved{' with edits' if plan.edits else ''} → memory "
                       f"'{plan.save.title}' (source={plan.save.source})",
                       memory_id=saved.memory_id, memory_store=plan.save.store, event=saved.event)
    except Exception as exc:  # noqa: BLE001 - failure() re-raises what it does not know
        out = failure(item_id, exc)
        # Decided meanwhile (or by an earlier call): say what it is now, as without tokens.
        return (_decided(item_id) or out) if out.outcome == "not_pending" else out


def _decided(item_id: str) -> Outcome | None:
    """The answer for an item that is no longer pending (None while it is pending).

    A decision needs the versions the page showed only to check them; an item
    already decided (or gone) has nothing left to check, so a script asking
    again gets its current state instead of a demand for placeholder fields.
    """
    item = writes.review_item(_project().path, item_id)
    if item is None:
        return Outcome(item_id, "not_pending", f"There is no review item {item_id}; nothing was "
                       "changed.", 404)
    if item.status == "pending":
        return None
    return Outcome(item_id, "not_pending", f"Review item {item_id} is no longer pending (it is "
                   f"{item.status}) since {item.updated_at}; nothing was changed.", 409,
                   state=item.status)


def _answer(outcomes: list[Outcome], single: bool, edits: dict | None = None, values=None):
    status = overall_status(outcomes)
    shown = None
    if any(o.ok and o.outcome == "approved" for o in outcomes):
        block, shown = block_effects.shown_now()   # read back from the files, not predicted
        for o in outcomes:
            if o.ok:
                o.stable_block_chars = len(block)
    if wants_json():
        return twin({"ok": status == 200, "outcomes": [o.to_dict() for o in outcomes],
                     "counts": writes.review_counts(_project().path)}, status)
    path, first = _project().path, outcomes[0]
    item = writes.review_item(path, first.id) if len(outcomes) == 1 and ID.fullmatch(first.id) else None
    said = review_words.decided(outcomes, {first.id: item.title} if item else {}, shown,
                                edited=bool(edits) and first.ok)
    by_id = {o.id: o for o in outcomes}
    if wants_fragment():
        # htmx swaps only 2xx answers, so the failure travels in the row itself.
        if single and first.ok and item is not None:
            # The card becomes one line; the next waiting card comes along, re-planned
            # (this decision may change what approving it does), with the focus.
            nxt = _next_pending(values, first.id)
            ctx = _context("pending", by_id, items=[nxt] if nxt else [])
            return render("reviews/_done.html", "reviews/_done.html", item=item, outcome=first,
                          next_item=nxt, done_text=said[0], said=said, **ctx)
        if single:
            ctx = _context("pending", by_id, items=[item] if item else [], edits=edits)
            if item is None:
                return render("reviews/_gone.html", "reviews/_gone.html", outcome=first,
                              said=said, **ctx)
            return render("reviews/_item.html", "reviews/_item.html", item=item, oob_tabs=True,
                          said=said, **ctx)
        ctx = dict(_context("pending", by_id), focus_first=True)
        return render("reviews/_list.html", "reviews/_list.html", oob_tabs=True, said=said, **ctx)
    if status == 200:
        where = {"done": first.outcome, "n": len(outcomes)}
        if single:
            where.update(item=first.id, edited="1" if edits else None,
                         memory=f"{first.memory_store}:{first.memory_id}" if first.memory_id else None)
        return redirect(url_for("reviews.index", fmt="html", status="pending", **where), 303)
    ctx = _context("pending", by_id, edits=edits)
    return render_template("reviews/index.html", said=said, stable_after=None, **ctx), status


def _next_pending(values, item_id: str):
    """The waiting card after ``item_id`` on the page the person sees (its cards' ``shown``
    fields, in order, wrapping round), or None: where the keyboard goes next."""
    shown = [str(i) for i in values.getlist("shown")] if hasattr(values, "getlist") else []
    if item_id not in shown:
        return None
    at = shown.index(item_id)
    for other in (shown[at + 1:] + shown[:at])[:MAX_PER_PAGE]:
        if ID.fullmatch(other):
            found = writes.review_item(_project().path, other)
            if found is not None and found.status == "pending":
                return found
    return None


def _pending_badge():
    """The Suggestions tab's count of waiting items (one COUNT per page), None when none."""
    ref = store_by_key("project")
    st = status_of("project")
    if ref is None or not ref.exists or st is None or not st.readable:
        return None
    n = writes.review_counts(ref.path)["pending"]
    return (n, ngettext("%(num)d suggestion waits for you", "%(num)d suggestions wait for you",
                        n)) if n else None


NAV_BADGES["reviews.index"] = _pending_badge


@bp.post("/reviews/<item_id>/<action>")
def decide_one(item_id: str, action: str):
    if action not in ACTIONS:
        abort(404)
    values = form_values()
    edits = None
    # The card's edit fields ride along with every button of the bulk form: only
    # "Approve with edits" (?edits=1) uses them; a script's plain names always count.
    if action == "approve" and (request.args.get("edits") == "1"
                                or any(name in values for name in review_edits.FIELDS)):
        item = writes.review_item(_project().path, item_id) if ID.fullmatch(item_id) else None
        if item is not None and item.status == "pending":
            try:
                edits = review_edits.edits_from(values, item)
            except Blocked as bad:
                return _answer([failure(item_id, bad)], single=True)
    kept = {item_id: edits} if edits is not None else None
    return _answer([_decide(item_id, action, values, edits)], single=True, edits=kept,
                   values=values)


@bp.post("/reviews/<action>")
def decide_many(action: str):
    if action not in ACTIONS:
        abort(404)
    values = form_values()
    ids = values.getlist("ids") if hasattr(values, "getlist") else list(values.get("ids") or [])
    if not ids:
        abort(400, "Select at least one review item.")
    if len(ids) > 500:
        abort(400, "At most 500 items at a time.")
    return _answer([_decide(i, action, values) for i in dict.fromkeys(ids)], single=False)
