"""Prompt preview: the answer in words (preview_answer.py), then the exact memory blocks
agentao would inject and every score behind them.

GET parameters (page and JSON twin alike), or the page's form POSTed to the page (a
message of agentao's 4,000 characters does not fit in the capped query string: Chinese is
nine bytes a character once percent-encoded), or a JSON object POSTed to the twin: ``q``
the user's message; ``messages`` the recent messages, a JSON list
of agentao message objects or text with one message per line (file-path hints
come from the last 10); ``context_hints`` (repeated) the hints themselves,
instead of the messages', as agentao's ``recall_candidates`` takes them;
``session`` the current session id (empty = a brand-new session); ``asof``
the clock (ISO 8601; naive = UTC, default now); ``hide`` (repeated) memory ids
to leave out as if deleted, which adds a before/after diff; ``candidates_page``
and ``per_page`` page the twin's ranked candidates; ``go=1`` (sent by the Preview
button, not by typing) gives the answer the keyboard focus.  Chinese is tokenised as the
person's agent does (``agent_cjk``: its jieba, or the ``--cjk`` setting), and the answer
says which.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from datetime import datetime, timezone

from flask import Blueprint, abort, current_app, redirect, request, url_for
from flask_babel import gettext as _

from ... import clock, facts
from ...agent_cjk import agent_cjk
from ...engine import preview, tokenizer_for
from ...engine.results import CANDIDATES_PER_PAGE
from ...pictures import candidate_scores
from ...preview_source import snapshot
from ...store.rows import whole_number
from ...web import page, page_route, render, statuses, twin, wants_fragment
from ...words import count, label
from ..findings import current_report, held_report
from ..memories.marks import flags
from ..outcomes import refuse_lone_surrogates
from . import reading
from .answer import BECAUSE, Words, answer, why_text

bp = Blueprint("preview", __name__)

# The page sends what a person reads; the rest of the ranked table is a request away
# (``ranked`` rows, "Show the next 50": POST /preview/ranked).  The twin pages them all.
RANKED_FIRST = 15  # the block, its cuts and the nearest misses come first
RANKED_MORE = 50
MAX_RANKED = 1000  # past this the JSON twin, a page at a time
SHOWN_NEVER = 50
EVICTED_ON_PAGE = 10  # stable entries left out by the budget (the twin lists EVICTED_SHOWN)
MAX_FIELD = 4000
# A longer query token (a whole Chinese run is one, up to the whole message) is shown cut:
# the message is in the form already, and the twin's ``query_tokens`` has it whole.
TOKEN_SHOWN = 40
MAX_MESSAGES = 1000  # agentao reads the last 10; more is someone's whole log
MAX_HINTS = 200
MAX_PER_PAGE = 200
# The form's fields a shareable URL carries (``go``: the answer takes the focus, as after Preview).
SHARED = ("q", "messages", "context_hints", "session", "asof", "hide", "ranked", "go")


@dataclass(frozen=True)
class Question:
    """The request's parameters, parsed; ``error`` is set when ``asof`` is not a time."""

    q: str
    messages_text: str
    messages: tuple  # oldest first: agentao message objects, or strings (one per line)
    messages_format: str  # "json" (a list of message objects) or "lines"
    context_hints: tuple[str, ...] | None  # given directly; None = from the messages
    session: str
    asof: datetime
    asof_text: str
    hide: frozenset[str]
    page: int = 1
    per_page: int = CANDIDATES_PER_PAGE
    ranked: int = RANKED_FIRST  # rows of the page's ranked table
    error: str = ""
    go: bool = False  # asked with the Preview button: the answer takes the focus


