"""Approve and reject, one card or the selected ones: the answers for a script (JSON),
htmx (the card as one line, the next card with the focus) and a plain form (a redirect
to the tab, whose page says what happened).

Each form carries the item's fingerprint and that of the memory the plan would
overwrite; if either moved before the click, the answer is a 409 and the card is
drawn again with the fresh plan so the person can decide again.  Part of the
reviews screen: ``views.reviews`` registers these handlers on its blueprint.
"""

from __future__ import annotations

from flask import abort, request, url_for
from flask_babel import gettext as _

from ... import facts
from ...actions import approval
from ...store import list_review_items, writes
from ...store.writes import fingerprint
from ...web import answer, render, stores, wants_fragment
from ...words import label
from .. import block_effects
from ..outcomes import ID, Blocked, Outcome, failure, form_values, overall_status, require_writable, strings
from . import edits as review_edits
from . import said as review_words
from .cards import MAX_PER_PAGE
from .cards import context as _context
from .queue import project as _project

ACTIONS = ("approve", "reject")
# The reviews templates' own ids ``review-<name>``: a card id must never equal one.
PAGE_REGIONS = frozenset({"list", "tabs", "form", "messages", "erase", "effect", "shared"})


def _decide(item_id: str, action: str, values, edits=None) -> Outcome:
    """Run one approve/reject with the tokens the page was rendered with.

    ``edits``: approve with these values changed (``target`` is then the token
    of the edited plan, as the preview gave it).
    """
    seen = values.get(f"seen-{item_id}") or values.get("seen")
    target = values.get(f"target-{item_id}") or values.get("target")
    try:
        if not ID.fullmatch(item_id):
            raise Blocked(400, _("'%(id)s' is not a review item id.", id=item_id))
        if not seen or (action == "approve" and not target):
            decided = _decided(item_id)  # nothing to confirm: say what it is now
            if decided is not None:
                return decided
            raise Blocked(
                400,
                _(
                    "The form did not say which version you saw (missing %(fields)s); reload the page.",
                    fields="'seen' or 'target'" if action == "approve" else "'seen'",
                ),
            )
        require_writable("project")
        if action == "reject":
            approval.reject(stores(), item_id, seen)
            return Outcome(item_id, "rejected", _("Rejected"))
        plan, saved = approval.approve(
            stores(), item_id, seen, target, may_write=require_writable, edits=edits
        )
        return Outcome(
            item_id,
            "approved",
            (
                _(
                    "Approved with edits → memory '%(title)s' (source=%(source)s)",
                    title=plan.save.title,
                    source=plan.save.source,
                )
                if plan.edits
                else _(
                    "Approved → memory '%(title)s' (source=%(source)s)",
                    title=plan.save.title,
                    source=plan.save.source,
                )
            ),
            memory_id=saved.memory_id,
            memory_store=plan.save.store,
            event=saved.event,
        )
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
        return Outcome(
            item_id, "not_pending", _("There is no review item %(id)s; nothing was changed.", id=item_id), 404
        )
    if item.status == "pending":
        return None
    return Outcome(
        item_id,
        "not_pending",
        _(
            "Review item %(id)s is no longer pending (it is "
            "%(status)s) since %(stamp)s; nothing was changed.",
            id=item_id,
            status=item.status,
            stamp=item.updated_at,
        ),
        409,
        state=item.status,
    )


def _read_back(outcomes: list[Outcome]) -> None:
    """Approvals read back (``approval.read_back``): one agentao's reject undid at once is
    said as it is, with the soft delete of the memory it left live one click away."""
    by_id = {o.id: o for o in outcomes}
    for found in approval.read_back(
        stores(),
        [
            (o.id, o.memory_store, o.memory_id)
            for o in outcomes
            if o.ok and o.outcome == "approved" and o.memory_id
        ],
    ):
        o = by_id[found.item_id]
        o.outcome, o.status, o.state = "overridden", 409, found.status
        o.message, o.fix = overridden(found)
    for o in outcomes:
        if o.ok and o.outcome == "approved" and o.memory_id:
            # The read-back covers a moment; agentao can still undo it later (the pulse says so).
            later = _(
                "Checked again just after: still approved. If agentao rejects it later, any open "
                "dashboard page says so."
            )
            o.message = f"{o.message} {later}"


def overridden(found: approval.Overridden, item_title: str | None = None) -> tuple[str, dict]:
    """An approval agentao's reject undid, in words (naming the suggestion ``item_title`` when
    it is told later, by the live pulse), and its fix: the soft delete of the memory left live."""
    m, status = found.memory, label("review_status", found.status)
    if item_title is None:
        said = _(
            "Not approved after all: another program (agentao) marked this suggestion "
            "%(status)s just after the dashboard approved it, so it is %(status)s now, "
            "but the memory “%(title)s” the approval saved is live. Soft-delete the "
            "memory to keep the rejection, or keep it as a memory of its own.",
            status=status,
            title=m.title,
        )
    else:
        said = _(
            "Not approved after all: another program (agentao) marked the suggestion “%(item)s” "
            "%(status)s after the dashboard approved it, so it is %(status)s now, but the memory "
            "“%(title)s” the approval saved is live. Soft-delete the memory to keep the rejection, "
            "or keep it as a memory of its own.",
            item=item_title,
            status=status,
            title=m.title,
        )
    fix = {
        "action": url_for("memories.curate", store=m.store, memory_id=m.id, action="delete"),
        "fields": {"updated_at": m.updated_at, "row": fingerprint(m)},
        "label": _("Soft-delete “%(title)s”", title=m.title),
        "name": "fix-overridden",
        "target": None,
    }
    return said, fix


