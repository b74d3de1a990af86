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

import re
from datetime import datetime
from decimal import InvalidOperation
from functools import cached_property, lru_cache

from babel import Locale
from babel.dates import TIMEDELTA_UNITS, format_date, format_time, format_timedelta, get_datetime_format
from babel.numbers import format_decimal
from babel.support import NullTranslations
from flask import g
from flask_babel import Babel, Domain, get_locale, get_translations
from flask_babel.speaklater import LazyString
from jinja2 import pass_eval_context
from markupsafe import Markup

from . import clock
from .contract import SECRET_RULES


def catalog() -> NullTranslations:
    """The page's translations, looked up once per request and locale.

    Flask-Babel looks them up again for every string (the request's context, its
    domain, its locale: a tenth of a list page's time); the lookup is kept beside
    Flask-Babel's own locale for the request, so ``force_locale`` is honoured."""
    babel = getattr(g, "_flask_babel", None) if g else None
    kept = getattr(babel, "dashboard_catalog", None)
    if kept is not None and kept[0] is getattr(babel, "babel_locale", None):
        return kept[1]
    found = get_translations()
    babel = getattr(g, "_flask_babel", None) if g else None
    if babel is not None:
        babel.dashboard_catalog = (getattr(babel, "babel_locale", None), found)
    return found


def _translated(msgid: str) -> str:
    return catalog().ugettext(msgid)


def _l(msgid: str) -> LazyString:
    """``lazy_gettext`` for the label tables, through ``catalog``."""
    return LazyString(_translated, msgid)


