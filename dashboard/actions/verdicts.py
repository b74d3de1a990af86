"""What a hard purge says: one plain account per outcome (refused, disk full, interrupted,
verified with or without texts to look for, text saved again, rows kept), in one place."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext

from ..records import plain
from ..store import StoreProblem
from ..store.purge import count_kinds

# describe_error's sentences say "nothing was changed" for a single write; a
# purge knows better whether its delete had committed, and says so itself.
_NOTHING_CHANGED = re.compile(r"[;.]?\s*[^.;]*\bnothing was changed\b[^.]*\.?", re.IGNORECASE)
LIST_GONE = _l(
    "the texts an earlier purge erased are kept only in the memory of the dashboard "
    "that ran it, never on disk, so if it was interrupted and the dashboard restarted "
    "since, that list is gone and they could not be looked for"
)


KNOWN_TEXTS_ONLY = _l(
    "The on-disk check can only look for texts it knows: the current text of each erased row. "
    "Older versions of a memory's text left by earlier updates are not in the database any more, "
    "so they cannot be searched for; the VACUUM rebuilds the file without its free pages, "
    "which is what removes them."
)


@dataclass
class PurgeResult:
    """One file's purge: what went, what stayed, what the checkpoint said, what the byte scan found."""

    store: str
    path: str
    status: str = "running"
    message: str = ""
    reason: str = ""  # why it stopped, without what that changed (for callers' own sentences)
    plan: list[Any] = field(default_factory=list)  # what a retry must still erase (a DryRun)
    deleted: dict[str, Any] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # confirmed rows already gone: {kind, id}
    kept: list[dict[str, Any]] = field(default_factory=list)  # arrived after the dry run: {kind, id}
    checkpoint: tuple[Any, ...] | None = None
    verification: list[Any] = field(default_factory=list)
    files_scanned: list[Any] = field(default_factory=list)
    copies_with_hits: list[str] = field(default_factory=list)
    seconds: float = 0.0
    texts: tuple[str, ...] = ()  # kept in memory for a retry, dropped once verified; never serialized
    earlier_texts: int = 0  # how many of ``texts`` an earlier, unfinished run had erased
    rows: list[dict[str, Any]] = field(default_factory=list)  # the rows erased: kinds, ids, sizes and hashes

    @property
    def verified(self) -> bool:
        return self.status == "verified erased"

    def to_dict(self) -> dict[str, Any]:
        return {
            **plain(self, "store", "path", "status", "message", "deleted", "skipped", "kept"),
            "kept_by_kind": _by_kind(self.kept),
            "skipped_by_kind": _by_kind(self.skipped),
            "checkpoint": None
            if self.checkpoint is None
            else dict(zip(("busy", "wal_frames", "checkpointed"), self.checkpoint)),
            "rows": self.rows,
            "texts_checked": len(self.verification),
            "earlier_texts_checked": self.earlier_texts if self.verification else 0,
            "verification": self.verification,
            "files_scanned": self.files_scanned,
            "copies_with_hits": self.copies_with_hits,
            "seconds": round(self.seconds, 3),
            "limits": str(KNOWN_TEXTS_ONLY),
        }


def _by_kind(rows: list[dict[str, Any]]) -> dict[str, int]:
    return dict(Counter(r["kind"] for r in rows))


def reason(exc: StoreProblem) -> str:
    """A StoreProblem's own sentence without its claim about what changed."""
    text = _NOTHING_CHANGED.sub("", str(exc)).strip().rstrip(";,")
    return text if text.endswith(".") else text + "."


def failure(exc: StoreProblem, committed: bool) -> str:
    """Why the purge stopped, and whether its delete had already committed."""
    if exc.kind == "changed":
        return _("Nothing was erased: %(error)s Look at the new dry run before purging.", error=exc)
    if exc.kind == "disk_full":
        if committed:
            return _(
                "The rows were deleted, but the disk is full, so the file could not be "
                "compacted and its free pages may still hold their text: free space and run "
                "the purge again to finish it."
            )
        return _("The disk is full: nothing was changed, free space and try again.")
    if committed:
        return _(
            "The rows were deleted but the file was not compacted: %(reason)s Run the purge "
            "again to finish it.",
            reason=reason(exc),
        )
    return _("Nothing was changed: %(reason)s", reason=reason(exc))


def scanned(result: PurgeResult, copies_hit: set[str]) -> str:
    """The verdict of a purge that ran to its byte scan, with everything the user must know."""
    parts = [_verdict(result)]
    again = sum(1 for v in result.verification if v.get("saved_again"))
    if again:
        parts.append(
            ngettext(
                "%(num)d purged text was saved again by the agent during the purge: a live row holds "
                "it now, so it is in the file as that row's data, not as residue.",
                "%(num)d purged texts were saved again by the agent during the purge: a live row "
                "holds it now, so it is in the file as that row's data, not as residue.",
                again,
            )
        )
    if result.kept:
        parts.append(
            ngettext(
                "%(num)d row that arrived after the dry run was kept (%(kinds)s): not what you "
                "confirmed; a new dry run lists them.",
                "%(num)d rows that arrived after the dry run were kept (%(kinds)s): not what you "
                "confirmed; a new dry run lists them.",
                len(result.kept),
                kinds=count_kinds(result.kept),
            )
        )
    if result.skipped and result.verification:
        parts.append(
            ngettext(
                "%(num)d row of the dry run was already gone (%(kinds)s).",
                "%(num)d rows of the dry run were already gone (%(kinds)s).",
                len(result.skipped),
                kinds=count_kinds(result.skipped),
            )
        )
    if copies_hit:
        parts.append(
            _(
                "Copies beside the database still hold purged text: %(files)s. Delete them "
                "yourself if you no longer need them.",
                files=", ".join(sorted(copies_hit)),
            )
        )
    return " ".join(parts)


def _verdict(result: PurgeResult) -> str:
    if result.status == "pending, retry":
        return _(
            "Another program (probably the agent) is reading the file, so the write-ahead "
            "log could not be emptied. Retry when it is idle."
        )
    if result.status == "found on disk":
        return _("Some purged text is still in SQLite's files; run the purge again.")
    n = len(result.verification)
    if n and result.earlier_texts:
        return ngettext(
            "None of the %(num)d purged text searched for, including the %(earlier)s that an "
            "earlier, unfinished run had erased, was found in the database or its side files.",
            "None of the %(num)d purged texts searched for, including the %(earlier)s that an "
            "earlier, unfinished run had erased, was found in the database or its side files.",
            n,
            earlier=result.earlier_texts,
        )
    if n:
        return ngettext(
            "None of the %(num)d purged text searched for was found in the database or its side files.",
            "None of the %(num)d purged texts searched for was found in the database or its side files.",
            n,
        )
    # Nothing to look for: say what was checked, and what could not be.
    if result.skipped:
        what = ngettext(
            "Nothing was left to erase: the %(num)d row of the dry run was already gone (%(kinds)s).",
            "Nothing was left to erase: the %(num)d rows of the dry run were already gone (%(kinds)s).",
            len(result.skipped),
            kinds=count_kinds(result.skipped),
        )
    elif result.deleted:
        what = _(
            "The rows erased (%(kinds)s) hold no text of their own.", kinds=count_kinds_of(result.deleted)
        )
    else:
        what = _("There was nothing to erase.")
    return _(
        "%(what)s The file was compacted and its write-ahead log emptied, which removes what "
        "an interrupted purge leaves in free pages; but no text was searched for: %(why)s.",
        what=what,
        why=LIST_GONE,
    )


def count_kinds_of(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items())
