"""The activity feed's entries, and what changed since a moment, from what the files hold.

One entry per thing that happened, newest first, across both stores::

    {store, kind, at, actor, memory_id, review_id, title, key_normalized, scope,
     event_id, count, titles, now}

``kind`` is a code: ``create`` / ``update`` / ``soft_delete`` (agentao's own event
types), ``restore`` (an ``update`` right after a ``soft_delete``: only a dashboard
brings a row back), ``approved`` / ``rejected`` (a suggestion decided: no event, the
review row's stamp), ``wiped`` (rows cleared without events).  ``actor`` is
``agent`` (agentao: its save_memory tool, its /memory commands, its auto cap),
``approval`` (a suggestion approved, in agentao or an earlier dashboard run),
``review`` (a person deciding in agentao's /memory review, or an earlier dashboard
run), or ``dashboard`` (this dashboard since it started, and every restore).  What
the files cannot tell apart is said in ``store.events``.  ``now`` says where the
row is today: ``live``, ``deleted`` or ``purged`` (gone from the file).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ...contract import normalize_key
from ...store import events as log
from ...store.held import held
from ...store.snapshot import rows_of

_RANK = {"event": 0, "review": 1, "wipe": 2}  # order within one second: write, then mark
_APPROVAL_S = 2


def _now_of(e: dict) -> str:
    if e.get("title") is None and e.get("key_normalized") is None:
        return "purged"
    return "deleted" if e.get("deleted_at") is not None else "live"


def _kind(e: dict, prior: dict) -> str:
    if e["event_type"] == "update":
        before = [k for i, k in prior.get(e["memory_id"], []) if i < e["id"]]
        if before and before[-1] == "soft_delete":
            return "restore"
    return e["event_type"]


def _approved(e: dict, approvals: list[dict]) -> bool:
    if e["event_type"] not in ("create", "update") or e.get("scope") is None:
        return False
    if e.get("source") == "crystallized" and e.get("updated_at") == e["timestamp"]:
        return True
    try:
        at = datetime.fromisoformat(str(e["timestamp"]))
    except ValueError:
        return False
    for a in approvals:
        try:
            gap = datetime.fromisoformat(str(a["updated_at"])) - at
        except ValueError:
            continue
        if (
            timedelta(0) <= gap <= timedelta(seconds=_APPROVAL_S)
            and a["scope"] == e["scope"]
            and normalize_key(str(a["key_normalized"])) == e["key_normalized"]
        ):
            return True
    return False


def entries(store: str, found: dict, approvals: list[dict]) -> list[dict]:
    """One store's ``events.history`` as feed entries (unsorted)."""
    out = []
    for e in found["events"]:
        kind = _kind(e, found["prior"])
        own = log.own_event(e["id"], e["memory_id"], e["event_type"], e["timestamp"])
        if (own and not log.backfill(e["id"])) or kind == "restore":
            actor = "dashboard"
        elif _approved(e, approvals):
            actor = "approval"
        else:
            actor = "agent"
        out.append(
            {
                "store": store,
                "kind": kind,
                "at": e["timestamp"],
                "actor": actor,
                "memory_id": e["memory_id"],
                "review_id": None,
                "title": e.get("title"),
                "key_normalized": e.get("key_normalized"),
                "scope": e.get("scope"),
                "event_id": e["id"],
                "count": 1,
                "titles": [],
                "now": _now_of(e),
                "_rank": (e["timestamp"], _RANK["event"], e["id"]),
            }
        )
    for r in found["reviews"]:
        own = log.own_review(r["id"], r["status"], r["updated_at"])
        out.append(
            {
                "store": store,
                "kind": r["status"],
                "at": r["updated_at"],
                "actor": "dashboard" if own else "review",
                "memory_id": None,
                "review_id": r["id"],
                "title": r["title"],
                "key_normalized": r["key_normalized"],
                "scope": r["scope"],
                "event_id": None,
                "count": 1,
                "titles": [],
                "now": None,
                "_rank": (r["updated_at"], _RANK["review"], 0),
            }
        )
    for w in found["wipes"]:
        titles = [t for t in w["titles"] if t is not None]
        out.append(
            {
                "store": store,
                "kind": "wiped",
                "at": w["deleted_at"],
                "actor": "agent",
                "memory_id": None,
                "review_id": None,
                "title": None,
                "key_normalized": None,
                "scope": None,
                "event_id": None,
                "count": w["n"],
                "titles": titles,
                "now": "deleted",
                "_rank": (w["deleted_at"], _RANK["wipe"], 0),
            }
        )
    return out


