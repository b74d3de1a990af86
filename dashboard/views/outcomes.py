"""What a decision POST did, in one shape for HTML, htmx and JSON answers (the review and
curation screens turn the same exceptions into the same outcome codes and statuses)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from flask import abort, request
from flask_babel import gettext as _

from ..actions import effects
from ..contract import SaveRefused
from ..guard.invisible import holds_surrogate
from ..store import StoreProblem
from ..store.writes import WriteConflict
from ..web import statuses
from . import block_effects
from .resolve import ID, cannot_change  # noqa: F401  (ID: the views import it from here)


@dataclass
class Outcome:
    """The result of one action on one item; ``status`` is its HTTP status."""

    id: str
    outcome: str  # approved, rejected, deleted, edited, moved, refused, conflict, ...
    message: str
    status: int = 200
    memory_id: str | None = None
    memory_store: str | None = None
    event: str | None = None
    stable_block_chars: int | None = None  # the new session's block, read back after the write
    shown_effect: str | None = None  # the effect token the form showed (curation)
    effect_as_shown: bool | None = None  # whether the block came out as shown; None: none shown
    error_type: str | None = None  # a refusal: agentao's exception (SensitiveMemoryError, ValueError)
    state: str | None = None  # a review item no longer pending: its status now
    fix: dict | None = None  # one POST that repairs what happened (said.html's form)

    @property
    def ok(self) -> bool:
        return self.status < 300

    def to_dict(self) -> dict:
        return asdict(self)


class Blocked(Exception):
    """The action cannot run here at all (read-only store, bad input)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def form_values() -> dict:
    if request.form:
        return request.form
    body = request.get_json(silent=True)
    if body is None and request.is_json and request.get_data():
        abort(400, _("The JSON body cannot be read (not JSON, or nested too deeply); nothing was changed."))
    refuse_lone_surrogates(body)
    return body if isinstance(body, dict) else {}


def refuse_lone_surrogates(body) -> None:
    """A 400 for a JSON body holding a lone surrogate: no UTF-8 can carry it, to a store or a page."""
    if holds_surrogate(body):
        abort(
            400,
            _(
                "The JSON body holds a lone surrogate (an escape such as \\ud800 without its "
                "pair), which is not a character and cannot be read as text; nothing was changed."
            ),
        )


def strings(values, name: str) -> list[str]:
    """A repeated form field, or a JSON body's string or list of strings ([] when absent); a 400
    for anything else (a number, an object, a list holding one)."""
    if hasattr(values, "getlist"):
        return values.getlist(name)
    found = values.get(name)
    if found is None or found == "":
        return []
    if isinstance(found, str):
        return [found]
    if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
        abort(400, _("'%(name)s' must be a list of strings.", name=name))
    return found


def require_writable(*store_keys: str) -> None:
    for st in statuses():
        why = cannot_change(st.ref.key) if st.ref.key in store_keys else None
        if why:
            raise Blocked(403, why)


def failure(item_id: str, exc: Exception) -> Outcome:
    """Map a refusal, conflict or store problem to an outcome; re-raise anything else."""
    if isinstance(exc, SaveRefused):
        return Outcome(item_id, "refused", str(exc), 422, error_type=exc.agentao_error)
    if isinstance(exc, WriteConflict):
        code = "not_pending" if exc.kind == "not_pending" else "conflict"
        return Outcome(item_id, code, str(exc), 409)
    if isinstance(exc, Blocked):
        return Outcome(item_id, "blocked", str(exc), exc.status)
    if isinstance(exc, StoreProblem):
        return Outcome(item_id, "unavailable", str(exc), 409 if exc.kind == "locked" else 503)
    raise exc


def overall_status(outcomes: list[Outcome]) -> int:
    return next((o.status for o in outcomes if not o.ok), 200)


def read_back(outcome: Outcome) -> None:
    """After a write that worked: the new session's block as the files now give it, and
    whether it is the block the form showed (``shown_effect``, the effect token)."""
    if not outcome.ok:
        return
    block = block_effects.block_now()
    outcome.stable_block_chars = len(block)
    if outcome.shown_effect is not None:
        outcome.effect_as_shown = outcome.shown_effect == effects.block_token(block)
