"""Helpers every screen shares: page-or-fragment rendering, JSON twins, store access."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from flask import (
    Flask,
    abort,
    current_app,
    flash,
    get_flashed_messages,
    jsonify,
    redirect,
    render_template,
    request,
    session,
)
from flask.json.provider import DefaultJSONProvider
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from .store import StoreRef, StoreStatus, inspect
from .store.registry import ref_for
from .store.rows import whole_number


def workspace():
    """All projects the dashboard was started with, and the shared user store."""
    return current_app.extensions["workspace"]


def current_project() -> int:
    """Index of the project shown, from the switcher's cookie (0 when absent or stale).

    The value is signed by this process (``guard.access.sign_preference``): a page on
    another 127.0.0.1 port can set a cookie of the same name, and one with a
    narrower Path would be sent first.  Unsigned or disagreeing copies are ignored.
    """
    from .guard.access import chosen

    index = whole_number(chosen("project") or "0")
    return index if index is not None and index < len(workspace().project_dirs) else 0


def stores() -> list[StoreRef]:
    """The stores this request shows: the current project's store first, then the user store."""
    from flask import g

    if "stores" not in g:
        g.stores = workspace().refs(current_project())
    return g.stores


def store_by_key(key: str) -> StoreRef | None:
    """The shown store with this key ("project" or "user"), or None."""
    return ref_for(stores(), key)


def status_of(key: str) -> StoreStatus | None:
    """This request's status of the shown store with this key, or None."""
    return next((st for st in statuses() if st.ref.key == key), None)


def raise_if_unreadable(key: str) -> None:
    """For a page about one store: when its file exists but cannot be read, answer its
    problem (a 503) in the words of the overview and the banners, not whatever a later
    query happens to trip on.  A missing store is left to the page (often a 404)."""
    st = status_of(key)
    if st is not None and st.problem is not None and st.problem.kind != "missing":
        raise st.problem


def statuses(deep: bool = False) -> list[StoreStatus]:
    """Health of every store, once per request (``store.status.inspect`` reuses its reading
    of a file while the file's stamp holds); ``deep`` adds the overview's counts."""
    from flask import g

    if g.get("store_statuses") is None or deep > g.store_statuses_kind:
        g.store_statuses = [inspect(ref, current_app.config["READ_ONLY"], deep=deep) for ref in stores()]
        g.store_statuses_kind = deep
    return g.store_statuses


def readable_refs() -> list[StoreRef]:
    return [st.ref for st in statuses() if st.readable]


def wants_fragment() -> bool:
    """A fragment is wanted by htmx requests that are not boosted navigation."""
    return request.headers.get("HX-Request") == "true" and request.headers.get("HX-Boosted") != "true"


def number_arg(name: str, default: int, high: int) -> int:
    """A whole-number query parameter from 1 to ``high`` (``default`` when absent); else a 400."""
    raw = request.args.get(name)
    if raw in (None, ""):
        return default
    value = whole_number(raw)
    if value is None or not 1 <= value <= high:
        abort(400, _("'%(name)s' must be a whole number from 1 to %(high)d.", name=name, high=high))
    return value


def wants_json() -> bool:
    """Whether the client wants JSON: a ``.json`` twin, or ``Accept: application/json``
    (scripts posting to an action URL).  The one answer for views, errors and the guard."""
    return request.path.endswith(".json") or request.accept_mimetypes.best == "application/json"


def render(page_template: str | None, fragment: str | None = None, **context):
    """Render the full page, or only its fragment when htmx asks for one.  With no page
    template of its own the page is ``page.html`` around the fragment (context: ``title``,
    optional ``heading`` and ``back`` = (url, words))."""
    partial = bool(fragment and wants_fragment())
    if page_template is None:
        page_template, context["fragment_template"] = "page.html", fragment
    body = render_template(fragment if partial and fragment else page_template, **context)
    if partial and context.get("said"):
        # The result in words, into the pinned #status region wherever the fragment lands.
        body += render_template("partials/said_oob.html", said=context["said"])
    response = current_app.make_response(body)
    response.vary.add("HX-Request")
    return response


def page(fmt: str, page_template: str | None, fragment: str | None = None, *, to_json=None, **context):
    """One context, two renderings (datasette's renderers): the HTML page (or its
    fragment), or for ``fmt == "json"`` the context itself as the JSON twin.

    A view builds its data once and hands it here, so the page and its twin
    cannot drift.  ``to_json(context)`` is given only where the context holds
    objects that are not plain data (records, plans, statuses); it picks and
    converts, it never reads a store.  Objects with a ``to_dict()`` are
    converted by the encoder in any case (see :class:`JSONProvider`).
    """
    if fmt == "json":
        return twin(to_json(context) if to_json is not None else context)
    return render(page_template, fragment, **context)


def answer(
    data,
    code: int = 200,
    *,
    page: str | None = None,
    fragment: str | None = None,
    to: str | None = None,
    leave: bool = False,
    done: dict | None = None,
    html=None,
    **context,
):
    """The one answer to a request that acts: ``data`` as JSON for scripts (a function is
    called only then); for htmx the fragment; without JavaScript a 303 to ``to`` when given
    (post/redirect/get), else the page (``page.html`` around the fragment when ``page`` is
    None).  Every rendering keeps the status ``code``: htmx swaps 4xx answers too (base.html).
    With ``leave``, htmx leaves the page for ``to`` (``HX-Redirect``) instead of following it.
    ``done`` (what happened, plain data) goes with the redirect, for its page to say (:func:`landed`).
    ``html``: a function making the HTML answer itself, where its template or context depends
    on more than page-or-fragment (called only then, so a script's answer renders nothing)."""
    if wants_json():
        return twin(data() if callable(data) else data, code)
    partial = wants_fragment() and bool(fragment or html)
    if to is not None and (leave and wants_fragment() or not partial):
        if done is not None:
            _flash(done, urlsplit(to).path)
        if leave and wants_fragment():
            return current_app.make_response(("", 200, {"HX-Redirect": to}))
        return redirect(to, 303)
    response = html() if html is not None else render(page, fragment, **context)
    response.status_code = code
    return response