def feed(refs, since: str | None, until: str | None, page: int, per_page: int, words: str = "") -> dict:
    """The page ``page`` of every readable store's entries, newest first, and the total."""
    merged, total = [], 0
    for ref in refs:
        found = log.history(ref, since, until, page * per_page, words)
        stamps = [e["timestamp"] for e in found["events"] if e.get("source") is not None]
        review_file = next((r for r in refs if r.key == "project"), ref)
        approvals = log.approvals_near(review_file, stamps) if stamps else []
        merged += entries(ref.key, found, approvals)
        total += found["total"]
    merged.sort(key=lambda x: (str(x["_rank"][0]), x["_rank"][1], x["_rank"][2]), reverse=True)
    shown = merged[(page - 1) * per_page : page * per_page]
    for item in shown:
        item.pop("_rank")
    return {"items": shown, "total": total}


_LISTED = 50


def changed_since(refs, since: str, limits: bool = True) -> dict:
    """``_changed_since``, held while the files' stamps hold (``store.held``): every reload of
    a visit asks, and at 10,000 memories the page misses its budget without it."""
    return held(
        "changed",
        [r.path for r in refs],
        lambda _stamp: _changed_since(refs, since, limits),
        key=(tuple(r.key for r in refs), since, limits),
    )


def _changed_since(refs, since: str, limits: bool) -> dict:
    """What the agent knew at ``since`` against what it knows now, from the rows today.

    ``added``: live now, not then (created since, or deleted then and restored since);
    ``changed``: live then and now, written since (agentao keeps only the newest text, so
    what it said then cannot be shown); ``removed``: live then, deleted since (with or
    without an event: a clear counts); ``passing``: not live then nor now, live for a while
    since (created, or restored, and deleted since).  Whether a row older than ``since``
    was live then is its last logged event before ``since`` (``events.deleted_then``).  ``limits`` says
    what cannot be told: the log starting after ``since``, changes erased by a purge,
    rows with no event at all.
    """
    out = {
        "since": since,
        "added": [],
        "changed": [],
        "removed": [],
        "passing": 0,
        "counts": {"added": 0, "changed": 0, "removed": 0},
        "limits": [],
    }
    for ref in refs:
        snap = rows_of(ref)
        # Rows older than ``since`` written since: were they live at ``since``?
        gone = log.deleted_then(
            ref,
            [
                m.id
                for m in snap.rows
                if str(m.created_at) < since
                and (str(m.deleted_at if m.deleted_at is not None else m.updated_at) >= since)
            ],
            since,
        )
        for m in snap.rows:
            then = str(m.created_at) < since and m.id not in gone
            if m.deleted_at is None:
                group = "changed" if then and str(m.updated_at) >= since else None if then else "added"
            elif str(m.deleted_at) >= since:
                group = "removed" if then else None
                out["passing"] += not then
            else:
                group = None
            if group:
                out["counts"][group] += 1
                if len(out[group]) < _LISTED:
                    out[group].append(m)
        if not limits:  # the counts alone ("since your last visit"): no read of the log
            continue
        reach = log.extent(ref)
        if reach["first"] is None or str(reach["first"]) > since:
            out["limits"].append({"code": "log_starts_later", "store": ref.key, "first": reach["first"]})
        if reach["erased"]:
            out["limits"].append({"code": "erased", "store": ref.key, "count": reach["erased"]})
        if reach["unlogged"]:
            out["limits"].append({"code": "unlogged", "store": ref.key, "count": reach["unlogged"]})
    for group in ("added", "changed", "removed"):
        key = "deleted_at" if group == "removed" else "updated_at"
        out[group].sort(key=lambda m: str(getattr(m, key)), reverse=True)
    return out
