"""Every count a person sees, one function each: the overview, the header's badges (also sent
out of band after each action), the list pages and the JSON twins all call these.

"Risky": an entry holding a secret, personal data or an instruction to the agent, counted
once; conflicts and size/age findings are upkeep.  A scan out of time says "at least".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flask import Flask, g, render_template
from flask_babel import gettext as _
from flask_babel import ngettext

from . import web
from .actions import saved as saved_actions
from .engine import stable_view
from .engine.render import STABLE_BUDGET
from .records import plain
from .store import held, sessions
from .store.timeline import timeline as read_timeline
from .words import count

RISKY = ("secret", "personal", "instruction")  # what a person should look at first


@dataclass(frozen=True)
class Badge:
    """A count beside a tab: the number, its words (the tooltip), and "at least" or exact;
    or, with ``later``, a stand-in that fetches the count from that URL once the page is shown."""

    count: int
    title: str
    at_least: bool = False
    later: str = ""


# -- what the agent knows, what is deleted: the stores' own tally (store.status) -----------


def _readable(sts=None):
    return [st for st in (web.statuses(deep=True) if sts is None else sts) if st.readable]


def knows(sts=None) -> dict[str, int]:
    """Live memories: about you (user scope), about this project, and in all."""
    live = [c for st in _readable(sts) for c in st.counts if not c["deleted"]]
    return {
        "user": sum(c["n"] for c in live if c["scope"] == "user"),
        "project": sum(c["n"] for c in live if c["scope"] == "project"),
        "total": sum(c["n"] for c in live),
    }


def deleted(sts=None) -> int:
    """Soft-deleted memories: invisible to the agent, still in the files."""
    return sum(st.deleted for st in _readable(sts))


def timeline(sts) -> tuple[dict, dict]:
    """Live memories created and updated per period (``store.timeline``, counted by SQLite),
    held while no file moves: the overview asks on every view, the files rarely change.
    A reading that met a problem is not held (a busy file may answer the next time)."""
    refs = [st.ref for st in _readable(sts)]
    paths, key = [r.path for r in refs], tuple(r.key for r in refs)
    stamp = held.stamps(paths)  # before the reading: a write during it makes the next view read again
    found = held.peek("timeline", paths, key, stamp)
    if found is None:
        found = read_timeline(refs)
        if not found[1]:
            held.keep("timeline", paths, found, key, stamp)
    return found


# -- suggestions: the review queue lives in the project store (contract §2) ---------------


def suggestions() -> dict[str, int]:
    """Review items per status (pending, approved, rejected) in the project store, from its
    status (the same count its overview card shows); all zero when it is missing or unreadable."""
    st = next((st for st in _readable() if st.ref.key == "project"), None)
    found = {} if st is None or not st.ref.exists else st.reviews_by_status
    return {s: found.get(s, 0) for s in ("pending", "approved", "rejected")}


def pending() -> int:
    """Suggestions waiting for a decision."""
    return suggestions()["pending"]


def pending_words(n: int) -> str:
    return (
        ngettext("%(num)d suggestion waits for you.", "%(num)d suggestions wait for you.", n)
        if n
        else _("No suggestion waits for you.")
    )


# -- risky entries: from the one findings scan --------------------------------------------


@dataclass(frozen=True)
class Risky:
    """Entries holding a secret, personal data or an instruction, in one findings report."""

    count: int
    complete: bool
    by_category: dict[str, int] = field(default_factory=dict)  # findings, not entries
    unread: bool = False  # a store could not be read (busy, broken): its entries are not counted

    @property
    def text(self) -> str:
        n = self.count
        if self.unread:
            return ngettext(
                "At least %(num)d entry looks risky (a store could not be read; its entries are not counted).",
                "At least %(num)d entries look risky (a store could not be read; its entries are not counted).",
                n,
            )
        if not self.complete:
            return ngettext(
                "At least %(num)d entry looks risky (the scan ran out of time before it read every row).",
                "At least %(num)d entries look risky (the scan ran out of time before it read every row).",
                n,
            )
        if not n:
            return _("Nothing looks risky: no secret, personal data or instruction to the agent was found.")
        return ngettext(
            "%(num)d entry looks risky: it holds a secret, personal data or an instruction to the agent.",
            "%(num)d entries look risky: they hold secrets, personal data or instructions to the agent.",
            n,
        )

    def to_dict(self) -> dict:
        return plain(self, "count", "complete", "by_category", "text")


def risky_in(report, categories=RISKY) -> Risky:
    """The risky entries of one findings report: each row counted once, however many of its
    findings there are (``categories``: only those, say About you's personal data and secrets)."""
    rows: set = set()
    by_category = dict.fromkeys(categories, 0)
    for item in report.items:
        if item.finding.category in by_category:
            by_category[item.finding.category] += 1
            rows.add((item.store, item.table, item.row_id))
    unread = bool(report.problems)  # never "nothing looks risky" over a store it could not read
    return Risky(len(rows), report.complete and not unread, by_category, unread)


# -- saved conversations: agentao's checkpoints and replays beside the project store ----------


def saved():
    """This project's saved conversations (``store.sessions``) and their findings, read once
    per request: ``(Saved, [Hit])``, or ``(None, [])`` when no project is shown."""
    if "saved_conversations" not in g:
        ref = web.store_by_key("project")
        if ref is None:
            g.saved_conversations = (None, [])
        else:
            root = ref.path.parent.parent
            g.saved_conversations = held.held(
                "saved", sessions.paths(root), lambda _stamps: _saved(root), key=str(root)
            )
    return g.saved_conversations


def _saved(root: Path) -> tuple:
    files = sessions.read_saved(root)
    return files, saved_actions.hits(files)


def saved_counts() -> dict:
    """How many saved conversations and replays, how old, how many hold something about you."""
    files, found = saved()
    if files is None:
        return saved_actions.counts(sessions.Saved(Path(".")), [])
    return saved_actions.counts(files, found)


def saved_words(counts: dict) -> str:
    n = counts["sessions"] + counts["replays"]
    if not n:
        return ""
    return ngettext(
        "%(num)d saved conversation file keeps what was said, word for word; agentao can load it back.",
        "%(num)d saved conversation files keep what was said, word for word; agentao can load them back.",
        n,
    )


# -- <memory-stable> -----------------------------------------------------------------------


def block(snap) -> dict:
    """The always-on block of a new session: characters used of the budget, and how many
    memories it shows and leaves out (``engine.stable_view``, the preview's own code)."""
    text, fitted = stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)
    shown = len(fitted.shown())
    return {"chars": len(text), "budget": STABLE_BUDGET, "shown": shown, "evicted": len(fitted) - shown}


