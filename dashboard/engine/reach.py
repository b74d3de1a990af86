"""How a memory reaches the model, in one wording for the memory page and the findings.

From the stable selection (contract §9.1, ``stable.select``) and, when it was
worked out, the 2,000-character budget's fit (§9.2): a soft-deleted row never
reaches the agent; a selected one is in ``<memory-stable>`` every turn unless
the budget leaves it out; any other live row only when a query recalls it.
"""

from __future__ import annotations

from dashboard.records import Memory


def memory_reach(memory: Memory, because: str | None, shown: bool | None = None) -> dict:
    """``{"code", "text"}`` (and ``"because"`` for a selected row).

    ``because`` is the rule that selected the row for the stable block, None
    when it was not selected; ``shown`` says whether the budget lets it in,
    None when not worked out.  Codes: soft_deleted, stable, stable_evicted, recall.
    """
    if memory.deleted_at is not None:
        return {"code": "soft_deleted",
                "text": "soft-deleted: invisible to the agent, content still in the file"}
    if because is not None and shown is not False:
        return {"code": "stable", "because": because,
                "text": f"always in <memory-stable> ({because}), so never recalled"
                        + ("" if shown else " (unless the 2000-character budget leaves it out)")}
    if because is not None:
        return {"code": "stable_evicted", "because": because,
                "text": f"selected for <memory-stable> ({because}) but the 2000-character "
                        "budget leaves it out; recall only until room frees up"}
    return {"code": "recall", "text": "recall only: in <memory-context> when a query scores it"}
