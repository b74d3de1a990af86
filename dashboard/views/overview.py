"""Overview: the answer to "what does the agent know?" in linked sentences, then each
store's file (`/memory status`) behind a "Storage details" disclosure."""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import Blueprint, redirect, url_for
from flask_babel import gettext as _
from flask_babel import ngettext

from .. import facts
from ..actions.twofile import recovered
from ..findings.scan import CATEGORIES
from ..pictures import overview_pictures
from ..preview_source import snapshot
from ..web import page, page_route, render, statuses, stores, wants_fragment
from ..words import Terms
from .findings import current_report

bp = Blueprint("overview", __name__)


@dataclass
class Sentence:
    """One line of the answer: its code and count for scripts, its words and link for people
    (``overview/_linked.html`` shows it: the whole line links to ``href``, or with ``links`` the
    places ``%(name)s`` of ``message`` link to their own lists)."""

    code: str
    count: int
    text: str  # plain words (the twin's)
    href: str
    detail: str = ""  # more words after it, not part of the link
    later: bool = False  # the page fetches it after loading (the findings scan): see risky()
    message: str = ""  # the translated line with its places, when it has ``links``
    links: dict[str, tuple[str, str]] = field(default_factory=dict)  # place -> (words, href)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("code", "count", "text", "href", "detail")}


def _filled(template: str, parts: dict[str, tuple[str, str]]) -> str:
    """A translated sentence with its ``%(name)s`` places given their words (plain text).

    The sentence is translated whole (one msgid, so a translator can reorder
    its parts); each part is its own translated phrase placed by name.
    """
    for name, (phrase, _href) in parts.items():
        template = template.replace(f"%({name})s", phrase)
    return template


def _knows(sts) -> Sentence:
    n = facts.knows(sts)
    everything = url_for("memories.index")
    if not n["total"]:
        return Sentence("knows", 0, _("The agent knows nothing yet: no memory is saved."), everything)
    # The parts' places are given back as themselves, to be filled with their links.
    template = ngettext(
        "The agent knows %(num)d thing: %(you)s, %(here)s.",
        "The agent knows %(num)d things: %(you)s, %(here)s.",
        n["total"],
        you="%(you)s",
        here="%(here)s",
    )
    links = {
        "you": (
            ngettext("%(num)d about you", "%(num)d about you", n["user"]),
            url_for("memories.index", scope="user"),
        ),
        "here": (
            ngettext("%(num)d about this project", "%(num)d about this project", n["project"]),
            url_for("memories.index", scope="project"),
        ),
    }
    return Sentence("knows", n["total"], _filled(template, links), everything, message=template, links=links)


def _risky() -> tuple[Sentence, dict[str, int], bool]:
    found = facts.risky_in(current_report()[0])
    return (
        Sentence("risky", found.count, found.text, url_for("findings.index")),
        found.by_category,
        found.complete,
    )


def _block(snap) -> tuple[Sentence, dict]:
    counts = facts.block(snap)
    text, detail = facts.block_words(counts)
    return Sentence("block", counts["chars"], text, url_for("preview.index"), detail=detail), counts


def _risky_later() -> tuple[Sentence, dict[str, int], bool]:
    """The page's stand-in for "risky" until its own request answers it (``risky()``)."""
    text = _("Looking for secrets, personal data and instructions to the agent…")
    return Sentence("risky", 0, text, url_for("findings.index"), later=True), {}, False


def _answer(sts, snap, risky_now: bool = True) -> tuple[list[Sentence], dict]:
    knows = _knows(sts)
    pending = facts.pending()
    waiting = Sentence(
        "pending", pending, facts.pending_words(pending), url_for("reviews.index", status="pending")
    )
    risky, by_category, complete = _risky() if risky_now else _risky_later()
    out = [knows, waiting, risky]
    deleted = facts.deleted(sts)
    if deleted:
        out.append(
            Sentence(
                "deleted",
                deleted,
                ngettext(
                    "%(num)d deleted memory is invisible to the agent but still on disk.",
                    "%(num)d deleted memories are invisible to the agent but still on disk.",
                    deleted,
                ),
                url_for("memories.index", deleted=1),
            )
        )
    saved = facts.saved_counts()
    if saved["sessions"] + saved["replays"]:
        out.append(
            Sentence(
                "saved",
                saved["sessions"] + saved["replays"],
                facts.saved_words(saved),
                url_for("about.index") + "#about-saved",
            )
        )
    block, block_counts = _block(snap)
    out.append(block)
    counts = {s.code: s.count for s in out} | {
        "deleted": deleted,
        "saved_conversations": saved,
        "risky_complete": complete,
        "risky_by_category": by_category,
        "block": block_counts,
    }
    return out, counts


@page_route(bp, "/overview")
def index(fmt: str):
    sts = statuses(deep=True)  # with the memories tally, counted by SQLite on the file
    timeline, problems = facts.timeline(sts)
    for st in sts:
        if st.ref.key in problems:
            st.problem = problems[st.ref.key]  # the header reads, the rows do not
    snap = snapshot(sts)
    # The findings scan (bounded, up to FINDINGS_TIME_LIMIT_MS on a large store) must not hold
    # up the first screen: the page asks for its sentence once shown; the twin waits for it.
    sentences, counts = _answer(sts, snap, risky_now=fmt == "json")
    return page(
        fmt,
        "overview/index.html",
        "overview/_body.html",
        to_json=_json,
        statuses=sts,
        timeline=timeline,
        stable_block_chars=counts["block"]["chars"],
        sentences=sentences,
        counts=counts,
        categories=CATEGORIES,
        risky=facts.RISKY,
        term=Terms(),  # the tally's rows name the same few scopes, types and sources
        pictures=None if fmt == "json" else overview_pictures(sts, timeline),
    )


@bp.get("/overview/risky")
def risky():
    """The "risky" sentence alone (the overview loads it); a browser gets the overview."""
    if not wants_fragment():
        return redirect(url_for("overview.index"), 303)
    sentence, by_category, complete = _risky()
    return render(
        "overview/_risky.html",
        s=sentence,
        risky=facts.RISKY,
        categories=CATEGORIES,
        counts={"risky_by_category": by_category, "risky_complete": complete},
    )


def _json(ctx) -> dict:
    return {
        "stores": ctx["statuses"],
        "timeline": ctx["timeline"],
        "stable_block_chars": ctx["stable_block_chars"],
        "sentences": ctx["sentences"],
        "counts": ctx["counts"],
        "recovered": recovered(stores()),
    }


@bp.record_once
def _root(state):
    # "/" is the overview; registered here so the owner of the page owns its URL.
    state.app.add_url_rule("/", "root", lambda: redirect(url_for("overview.index")))
