"""Prompt preview: the exact memory blocks agentao would inject, and every score behind them.

GET parameters (page and JSON twin alike): ``q`` the user's message,
``messages`` recent messages one per line (file-path hints come from the last
10), ``session`` the current session id (empty = a brand-new session),
``asof`` the clock (ISO 8601; naive = UTC, default now) and ``hide`` (repeated)
memory ids to leave out as if deleted, which adds a before/after diff.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime, timezone

from flask import Blueprint, request

from ..engine import preview
from ..pictures import candidate_scores
from ..preview_source import snapshot
from ..web import page_route, render, statuses, twin

bp = Blueprint("preview", __name__)

SHOWN_CANDIDATES = 100   # the HTML table; the JSON twin lists them all
SHOWN_NEVER = 200
MAX_FIELD = 4000


@dataclass(frozen=True)
class Question:
    """The request's parameters, parsed; ``error`` is set when ``asof`` is not a time."""

    q: str
    messages_text: str
    session: str
    asof: datetime
    asof_text: str
    hide: frozenset[str]
    error: str = ""

    @property
    def messages(self) -> list[str]:
        """One message per non-empty line, oldest first."""
        return [line for line in self.messages_text.splitlines() if line.strip()]


def _question(args) -> Question:
    q = args.get("q", "")[:MAX_FIELD]
    messages = args.get("messages", "")[:MAX_FIELD * 4]
    session = args.get("session", "").strip()[:200]
    hide = frozenset(h for h in args.getlist("hide") if h)
    raw = args.get("asof", "").strip()
    now = datetime.now(timezone.utc).replace(microsecond=0)
    error = ""
    asof = now
    if raw:
        try:
            asof = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            if asof.tzinfo is None:  # the form's datetime-local field is read as UTC
                asof = asof.replace(tzinfo=timezone.utc)
            asof.astimezone(timezone.utc)   # 0001-01-01T00:00+01:00 is before year 1 in UTC
        except ValueError:
            asof, error = now, f"“as of” is not a date and time: {raw!r}; using now."
        except OverflowError:
            asof, error = now, f"“as of” {raw!r} is outside the years 1 to 9999 in UTC; using now."
    shown = asof.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
    return Question(q, messages, session, asof, shown, hide, error)


def _diff(before: str, after: str) -> list[tuple[str, str]]:
    """Line diff of two blocks as (op, line) with op in ' ', '-', '+'."""
    out: list[tuple[str, str]] = []
    a, b = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [(" ", line) for line in a[i1:i2]]
            continue
        out += [("-", line) for line in a[i1:i2]]
        out += [("+", line) for line in b[j1:j2]]
    return out


@page_route(bp, "/preview")
def index(fmt: str):
    ask = _question(request.args)
    if ask.error and fmt == "json":
        return twin({"error": ask.error}, 400)
    snap = snapshot(statuses())

    def run(hidden):
        return preview(snap.project, snap.user, snap.summaries, query=ask.q,
                       messages=ask.messages, session_id=ask.session or None, now=ask.asof,
                       hidden_ids=hidden, cache=snap.cache, version=snap.version)

    after = run(ask.hide)
    before = run(frozenset()) if ask.hide else None
    what_if = None
    if before is not None:
        what_if = {"stable_before": before.stable_block, "context_before": before.context_block,
                   "stable_diff": _diff(before.stable_block, after.stable_block),
                   "context_diff": _diff(before.context_block, after.context_block)}
    if fmt == "json":
        data = after.to_dict()
        data.update(session_id=ask.session or None, problems=snap.problems,
                    what_if=None if what_if is None else {
                        "stable_block_before": what_if["stable_before"],
                        "context_block_before": what_if["context_before"],
                        "stable_diff": ["".join(d) for d in what_if["stable_diff"]],
                        "context_diff": ["".join(d) for d in what_if["context_diff"]]})
        return twin(data)
    return render("preview/index.html", "partials/preview_result.html", ask=ask, p=after,
                  what_if=what_if, problems=snap.problems,
                  shown_candidates=SHOWN_CANDIDATES, shown_never=SHOWN_NEVER,
                  score_picture=candidate_scores(after.candidates))


@bp.app_context_processor
def _nav():
    # base.html appends ``extra_nav`` to its menu; this is how the screen gets a link.
    return {"extra_nav": [("preview.index", "Preview")]}
