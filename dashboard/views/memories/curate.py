"""Curating one memory from its detail page: soft delete, edit, move to the other store.

Part of the memories screen: ``views.memories`` registers ``act`` and
``effect`` on its blueprint (``memories.curate``, ``memories.edit_effect``).
The forms live in ``memories/_actions.html``, which the detail page includes
with ``actions_for(memory)`` as ``cur``.  Each form carries the row's ``updated_at`` and fingerprint as the
page showed them (a move also the fingerprint of the row at its target key);
the write re-checks them inside its transaction and answers 409 if the row
changed.  The agent saving *other* rows meanwhile is no reason to refuse, so
the store's change counter (``change``, still accepted from scripts) is not
checked.

But other rows do change the ``<memory-stable>`` block, so the effect the
form showed may be out of date by the time of the click.  A form that showed
an effect sends its token back (``effect``); after the write the block is
read back from the files, and if it is not the block shown the answer says
so, with the real size.
"""

from __future__ import annotations

import hashlib
import json
import re

from flask import abort, request, url_for
from flask_babel import gettext as _

from ...actions import curation
from ...actions import restore as restoring
from ...store import get_memory
from ...store.writes import Expect
from ...web import answer, render, store_by_key, stores, wants_fragment, whole_number
from .. import block_effects, resolve
from ..outcomes import ID, Blocked, Outcome, failure, form_values, read_back, require_writable
from .page import actions_for, page_in_place, row_in_place

MAX_TAGS_CHARS = 2000
_TYPE = re.compile(r"[A-Za-z0-9_-]{1,40}")
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_TOKEN = re.compile(r"(\d{1,7})-[0-9a-f]{12}")


def _expect(values) -> Expect:
    updated_at, row = values.get("updated_at"), values.get("row")
    if not updated_at or not isinstance(updated_at, str):
        raise Blocked(
            400, _("The form did not say which version you saw (missing 'updated_at'); reload the page.")
        )
    counter = values.get("change")
    if counter is not None and str(counter) != "none" and whole_number(str(counter)) is None:
        raise Blocked(
            400,
            _(
                "'change' must be a store change counter (a number or 'none'); it is "
                "accepted from older scripts and not checked."
            ),
        )
    if row is not None and not (isinstance(row, str) and _FINGERPRINT.fullmatch(row)):
        raise Blocked(400, _("'row' must be the row's fingerprint as the page gave it."))
    return Expect(updated_at=updated_at, row=row)


def _shown(values) -> str | None:
    """The effect token the form showed, if it showed one."""
    token = values.get("effect")
    if token is None or token == "":
        return None
    if not (isinstance(token, str) and _TOKEN.fullmatch(token)):
        raise Blocked(400, _("'effect' must be the effect token as the page gave it."))
    return token


def _tags(values, current=()) -> list[str]:
    """The tags the edit asks for.

    The form shows the row's tags ``current`` joined by ", ".  Sent back as
    shown, that text means "keep the tags": they are kept exactly, because
    splitting it would rewrite a tag holding a comma or outer spaces that
    the user never touched.
    """
    raw = values.get("tags") or ""
    if isinstance(raw, list) and all(isinstance(t, str) for t in raw):  # a JSON body may send a list
        return list(raw)
    if not isinstance(raw, str):
        raise Blocked(400, _("'tags' must be text (comma-separated) or a list of texts."))
    if len(raw) > MAX_TAGS_CHARS:
        raise Blocked(400, _("Tags are longer than %(n)d characters.", n=MAX_TAGS_CHARS))
    if current and raw == ", ".join(current):
        return list(current)
    return [t.strip() for t in raw.split(",") if t.strip()]


def _edit_key(value: str, tags, type_: str) -> str:
    """A digest of the values an edit's effect was shown for (the form sends it back)."""
    return hashlib.sha256(json.dumps([value, list(tags), type_]).encode()).hexdigest()[:12]


def _type(values) -> str | None:
    value = values.get("type") or ""
    if not isinstance(value, str):
        raise Blocked(400, _("'%(name)s' must be text.", name="type"))
    value = value.strip()
    if value and not _TYPE.fullmatch(value):
        raise Blocked(400, _("'type' must be letters, digits, '_' or '-' (at most 40)."))
    return value or None


