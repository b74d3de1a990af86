"""The memories screen's contexts: the list (its filters, also the list a bulk action
refreshes) and one memory's page (also what a delete or restore swaps in place), with the
forms its actions partial shows.  The routes are in ``views.memories``."""

from __future__ import annotations

import re

from flask import abort, request, url_for
from flask_babel import gettext as _

from ... import web
from ...actions import curation
from ...actions import restore as restoring
from ...contract import KNOWN_TYPES
from ...engine.reach import memory_reach
from ...records import plain
from ...store import MAX_PER_PAGE, PER_PAGE, SORTS, MemoryFilters, get_memory, list_memories, writes
from ...web import readable_refs, render, status_of, statuses, store_by_key, stores, whole_number, workspace
from ...words import Terms
from .. import block_effects, resolve
from . import marks as memory_marks

DONE = ("deleted", "edited", "moved", "added", "restored")
MAX_FILTER_CHARS = 200
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def parse_filters(args) -> MemoryFilters:
    """Query string -> filters; a bad value is a 400 with the reason."""

    def text(name):
        value = (args.get(name) or "").strip()
        if len(value) > MAX_FILTER_CHARS:
            abort(400, _("'%(name)s' is longer than %(n)d characters.", name=name, n=MAX_FILTER_CHARS))
        return value or None

    def number(name, default, low, high):
        raw = args.get(name)
        if raw in (None, ""):
            return default
        value = whole_number(raw)
        if value is None or not low <= value <= high:
            abort(
                400,
                _(
                    "'%(name)s' must be a whole number from %(low)d to %(high)d.",
                    name=name,
                    low=low,
                    high=high,
                ),
            )
        return value

    scope = text("scope")
    if scope not in (None, "user", "project"):
        abort(400, _("'scope' must be 'user' or 'project'."))
    sort = args.get("sort") or "updated"
    if sort not in SORTS:
        abort(400, _("'sort' must be one of: %(sorts)s.", sorts=", ".join(SORTS)))
    order = args.get("order") or "desc"
    if order not in ("asc", "desc"):
        abort(400, _("'order' must be 'asc' or 'desc'."))
    deleted = args.get("deleted") or "0"
    if deleted not in ("0", "1"):
        abort(400, _("'deleted' must be 0 or 1."))
    return MemoryFilters(
        scope=scope,
        type=text("type"),
        source=text("source"),
        confidence=text("confidence"),
        tag=text("tag"),
        q=text("q"),
        include_deleted=deleted == "1",
        sort=sort,
        descending=order == "desc",
        page=number("page", 1, 1, 10**6),
        per_page=number("per_page", PER_PAGE, 1, MAX_PER_PAGE),
    )


def list_context(args, choices: bool = True) -> dict:
    """The list's context for these query arguments (also the list a bulk action refreshes).
    ``choices``: a page for people (filter choices, badges); the twin keeps the rows as stored."""
    filters = parse_filters(args)
    page = list_memories(
        readable_refs(), filters, choices=("type", "source", "confidence") if choices else ()
    )
    marks = memory_marks.row_marks(page.items) if choices else {}
    return dict(
        page=page,
        filters=filters,
        choices=page.choices,
        sorts=list(SORTS),
        problems=page.problems,
        marks=marks,
        **row_context(),
    )


def row_context() -> dict:
    """What a list row (memories/_row.html, about/_row.html) needs beside the row: its words,
    said once per page, the stores that may be changed (a row offers delete and "forget for
    good" only there) and the fingerprint its delete or Undo form sends back."""
    return {
        "w": memory_marks.row_words(),
        "term": Terms(),
        "writable": {st.ref.key for st in statuses() if st.writable},
        "row_print": writes.fingerprint,
    }


def list_json(ctx) -> dict:
    page = ctx["page"]
    # The banners' problems (every page shows them) beside the ones this list met.
    problems = {st.ref.key: st.problem for st in statuses() if st.problem} | ctx["problems"]
    return {
        "filters": ctx["filters"].__dict__,
        **plain(page, "total", "page", "pages", "per_page", "items"),
        "problems": [{"store": key, "kind": p.kind, "message": str(p)} for key, p in problems.items()],
    }


def reach(memory, entry) -> dict:
    """How a row reaches the model, from the engine's stable selection for a new session.

    ``entry`` is the row's :class:`engine.Selected` when the stable rules picked
    it, else None.
    """
    return memory_reach(memory, entry and entry.because, entry and entry.shown)


def _stable_entry(memory):
    """The engine's stable-selection entry for ``memory`` (None when not selected)."""
    return memory_marks.stable_fitted().find(memory)


def detail_context(
    store: str, memory_id: str, fmt: str = "html", done: str | None = None, shown: int | None = None
) -> dict:
    """What a memory's page shows: the row, how it reaches the agent, its findings, its forms.

    Also the context of the fragment a delete or restore answers htmx with
    (curate.py), so the answer at the top of the page changes with the click.
    """
    _ref, memory, events = resolve.memory(store, memory_id)
    entry = _stable_entry(memory) if memory.deleted_at is None else None
    info = reach(memory, entry)
    if memory.store == "user":
        # The user store is shared: what it holds reaches every project's agent.
        info["projects"] = workspace().project_names()
    if fmt == "json":
        return {"memory": memory, "events": events, "reach": info}
    if done is None:  # the page an action was redirected to says what it did (web.answer)
        was = web.landed()
        done, shown = was.get("done"), whole_number(was.get("shown"))
    cur = actions_for(memory, done, shown)
    return {
        "memory": memory,
        "events": events,
        "reach": info,
        "cur": cur,
        "why_picked": memory_marks.why_picked(entry.because) if entry is not None else None,
        "flags": memory_marks.flags(memory.store, memory.id),
        "focus": request.args.get("field") if request.args.get("field") in FIELDS else None,
        "said": memory_marks.said_after(cur["done"], memory, cur),
    }


