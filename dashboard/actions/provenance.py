"""Where each memory came from: conversations, suggestions, approvals. No Flask.

Exact, because agentao records it: a summary's ``session_id``; a suggestion's
``source_session`` (its latest hit) and ``evidence``; an approval saves a ``crystallized``
memory under ``normalize_key(item.key_normalized)`` and marks the item ``approved`` (its
``updated_at`` is then the approval's time).  A crystallized memory links to the approved
suggestions under its key: *exact* when one holds its current text alone (or it is the only
one), *ambiguous* otherwise.

Not recorded by agentao: which conversation an explicit or automatic save ran in.  A replay's
``save_memory`` calls confirmed by ``memory_write`` (``store.sessions.AgentSave``) tie a save
to its conversation and turn: *exact* (one memory under the key holds the text), *same key*
(the one memory there changed since), *ambiguous* (several).  Otherwise a memory is linked
*by time* only, to the conversations whose recorded times span its save; never guessed.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..contract import SaveRefused, normalize_key
from ..engine.stable import TAIL_KEPT, TAIL_READ, session_tail
from ..records import Memory, ReviewItem, Summary, plain
from ..store.sessions import AgentSave, SavedFile

if TYPE_CHECKING:
    from ..store import StoreRef
    from .about import StorePart

MAX_ID = 200  # longer session ids are refused as input
_PLAIN = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def url_key(session_id: str) -> str:
    """The session id as one URL segment: itself when plain, else ``~`` + a digest of it."""
    if _PLAIN.fullmatch(session_id) and not session_id.endswith(".json"):
        return session_id
    return "~" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _key_of(item: ReviewItem) -> str | None:
    try:
        return normalize_key(item.key_normalized if isinstance(item.key_normalized, str) else "")
    except SaveRefused:
        return None


def _hit_times(item: ReviewItem) -> list[str]:
    """Stamps at which ``item.source_session`` is known to have been running: a pending item's
    ``updated_at`` (its latest hit), a single-hit item's ``created_at`` (that hit)."""
    pending = item.updated_at if item.status == "pending" else None
    return [t for t in (pending, item.created_at if item.occurrences == 1 else None) if t]


@dataclass
class Conversation:
    """One conversation agentao knows of, and what the agent kept from it."""

    session_id: str
    key: str
    summaries: list[Summary] = field(default_factory=list)  # Summary, newest first
    suggestions: list[ReviewItem] = field(default_factory=list)  # ReviewItem, newest first
    # (Memory, Link) whose text came from here
    approved: list[tuple[Memory, Link]] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    saved: list[SavedFile] = field(default_factory=list)  # agentao's checkpoints and replays of it
    agent_saved: list[tuple[Memory, Tie]] = field(default_factory=list)  # its replay's confirmed saves

    @property
    def first(self) -> str:
        return min(self.times) if self.times else ""

    @property
    def last(self) -> str:
        return max(self.times) if self.times else ""

    def active_at(self, stamp: str) -> bool:
        return bool(self.times) and self.first <= stamp <= self.last


@dataclass
class Link:
    """A crystallized memory's suggestions: ``match`` is exact, ambiguous or none."""

    match: str
    item: ReviewItem | None = None  # the suggestion its current text came from
    others: list[ReviewItem] = field(default_factory=list)  # other approvals written under the same key


@dataclass(frozen=True)
class Tie:
    """A memory saved by the agent in a conversation's turn, as its replay records it."""

    conversation: Conversation
    file: SavedFile
    save: AgentSave
    match: str  # "exact" | "same key" | "ambiguous"

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.conversation.session_id,
            "conversation": self.conversation.key,
            "turn": self.save.turn,
            "file": self.file.name,
            "line": self.save.line,
            "at": self.save.stamp,
            "match": self.match,
        }