def _answer(outcomes: list[Outcome], single: bool, edits: dict | None = None, values=None):
    _read_back(outcomes)
    status = overall_status(outcomes)
    shown = None
    if any(o.ok and o.outcome == "approved" for o in outcomes):
        block, shown = block_effects.shown_now()  # read back from the files, not predicted
        for o in outcomes:
            if o.ok:
                o.stable_block_chars = len(block)
    first = outcomes[0]
    done = {"done": first.outcome, "n": len(outcomes)}
    if single:
        done.update(
            item=first.id,
            edited=bool(edits),
            memory=f"{first.memory_store}:{first.memory_id}" if first.memory_id else None,
        )
    return answer(
        lambda: {
            "ok": status == 200,
            "outcomes": [o.to_dict() for o in outcomes],
            "counts": facts.suggestions(),
        },
        status,
        to=url_for("reviews.index", fmt="html", status="pending") if status == 200 else None,
        done=done,  # the tab says what happened (reviews.said_after_redirect)
        html=lambda: _html(outcomes, single, edits, values, shown),
    )


def _html(outcomes, single, edits, values, shown):
    """For htmx the card (or list) as it is now; without JavaScript, after a failure, the tab."""
    first = outcomes[0]
    item = (
        writes.review_item(_project().path, first.id)
        if len(outcomes) == 1 and ID.fullmatch(first.id)
        else None
    )
    said = review_words.decided(
        outcomes, {first.id: item.title} if item else {}, shown, edited=bool(edits) and first.ok
    )
    if single and first.fix:
        said = (first.message, "bad", first.fix)
    by_id = {o.id: o for o in outcomes}
    if wants_fragment():  # a failure is said in the row; htmx swaps 409/422 too
        return _fragment(single, first, item, said, by_id, edits, values)
    return render(
        "reviews/index.html", said=said, stable_after=None, **_context("pending", by_id, edits=edits)
    )


def _fragment(single, first, item, said, by_id, edits, values):
    """The htmx answer: the card as it is now (or one line, and the next card), or the list."""
    if single and first.ok and item is not None:
        # The card becomes one line; the next waiting card comes along, re-planned
        # (this decision may change what approving it does), with the focus; the other
        # cards still shown get their words re-planned too, and the lines they share.
        nxt, *others = _still_pending(values, first.id) or [None]
        ctx = _context("pending", by_id, items=[nxt, *others] if nxt else [])
        return render(
            "reviews/_done.html",
            "reviews/_done.html",
            item=item,
            outcome=first,
            next_item=nxt,
            others=others,
            done_text=said[0],
            said=said,
            **ctx,
        )
    if single:
        ctx = _context("pending", by_id, items=[item] if item else [], edits=edits)
        if item is None:
            return render("reviews/_gone.html", "reviews/_gone.html", outcome=first, said=said, **ctx)
        return render("reviews/_item.html", "reviews/_item.html", item=item, oob_tabs=True, said=said, **ctx)
    ctx = dict(_context("pending", by_id), focus_first=True)
    return render("reviews/_list.html", "reviews/_list.html", oob_tabs=True, said=said, **ctx)


def _still_pending(values, item_id: str) -> list:
    """The waiting cards after ``item_id`` on the page the person sees (its cards' ``shown``
    fields, in order, wrapping round): the first is where the keyboard goes next.

    They are sent out of band by their element ids (``review-<id>``, which htmx
    CSS-escapes), so a card whose id would be one of the page's own regions
    (item ``list`` -> ``#review-list``, the whole queue) is never one sent."""
    shown = [str(i) for i in values.getlist("shown")] if hasattr(values, "getlist") else []
    if item_id not in shown:
        return []
    at = shown.index(item_id)
    wanted = [
        i for i in (shown[at + 1 :] + shown[:at])[:MAX_PER_PAGE] if ID.fullmatch(i) and i not in PAGE_REGIONS
    ]
    if not wanted:
        return []
    pending = {i.id: i for i in list_review_items(_project(), "pending")}  # one read, as the tab's
    return [pending[i] for i in dict.fromkeys(wanted) if i in pending]


def decide_one(item_id: str, action: str):
    if action not in ACTIONS:
        abort(404)
    values = form_values()
    edits = None
    # The card's edit fields ride along with every button of the bulk form: only
    # "Approve with edits" (?edits=1) uses them; a script's plain names always count.
    if action == "approve" and (
        request.args.get("edits") == "1" or any(name in values for name in review_edits.FIELDS)
    ):
        item = writes.review_item(_project().path, item_id) if ID.fullmatch(item_id) else None
        if item is not None and item.status == "pending":
            try:
                edits = review_edits.edits_from(values, item)
            except Blocked as bad:
                return _answer([failure(item_id, bad)], single=True)
    kept = {item_id: edits} if edits is not None else None
    return _answer([_decide(item_id, action, values, edits)], single=True, edits=kept, values=values)


def decide_many(action: str):
    if action not in ACTIONS:
        abort(404)
    values = form_values()
    ids = strings(values, "ids")
    if not ids:
        abort(400, _("Select at least one review item."))
    if len(ids) > 500:
        abort(400, _("At most %(num)d items at a time.", num=500))
    return _answer([_decide(i, action, values) for i in dict.fromkeys(ids)], single=False)
