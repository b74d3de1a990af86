"""The links a finding offers: each fix lands on the GET page of the form it names (curation
on the memory page, forget, the review queue), whose own form does the POST; and its re-check."""

from __future__ import annotations

import re
from typing import NamedTuple

from flask import g, url_for

from ...findings.scan import Item
from ...words import catalog


def _(msgid: str) -> str:
    # Flask-Babel's gettext looks the catalog up again for each string; a row says five.
    return catalog().ugettext(msgid)


class Action(NamedTuple):
    """A fix the user can make, or the re-check: a link to the screen that makes it."""

    code: str  # view | edit | soft_delete | hard_purge | reject | check
    label: str
    href: str


# A row id made of these reads the same quoted or not, in a path and in a query string.
_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,200}")
_ROW = "_row_"  # stands for the row id in a URL made once per page


def _url(endpoint: str, row_id: str, **values) -> str:
    """``url_for(endpoint, memory_id=row_id, **values)``, the URL made once per page and
    endpoint and the id put in its place (a page of forty findings builds two hundred links;
    werkzeug's URL building is the costliest part of a row).  An id that quoting would change,
    or one holding the stand-in, is built by ``url_for`` itself."""
    if not _PLAIN.fullmatch(row_id) or _ROW in row_id:
        return url_for(endpoint, memory_id=row_id, **values)
    made = g.setdefault("finding_urls", {})
    key = (endpoint, *sorted(values.items()))
    if key not in made:
        url = url_for(endpoint, memory_id=_ROW, **values)
        made[key] = url.partition(_ROW) if url.count(_ROW) == 1 else None
    if made[key] is None:  # the stand-in is in another part of the URL too
        return url_for(endpoint, memory_id=row_id, **values)
    before, _row, after = made[key]
    return before + row_id + after


# The memory detail page's edit form (id="edit") autofocuses the field ``?field=`` names;
# a finding in the key or title is fixed by editing the value under it (the key is the title).
_EDIT_FIELD = {"content": "content", "title": "title", "key_normalized": "title", "updated_at": "content"}


def edit_href(store: str, row_id: str, field: str, page: str | None = None) -> str:
    """The memory page's edit form, focused on the finding's field (the browser scrolls
    a focused field into view).  No ``#edit`` fragment: Chromium skips autofocus on a
    page whose URL has one ("Autofocus processing was blocked because a document's URL
    has a fragment"), and so does htmx's boosted swap with one.  ``page``: the memory's page,
    when the caller has it already."""
    page = page or url_for("memories.detail", fmt="html", store=store, memory_id=row_id)
    return page + f"?field={_EDIT_FIELD.get(field, 'content')}"


def lead(item: Item, page: str | None = None) -> Action:
    """The first link a finding offers: the fix of a live memory, else where its row is seen
    (About you links each finding there).  ``page``: the memory's page, when the caller has it."""
    if item.table == "memories":
        page = page or _url("memories.detail", item.row_id, fmt="html", store=item.store)
        if item.state == "live":  # the fix first
            return Action(
                "edit", _("Edit to fix"), edit_href(item.store, item.row_id, item.finding.field, page)
            )
        return Action("view", _("Open"), page)
    if item.table == "memory_review_queue":
        card = f"#review-{item.row_id}"
        return Action("view", _("Open"), url_for("reviews.index", fmt="html", status=item.state) + card)
    return Action("view", _("Open"), url_for("summaries.index", fmt="html"))


def actions(item: Item) -> list[Action]:
    """The links an item offers; built when a page shows it (a scan flags tens of
    thousands of rows, every stale one; a page shows a hundred)."""
    store, row_id, state = item.store, item.row_id, item.state
    if item.table == "memories":
        page = _url("memories.detail", row_id, fmt="html", store=store)
        out = [lead(item, page)]
        if state == "live":
            out += [
                Action("view", _("Open"), page),
                Action("soft_delete", _("Delete it"), page + "#delete-form"),
            ]
        out.append(
            Action(
                "hard_purge",
                _("Erase it for good"),
                _url("forget.memory", row_id, fmt="html", key=store),
            )
        )
    elif item.table == "memory_review_queue":
        out = [lead(item)]
        if state == "pending":
            out.append(
                Action(
                    "reject",
                    _("Reject the suggestion"),
                    url_for("reviews.index", fmt="html", status="pending") + f"#review-{row_id}",
                )
            )
        out.append(
            Action("hard_purge", _("Reject and erase it"), url_for("reviews.erase_confirm", ids=row_id))
        )
    else:
        out = [
            lead(item),
            Action(
                "hard_purge",
                _("Erase the summaries"),
                url_for("forget.plan", fmt="html", key=store, cat="summaries"),
            ),
        ]
    if item.table != "memories":  # a suggestion or a summary names its conversation
        out.append(
            Action(
                "conversation",
                _("See its conversation"),
                url_for("conversations.of_row", table=item.table, row_id=row_id),
            )
        )
    out.append(Action("check", _("Re-check"), check_href(item)))
    return out


def check_href(item: Item) -> str:
    """The re-check of one finding; it carries a keyed digest of the flagged text, never the text."""
    signature = {"sig": item.finding.signature} if item.finding.signature else {}
    return url_for(
        "findings.check",
        fmt="html",
        store=item.store,
        table=item.table,
        row_id=item.row_id,
        rule=item.finding.rule,
        field=item.finding.field,
        label=item.label,
        **signature,
    )


def shown(item: Item) -> dict:
    return {**item.to_dict(), "actions": [a._asdict() for a in actions(item)]}