def _run(store: str, memory_id: str, action: str) -> Outcome:
    values = form_values()
    try:
        if store_by_key(store) is None or not ID.fullmatch(memory_id):
            raise Blocked(404, _("No memory '%(id)s' in store '%(store)s'.", id=memory_id, store=store))
        expect, shown = _expect(values), _shown(values)
        require_writable(store)
        to = store
        if action == "delete":
            curation.delete(stores(), store, memory_id, expect)
            done, new_id, event = "deleted", memory_id, "soft_delete"
            message = _("Deleted memory %(id)s (soft delete).", id=memory_id)
        elif action == "restore":
            saved = restoring.restore(stores(), store, memory_id, expect)
            done, new_id, event = "restored", saved.memory_id, saved.event
            message = _("Restored memory %(id)s: agentao sees it again.", id=memory_id)
        elif action == "edit":
            value = values.get("value")
            if not isinstance(value, str):
                raise Blocked(400, _("'value' is required."))
            # The row as the form showed it; a row changed since then fails the expect check.
            row = get_memory(store_by_key(store), memory_id)[0]
            tags, type_ = _tags(values, row.tags if row else ()), _type(values)
            if row is None or values.get("effect_for") not in (
                None,
                _edit_key(value, tags, type_ or row.type),
            ):
                shown = None  # the effect shown was for other values than these
            saved = curation.edit(stores(), store, memory_id, value, tags, type_, expect)
            done, new_id, event = "edited", saved.memory_id, saved.event
            message = _("Saved memory %(id)s.", id=memory_id)
        else:
            target = values.get("target")
            if not target:
                raise Blocked(400, _("The form did not say what the move would overwrite; reload the page."))
            to = "project" if store == "user" else "user"
            require_writable(to)
            saved = curation.move(stores(), store, memory_id, expect, target)
            done, new_id, event = "moved", saved.memory_id, saved.event
            message = _("Moved to the %(store)s store as memory %(id)s.", store=to, id=saved.memory_id)
        return Outcome(
            memory_id, done, message, memory_id=new_id, memory_store=to, event=event, shown_effect=shown
        )
    except Exception as exc:  # noqa: BLE001 - failure() re-raises what it does not know
        return failure(memory_id, exc)


# Answered in place through htmx (the memory's page region swapped, the result and its
# Undo in the status line); the others land on the memory's page, which a move changes.
IN_PLACE = ("delete", "restore")


def _answer(store: str, memory_id: str, outcome: Outcome, action: str = ""):
    read_back(outcome)
    shown = None if outcome.effect_as_shown in (None, True) else _TOKEN.fullmatch(outcome.shown_effect)[1]
    in_place = action in IN_PLACE and wants_fragment()
    return answer(
        outcome.to_dict,  # a script's answer reads nothing back: a refusal on a damaged store says why
        outcome.status,
        # The memory's page says what happened (page.detail_context): the block's size read
        # back from the files, and the size the page had predicted when it came out otherwise.
        to=url_for("memories.detail", fmt="html", store=outcome.memory_store, memory_id=outcome.memory_id)
        if outcome.ok and not in_place
        else None,
        leave=True,
        done={"done": outcome.outcome, "shown": shown},
        html=lambda: _html(store, memory_id, outcome, shown, in_place),
    )


def _html(store: str, memory_id: str, outcome: Outcome, shown: str | None, in_place: bool):
    if in_place:
        # From a list row (memories list, About you): that row; else the memory's page.
        found = row_in_place(form_values().get("shown_in"), store, memory_id, outcome)
        found = found if found is not None else page_in_place(store, memory_id, outcome, shown)
        if found is not None:
            return found  # a failure is said inside; htmx swaps it
    ref = store_by_key(store)
    memory = get_memory(ref, memory_id)[0] if ref is not None and ref.exists else None
    return render(
        "memories/action_result.html",
        "memories/_actions.html",
        memory=memory,
        outcome=outcome,
        cur=_cur(memory),
        store=store,
        memory_id=memory_id,
    )


def _cur(memory):
    return actions_for(memory) if memory is not None else None


def act(store: str, memory_id: str, action: str):
    if action not in ("delete", "edit", "move", "restore"):
        abort(404)
    return _answer(store, memory_id, _run(store, memory_id, action), action)


def effect(store: str, memory_id: str):
    """What saving the edit form's values would do to the stable block (nothing is written)."""
    _ref, memory, _events = resolve.memory(store, memory_id, live=True)
    values = request.args
    value = values.get("value")
    if value is None:
        abort(400, _("'value' is required: the edit's new value."))
    try:
        tags, type_ = _tags(values, memory.tags), _type(values)
    except Blocked as bad:
        abort(bad.status, str(bad))
    found, problem = block_effects.for_edit(memory, value, tags, type_)
    edit = {
        "value": value,
        "tags": ", ".join(tags),
        "type": type_ or memory.type,
        "effect": found,
        "problem": problem,
        "key": _edit_key(value, tags, type_ or memory.type),
    }
    return answer(
        lambda: {"effect": found.to_dict() if found else None, "refusal": problem},
        page="memories/edit_effect.html",
        fragment="memories/_actions.html",
        memory=memory,
        edit=edit,
        cur=actions_for(memory),
    )
