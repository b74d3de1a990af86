"""What a hard purge says: one plain account per outcome, and what it really verified.

Kept apart from ``purge`` so that the wording of every case can be read in
one place: refused because a confirmed row changed, disk full before or
after the delete, interrupted, verified with texts to look for or with none
(a rerun whose first run's list of texts is gone), text the agent saved
again while the scan ran, rows that arrived after the dry run and stayed.
"""

from __future__ import annotations

import re

from ..store import StoreProblem
from ..store.purge import count_kinds

# describe_error's sentences say "nothing was changed" for a single write; a
# purge knows better whether its delete had committed, and says so itself.
_NOTHING_CHANGED = re.compile(r"[;.]?\s*[^.;]*\bnothing was changed\b[^.]*\.?", re.IGNORECASE)
LIST_GONE = ("the texts an earlier purge erased are kept only in the memory of the dashboard that "
             "ran it, never on disk, so if it was interrupted and the dashboard restarted since, "
             "that list is gone and they could not be looked for")


def reason(exc: StoreProblem) -> str:
    """A StoreProblem's own sentence without its claim about what changed."""
    text = _NOTHING_CHANGED.sub("", str(exc)).strip().rstrip(";,")
    return text if text.endswith(".") else text + "."


def failure(exc: StoreProblem, committed: bool) -> str:
    """Why the purge stopped, and whether its delete had already committed."""
    if exc.kind == "changed":
        return f"Nothing was erased: {exc} Look at the new dry run before purging."
    if exc.kind == "disk_full":
        if committed:
            return ("The rows were deleted, but the disk is full, so the file could not be "
                    "compacted and its free pages may still hold their text: free space and run "
                    "the purge again to finish it.")
        return "The disk is full: nothing was changed, free space and try again."
    if committed:
        return (f"The rows were deleted but the file was not compacted: {reason(exc)} "
                "Run the purge again to finish it.")
    return f"Nothing was changed: {reason(exc)}"


def scanned(result, copies_hit) -> str:
    """The verdict of a purge that ran to its byte scan, with everything the user must know."""
    parts = [_verdict(result)]
    again = sum(1 for v in result.verification if v.get("saved_again"))
    if again:
        parts.append(f"{again} purged text{'s were' if again > 1 else ' was'} saved again by the "
                     "agent during the purge: a live row holds it now, so it is in the file as "
                     "that row's data, not as residue.")
    if result.kept:
        parts.append(f"{len(result.kept)} row{'s' if len(result.kept) > 1 else ''} that arrived "
                     f"after the dry run {'were' if len(result.kept) > 1 else 'was'} kept "
                     f"({count_kinds(result.kept)}): not what you confirmed; a new dry run "
                     "lists them.")
    if result.skipped and result.verification:
        parts.append(f"{len(result.skipped)} row{'s' if len(result.skipped) > 1 else ''} of the "
                     f"dry run {'were' if len(result.skipped) > 1 else 'was'} already gone "
                     f"({count_kinds(result.skipped)}).")
    if copies_hit:
        parts.append("Copies beside the database still hold purged text: " +
                     ", ".join(sorted(copies_hit)) + ". Delete them yourself if you no longer need them.")
    return " ".join(parts)


def _verdict(result) -> str:
    if result.status == "pending, retry":
        return ("Another program (probably the agent) is reading the file, so the write-ahead log "
                "could not be emptied. Retry when it is idle.")
    if result.status == "found on disk":
        return "Some purged text is still in SQLite's files; run the purge again."
    n = len(result.verification)
    if n:
        earlier = (f", including the {result.earlier_texts} that an earlier, unfinished run had "
                   "erased" if result.earlier_texts else "")
        return (f"None of the {n} purged text{'s' if n > 1 else ''} searched for{earlier} was "
                "found in the database or its side files.")
    # Nothing to look for: say what was checked, and what could not be.
    if result.skipped:
        what = (f"Nothing was left to erase: the {len(result.skipped)} rows of the dry run were "
                f"already gone ({count_kinds(result.skipped)}).")
    elif result.deleted:
        what = f"The rows erased ({count_kinds_of(result.deleted)}) hold no text of their own."
    else:
        what = "There was nothing to erase."
    return (f"{what} The file was compacted and its write-ahead log emptied, which removes what "
            f"an interrupted purge leaves in free pages; but no text was searched for: {LIST_GONE}.")


def count_kinds_of(counts: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items())
