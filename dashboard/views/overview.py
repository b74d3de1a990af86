"""Overview: the answer to "what does the agent know?" first, then each store's file.

The page opens with sentences a person reads at a glance (how much the agent
knows about you and about this project, what waits for a decision, what looks
risky, what is deleted but still on disk, how full the always-on block is),
each a link to the list behind it.  The file internals (`/memory status`:
path, size, journal mode, schema version, counters) sit behind a "Storage
details" disclosure per store.  The JSON twin keeps every count as a number.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, redirect, url_for
from flask_babel import format_number, gettext as _, ngettext
from markupsafe import Markup, escape

from ..engine import stable_view
from ..engine.render import STABLE_BUDGET
from ..findings.scan import CATEGORIES
from ..preview_source import snapshot
from ..pictures import overview_pictures
from ..store.timeline import timeline as read_timeline
from ..actions.twofile import recovered
from ..web import page, page_route, render, statuses, stores, wants_fragment
from .findings import current_report

bp = Blueprint("overview", __name__)

RISKY = ("secret", "personal", "instruction")   # what a person should look at first


@dataclass
class Sentence:
    """One line of the answer: its code and count for scripts, its words and link for people."""

    code: str
    count: int
    text: str          # plain words (the twin's)
    html: Markup       # the same words with their links (the page's)
    href: str
    detail: str = ""   # more words after it, not part of the link
    later: bool = False   # the page fetches it after loading (the findings scan): see risky()

    def to_dict(self) -> dict:
        return {"code": self.code, "count": self.count, "text": self.text, "href": self.href,
                "detail": self.detail}


def _linked(template: str, parts: dict) -> tuple[str, Markup]:
    """A translated sentence whose ``%(name)s`` places become links: (plain text, HTML).

    The sentence is translated whole (one msgid, so a translator can reorder
    its parts); each part is its own translated phrase placed by name.
    """
    html = escape(template)
    text = template
    for name, (phrase, href) in parts.items():
        mark = f"%({name})s"
        text = text.replace(mark, phrase)
        html = Markup(html.replace(mark, Markup('<a href="{}">{}</a>').format(href, phrase)))
    return text, html


def _sentence(code: str, count: int, text: str, href: str) -> Sentence:
    return Sentence(code, count, text, Markup('<a href="{}">{}</a>').format(href, text), href)


def _knows(sts) -> Sentence:
    live = [c for st in sts if st.readable for c in st.counts if not c["deleted"]]
    you = sum(c["n"] for c in live if c["scope"] == "user")
    here = sum(c["n"] for c in live if c["scope"] == "project")
    total = sum(c["n"] for c in live)
    everything = url_for("memories.index")
    if not total:
        return _sentence("knows", 0, _("The agent knows nothing yet: no memory is saved."), everything)
    # The parts' places are given back as themselves, to be filled by _linked.
    template = ngettext("The agent knows %(num)d thing: %(you)s, %(here)s.",
                        "The agent knows %(num)d things: %(you)s, %(here)s.", total,
                        you="%(you)s", here="%(here)s")
    text, html = _linked(template, {
        "you": (ngettext("%(num)d about you", "%(num)d about you", you),
                url_for("memories.index", scope="user")),
        "here": (ngettext("%(num)d about this project", "%(num)d about this project", here),
                 url_for("memories.index", scope="project"))})
    return Sentence("knows", total, text, html, everything)


def _risky() -> tuple[Sentence, dict[str, int], bool]:
    """Rows holding a secret, personal data or an instruction, from the one findings scan."""
    report, _at, _reused = current_report()
    rows: set = set()
    by_category = dict.fromkeys(RISKY, 0)
    for item in report.items:
        if item.finding.category in by_category:
            by_category[item.finding.category] += 1
            rows.add((item.store, item.table, item.row_id))
    n, href = len(rows), url_for("findings.index")
    if report.complete:
        text = (ngettext("%(num)d entry looks risky: it holds a secret, personal data or an "
                         "instruction to the agent.",
                         "%(num)d entries look risky: they hold secrets, personal data or "
                         "instructions to the agent.", n)
                if n else _("Nothing looks risky: no secret, personal data or instruction to "
                            "the agent was found."))
    else:
        text = ngettext("At least %(num)d entry looks risky (the scan ran out of time before "
                        "it read every row).",
                        "At least %(num)d entries look risky (the scan ran out of time before "
                        "it read every row).", n)
    return _sentence("risky", n, text, href), by_category, report.complete


def _block(sts, snap) -> tuple[Sentence, dict]:
    block, fitted = stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache,
                                version=snap.version)
    shown = len(fitted.shown())
    left_out = len(fitted) - shown
    used = len(block)
    facts = {"chars": used, "budget": STABLE_BUDGET, "shown": shown, "evicted": left_out}
    href = url_for("preview.index")
    if not used:
        return _sentence("block", 0, _("A new session gets no always-on block: nothing is "
                                       "selected for it."), href), facts
    text = _("%(used)s of %(budget)s characters of the always-on block are used.",
             used=format_number(used), budget=format_number(STABLE_BUDGET))
    detail = [ngettext("It puts %(num)d memory into every prompt of a new session.",
                       "It puts %(num)d memories into every prompt of a new session.", shown)]
    if left_out:
        detail.append(ngettext("%(num)d more was picked for it but does not fit.",
                               "%(num)d more were picked for it but do not fit.", left_out))
    sentence = _sentence("block", used, text, href)
    sentence.detail = " ".join(detail)   # whole sentences, each translated on its own
    return sentence, facts


def _risky_later() -> tuple[Sentence, dict[str, int], bool]:
    """The page's stand-in for "risky" until its own request answers it (``risky()``)."""
    text = _("Looking for secrets, personal data and instructions to the agent…")
    sentence = _sentence("risky", 0, text, url_for("findings.index"))
    sentence.later = True
    return sentence, {}, False


