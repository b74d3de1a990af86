"""How a memory reaches the model (contract §9.1, §9.2), in one wording for the memory page
and the findings: never (deleted), every turn (stable, if it fits), or when recalled.
"""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _

from dashboard.records import Memory


def memory_reach(memory: Memory, because: str | None, shown: bool | None = None) -> dict[str, Any]:
    """``{"code", "text"}`` (and ``"because"``: the stable rule that selected the row); ``shown``:
    whether the budget lets it in, None when not worked out.  Codes: soft_deleted, stable,
    stable_evicted, recall."""
    if memory.deleted_at is not None:
        return {"code": "soft_deleted", "text": reach_text("soft_deleted")}
    if because is not None and shown is not False:
        return {"code": "stable", "because": because, "text": reach_text("stable", because, shown)}
    if because is not None:
        return {"code": "stable_evicted", "because": because, "text": reach_text("stable_evicted", because)}
    return {"code": "recall", "text": reach_text("recall")}


def reach_text(code: str, because: str | None = None, shown: bool | None = None) -> str:
    """The words for a reach ``code``, in the current locale (a scan kept across requests
    asks again each time it is shown: ``findings.rows.Later``)."""
    if code == "soft_deleted":
        return _("soft-deleted: invisible to the agent, content still in the file")
    if code == "stable" and shown:
        return _("always in %(tag)s (%(because)s), so never recalled", tag="<memory-stable>", because=because)
    if code == "stable":
        return _(
            "always in %(tag)s (%(because)s), so never recalled (unless the "
            "2000-character budget leaves it out)",
            tag="<memory-stable>",
            because=because,
        )
    if code == "stable_evicted":
        return _(
            "selected for %(tag)s (%(because)s) but the 2000-character budget leaves it "
            "out; recall only until room frees up",
            tag="<memory-stable>",
            because=because,
        )
    return _("recall only: in %(tag)s when a query scores it", tag="<memory-context>")