def _values():
    """The query string, the page's POSTed form, or for a script a JSON object POSTed to the
    twin with the same names (a long message or a list of messages does not fit in the capped URL)."""
    if request.method != "POST":
        return request.args
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return request.form
    if request.endpoint != "preview.ask":  # the page's form and its ranked table: fields only
        abort(
            415,
            _(
                "This address takes the preview form's fields; a script POSTs its JSON object to %(url)s.",
                url=url_for("preview.ask"),
            ),
        )
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        abort(
            400,
            _(
                "POST a JSON object, e.g. %(example)s; nothing else is read.",
                example='{"q": "…", "messages": [{"role": "user", "content": "…"}]}',
            ),
        )
    refuse_lone_surrogates(body)
    return body


def _list(values, name) -> list | None:
    """A repeated query parameter, or a JSON body's list (None when absent)."""
    if hasattr(values, "getlist"):
        return values.getlist(name) if name in values else None
    found = values.get(name)
    if found is None:
        return None
    if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
        abort(400, _("'%(name)s' must be a list of strings.", name=name))
    return found


def _text(values, name, limit) -> str:
    found = values.get(name, "")
    if found is None:
        return ""
    if not isinstance(found, str):
        abort(400, _("'%(name)s' must be a string.", name=name))
    return found[:limit]


def _messages(values) -> tuple[str, tuple, str]:
    """(text for the form, messages, format).

    agentao reads hints from the last 10 *messages*, so a multi-line message
    must stay one message: a JSON list of agentao message objects
    (``{"role": …, "content": "…" or [{"type": "text", "text": …}, …]}``) is
    taken as it is, from a JSON body or as the parameter's whole value.
    Anything else is the form's text, one message per non-empty line.
    """
    found = values.get("messages", "")
    text = found if isinstance(found, str) else ""
    if isinstance(found, str) and found.lstrip().startswith("["):
        try:
            found = json.loads(found)
        except ValueError:
            pass
    if isinstance(found, list):
        if len(found) > MAX_MESSAGES or not all(isinstance(m, dict) for m in found):
            abort(
                400,
                _(
                    "'messages' as JSON must be a list of at most %(num)d message objects like %(example)s.",
                    num=MAX_MESSAGES,
                    example='{"role": "user", "content": "…"}',
                ),
            )
        return text[: MAX_FIELD * 4], tuple(found), "json"
    if found is not None and not isinstance(found, str):
        abort(400, _("'messages' must be a JSON list of message objects or text, one message a line."))
    text = text[: MAX_FIELD * 4]
    return text, tuple(line for line in text.splitlines() if line.strip()), "lines"


def _number(values, name, default, high) -> int:
    raw = values.get(name)
    if raw in (None, ""):
        return default
    value = whole_number(str(raw))
    if value is None or not 1 <= value <= high:
        abort(400, _("'%(name)s' must be a whole number from 1 to %(high)d.", name=name, high=high))
    return value


def _question(values) -> Question:
    q = _text(values, "q", MAX_FIELD)
    text, messages, kind = _messages(values)
    hints = _list(values, "context_hints")
    if hints is not None and len(hints) > MAX_HINTS:
        abort(400, _("At most %(num)d 'context_hints'.", num=MAX_HINTS))
    session = _text(values, "session", 200).strip()
    hide = frozenset(h for h in (_list(values, "hide") or ()) if h)
    raw = _text(values, "asof", 100).strip()
    now = clock.now().replace(microsecond=0)
    error = ""
    asof = now
    if raw:
        try:
            asof = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            if asof.tzinfo is None:  # the form's datetime-local field is read as UTC
                asof = asof.replace(tzinfo=timezone.utc)
            asof.astimezone(timezone.utc)  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        except ValueError:
            asof, error = now, _("“as of” is not a date and time: %(value)s; using now.", value=repr(raw))
        except OverflowError:
            asof, error = (
                now,
                _("“as of” %(value)s is outside the years 1 to 9999 in UTC; using now.", value=repr(raw)),
            )
    shown = asof.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
    return Question(
        q,
        text,
        messages,
        kind,
        None if hints is None else tuple(h[:MAX_FIELD] for h in hints),
        session,
        asof,
        shown,
        hide,
        page=_number(values, "candidates_page", 1, 10**6),
        per_page=_number(values, "per_page", CANDIDATES_PER_PAGE, MAX_PER_PAGE),
        ranked=_number(values, "ranked", RANKED_FIRST, MAX_RANKED),
        error=error,
        go=values.get("go") == "1",
    )


