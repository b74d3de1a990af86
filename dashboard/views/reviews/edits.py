"""Reading "Edit before approving" from a card's form, a preview link or a script's JSON.

The card names its fields per item (``value-<id>``, ``tags-<id>``,
``scope-<id>``, ``type-<id>``, ``key-<id>``) because every card sits in the one bulk form;
a script sends the plain names.  Tags follow the memory edit form's rule
(memories/curate.py): the proposal's tags sent back as shown mean "keep them".
"""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _

from ...actions.approval import Edits
from ...contract import KNOWN_TYPES
from ...guard.textmarks import as_stored, shown
from ...records import ReviewItem
from ..memories.curate import _tags, _type
from ..outcomes import Blocked

FIELDS = ("value", "tags", "scope", "type", "key")
SCOPES = ("project", "user")
MAX_VALUE_CHARS = 100_000  # agentao refuses past 4,000; this only bounds the request
MAX_KEY_CHARS = 1_000  # agentao keeps 80 characters of a key, 120 of its title


def sent(values, item_id: str) -> dict:
    """The edit fields present in ``values``: the card's names first, then plain ones."""
    found = {}
    for name in FIELDS:
        got = values.get(f"{name}-{item_id}")
        if got is None:
            got = values.get(name)
        if got is not None:
            found[name] = got
    return found


def edits_from(values, item: ReviewItem) -> Edits | None:
    """The edits asked for on ``item`` (None when no edit field was sent); Blocked(400) if bad."""
    fields = sent(values, item.id)
    if not fields:
        return None
    for name in ("value", "scope", "type", "key"):
        if name in fields and not isinstance(fields[name], str):
            raise Blocked(400, _("'%(name)s' must be text.", name=name))
    value = fields.get("value")
    if value is not None and len(value) > MAX_VALUE_CHARS:
        raise Blocked(400, _("The value is longer than %(num)d characters.", num=MAX_VALUE_CHARS))
    key = fields.get("key")
    if key is not None and len(key) > MAX_KEY_CHARS:
        raise Blocked(400, _("The key is longer than %(num)d characters.", num=MAX_KEY_CHARS))
    scope = (fields.get("scope") or "").strip() or None
    if scope not in (None, *SCOPES):
        raise Blocked(400, _("'scope' must be 'project' or 'user'."))
    tags = tuple(_tags(fields, item.tags)) if "tags" in fields else None
    return Edits(value=value, tags=tags, scope=scope, type=_type(fields), key=key)


def form_defaults(item: ReviewItem, edits: Edits | None) -> dict:
    """The edit form's prefilled values: the edits being previewed, else the proposal's."""
    e = edits or Edits()
    tags = item.tags if e.tags is None else e.tags
    types = KNOWN_TYPES + ((item.type,) if item.type not in KNOWN_TYPES else ())
    return {
        "value": item.content if e.value is None else e.value,
        "tags": ", ".join(tags),
        "scope": e.scope or item.scope,
        "type": e.type or item.type,
        "key": item.key_normalized if e.key is None else e.key,
        "types": types,
        "scopes": SCOPES,
    }


def options(kind: str, codes: tuple[str, ...]) -> tuple[tuple[str, Any, Any], ...]:
    """(code, value, words) of each ``<option>`` of the form's ``scope`` or ``type`` select: a
    type is sent back as stored and shown with its hidden characters marked.  Every card has the
    same lists, so a page works their words out once (``cards``); the template writes them."""
    from ...words import label

    if kind == "type":
        return tuple((code, as_stored(code), shown(label(kind, code))) for code in codes)
    return tuple((code, code, label(kind, code)) for code in codes)
