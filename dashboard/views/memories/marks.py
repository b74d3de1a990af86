"""What the memories list and a memory's page mark on a row: in every prompt, and its findings.

Both come from work another screen already does, so a list of fifty rows costs
no more than one look: the always-on block's shown entries (bounded by its
2,000 characters, the engine's cached selection) and the findings report every
screen shares (``findings.current_report``, itself bounded in time and reused
while the files are unchanged).  Nothing here scans a row again.
"""

from __future__ import annotations

from flask import url_for
from flask_babel import gettext as _

from ...engine import stable_view
from ...findings.rows import CATEGORY_ORDER
from ...findings.why import why_text
from ...preview_source import snapshot
from ...web import statuses
from ...words import explain, label
from ..findings import current_report


def stable_fitted():
    """The engine's fitted stable selection for a new session, from the files as they are."""
    snap = snapshot(statuses())
    return stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)[1]


def in_every_prompt() -> set[tuple[str, str]]:
    """(store, id) of the rows the always-on block shows now: a few dozen at most."""
    return {(s.memory.store, s.memory.id) for s in stable_fitted().shown()}


def report_flags() -> dict:
    """The current report's findings by row (``Report.by_row``)."""
    return current_report()[0].by_row


def flags(store: str, memory_id: str, by_row: dict | None = None) -> list[dict]:
    """The row's findings grouped by family, most serious first: one badge each.

    ``{"category", "rules", "why", "href"}``; ``href`` is the findings list
    narrowed to this family in this store, naming the row (``row=``).
    """
    if by_row is None:
        by_row = report_flags()
    found = by_row.get((store, "memories", memory_id), [])
    families: dict[str, dict] = {}
    for item in found:
        cat = item.finding.category
        fam = families.setdefault(
            cat,
            {
                "category": cat,
                "rules": [],
                "why": [],
                "href": url_for("findings.index", fmt="html", store=store, category=cat, row=memory_id),
            },
        )
        if item.finding.rule not in fam["rules"]:
            fam["rules"].append(item.finding.rule)
            fam["why"].append(why_text(item.finding))
    return sorted(families.values(), key=lambda f: CATEGORY_ORDER.get(f["category"], 99))


def row_marks(items) -> dict[tuple[str, str], dict]:
    """For each listed memory: whether it is in every prompt, and its finding badges."""
    shown = in_every_prompt()
    by_row = report_flags()  # indexed once per report, whatever page asks first
    return {
        (m.store, m.id): {
            "in_prompt": m.deleted_at is None and (m.store, m.id) in shown,
            "flags": flags(m.store, m.id, by_row),
        }
        for m in items
    }


def why_picked(because: str) -> str:
    """The stable selection's rule (engine.stable.select's ``because``) as a reason in words."""
    if because == "user scope":
        return _("It is about you, and everything about you goes in.")
    if because.startswith("type "):
        return _("It is a %(kind)s, and every %(kind)s goes in.", kind=label("type", because[5:]))
    kept = because.rpartition("/")[2]
    if because.startswith("recent incidental") and kept.isdigit():
        return _("It is one of the %(kept)s most recently changed notes.", kept=kept)
    return because


TITLE_SHOWN = 80  # of a title quoted in the status line


def said_after(done: str | None, memory, cur: dict):
    """The status line after an action, on the memory's page it lands on (``done``, the
    action's code, flashed by ``web.answer``).

    The words come from the row as it is now, and are said only when the row is
    in the state the code claims.  After a delete, the status line offers the
    undo (the restore form) when the row can be restored.
    """
    title = (memory.title or memory.key_normalized or "")[:TITLE_SHOWN]
    if done == "deleted" and not memory.live:
        text = _(
            "Deleted '%(title)s'. The agent no longer sees it; its text stays on disk "
            "until you forget it for good.",
            title=title,
        )
        back = cur.get("restore")
        if not cur.get("writable") or back is None or back.problem is not None:
            return (text, "ok")
        return (
            text,
            "ok",
            {
                "action": url_for(
                    "memories.curate", store=memory.store, memory_id=memory.id, action="restore"
                ),
                "fields": {"updated_at": memory.updated_at, "row": cur["row"]},
                "target": "memory-page",
                "label": _("Undo"),
                "name": "restore",
            },
        )
    if done == "restored" and memory.live:
        return _("Restored '%(title)s'. The agent sees it again.", title=title)
    if done == "edited" and memory.live:
        return _("Saved your changes to '%(title)s'.", title=title)
    if done == "moved" and memory.live:
        return _("Moved '%(title)s': it is now kept in the %(store)s store.", title=title, store=memory.store)
    if done == "added" and memory.live:
        return _("Saved '%(title)s'.", title=title)
    return None


def row_words() -> dict:
    """The words every row of the memories list repeats, looked up once per page."""
    return {
        "about": _("About"),
        "saved": _("Saved"),
        "reach": _("Reaches the agent"),
        "updated": _("Updated"),
        "w_deleted": _("The agent no longer sees it; its text is still on disk."),
        "w_in_prompt": explain("memory_reach", "stable"),
        "w_recall": explain("memory_reach", "recall"),
        "b_deleted": _("deleted"),
        "b_in_prompt": _("in every prompt"),
        "b_recall": _("when relevant"),
        # memories/_row_actions.html
        "its_key": _("its key, exactly as agentao keeps it"),
        "delete": _("Delete"),
        "restore": _("Restore"),
        "undo": _("Undo"),
        "forget": _("Forget for good…"),
    }