# ?field= names the edit form's field a "fix" link lands on (the findings' edit links).
FIELDS = ("content", "title", "tags")


def _exists(store: str, memory_id: str) -> bool:
    ref = store_by_key(store)
    return (
        ref is not None
        and _ID.fullmatch(memory_id) is not None
        and ref.exists
        and status_of(store).problem is None
        and get_memory(ref, memory_id)[0] is not None
    )


def page_in_place(store: str, memory_id: str, outcome, shown: str | None):
    """A delete's or restore's answer to htmx (curate.py): the memory's page region as it
    is now, with the same words as the page a form without JavaScript lands on,
    or the failure inside it.  None when there is no row to show (the caller answers)."""
    if not (outcome.ok or _exists(store, memory_id)):
        return None
    ctx = detail_context(
        store,
        outcome.memory_id if outcome.ok else memory_id,
        done=outcome.outcome if outcome.ok else "",
        shown=whole_number(shown) if shown is not None else None,
    )
    if not outcome.ok:
        ctx["outcome"] = outcome  # said inside the actions, where the failed form was
    return render("memories/detail.html", "memories/_page.html", **ctx)


# A list row's shape, by the ``shown_in`` its delete or Undo form sends (memories/_row_actions.html).
ROWS = {"list": "memories/_row.html", "about": "about/_row.html", "about-deleted": "about/_row.html"}


def row_in_place(shown_in, store: str, memory_id: str, outcome):
    """A delete's or Undo's answer to htmx when sent from a list row: the row as it is now,
    in that list's shape, with its Undo (after a delete) where the button was, and the
    result in words in the status line.  A failure leaves the row where it is and says why.
    None when the form did not come from a row (the caller answers)."""
    template = ROWS.get(shown_in) if isinstance(shown_in, str) else None
    if template is None:
        return None
    memory = None
    if outcome.ok or _exists(store, memory_id):
        memory = get_memory(store_by_key(store), outcome.memory_id if outcome.ok else memory_id)[0]
    if not outcome.ok or memory is None:
        answer = render(None, template, said=(outcome.message, "bad"), m=None)
        answer.headers["HX-Reswap"] = "none"  # the row stays; the status line says why
        return answer
    return render(
        None,
        template,
        m=memory,
        mark=memory_marks.row_marks([memory])[(memory.store, memory.id)],
        just=outcome.outcome,
        shown_in=shown_in,
        # The words only: the Undo is in the row, where the Delete button was.
        said=memory_marks.said_after(outcome.outcome, memory, {}),
        **row_context(),
    )


def write_fields(memory, status) -> dict:
    """What an edit, delete or move POST of this row sends back: the version the page saw.

    ``updated_at`` and ``row`` are checked by the write; ``change`` (the store's
    change counter) is accepted and not checked, so an agent saving other rows
    meanwhile refuses nothing (see views/curate.py).  A move also sends
    ``target``, the fingerprint of the row it would overwrite (the move form's).
    """
    from ...actions.curation import plan_move
    from ...actions.restore import plan_restore
    from ...store.writes import fingerprint

    move = plan_move(stores(), memory) if memory.live else None
    back = plan_restore(stores(), memory) if not memory.live else None
    return {
        "updated_at": memory.updated_at,
        "row": fingerprint(memory),
        "change": status.change_counter,
        "writable": status.writable and memory.live,
        "target": move.target_fingerprint if move is not None and move.problem is None else None,
        "move_problem": move.problem if move is not None else None,
        "restore_problem": back.problem if back is not None else None,
        "actions": {
            a: url_for("memories.curate", store=memory.store, memory_id=memory.id, action=a)
            for a in ("edit", "delete", "move", "restore")
        },
    }


def actions_for(memory, done: str | None = None, shown: int | None = None) -> dict:
    """What the actions partial needs: the tokens its forms carry and where a move would go.

    ``done`` (an action that just worked) and ``shown`` (the block size its form had
    predicted) come from the action, through its redirect (``detail_context``) or the
    htmx answer that swaps the page in place.
    """
    status = status_of(memory.store)
    live = memory.live and status.readable
    other = next(
        (
            st.problem
            for st in statuses()
            if st.ref.key != memory.store and st.problem is not None and st.problem.kind != "missing"
        ),
        None,
    )
    move = curation.plan_move(stores(), memory, other) if live else None
    show = live and status.writable  # the effects sit next to the forms, shown only with them
    # A soft-deleted row offers a restore (an undo for delete) when nothing holds its key.
    back = (
        restoring.plan_restore(stores(), memory)
        if not memory.live and status.readable and status.writable
        else None
    )
    done = done if done in DONE else None
    return {
        "row": writes.fingerprint(memory),
        "writable": status.writable,
        "read_only_reason": status.read_only_reason or (str(status.problem) if status.problem else None),
        "move": move,
        "delete_effect": block_effects.for_delete(memory) if show else None,
        "restore": back,
        "restore_effect": (
            restoring.restore_effect(block_effects.snapshot(), back)
            if back is not None and back.problem is None
            else None
        ),
        "move_effect": block_effects.for_move(memory, move) if show else None,
        "done": done,
        "size_now": block_effects.size_now() if done else None,
        # The size the page predicted, when the block came out otherwise (see module doc).
        "shown_chars": shown if done else None,
        "types": list(dict.fromkeys(list(KNOWN_TYPES) + [memory.type])),
        # Tags the comma-separated field cannot give back once edited (see _tags).
        "uneven_tags": [t for t in memory.tags if "," in t or t != t.strip() or not t],
    }