def _diff(before: str, after: str) -> list[tuple[str, str]]:
    """Line diff of two blocks as (op, line) with op in ' ', '-', '+'."""
    out: list[tuple[str, str]] = []
    a, b = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        old = " " if tag == "equal" else "-"
        out += [(old, line) for line in a[i1:i2]] + [("+", line) for line in b[j1:j2] if tag != "equal"]
    return out


@page_route(bp, "/preview")
def index(fmt: str):
    ctx = _answer(fmt)
    if fmt == "json" and ctx["ask"].error:
        return twin({"error": ctx["ask"].error}, 400)
    if ctx.get("reading") is not None:
        return _still_reading(fmt, ctx)
    return page(fmt, "preview/index.html", "preview/_result.html", to_json=_json, **ctx)


def _still_reading(fmt: str, ctx: dict):
    """No answer yet: the index of every memory is still being built (in the background)."""
    if fmt == "json":
        response = twin({"error": ctx["reading"], "complete": False}, 503)
        response.headers["Retry-After"] = str(int(reading.WAIT_S))
        return response
    return render("preview/index.html", "preview/_reading.html", **ctx)


def _answer(fmt: str) -> dict:
    """The question asked (query string, form or JSON body), previewed: the context of the
    page, of its twin and of the ranked table's fragment."""
    ask = _question(_values())
    cjk = agent_cjk(current_app.config["CJK"])
    if not reading.ready(statuses(), cjk.use):
        mb = count(round(reading.size(statuses()) / 2**20))
        return dict(
            ask=ask,
            megabytes=mb,
            reading=_(
                "Still reading every memory (%(mb)s MB of stores): this preview is not ready, so it "
                "shows no answer rather than a partial one. It asks again by itself.",
                mb=mb,
            ),
            problems={},
        )
    snap = snapshot(statuses())
    tokenizer = tokenizer_for(cjk.use)

    def run(hidden):
        return preview(
            snap.project,
            snap.user,
            snap.summaries,
            query=ask.q,
            messages=ask.messages,
            context_hints=ask.context_hints,
            session_id=ask.session or None,
            now=ask.asof,
            hidden_ids=hidden,
            cache=snap.cache,
            tokenizer=tokenizer,
        )

    after = run(ask.hide)
    what_if = None
    if ask.hide:
        before = run(frozenset())
        what_if = {
            "stable_before": before.stable_block,
            "context_before": before.context_block,
            "stable_diff": _diff(before.stable_block, after.stable_block),
            "context_diff": _diff(before.context_block, after.context_block),
        }
    # The findings every screen shares (no rule runs again here).  It marks only text findings
    # (secrets, personal data, instructions), which hold while no file moves: a scan held for
    # the files as they are is used however long ago it ran (at 100,000 memories a new one
    # costs seconds every minute).
    by_row = (held_report() or current_report()[0]).by_row

    def flags_of(store: str, memory_id: str) -> list[dict]:
        """What Findings lists on a memory that looks risky (a secret, personal data, an order)."""
        return [f for f in flags(store, memory_id, by_row) if f["category"] in facts.RISKY]

    shown = after.candidates[: ask.ranked]
    return dict(
        ask=ask,
        p=after,
        what_if=what_if,
        problems=snap.problems,
        cjk_setting=cjk.setting,
        cjk=cjk,
        shown_candidates=ask.ranked,
        ranked_more=RANKED_MORE,
        max_ranked=MAX_RANKED,
        shown_never=SHOWN_NEVER,
        token_shown=TOKEN_SHOWN,
        shown_evicted=EVICTED_ON_PAGE,
        stable_listed=after.stable_entries.listed(EVICTED_ON_PAGE) if fmt == "html" else (),
        # A link carrying the message is offered when its address can fit in the query string:
        # percent-encoding never makes it shorter than its UTF-8 bytes.
        q_fits_url=len(ask.q.encode()) <= current_app.config["MAX_QUERY_LENGTH"],
        max_url=current_app.config["MAX_QUERY_LENGTH"],
        twin_args={k: _values().getlist(k) for k in SHARED if k != "ranked"} if fmt == "html" else {},
        answer=answer(after, flags_of),
        flags_of=flags_of,
        say=Words(),
        because_codes=BECAUSE,
        score_picture=None if fmt == "json" else candidate_scores(shown),
    )