class Trail:
    """Every conversation, suggestion and summary of the shown stores, linked to memories."""

    def __init__(
        self,
        memories: list[Memory],
        items: list[ReviewItem],
        summaries: list[Summary],
        has_user_store: bool,
        saved: Iterable[SavedFile] = (),
    ):
        self.memories, self.items, self.summaries = memories, items, summaries
        self.has_user_store = has_user_store
        by_id: dict[str, Conversation] = {}

        def conv(sid: str) -> Conversation:
            return by_id.get(sid) or by_id.setdefault(sid, Conversation(sid, url_key(sid)))

        for s in summaries:
            c = conv(s.session_id)
            c.summaries.append(s)
            c.times.append(s.created_at)
        for item in items:
            c = conv(item.source_session)
            c.suggestions.append(item)
            c.times.extend(_hit_times(item))
        for f in saved:  # a conversation agentao saved is one it knows of, even with no row left
            if f.session_id and len(f.session_id) <= MAX_ID:
                conv(f.session_id).saved.append(f)
        for c in by_id.values():
            c.summaries.sort(key=lambda s: s.created_at, reverse=True)
            c.suggestions.sort(key=lambda i: i.updated_at, reverse=True)
        self.by_session = by_id
        self.links: dict[tuple[str, str], Link] = {}
        approvals: dict[tuple[str, str], list[ReviewItem]] = {}
        for item in items:
            key = _key_of(item) if item.status == "approved" else None
            if key is not None:
                approvals.setdefault((self._store_of(item), key), []).append(item)
        for m in memories:
            if m.source == "crystallized":
                link = _link(m, approvals.get((m.store, m.key_normalized), []))
                self.links[m.store, m.id] = link
                if link.item is not None:
                    conv(link.item.source_session).approved.append((m, link))
        self.ties: dict[tuple[str, str], list[Tie]] = {}
        self._tie(by_id.values(), memories)
        # Saves of explicit and automatic memories, by time: each conversation takes a
        # slice of this sorted list (bisect), so no page costs memories × conversations.
        self.saves = sorted(
            (stamp, n) for n, m in enumerate(memories) if m.source != "crystallized" for stamp in _saves(m)
        )
        self.by_key = {c.key: c for c in by_id.values()}

    def _tie(self, convs: Iterable[Conversation], memories: list[Memory]) -> None:
        """Each replay's confirmed ``save_memory`` calls, tied to the memories under their keys."""
        by_key: dict[str, list[Memory]] = {}
        for m in memories:
            if m.source != "crystallized":
                by_key.setdefault(m.key_normalized, []).append(m)
        for c in convs:
            for f in c.saved:
                for save in f.agent_saves:
                    try:
                        found = by_key.get(normalize_key(save.key), [])
                    except SaveRefused:
                        continue
                    same = [m for m in found if m.content == save.value]
                    if len(same) == 1:
                        pairs = [(same[0], "exact")]
                    elif len(found) == 1:
                        pairs = [(found[0], "same key")]
                    else:
                        pairs = [(m, "ambiguous") for m in same or found]
                    for m, match in pairs:
                        tie = Tie(c, f, save, match)
                        self.ties.setdefault((m.store, m.id), []).append(tie)
                        c.agent_saved.append((m, tie))

    def _store_of(self, item: ReviewItem) -> str:
        return "user" if item.scope == "user" and self.has_user_store else "project"

    def _slice(self, c: Conversation) -> dict[int, str]:
        """Memory position -> its latest save within ``c``'s recorded span (bisect)."""
        if not c.times:
            return {}
        low = bisect_left(self.saves, (c.first, -1))
        high = bisect_right(self.saves, (c.last, len(self.memories)))
        return {n: stamp for stamp, n in self.saves[low:high]}

    def saved_during(self, c: Conversation) -> list[tuple[Memory, str, int]]:
        """(Memory, stamp, conversations active then) for memories saved within ``c``'s span."""
        return [
            (self.memories[n], stamp, len(self.active_at(stamp)))
            for n, stamp in sorted(self._slice(c).items(), key=lambda kv: kv[1])
        ]

    def count_during(self, c: Conversation) -> int:
        return len(self._slice(c))

    def said_in(self, item: ReviewItem) -> dict[str, Any] | None:
        """Where the person said a suggestion's evidence in its conversation's saved files:
        the first session message (or replay line) of theirs holding its words."""
        c = self.by_session.get(item.source_session)
        pieces = (item.evidence or "").replace("...", "…").split("…")
        needle = max((p.strip() for p in pieces), key=len, default="")
        if c is None or len(needle) < 4:
            return None
        for f in c.saved:
            for m in f.messages:
                if m.role in ("user", "user_message") and needle in m.text:
                    return {"file": f.name, "kind": f.kind, "message": m.index}
        return None

    def conversations(self) -> list[Conversation]:
        """Newest first (by the last recorded time; no time at all last)."""
        return sorted(self.by_session.values(), key=lambda c: c.last, reverse=True)

    def find(self, key: str) -> Conversation | None:
        return self.by_key.get(key) if isinstance(key, str) and len(key) <= MAX_ID else None

    def active_at(self, stamp: str) -> list[Conversation]:
        return [c for c in self.by_session.values() if c.active_at(stamp)]

    def of_memory(self, m: Memory) -> dict[str, Any]:
        """A memory's provenance as plain data (its twin's ``provenance``)."""
        out: dict[str, Any] = {
            **plain(m, "source", "confidence", "created_at", "updated_at"),
        }
        if m.source == "crystallized":
            link = self.links.get((m.store, m.id)) or Link("none")
            out["suggestion"] = _item_dict(link.item, self) if link.item else None
            out["match"] = link.match
            out["other_approvals"] = [_item_dict(i, self) for i in link.others]
            return out
        ties = self.ties.get((m.store, m.id), [])
        exact = {t.conversation.session_id for t in ties if t.match == "exact"}
        out["match"] = "exact" if len(exact) == 1 else "by time"
        # Not in the row; a replay records it (replay on), else nothing does.
        out["recorded_conversation"] = next(iter(exact)) if len(exact) == 1 else None
        out["saved_by_agent"] = [t.to_dict() for t in ties]
        out["saves"] = [
            {
                "at": stamp,
                "active": [{"session_id": c.session_id, "key": c.key} for c in self.active_at(stamp)],
            }
            for stamp in _saves(m)
        ]
        return out

    def tail_state(self) -> dict[str, str]:
        """Summary id -> "whole" / "part" for the summaries a new session's ``<memory-stable>``
        shows (agentao's cross-session tail, from the engine)."""
        tail = session_tail(self.summaries, None)
        rows = sorted(
            (s for s in self.summaries if s.store == "project"), key=lambda s: s.created_at, reverse=True
        )
        out: dict[str, str] = {}
        for s in rows[:TAIL_READ][:TAIL_KEPT]:
            text = s.summary_text.strip() if isinstance(s.summary_text, str) else ""
            if text and text in tail:
                out[s.id] = "whole"
            elif text and text[-40:] in tail:
                out[s.id] = "part"
        return out


