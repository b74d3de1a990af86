"""The review cards' context: each pending item with the plan that approves it, its
block effect and the warnings that need the store, for the page, a fragment or a twin.

Shared by the list (views.reviews) and the decisions (reviews/decide.py), which
re-plans the cards it answers with, so every card is drawn from the same steps.
"""

from __future__ import annotations

import functools

from ... import facts
from ...actions import approval, warnings
from ...store import StoreProblem, list_review_items
from ...store.snapshot import rows_of
from ...web import number_arg, status_of, statuses, stores
from .. import block_effects
from . import edits as review_edits
from . import said as review_words
from .queue import EMPTY, STATUSES, TAB_NAMES
from .queue import project as _project

ALL = "all"  # every item, newest first: agentao's list_review_items(status=None) order
# A page of cards stays under 100 KB of HTML (about 5 KB a closed card) at any store size.
PER_PAGE, MAX_PER_PAGE = 15, 200


def plans_of(items, edits: dict | None = None) -> dict:
    # A damaged target store blocks its cards with the banner's words; the rest stay usable.
    unreadable = {
        st.ref.key: st.problem for st in statuses() if st.problem is not None and st.problem.kind != "missing"
    }
    edits = edits or {}
    pending = [i for i in items if i.status == "pending"]
    live = _live_rows() if pending else {}
    return {i.id: approval.plan_approval(stores(), i, unreadable, edits.get(i.id), live) for i in pending}


def _live_rows() -> approval.LiveRows:
    """Each readable store's live rows by (scope, key), from its held snapshot: the rows
    the cards' saves would update, without a read of the file per card.  A store with a
    hand-edited row (kept as stored, ``FileRows.odd``) or a repeated key is left out: its
    cards read the file, which compares the values as SQLite stores them."""
    out: approval.LiveRows = {}
    for st in statuses():
        if not st.readable:
            continue
        try:
            snap = rows_of(st.ref)
        except StoreProblem:
            continue
        if snap.by_key is not None:
            out[st.ref.key] = snap.by_key
    return out


def warned(plans: dict, found: dict) -> dict:
    """The warnings that need the live rows and the block effect (actions.warnings), for
    the cards whose effect this page computed (a bounded number: block_effects); the
    others get them with their effect (/reviews/effect), and their twin says so."""
    weighed = {i: p for i, p in plans.items() if i in found}
    if not block_effects.approvable(weighed):
        return plans  # nothing to weigh against the store: do not read it
    return {**plans, **warnings.with_store(weighed, found, block_effects.snapshot())}


def context(
    status: str,
    outcomes: dict | None = None,
    with_effects: bool = True,
    items=None,
    edits: dict | None = None,
) -> dict:
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
        items = items[(at - 1) * per_page : at * per_page]
    plans = plans_of(items, edits)
    found = block_effects.for_approvals(plans) if with_effects else {}
    plans = warned(plans, found)
    above = review_words.shared(plans, found)
    return {
        "status": status,
        "items": items,
        "plans": plans,
        "effects": found,
        "counts": facts.suggestions(),
        "outcomes": outcomes or {},
        "statuses": STATUSES,
        "read_only": not status_of("project").writable,
        **paged,
        "tab_names": TAB_NAMES,
        "empty_words": EMPTY,
        "focus_first": False,
        "shared": above,
        "card_lines": lambda plan, effect: review_words.card_lines(plan, effect, above),
        "edit_form": lambda item: review_edits.form_defaults(
            item, plans[item.id].edits if item.id in plans else None
        ),
        "edit_options": functools.cache(review_edits.options),  # the same lists on every card
    }