@bp.post("/preview/ranked")
def ranked():
    """The ranked table with ``ranked`` rows: the "Show the next 50" button's fragment, the
    form's fields in the body.  It only reads, like the page."""
    ctx = _answer("html")
    if ctx.get("reading") is not None:
        return render("preview/_reading.html", "preview/_reading.html", **ctx)
    return render("preview/_recall.html", "preview/_recall.html", **ctx)


def _shareable(form) -> str | None:
    """The GET URL of the same question, when it fits in the query string (else None)."""
    fields = {k: [v for v in form.getlist(k) if v] for k in SHARED}  # empty fields say nothing
    if sum(len(v.encode()) for vs in fields.values() for v in vs) > current_app.config["MAX_QUERY_LENGTH"]:
        return None  # percent-encoding never shortens: no need to build it to know
    url = url_for("preview.index", **{k: v for k, v in fields.items() if v})
    return url if len(url.partition("?")[2]) <= current_app.config["MAX_QUERY_LENGTH"] else None


@bp.post("/preview")
def ask_page():
    """The form, POSTed: it only reads, like the GET.  A question short enough for a URL
    gets one to share (without JavaScript a 303 to it; with htmx the address bar shows
    it); a longer one is answered here, the address bar showing the bare page."""
    shareable = _shareable(_values())
    if shareable is not None and not wants_fragment():
        return redirect(shareable, 303)
    response = index("html")
    if wants_fragment():
        response.headers["HX-Push-Url"] = shareable or url_for("preview.index")
    return response


@bp.post("/preview.json")
def ask():
    """The twin for a script's JSON body: a list of messages does not fit the capped query
    string (guard.security).  It only reads, like the GET."""
    return index("json")


def _json(ctx) -> dict:
    """The twin: the same preview, bounded (see ``Preview.to_dict``) and paged."""
    ask, what_if = ctx["ask"], ctx["what_if"]
    data = ctx["p"].to_dict(page=ask.page, per_page=ask.per_page)
    limit = data["budgets"]["context"]["limit"]
    for c in data["candidates"]:  # the codes stay; the words are added beside them
        terms = [(t["name"], t["matched"]) for t in c["terms"]]
        c["text"] = why_text(c["mark"], c["reasons"], c["rank"], c["cost"], limit, terms, c["tie_varies"])
        c["flags"] = [
            {
                "category": f["category"],
                "text": label("flag", f["category"]),
                "why": f["why"],
                "href": f["href"],
            }
            for f in ctx["flags_of"](c["store"], c["id"])
        ]
    data.update(
        session_id=ask.session or None,
        problems=ctx["problems"],
        cjk_setting=ctx["cjk_setting"],
        cjk=ctx["cjk"].to_dict(ask.q),
        messages_format=ask.messages_format,
        messages_count=len(ask.messages),
        context_hints_from="request" if ask.context_hints is not None else "messages",
        text=ctx["answer"].sentences(),
        recall_varies={"pick": bool(ctx["p"].recall.varies), "order": ctx["p"].recall.order_varies},
        what_if=None
        if what_if is None
        else {
            "stable_block_before": what_if["stable_before"],
            "context_block_before": what_if["context_before"],
            "stable_diff": ["".join(d) for d in what_if["stable_diff"]],
            "context_diff": ["".join(d) for d in what_if["context_diff"]],
        },
    )
    return data
