"""Words for people: the one home for how codes, stamps and counts are said on a page.

agentao's rows speak in codes (``project_fact``, ``auto_summary``, ``memory_deleted``) and
ISO stamps; a page says "project fact", "3 days ago" (exact time on hover) and "1 memory".
Every label goes through Flask-Babel's ``gettext`` so a catalog can translate it; the JSON
twins keep the codes and exact values, and never call into this module.

A label table per kind of code.  A code with no entry is shown as itself with its
underscores turned into spaces, so a value a newer agentao invents still reads, and
never breaks a page.
"""

from __future__ import annotations

from datetime import datetime

from babel.dates import format_datetime
from flask_babel import Babel, format_timedelta, get_locale, lazy_gettext as _l
from markupsafe import Markup

# kind -> code -> (label, explanation).  Screens add their own kinds here (one home).
LABELS: dict[str, dict[str, tuple]] = {
    "scope": {
        "user": (_l("about you"), _l("Kept in your user store (~/.agentao/memory.db) and "
                                     "shown to the agent in every project.")),
        "project": (_l("this project"), _l("Kept in this project's .agentao/memory.db and "
                                           "shown to the agent only here.")),
    },
    "type": {
        "preference": (_l("preference"), _l("How you like things done.")),
        "profile": (_l("profile"), _l("A fact about you.")),
        "project_fact": (_l("project fact"), _l("A fact about this project.")),
        "workflow": (_l("workflow"), _l("How work is done here.")),
        "decision": (_l("decision"), _l("Something that was decided.")),
        "constraint": (_l("rule"), _l("Something the agent must or must not do.")),
        "note": (_l("note"), _l("Anything else worth remembering.")),
    },
    "source": {
        "explicit": (_l("saved on request"), _l("Saved because someone asked the agent to "
                                                "remember it (agentao's save_memory tool).")),
        "auto": (_l("saved by the agent"), _l("The agent decided on its own to keep this.")),
        "crystallized": (_l("from a suggestion"), _l("A suggestion drawn from your messages, "
                                                     "approved in the review queue.")),
    },
    "confidence": {
        "explicit_user": (_l("you said so"), _l("You stated it yourself.")),
        "inferred": (_l("inferred"), _l("Guessed from what you wrote; may be wrong.")),
        "auto_summary": (_l("from a summary"), _l("Taken from a session summary.")),
    },
    "review_status": {
        "pending": (_l("waiting for you"), _l("Not saved yet: approve or reject it.")),
        "approved": (_l("approved"), _l("Saved as a memory.")),
        "rejected": (_l("rejected"), _l("Not saved; kept in the queue's history.")),
    },
    "event": {
        "create": (_l("saved"), _l("A new memory was written (agentao's event 'create').")),
        "update": (_l("updated"), _l("A memory was written again in place (agentao's event "
                                     "'update').")),
        "delete": (_l("deleted"), None),
        "memory_deleted": (_l("deleted"), None),
        "soft_delete": (_l("deleted"), _l("Marked deleted: the agent no longer sees it; the row "
                                          "stays in the file until purged.")),
        "restore": (_l("restored"), _l("A deleted memory made live again (logged by agentao's "
                                       "event 'update' right after its delete).")),
        "approved": (_l("approved"), _l("A suggestion was approved and saved as a memory.")),
        "rejected": (_l("rejected"), _l("A suggestion was turned down; nothing was saved.")),
        "wiped": (_l("cleared"), _l("Deleted all at once by agentao's /memory clear or /clear "
                                    "(or the dashboard's Forget): no event is logged for these.")),
    },
    "actor": {
        "agent": (_l("the agent"), _l("agentao: its save_memory tool, its /memory commands or "
                                      "its limit of 50 auto-saved memories. An earlier run of "
                                      "this dashboard writes the same and reads the same.")),
        "approval": (_l("suggestion approved"), _l("A suggestion drawn from your messages, "
                                                   "approved in agentao's /memory review or "
                                                   "an earlier run of this dashboard.")),
        "review": (_l("your review"), _l("Decided in agentao's /memory review or an earlier run "
                                         "of this dashboard: the file does not say which.")),
        "dashboard": (_l("this dashboard"), _l("Done here since the dashboard started (it "
                                               "remembers its own writes until it stops), or "
                                               "a restore, which only the dashboard makes.")),
    },
}


def label(kind: str, code) -> str:
    """The short human word for ``code`` (a code with no entry reads as itself)."""
    entry = LABELS.get(kind, {}).get(code)
    if entry is not None:
        return str(entry[0])
    return str(code or "").replace("_", " ")


def explain(kind: str, code) -> str:
    """One sentence saying what ``code`` means, or "" when there is none to say."""
    entry = LABELS.get(kind, {}).get(code)
    return str(entry[1]) if entry is not None and entry[1] is not None else ""


def term(kind: str, code) -> Markup:
    """The label in a ``<span title=…>`` carrying its explanation and the raw code."""
    text, why = label(kind, code), explain(kind, code)
    hint = f"{why} ({code})" if why else str(code)
    return Markup('<span class="term" title="{}" data-code="{}">{}</span>').format(hint, code, text)


def parse_stamp(stamp) -> datetime | None:
    """agentao's stamps are local wall-clock ISO strings without a zone; None if not one."""
    try:
        return datetime.fromisoformat(str(stamp))
    except (TypeError, ValueError):
        return None


def when(stamp, now: datetime | None = None) -> Markup:
    """``<time>`` saying "3 days ago", the exact stamp on hover; an odd stamp is shown as is."""
    moment = parse_stamp(stamp)
    if moment is None:
        return Markup("<span>{}</span>").format(stamp if stamp else "—")
    reference = now or datetime.now(moment.tzinfo)
    relative = format_timedelta(moment - reference, add_direction=True, threshold=1)
    exact = format_datetime(moment, "medium", locale=get_locale())
    return Markup('<time datetime="{}" title="{}">{}</time>').format(stamp, exact, relative)


def rounded(x, places: int = 2) -> str:
    """A score for a reader: at most ``places`` decimals, no trailing zeros ("0.33", "2")."""
    try:
        return f"{float(x):.{places}f}".rstrip("0").rstrip(".")
    except (TypeError, ValueError):
        return str(x)


def locale() -> str:
    """The page's locale.  Only English ships today; the Chinese catalog (#23) adds a
    choice from Accept-Language, the header switcher and ``--lang``."""
    return "en"


def init_app(app) -> None:
    # Flask-Babel puts gettext / ngettext (as _ and ngettext) into every template.
    Babel(app, locale_selector=locale)
    app.jinja_env.globals.update(label=label, explain=explain, term=term, when=when)
    app.jinja_env.filters.update(when=when, rounded=rounded)

