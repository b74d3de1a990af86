"""Adding a memory by hand: ``/memories/new`` (the form and its plan) and its POST.

Part of the memories screen: ``views.memories`` registers these on its
blueprint (``memories.new``, ``memories.add``).  The GET shows, for the
values typed, what ``actions.adding.plan_add`` would write -- the key as
normalised, title, file, scope and type, the live row it overwrites -- and
the effect on ``<memory-stable>``, or agentao's refusal; its JSON twin is
``/memories/new.json``; the form itself POSTs its values to
``/memories/new/plan`` (same answer, no write) since a long value does not
fit in a query string.  The Save button comes with that plan: the form then
carries the fingerprint of the row it showed as overwritten (``target``),
the effect token (``effect``) and a digest of the values planned
(``planned``), so a save of other values than those shown, or over a row the
agent changed meanwhile, is refused instead of written unseen.
"""

from __future__ import annotations

import hashlib
import json

from flask import abort, request, url_for
from flask_babel import gettext as _

from ...actions import adding, effects, warnings
from ...contract import KNOWN_TYPES, SaveRefused
from ...web import answer, stores
from .. import block_effects
from ..outcomes import Blocked, Outcome, failure, form_values, read_back, require_writable
from .curate import _TYPE, MAX_TAGS_CHARS

FIELDS = ("key", "value", "tags", "scope", "type")
# agentao cuts a key to 80 characters and refuses a value past 4000 with its own
# message; this only bounds the request, well above both.
MAX_FIELD_CHARS = 20000


def _inputs(values) -> dict:
    """The form's fields as strings (a JSON body may send tags as a list); Blocked on bad ones."""
    got = {}
    for name in FIELDS:
        raw = values.get(name)
        if name == "tags" and isinstance(raw, list):
            raw = ", ".join(str(t) for t in raw)
        if raw is not None and not isinstance(raw, str):
            raise Blocked(400, _("'%(name)s' must be text.", name=name))
        got[name] = raw or ""
    for name, limit in (("key", MAX_FIELD_CHARS), ("value", MAX_FIELD_CHARS), ("tags", MAX_TAGS_CHARS)):
        if len(got[name]) > limit:
            raise Blocked(400, _("'%(name)s' is longer than %(num)d characters.", name=name, num=limit))
    if got["scope"] not in ("", "user", "project"):
        raise Blocked(400, _("'scope' must be 'user', 'project' or empty (agentao infers it)."))
    if got["type"] and not _TYPE.fullmatch(got["type"]):
        raise Blocked(400, _("'type' must be letters, digits, '_' or '-' (at most 40)."))
    return got


def _tags(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _digest(got: dict) -> str:
    """Which values a plan was shown for (the form sends it back with Save)."""
    return hashlib.sha256(json.dumps([got[f] for f in FIELDS]).encode()).hexdigest()[:12]


def _plan(got: dict) -> adding.AddPlan:
    return adding.plan_add(
        stores(), got["key"], got["value"], _tags(got["tags"]), got["scope"] or None, got["type"] or None
    )


def new(fmt: str):
    """The form; with values typed, also what saving them would write and do to the prompt."""
    return _planned(request.args)  # its .json twin is answered as JSON (web.answer)


def plan():
    """The same plan for values POSTed (nothing is written): a 4000-character value, agentao's
    limit, does not fit in a query string, so the form asks this way."""
    return _planned(form_values())


def _blank(got):
    """The add form's context before anything is planned: the values as typed."""
    keys = ("plan", "refusal", "refusal_hint", "error_type", "effect", "planned")
    return {"form": got, "types": KNOWN_TYPES, **dict.fromkeys(keys)}


def _planned(values):
    try:
        got = _inputs(values)
    except Blocked as bad:
        abort(bad.status, str(bad))
    context = _blank(got)
    if got["key"] or got["value"]:
        try:
            plan = _plan(got)
        except SaveRefused as refused:
            hint = warnings.refusal_hint(str(refused))
            context.update(refusal=str(refused), refusal_hint=hint, error_type=refused.agentao_error)
        else:
            context.update(plan=plan, planned=_digest(got))
            if plan.problem is None:
                context["effect"] = effects.save_effect(block_effects.snapshot(), plan.save, plan.existing)
    return answer(
        lambda: _new_json(context), page="memories/new.html", fragment="memories/_new.html", **context
    )


def _new_json(ctx) -> dict:
    shown = ("plan", "refusal", "error_type", "effect", "planned")
    return {**{name: ctx[name] for name in shown}, "action": url_for("memories.add")}


def _run(values) -> tuple[Outcome, dict]:
    got = {f: "" for f in FIELDS}
    try:
        got = _inputs(values)
        planned, target, shown = values.get("planned"), values.get("target"), values.get("effect")
        for name, field in (("planned", planned), ("target", target), ("effect", shown)):
            if field is not None and not isinstance(field, str):
                raise Blocked(400, _("'%(name)s' must be text, as the page gave it.", name=name))
        if planned and planned != _digest(got):
            raise Blocked(
                409,
                _(
                    "The values changed after their plan was shown; show what "
                    "they will write again, then save. Nothing was changed."
                ),
            )
        plan = _plan(got)
        require_writable(plan.save.store)
        saved = adding.add(stores(), plan, target or None)
        said = (
            _(
                "Updated memory %(id)s ('%(key)s', %(scope)s scope).",
                id=saved.memory_id,
                key=plan.save.key_normalized,
                scope=plan.save.scope,
            )
            if saved.event == "update"
            else _(
                "Saved memory %(id)s ('%(key)s', %(scope)s scope).",
                id=saved.memory_id,
                key=plan.save.key_normalized,
                scope=plan.save.scope,
            )
        )
        return Outcome(
            plan.save.key_normalized,
            "added",
            said,
            memory_id=saved.memory_id,
            memory_store=plan.save.store,
            event=saved.event,
            shown_effect=shown or None,
        ), got
    except Exception as exc:  # noqa: BLE001 - failure() re-raises what it does not know
        return failure(got["key"], exc), got


def add():
    """POST /memories/new: save as agentao's save_memory tool would; 303 to the new memory."""
    outcome, got = _run(form_values())
    read_back(outcome)
    if outcome.ok:
        where = url_for(
            "memories.detail", fmt="html", store=outcome.memory_store, memory_id=outcome.memory_id
        )
        return answer(outcome.to_dict, outcome.status, to=where, leave=True, done={"done": "added"})
    context = {**_blank(got), "outcome": outcome}
    return answer(
        outcome.to_dict, outcome.status, page="memories/new.html", fragment="memories/_new.html", **context
    )