def block_words(facts: dict) -> tuple[str, str]:
    """The block's sentence and its detail."""
    if not facts["chars"]:
        return _("A new session gets no always-on block: nothing is selected for it."), ""
    text = _(
        "%(used)s of %(budget)s characters of the always-on block are used.",
        used=count(facts["chars"]),
        budget=count(facts["budget"]),
    )
    detail = [
        ngettext(
            "It puts %(num)d memory into every prompt of a new session.",
            "It puts %(num)d memories into every prompt of a new session.",
            facts["shown"],
        )
    ]
    if facts["evicted"]:
        detail.append(
            ngettext(
                "%(num)d more was picked for it but does not fit.",
                "%(num)d more were picked for it but do not fit.",
                facts["evicted"],
            )
        )
    return text, " ".join(detail)  # whole sentences, each translated on its own


# -- the header's badges -------------------------------------------------------------------


def pending_badge() -> Badge | None:
    n = pending()
    return (
        Badge(n, ngettext("%(num)d suggestion waits for you", "%(num)d suggestions wait for you", n))
        if n
        else None
    )


def risky_badge(report, later: str) -> Badge | None:
    """The Findings tab: the risky entries of ``report``, the scan held for the files as
    they are.  None (no scan since the files changed) gives no count, never a stale one: a
    stand-in that asks ``later`` for it, so the page answers at once and the count follows."""
    if report is None:
        return Badge(0, "", later=later)
    found = risky_in(report)
    if not found.count and found.complete:
        return None  # "nothing risky" only from a scan that read every row; a cut one says "0+"
    return Badge(found.count, found.text, not found.complete)


def _refresh_statuses() -> None:
    """Forget this request's reading of the stores: an action may have written them since."""
    g.pop("store_statuses", None)
    g.pop("stores", None)


def _tabs_out_of_band(response):
    """Every htmx fragment answer also redraws the counts beside the header's tabs, so they
    follow the action (or the agent's write) it answers."""
    if (
        not web.wants_fragment()
        or response.mimetype != "text/html"
        or response.is_streamed
        or not 200 <= response.status_code < 300
        or response.status_code == 204
    ):
        return response
    _refresh_statuses()
    response.set_data(
        response.get_data() + render_template("partials/tabs.html", oob=True, counted=web.NAV_BADGES).encode()
    )
    return response


def init_app(app: Flask) -> None:
    app.after_request(_tabs_out_of_band)