def _answer(sts, snap, risky_now: bool = True) -> tuple[list[Sentence], dict]:
    knows = _knows(sts)
    pending = sum(st.pending_reviews for st in sts if st.readable)
    waiting = _sentence("pending", pending, ngettext(
        "%(num)d suggestion waits for you.", "%(num)d suggestions wait for you.", pending)
        if pending else _("No suggestion waits for you."),
        url_for("reviews.index", status="pending"))
    risky, by_category, complete = _risky() if risky_now else _risky_later()
    out = [knows, waiting, risky]
    deleted = sum(st.deleted for st in sts if st.readable)
    if deleted:
        out.append(_sentence("deleted", deleted, ngettext(
            "%(num)d deleted memory is invisible to the agent but still on disk.",
            "%(num)d deleted memories are invisible to the agent but still on disk.", deleted),
            url_for("memories.index", deleted=1)))
    block, facts = _block(sts, snap)
    out.append(block)
    counts = {s.code: s.count for s in out} | {
        "deleted": deleted, "risky_complete": complete, "risky_by_category": by_category,
        "block": facts}
    return out, counts


@page_route(bp, "/overview")
def index(fmt: str):
    sts = statuses(deep=True)   # with the memories tally, counted by SQLite on the file
    timeline, problems = read_timeline([st.ref for st in sts if st.readable])
    for st in sts:
        if st.ref.key in problems:
            st.problem = problems[st.ref.key]   # the header reads, the rows do not
    snap = snapshot(sts)
    # The findings scan (bounded, up to FINDINGS_TIME_LIMIT_MS on a large store) must not hold
    # up the first screen: the page asks for its sentence once shown; the twin waits for it.
    sentences, counts = _answer(sts, snap, risky_now=fmt == "json")
    return page(fmt, "overview/index.html", "overview/_body.html", to_json=_json,
                statuses=sts, timeline=timeline, stable_block_chars=counts["block"]["chars"],
                sentences=sentences, counts=counts, categories=CATEGORIES, risky=RISKY,
                pictures=None if fmt == "json" else overview_pictures(sts, timeline))


@bp.get("/overview/risky")
def risky():
    """The "risky" sentence alone, from the one findings scan (the overview loads it).
    Only htmx asks for a fragment; a browser sent here gets the whole overview."""
    if not wants_fragment():
        return redirect(url_for("overview.index"), 303)
    sentence, by_category, complete = _risky()
    return render("overview/_risky.html", s=sentence, risky=RISKY, categories=CATEGORIES,
                  counts={"risky_by_category": by_category, "risky_complete": complete})


def _json(ctx) -> dict:
    return {"stores": ctx["statuses"], "timeline": ctx["timeline"],
            "stable_block_chars": ctx["stable_block_chars"],
            "sentences": ctx["sentences"], "counts": ctx["counts"],
            "recovered": recovered(stores())}


@bp.record_once
def _root(state):
    # "/" is the overview; registered here so the owner of the page owns its URL.
    state.app.add_url_rule("/", "root", lambda: redirect(url_for("overview.index")))
