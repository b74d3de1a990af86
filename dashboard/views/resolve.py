"""Resolve: what a request is about, found or refused, each in one wording.

A view starts here (resolve, then act in ``actions/``, then answer): the store a URL
names, whether it may be changed now, a memory, a typed confirmation, a purge's dry run
still true.  Each raises werkzeug's typed errors (NotFound 404, Forbidden 403, Conflict
409, BadRequest 400) or the store's own ``StoreProblem``, which ``errors.py`` renders in
one place: a page, the htmx sentence in #status, or JSON.
"""

from __future__ import annotations

import re

from flask import current_app
from flask_babel import force_locale
from flask_babel import gettext as _
from werkzeug.exceptions import BadRequest, Conflict, Forbidden, NotFound

from ..actions import purge
from ..store import StoreRef, get_memory
from ..store.purge import count_kinds
from ..web import raise_if_unreadable, status_of, store_by_key

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a memory's or review item's id as agentao writes it


def store(key: str) -> StoreRef:
    """The shown store with this key; a 404 when there is none, its problem when it exists
    but cannot be read (a missing file is left to the caller)."""
    ref = store_by_key(key)
    if ref is None:
        raise NotFound(_("There is no store called '%(key)s'.", key=key))
    raise_if_unreadable(key)
    return ref


def cannot_change(key: str) -> str | None:
    """Why the store with this key cannot be written now, in one sentence; None when it can."""
    st = status_of(key)
    if st is None or (st.writable and not current_app.config["READ_ONLY"]):
        return None
    # The reasons are sentences already: one full stop, not two.
    reason = str(st.problem or st.read_only_reason or _("the dashboard runs read-only"))
    return _("The %(kind)s store cannot be changed: %(reason)s.", kind=st.ref.kind, reason=reason.rstrip("."))


def writable(key: str) -> StoreRef:
    """The store, if it may be changed now; else a 404 or a 403 saying why."""
    ref = store_by_key(key)
    if ref is None:
        raise NotFound(_("There is no store called '%(key)s'.", key=key))
    why = cannot_change(key)
    if why:
        raise Forbidden(why)
    return ref


def memory(key: str, memory_id: str, live: bool = False):
    """(store, memory, its events); a 404 when the store or the row (a live one if asked) is not there."""
    ref = store(key)
    found, events = get_memory(ref, memory_id) if ref.exists and ID.fullmatch(memory_id) else (None, [])
    if found is None or (live and not found.live):
        raise NotFound(
            _("No live memory '%(id)s' in store '%(store)s'.", id=memory_id, store=key)
            if live
            else _("No memory '%(id)s' in store '%(store)s'.", id=memory_id, store=key)
        )
    return ref, found, events


def typed(given: str | None, expected) -> None:
    """A destructive form's typed confirmation: exactly ``expected`` as the page shows it (a
    translated phrase) or in English, or a 400 that changes nothing."""
    with force_locale("en"):
        english = str(expected)
    if (given or "").strip() not in (str(expected), english):
        raise BadRequest(_("To confirm, type “%(phrase)s” exactly. Nothing was changed.", phrase=expected))


def dry_run(ref: StoreRef, token: str | None, categories=(), by_id: bool = False):
    """The purge dry run a form confirmed (its fingerprint), still true of the file: a 400
    when the fingerprint is damaged, a 409 naming what changed since.  Nothing is written."""
    try:
        rows = (purge.confirmed_by_id if by_id else purge.confirmed)(ref, token or "", categories)
    except ValueError:
        raise BadRequest(
            _(
                "The dry run's fingerprint is missing or damaged: look at the dry run "
                "again. Nothing was changed."
            )
        ) from None
    changed = purge.check(ref, rows).changed
    if changed:
        raise Conflict(
            _(
                "%(n)d of the rows you confirmed changed since the dry run (%(what)s). "
                "Look at the new dry run. Nothing was changed.",
                n=len(changed),
                what=count_kinds(changed),
            )
        )
    return rows