# Flask's session cookie carries the flashed results; a browser drops a cookie past 4,096
# bytes (name and value) without a word, and with it the session.  A client that posts
# again and again without following the 303s piles results up, so the oldest go first.
SAID_BYTES = 3_500  # the signed session's value at most (the cookie's name takes the rest)
SAID_TEXT = 200  # characters kept of each text in a result (a result can quote a memory)
SAID_KEPT = 5  # results kept (a page says the newest for its address; more tabs, more pages)


def _flash(done: dict, path: str) -> None:
    flash(json.dumps(_cut(done)), path)
    said = session["_flashes"]
    del said[:-SAID_KEPT]
    signed = current_app.session_interface.get_signing_serializer(current_app)  # type: ignore[attr-defined]
    while said and len(signed.dumps(dict(session))) > SAID_BYTES:
        del said[0]  # the newest is dropped only when it alone is too large (a hostile path)


def _cut(value):
    if isinstance(value, str):
        return value[:SAID_TEXT]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut(v) for v in value]
    return value


def landed() -> dict:
    """What the action this page was redirected from did (``answer(done=…)``), or {}.

    It travels in Flask's session (``flash``), signed by this process, not in the URL: the
    address stays clean to share or reload, and a reload says nothing again."""
    said = get_flashed_messages(category_filter=[request.script_root + request.path])
    return json.loads(str(said[-1])) if said else {}


def page_route(bp, rule: str):
    """Register a GET page at ``rule`` and its JSON twin at ``rule + ".json"``.

    Both share one endpoint; the page is registered first so that
    ``url_for(endpoint)`` builds the page URL and ``url_for(endpoint, fmt="json")``
    the twin.  The view receives ``fmt`` ("html" or "json").
    """

    def decorate(view):
        bp.add_url_rule(rule, view_func=view, defaults={"fmt": "html"}, methods=["GET"])
        bp.add_url_rule(rule + ".json", view_func=view, defaults={"fmt": "json"}, methods=["GET"])
        return view

    return decorate


def twin(data, status: int = 200):
    """The JSON twin of a page."""
    response = jsonify(data)
    response.status_code = status
    return response


class JSONProvider(DefaultJSONProvider):
    """The JSON twins' encoder, safe with what a hand edit can leave in a row: a BLOB in a
    TEXT column reaches Python as bytes, which is written as text (invalid UTF-8 replaced,
    as the HTML pages show it) instead of failing the whole answer.  An object with a
    ``to_dict()`` is written as that, so a page's context can be its twin."""

    @staticmethod
    def default(o):
        if isinstance(o, bytes):
            return o.decode("utf-8", "replace")
        if hasattr(o, "to_dict"):  # records, statuses, plans: their own plain form
            return o.to_dict()
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        return DefaultJSONProvider.default(o)

    def loads(self, s, **kwargs):
        try:
            return super().loads(s, **kwargs)
        except RecursionError:  # a body nested thousands deep: bad input, not a crash
            raise ValueError("JSON nested too deeply") from None

    def dumps(self, obj, **kwargs):
        try:
            return super().dumps(obj, **kwargs)
        except TypeError:  # sort_keys over a bytes key beside str keys
            return super().dumps(_text_keys(obj), **kwargs)


def _text_keys(obj):
    if isinstance(obj, dict):
        return {
            (k.decode("utf-8", "replace") if isinstance(k, bytes) else k): _text_keys(v)
            for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [_text_keys(v) for v in obj]
    return obj


def init_app(app: Flask) -> None:
    from . import words
    from .guard import textmarks

    app.json = JSONProvider(app)
    textmarks.init_app(app)
    words.init_app(app)

    @app.context_processor
    def _inject():
        from .actions.twofile import recovered
        from .guard.localurl import here

        return {
            "all_statuses": statuses,
            "workspace": workspace,
            "recovered": lambda: recovered(stores()),
            "current_project": current_project,
            "here": here,
            "nav_items": nav_items,
            "html_lang": lambda: str(get_locale()).replace("_", "-"),
        }


# The header's tabs, in order: (endpoint, label).  A screen not registered (yet) is left out.
NAV = [
    ("overview.index", _l("Overview")),
    ("about.index", _l("About you")),
    ("memories.index", _l("Memories")),
    ("reviews.index", _l("Suggestions")),
    ("findings.index", _l("Findings")),
    ("preview.index", _l("Preview")),
    ("checks.index", _l("Checks")),
    ("activity.index", _l("Activity")),
    ("summaries.index", _l("Summaries")),
    ("conversations.index", _l("Conversations")),
    ("export.index", _l("Export")),
    ("forget.index", _l("Forget")),
]

# endpoint -> function() giving a small count to show beside its tab (a facts.Badge, or
# None).  A screen registers its own, from dashboard/facts.py, and keeps it cheap.
NAV_BADGES: dict = {}


def nav_items():
    """The tabs this app has: (endpoint, label, badge or None, is this page's tab)."""
    here = request.endpoint or ""
    items = []
    for endpoint, text in NAV:
        if endpoint not in current_app.view_functions:
            continue
        badge = NAV_BADGES.get(endpoint)
        items.append(
            (endpoint, text, badge() if badge else None, here.partition(".")[0] == endpoint.partition(".")[0])
        )
    return items
