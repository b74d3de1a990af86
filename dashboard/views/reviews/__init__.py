"""Suggestions to review: the waiting / approved / rejected tabs, what approving does.

Every waiting card shows the ``ApprovalPlan`` (dashboard.actions.approval) its
Approve button executes, and says first, in words, what that plan does
(reviews/said.py).  The cards' context is reviews/cards.py; approving and
rejecting are reviews/decide.py, reject-and-erase reviews/erase.py: all
registered here, on one blueprint (one URL prefix, one template folder).
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request
from flask_babel import gettext as _

from ... import facts, web
from ...contract import SaveRefused
from ...store import writes
from ...web import NAV_BADGES, page, page_route, wants_fragment
from .. import block_effects
from ..outcomes import ID, Blocked, Outcome
from . import decide as review_decide
from . import edits as review_edits
from . import erase as review_erase
from . import said as review_words
from .cards import ALL
from .cards import context as _context
from .queue import STATUSES
from .queue import project as _project

bp = Blueprint("reviews", __name__)

bp.add_url_rule("/reviews/<item_id>/<action>", "decide_one", review_decide.decide_one, methods=["POST"])
bp.add_url_rule("/reviews/<action>", "decide_many", review_decide.decide_many, methods=["POST"])
# Reject-and-erase is part of this screen (reviews/erase.py holds the handlers).
bp.add_url_rule("/reviews/erase", "erase_confirm", review_erase.erase_confirm, methods=["GET"])
bp.add_url_rule("/reviews/erase", "erase", review_erase.erase, methods=["POST"])
bp.add_url_rule("/reviews/erased", "erased", review_erase.erased, methods=["GET"])
bp.add_url_rule("/reviews/erased/<token>/retry", "erase_retry", review_erase.erase_retry, methods=["POST"])


def _tab() -> str:
    status = request.args.get("status") or "pending"
    if status not in (*STATUSES, ALL):
        abort(400, _("'status' must be one of: %(values)s.", values="pending, approved, rejected, all"))
    return status


@page_route(bp, "/reviews")
def index(fmt: str):
    status = _tab()
    ctx = _context(status)
    said, size = _said_after_redirect() if fmt == "html" else (None, None)
    # After a decision the keyboard goes on with the first card (a page load honours autofocus).
    ctx["focus_first"] = said is not None
    return page(
        fmt,
        "reviews/index.html",
        "reviews/_list.html",
        to_json=_list_json,
        said=said,
        stable_after=size,
        **ctx,
    )


def _said_after_redirect():
    """(words for #status, the block's size now) on the page a no-JavaScript decision lands
    on (what ``decide`` flashed: ``done``, ``n``, ``item``, ``memory``); (None, None) on a
    plain visit or a reload."""
    landed = web.landed()
    done, n = landed.get("done"), landed.get("n")
    if done not in ("approved", "rejected") or not isinstance(n, int):
        return None, None
    block, shown = block_effects.shown_now() if done == "approved" else (None, None)
    item_id = str(landed.get("item") or "")
    item = writes.review_item(_project().path, item_id) if ID.fullmatch(item_id) else None
    if n != 1 or item is None or item.status != done:
        return review_words.done_counted(done, n), None if block is None else len(block)
    store, _sep, memory_id = str(landed.get("memory") or "").partition(":")
    said = review_words.decided(
        [Outcome(item.id, done, "", memory_id=memory_id or None, memory_store=store or None)],
        {item.id: item.title},
        shown,
        edited=bool(landed.get("edited")),
    )
    return said, None if block is None else len(block)


def _plan_json(plan) -> dict:
    return dict(plan.to_dict(), refusal_error=SaveRefused.error_for(plan.refusal))


def _list_json(ctx) -> dict:
    plans, effects = ctx["plans"], ctx["effects"]
    return {
        "status": ctx["status"],
        "counts": ctx["counts"],
        "page": ctx["page"],
        "pages": ctx["pages"],
        "per_page": ctx["per_page"],
        "total": ctx["total"],
        "shared": review_words.to_json(ctx["shared"]),  # said once above the cards
        "items": [_item_json(i, plans, effects) for i in ctx["items"]],
    }


def _item_json(i, plans: dict, effects: dict) -> dict:
    return dict(
        i.to_dict(),
        plan=_plan_json(plans[i.id]) if i.id in plans else None,
        stable_effect=effects.get(i.id),
        # the card's lines in words, beside the codes they come from
        consequences=review_words.to_json(review_words.consequences(plans[i.id], effects.get(i.id)))
        if i.id in plans
        else None,
        # "plan": only the warnings the plan tells by itself; the rest come
        # with the effect, from /reviews/effect.json?id=…
        warnings_checked=None if i.id not in plans else "all" if i.id in effects else "plan",
    )


@page_route(bp, "/reviews/detail")
def detail(fmt: str):
    """One suggestion's folded detail (its fields, the plan approving executes, before/after,
    every warning in full, the effect on the always-on block): what a card's Details shows
    when it is opened.  htmx asks for it then, so the list sends only what a closed card
    shows; without JavaScript the card links to this page, the card with its detail open."""
    item_id = request.args.get("id") or ""
    item = writes.review_item(_project().path, item_id) if ID.fullmatch(item_id) else None
    if item is None:
        abort(404, _("No review item '%(id)s'.", id=item_id))
    ctx = _context(item.status, items=[item])
    if fmt != "json" and wants_fragment():
        return render_template("reviews/_detail.html", item=item, **ctx)
    return page(
        fmt,
        "reviews/detail.html",
        item=item,
        detail_open=True,
        to_json=lambda ctx: {"item": _item_json(ctx["item"], ctx["plans"], ctx["effects"])},
        **ctx,
    )


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
        abort(404, _("No pending review item '%(id)s'.", id=item_id))
    try:
        edits = review_edits.edits_from(request.args, item)
    except Blocked as bad:
        abort(bad.status, str(bad))
    ctx = _context("pending", items=[item], edits=None if edits is None else {item.id: edits})
    if fmt != "json" and (edits is not None or wants_fragment()):
        # htmx asks for the whole card: a card scrolled into view fetches its effect.
        if wants_fragment():
            return render_template("reviews/_item.html", item=item, **ctx)
        return render_template("reviews/detail.html", item=item, edited=True, **ctx)
    return page(
        fmt,
        "reviews/effect.html",
        item=item,
        plan=ctx["plans"][item.id],
        effect=ctx["effects"].get(item.id),
        to_json=lambda ctx: {
            "id": ctx["item"].id,
            "plan": _plan_json(ctx["plan"]),
            "stable_effect": ctx["effect"],
        },
    )


NAV_BADGES["reviews.index"] = facts.pending_badge