# kind -> code -> (label, explanation).  Screens add their own kinds here (one home).
LABELS: dict[str, dict[str, tuple]] = {
    "scope": {
        "user": (
            _l("about you"),
            _l("Kept in your user store (~/.agentao/memory.db) and shown to the agent in every project."),
        ),
        "project": (
            _l("this project"),
            _l("Kept in this project's .agentao/memory.db and shown to the agent only here."),
        ),
    },
    "store": {
        "project": (_l("Project store"), _l("This project's .agentao/memory.db.")),
        "user": (_l("User store"), _l("Your ~/.agentao/memory.db, shared by every project.")),
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
        "explicit": (
            _l("saved on request"),
            _l("Saved because someone asked the agent to remember it (agentao's save_memory tool)."),
        ),
        "auto": (_l("saved by the agent"), _l("The agent decided on its own to keep this.")),
        "crystallized": (
            _l("from a suggestion"),
            _l("A suggestion drawn from your messages, approved in the review queue."),
        ),
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
    "bulk_action": {
        "delete": (_l("Soft delete"), _l("agentao stops using them; each page can restore it.")),
        "move-user": (_l("Move to the user store"), _l("Every project's agent sees them.")),
        "move-project": (_l("Move to the project store"), _l("Only this project's agent sees them.")),
        "tag": (_l("Add a tag"), _l("Saved again through agentao's save rules, with the tag.")),
        "purge": (_l("Purge for good"), _l("Erased from the file and checked on disk; no undo.")),
    },
    # Warnings before approving a suggestion (actions/warnings.py codes; the review cards).
    "warning": {
        "refused": (
            _l("would be refused"),
            _l("agentao would refuse to save it (a secret, or too long), so approving cannot work."),
        ),
        "evicts_explicit": (
            _l("pushes out what you saved"),
            _l(
                "Approving pushes memories you asked the agent to keep out of the always-on block "
                "every new session starts with."
            ),
        ),
        "contradicts_evidence": (
            _l("says the opposite of your words"),
            _l(
                "A negation (never, don't, not, 不要, 别 …) stands in your words and not in the "
                "suggestion, or the other way round."
            ),
        ),
        "contradicts_memory": (
            _l("contradicts a memory"),
            _l("A live preference or rule on the same subject says something else."),
        ),
        "overwrites": (
            _l("replaces a memory"),
            _l("A live memory has the same key: approving replaces its content; the old text is not kept."),
        ),
        "duplicates": (
            _l("nearly a duplicate"),
            _l("A live memory under another key says almost the same thing."),
        ),
    },
    "event": {
        "create": (_l("saved"), _l("A new memory was written (agentao's event 'create').")),
        "update": (_l("updated"), _l("A memory was written again in place (agentao's event 'update').")),
        "delete": (_l("deleted"), None),
        "memory_deleted": (_l("deleted"), None),
        "soft_delete": (
            _l("deleted"),
            _l("Marked deleted: the agent no longer sees it; the row stays in the file until purged."),
        ),
        "restore": (
            _l("restored"),
            _l(
                "A deleted memory made live again (logged by agentao's "
                "event 'update' right after its delete)."
            ),
        ),
        "approved": (_l("approved"), _l("A suggestion was approved and saved as a memory.")),
        "rejected": (_l("rejected"), _l("A suggestion was turned down; nothing was saved.")),
        "wiped": (
            _l("cleared"),
            _l(
                "Deleted all at once by agentao's /memory clear or /clear "
                "(or the dashboard's Forget): no event is logged for these."
            ),
        ),
    },
    "actor": {
        "agent": (
            _l("the agent"),
            _l(
                "agentao: its save_memory tool, its /memory commands or "
                "its limit of 50 auto-saved memories. An earlier run of "
                "this dashboard writes the same and reads the same."
            ),
        ),
        "approval": (
            _l("suggestion approved"),
            _l(
                "A suggestion drawn from your messages, "
                "approved in agentao's /memory review or "
                "an earlier run of this dashboard."
            ),
        ),
        "review": (
            _l("your review"),
            _l(
                "Decided in agentao's /memory review or an earlier run "
                "of this dashboard: the file does not say which."
            ),
        ),
        "dashboard": (
            _l("this dashboard"),
            _l(
                "Done here since the dashboard started (it "
                "remembers its own writes until it stops), or "
                "a restore, which only the dashboard makes."
            ),
        ),
    },
    # The forget screen: a hard purge's verdict, what a dry-run row is, why it is about you.
    "purge_verdict": {
        "verified erased": (
            _l("Erased: no copy left in the file, its journal or side files"),
            _l(
                "The rows were deleted, the file compacted, its write-ahead log "
                "emptied, and its bytes searched for every erased text: none found."
            ),
        ),
        "pending, retry": (
            _l("Not finished: another program is reading the file"),
            _l(
                "Probably the agent: the write-ahead log could not be emptied and "
                "may still hold the text. Retry when it is idle."
            ),
        ),
        "found on disk": (_l("Not erased: some text is still in the files"), _l("Run the purge again.")),
        "interrupted, retry": (
            _l("Interrupted: deleted, but the file is not compacted yet"),
            _l("Its free pages may still hold the text. Retry to finish."),
        ),
        "changed": (
            _l("Nothing was erased: a row changed since the dry run"),
            _l("Look at the new dry run before erasing."),
        ),
    },
    "plan_kind": {
        "memory": (_l("memory"), _l("A live memory the agent sees.")),
        "memory_deleted": (
            _l("deleted memory"),
            _l("Soft-deleted: hidden from the agent, its text still in the file."),
        ),
        "review": (
            _l("suggestion"),
            _l("A review-queue item: a phrase and the excerpt of your message it was drawn from."),
        ),
        "summary": (_l("session summary"), _l("What a past session was about.")),
        "event": (_l("history event"), _l("A line of a memory's history (no text of its own).")),
    },
    "forget_reason": {
        "user_store": (_l("in your user store"), _l("Your own file, shared by every project.")),
        "user_scope": (_l("saved for you"), _l("Its scope is 'user': about you, not the project.")),
        "your_contact": (
            _l("holds your contact details"),
            _l("It holds an e-mail address or phone number that your own memories give as yours."),
        ),
        "your_name": (
            _l("names you"),
            _l("A session summary or suggestion that writes your name, as your own memories give it."),
        ),
        "not_yours": (
            _l("someone else's personal data — stays: not about you"),
            _l("Findings sees personal data in it, but not yours (your own memories do not give it)."),
        ),
        "project_secret": (
            _l("a project credential — stays: it belongs to the project"),
            _l("A password, key or token of the project: fix it on Findings, not here."),
        ),
        "mentions_you": (
            _l("a project fact that mentions you — stays: it is about the project"),
            _l("Forget it from its own page if it should go too."),
        ),
        "event": (_l("history of a memory that goes"), None),
    },
    # Findings (dashboard/findings/rules.py, corpus.py): what each rule flags, in words.
    "category": {
        "secret": (
            _l("Secrets"),
            _l("Passwords, keys and tokens: anyone who reads the memory, or the prompt, can use them."),
        ),
        "personal": (
            _l("Personal data"),
            _l(
                "Phone numbers, e-mail addresses, ID and card "
                "numbers: things about a person the agent does not need."
            ),
        ),
        "instruction": (
            _l("Instructions to the agent"),
            _l("Text that tries to change what the agent does, stored where the agent reads it as a fact."),
        ),
        "conflict": (
            _l("Conflicts and duplicates"),
            _l("Memories that disagree with each other or say the same thing twice."),
        ),
        "upkeep": (_l("Too big or too old"), _l("Memories near the size limit, or not updated for months.")),
    },
    "rule": {
        **{
            f"secret.guard_{name}": (
                _l("Secret agentao now refuses"),
                _l(
                    "agentao refuses to save this kind of secret today; it got in through an older "
                    "version, a hand edit or a path the guard does not check."
                ),
            )
            for name, _pattern in SECRET_RULES
        },
        **{
            f"secret.{name}": (
                _l("Secret agentao misses"),
                _l(
                    "A credential in a format agentao's own secret check does not recognise, so it "
                    "was saved and reaches the model like any other text."
                ),
            )
            for name in (
                "npm_token",
                "pypi_token",
                "gitlab_token",
                "huggingface_token",
                "sendgrid_key",
                "twilio_api_key",
                "azure_account_key",
                "azure_sas_signature",
                "digitalocean_token",
                "shopify_token",
                "slack_webhook",
                "telegram_bot_token",
            )
        },
        "secret.url_credentials": (
            _l("Password in a web address"),
            _l("A link of the form scheme://user:password@host carries a password in plain text."),
        ),
        "secret.labelled_secret": (
            _l("Labelled password or API key"),
            _l(
                "Something like API_KEY=… or password: … followed by a value: a credential "
                "agentao's secret check lets through."
            ),
        ),
        "secret.stated_secret": (
            _l("Password or key in a sentence"),
            _l('A sentence such as "the API key is …" followed by a value that looks like a key.'),
        ),
        "secret.key_hex_value": (_l("Key value"), _l('A long random-looking value after "key:" or "key=".')),
        "secret.chinese_secret": (
            _l("Password written in Chinese"),
            _l("A value after 密码, 口令, 密钥 or a similar word: a credential written in Chinese."),
        ),
        "personal.email": (
            _l("E-mail address"),
            _l("Someone's e-mail address; agentao's secret check never looks for it."),
        ),
        "personal.phone": (
            _l("Phone number"),
            _l("A phone number with a country code, or a Chinese mobile number."),
        ),
        "personal.prc_id": (
            _l("Chinese resident ID number"),
            _l("An 18-digit resident ID (身份证号) whose region, birth date and check digit are valid."),
        ),
        "personal.card": (
            _l("Payment card number"),
            _l("A card number of a known issuer whose check digit is valid."),
        ),
        "personal.iban": (
            _l("Bank account number (IBAN)"),
            _l("An international bank account number whose check digits are valid."),
        ),
        "instruction.override": (
            _l("Tells the agent to skip its safeguards"),
            _l(
                'Text such as "ignore previous instructions" or "don\'t ask before deleting": '
                "the agent reads memory in every prompt, so this acts as an order."
            ),
        ),
        "instruction.role_marker": (
            _l("Pretends to be a system message"),
            _l(
                'Markers such as "system:", <|im_start|> or "you are now", which try to pass '
                "stored text off as the agent's own instructions."
            ),
        ),
        "instruction.block_tag": (
            _l("Breaks out of the memory block"),
            _l(
                "A tag like </fact> or </memory-stable>, which could end the block the memory is "
                "shown in and let the rest read as instructions."
            ),
        ),
        "instruction.hidden_characters": (
            _l("Hidden or reordering characters"),
            _l(
                "Invisible characters or right-to-left controls that hide or reorder what a reader "
                "sees, while the model reads all of it."
            ),
        ),
        "conflict.same_key": (
            _l("Same name about you and this project"),
            _l(
                "A memory with the same name exists in your user store and in this project: the "
                "agent sees both and two answers."
            ),
        ),
        "conflict.duplicate": (
            _l("Near duplicate"),
            _l("Nearly the same words as another memory under another name: one of them is redundant."),
        ),
        "conflict.contradicted": (
            _l("Contradicting preferences"),
            _l(
                "A preference on the same subject as an approved suggestion that says something "
                "else: the agent sees both."
            ),
        ),
        "upkeep.near_limit": (
            _l("Very long"),
            _l(
                "Close to agentao's 4,000-character limit, probably a pasted document: only its "
                "first 200 to 240 characters ever reach the model."
            ),
        ),
        "upkeep.over_limit": (
            _l("Over the size limit"),
            _l("Longer than agentao's 4,000-character limit, so a hand edit or another tool wrote it."),
        ),
        "upkeep.stale": (
            _l("Not updated for months"),
            _l("Not changed for more than 90 days: recall ranks it lower, and it may no longer be true."),
        ),
    },
    # -- preview: the seven terms of agentao's recall score (engine/recall.py), -----------
    # the reasons it writes into <memory-context>, and what became of a candidate.
    "term": {
        "tag": (
            _l("tags"),
            _l(
                "One of its tags is a word of your message (counts ×4 for a "
                "message of 3 or more words, less for shorter ones)."
            ),
        ),
        "title": (_l("title"), _l("Words of its title are in your message (counts ×3).")),
        "keyword": (_l("keywords"), _l("Its keywords are words of your message (counts ×2).")),
        "content": (_l("text"), _l("Words of its text are in your message (counts ×1).")),
        "filepath_hint": (
            _l("file path"),
            _l("A file path in your recent messages matches it (counts double)."),
        ),
        "recency": (_l("recency"), _l("Newer memories score a little higher: 1 for today, ½ at 30 days.")),
        "stale": (_l("stale"), _l("Not updated for over 90 days: counts 2 against it.")),
    },
    "reason": {
        "tag_match": (_l("one of its tags is in your message"), None),
        "title_overlap": (_l("words of its title are in your message"), None),
        "keyword_match": (_l("its keywords are in your message"), None),
        "content_match": (_l("words of its text are in your message"), None),
        "filepath_hint": (_l("a file path in your message matches (counts double)"), None),
        "stale_penalty": (_l("not updated for over 90 days (counts against it)"), None),
        "explicit": (
            _l("you asked the agent to remember it"),
            _l("Saved on request; this does not change the score."),
        ),
    },
    "recall_mark": {
        "in_block": (_l("recalled"), _l("In the <memory-context> block sent with this message.")),
        "cut_top5": (_l("below the cut"), _l("Only the 5 best scores are recalled.")),
        "cut_context_budget": (
            _l("over the budget"),
            _l("Among the 5 best, but the 1,200-character recall block was full."),
        ),
        "excluded_stable": (
            _l("always on already"),
            _l("In the always-on block already, so it is not recalled again."),
        ),
    },
    # How one memory reaches the model (engine.reach codes): the answer a memory's page opens with.
    "memory_reach": {
        "stable": (
            _l("In every prompt"),
            _l("The agent sees it at the start of every session, in its always-on block (<memory-stable>)."),
        ),
        "stable_evicted": (
            _l("Recalled when relevant"),
            _l(
                "Picked for the always-on block, but the block's "
                "2,000 characters are full: until room frees up, "
                "the agent sees it only when a message is about it."
            ),
        ),
        "recall": (
            _l("Recalled when relevant"),
            _l("The agent sees it only when a message it gets is about it (<memory-context>)."),
        ),
        "soft_deleted": (
            _l("Deleted: the agent no longer sees it, but its text is still on disk"),
            _l("A soft delete: the row stays in the file until it is forgotten for good."),
        ),
    },
    # A finding's family as a badge on a memory's row and page (findings.rules categories).
    "flag": {
        "secret": (_l("secret"), _l("Looks like a password, key or token.")),
        "personal": (_l("personal data"), _l("Holds a phone number, e-mail address, ID or card number.")),
        "instruction": (_l("instruction"), _l("Reads like an order to the agent, which it may follow.")),
        "conflict": (_l("conflict"), _l("Contradicts or repeats another memory.")),
        "upkeep": (_l("needs upkeep"), _l("Oversized or not touched for a long time.")),
    },
    # The overview's composition picture: which column a bar counts by (#23: no raw code shown).
    "dimension": {
        "scope": (_l("scope"), None),
        "type": (_l("type"), None),
        "source": (_l("source"), None),
        "confidence": (_l("confidence"), None),
    },
    # A store's name inside a sentence ("the %(store)s store"): the same word in English, translated.
    "store_word": {
        "project": (_l("project"), None),
        "user": (_l("user"), None),
    },
    # The overview's timeline: the length of one column.
    "period": {
        "week": (_l("week"), None),
        "month": (_l("month"), None),
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


def listing(items) -> str:
    """Names in a sentence, joined as the page's language joins them ("A, B, and C";
    "A、B和C") by Babel's list patterns.  Markup items (``|shown``) stay markup."""
    from babel.lists import format_list
    from markupsafe import escape

    items = list(items)
    if not items:
        return ""
    if any(isinstance(i, Markup) for i in items):
        return Markup(format_list([str(escape(i)) for i in items], locale=get_locale()))
    return format_list([str(i) for i in items], locale=get_locale())


def store_name(kind: str) -> str:
    """ "Project store" / "User store": what a page calls one of the two files."""
    return str(LABELS["store"].get(kind, (kind,))[0])


def parse_stamp(stamp) -> datetime | None:
    """agentao's stamps are local wall-clock ISO strings without a zone; None if not one."""
    try:
        return datetime.fromisoformat(str(stamp))
    except (TypeError, ValueError):
        return None


class _Dates:
    """Babel's words for dates in one locale, remembered for the request: a list page says
    a hundred dates, and Babel formats each from scratch (about 140 us a date).

    The output is Babel's own, character for character: the relative words depend only on
    the direction, the unit and the rounded count that ``format_timedelta`` picks (worked out
    here the way it does), and the medium stamp is Babel's medium datetime pattern around its
    medium date (one per day) and medium time, as ``format_datetime`` puts them together."""

    def __init__(self, where) -> None:
        self.where = where
        self.joined = str(get_datetime_format("medium", locale=where)).replace("'", "")
        self.relatives: dict[tuple, str] = {}
        self.days: dict = {}

    def relative(self, delta) -> str:
        seconds = delta.total_seconds()
        key: tuple = (seconds >= 0, "second", 0)
        for unit, per_unit in TIMEDELTA_UNITS:  # format_timedelta's choice, threshold 1
            value = abs(seconds) / per_unit
            if value >= 1 or unit == "second":
                key = (seconds >= 0, unit, int(round(max(1, value) if value > 0 else value)))
                break
        said = self.relatives.get(key)
        if said is None:
            said = format_timedelta(delta, threshold=1, add_direction=True, locale=self.where)
            self.relatives[key] = said
        return said

    def stamp(self, moment: datetime) -> str:
        day = self.days.get(moment.date())
        if day is None:
            day = self.days[moment.date()] = format_date(moment, "medium", locale=self.where)
        hour = format_time(moment, "medium", tzinfo=None, locale=self.where)
        return self.joined.replace("{0}", hour).replace("{1}", day)


def _dates() -> _Dates:
    """The request's :class:`_Dates`, kept beside Flask-Babel's locale (as ``catalog``)."""
    babel = getattr(g, "_flask_babel", None) if g else None
    kept = getattr(babel, "dashboard_dates", None)
    if kept is not None and kept.where is getattr(babel, "babel_locale", None):
        return kept
    made = _Dates(get_locale())  # once: Flask-Babel's lookup costs as much as the formatting
    babel = getattr(g, "_flask_babel", None) if g else None
    if babel is not None:
        babel.dashboard_dates = made
    return made


def when(stamp, now: datetime | None = None, exact: bool = False) -> Markup:
    """``<time>`` saying "3 days ago", the exact stamp on hover (and after it with ``exact``,
    for a phone that has no hover); an odd stamp is shown as is."""
    moment = parse_stamp(stamp)
    if moment is None:
        return Markup("<span>{}</span>").format(stamp if stamp else "—")
    reference = now or (clock.now().astimezone(moment.tzinfo) if moment.tzinfo else clock.local())
    dates = _dates()
    relative = dates.relative(moment - reference)
    stamped = dates.stamp(moment)
    # ``%`` escapes as ``format`` does, in a third of the time (a list page says a hundred dates).
    shown = Markup('<time datetime="%s" title="%s">%s</time>') % (stamp, stamped, relative)
    return shown + Markup(' <span class="exact">(%s)</span>') % (stamped,) if exact else shown


def rounded(x, places: int = 2) -> str:
    """A score for a reader: at most ``places`` decimals, no trailing zeros ("0.33", "2")."""
    try:
        return f"{float(x):.{places}f}".rstrip("0").rstrip(".")
    except (TypeError, ValueError):
        return str(x)


def count(n, where: Locale | None = None) -> str:
    """A count for a person, its digits grouped as Babel groups them for the page's locale
    (``where``; outside a request the default, English): "12,345".  The one rule for every
    number a page or a message shows: the ``numberformat`` filter and each ``%(name)d`` of a
    translated sentence (``said``) are this.  JSON twins keep numbers as numbers."""
    try:
        n = int(n)
    except (OverflowError, ValueError):  # an odd row's inf or nan: said as it is
        return str(n)
    if -1000 < n < 1000:
        return str(n)  # what Babel says for both catalogs' locales, in a fiftieth of the time
    try:
        return format_decimal(n, locale=where or get_locale() or DEFAULT_LOCALE)
    except InvalidOperation:  # past Decimal's 28 digits (an odd row's count): its digits alone
        return str(n)


_WHOLE = re.compile(r"(?<!%)%\((\w+)\)d")  # a sentence's "%(num)d": a count


@lru_cache(maxsize=4096)  # a catalog's strings, a few thousand at most
def _counted(text: str) -> tuple[str, frozenset[str]]:
    return _WHOLE.sub(r"%(\1)s", text), frozenset(_WHOLE.findall(text))


def said(text: str, variables: dict, where: Locale | None = None) -> str:
    """``text % variables`` with each ``%(name)d`` written by ``count`` ("1,234 memories");
    Markup stays Markup (its variables escaped)."""
    if not variables:
        return text
    form, counts = _counted(str(text))
    if counts:
        variables = {
            k: count(v, where) if k in counts and isinstance(v, (int, float)) else v
            for k, v in variables.items()
        }
        text = Markup(form) if isinstance(text, Markup) else form
    return text % variables


class _CountingDomain(Domain):
    """Flask-Babel's gettext family for Python code, formatting through ``said``."""

    def gettext(self, string, **variables):
        return said(self.get_translations().ugettext(string), variables)

    def ngettext(self, singular, plural, num, **variables):
        variables.setdefault("num", num)
        return said(self.get_translations().ungettext(singular, plural, num), variables)


class _Babel(Babel):
    @cached_property
    def domain_instance(self):
        return _CountingDomain(domain=self.domain)


# The locales with a complete catalog (dashboard/translations/), by the code a page names.
LOCALES = {"en": "English", "zh_Hans_CN": "简体中文"}
DEFAULT_LOCALE = "en"  # Flask-Babel's, and what a number outside a request is said in


def locale() -> str:
    """The page's locale: the header switcher's choice (a cookie signed by this process,
    so a page on another port cannot set it), else ``--lang`` / the ``LANG`` config key,
    else the browser's Accept-Language (any ``zh`` -> Simplified Chinese), else English."""
    from flask import current_app, has_request_context, request

    from .guard.access import chosen

    configured = current_app.config.get("LANG")
    if not has_request_context():
        return configured or "en"
    picked = chosen("lang", LOCALES)
    if picked:
        return picked
    if configured:
        return configured
    best = request.accept_languages.best_match(["en", "zh", "zh-CN", "zh-Hans", "zh-SG"])
    return "zh_Hans_CN" if best and best.startswith("zh") else "en"


@pass_eval_context
def _template_gettext(eval_ctx, string: str, /, **variables) -> str:
    """A template's ``_``: what Jinja's newstyle ``_`` gives (the translation, Markup when the
    template escapes, always formatted with ``variables``) in one call instead of three
    through the template's context (a page of review cards says some 300 strings)."""
    found = catalog().ugettext(string)
    if eval_ctx.autoescape:
        found = Markup(found)
    return said(found, variables) if variables else found % {} if "%" in found else found


@pass_eval_context
def _template_ngettext(eval_ctx, singular: str, plural: str, num: int, /, **variables) -> str:
    """A template's ``ngettext``, as Jinja's newstyle one, its counts written by ``count``."""
    found = catalog().ungettext(singular, plural, num)
    return said(Markup(found) if eval_ctx.autoescape else found, {"num": num, **variables})


def init_app(app) -> None:
    # Flask-Babel puts gettext / ngettext (as _ and ngettext) into every template.
    _Babel(app, locale_selector=locale)
    # The same callables Flask-Babel installs, through ``catalog`` (a page calls them hundreds of times).
    app.jinja_env.install_gettext_callables(
        gettext=lambda s: catalog().ugettext(s),
        ngettext=lambda s, p, n: catalog().ungettext(s, p, n),
        newstyle=True,
    )
    app.jinja_env.globals.update(_=_template_gettext, ngettext=_template_ngettext)
    app.jinja_env.globals.update(
        label=label,
        explain=explain,
        term=term,
        when=when,
        store_name=store_name,
        locales=LOCALES,
        page_locale=lambda: str(get_locale()),
    )
    app.jinja_env.filters.update(rounded=rounded, listing=listing, numberformat=count)


class Terms:
    """``term`` remembered for one page: a list of fifty rows asks for the same few
    (kind, code) pairs hundreds of times, and each asks gettext twice.  Handed to the
    template as ``term``, in place of the global."""

    def __init__(self) -> None:
        self._held: dict = {}

    def __call__(self, kind: str, code):
        key = (kind, code)
        if key not in self._held:
            self._held[key] = term(kind, code)
        return self._held[key]