def load(refs: list[StoreRef], saved: Iterable[SavedFile] = ()) -> Trail:
    """The trail of the readable stores ``refs`` (StoreRefs): every row of each file (soft-deleted
    memories too), the project file's summaries and suggestions, and agentao's ``saved``
    conversation files (store.sessions).  Raises StoreProblem."""
    from ..store import list_review_items, list_summaries
    from ..store.snapshot import rows_of

    memories: list[Memory] = []
    items: list[ReviewItem] = []
    summaries: list[Summary] = []
    for ref in refs:
        memories.extend(rows_of(ref).rows)
        if ref.kind == "project":
            summaries, items = list_summaries(ref), list_review_items(ref)
    return Trail(memories, items, summaries, any(r.kind == "user" and r.exists for r in refs), saved)


def plan(
    refs: list[StoreRef], trail: Trail, conv: Conversation, added: Iterable[tuple[str, str]] = ()
) -> list[StorePart]:
    """The dry run of forgetting ``conv``: its summaries and suggestions (project file) and the
    memories whose text was approved from them (any file), plus ``added``: (store, id) of
    memories the person ticked (those saved while it ran are offered, never chosen for them)."""
    from . import purge
    from .about import StorePart

    chosen = {(m.store, m.id): "approved" for m, _link in conv.approved}
    known = {(m.store, m.id) for m, _stamp, _n in trail.saved_during(conv)}  # offered, no other
    for pair in added:
        if pair in known:
            chosen.setdefault(pair, "added")
    parts = []
    for ref in sorted(refs, key=lambda r: r.kind != "project"):
        mids = [mid for store, mid in chosen if store == ref.key]
        rids = [i.id for i in conv.suggestions] if ref.kind == "project" else []
        sids = [s.id for s in conv.summaries] if ref.kind == "project" else []
        if not (mids or rids or sids):
            continue
        dry = purge.plan(ref, (), mids, rids, sids)
        why = {"review": "suggestion", "summary": "summary"}
        reasons = {
            (r.kind, r.id): why.get(r.kind) or chosen.get((ref.key, r.id), "event")
            for r in dry
            if r.kind != "event"
        }
        parts.append(StorePart(ref, dry, (), reasons, {}))
    return parts


def _saves(m: Memory) -> list[str]:
    return [t for t in dict.fromkeys((m.created_at, m.updated_at)) if isinstance(t, str) and t]


def _link(m: Memory, approved: list[ReviewItem]) -> Link:
    if not approved:
        return Link("none")
    same = [i for i in approved if i.content == m.content]
    if len(approved) == 1:
        return Link("exact", approved[0])
    if len(same) == 1:
        return Link("exact", same[0], [i for i in approved if i is not same[0]])
    return Link("ambiguous", None, approved)


def _item_dict(item: ReviewItem, trail: Trail) -> dict[str, Any]:
    c = trail.by_session.get(item.source_session)
    return {
        **plain(item, "id", "title", "status", "evidence", "source_session"),
        "conversation": c.key if c else None,
        "occurrences": item.occurrences,
        "suggested_at": item.created_at,
        "approved_at": item.updated_at if item.status == "approved" else None,
    }


def memory_link_dict(m: Memory, link: Link | None) -> dict[str, Any]:
    return {
        "store": m.store,
        "id": m.id,
        "title": m.title,
        "live": m.deleted_at is None,
        "match": link.match if link else "by time",
    }
