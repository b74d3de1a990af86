"""Forget one memory: its page (what goes, a typed confirmation by its title) and the action.

The confirmation asks for the memory's title, the name the person knows it
by, not the store's.  An LLM may have written a title no one can type
(control characters, direction marks, an odd space): then its key is asked
for instead, and failing that its id, and the page says why.
"""

from __future__ import annotations

import unicodedata

from flask import abort, request
from flask_babel import gettext as _

from ...actions import purge, saved, verdicts
from ...web import page
from .. import resolve
from . import about as forget_about
from . import jobs as forget_jobs

# Control, format (bidi marks, zero-width), private, unassigned, line/paragraph separators.
_UNTYPEABLE = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


def typeable(text: str | None) -> bool:
    """Whether a person can type ``text`` on a keyboard as it is stored."""
    if not text or not text.strip() or unicodedata.normalize("NFC", text) != text:
        return False
    return all(unicodedata.category(c) not in _UNTYPEABLE and (c == " " or not c.isspace()) for c in text)


def confirm_phrase(mem) -> dict:
    """What the person types to confirm a hard purge of ``mem``: its title, else its key, else its id."""
    if typeable((mem.title or "").strip()):
        return {"asks": "title", "phrase": mem.title.strip()}
    if typeable((mem.key_normalized or "").strip()):
        return {"asks": "key", "phrase": mem.key_normalized.strip()}
    return {"asks": "id", "phrase": mem.id}


def _saved_files(ref, memory_id: str):
    """The saved conversations' share of forgetting this memory: its texts, redacted where they are."""
    rows = purge.plan(ref, memory_ids=[memory_id])
    return forget_about.saved_files([t for r in rows for t in r.texts])


def memory(key: str, memory_id: str, fmt: str):
    ref, mem, events = resolve.memory(key, memory_id)
    copies = _saved_files(ref, memory_id)
    plans = copies[1] if copies else []
    return page(
        fmt,
        "forget/memory.html",
        mem=mem,
        ref=ref,
        events=events,
        limits=str(verdicts.KNOWN_TEXTS_ONLY),
        confirm=confirm_phrase(mem),
        saved_files=saved.goes(plans),
        saved_kept=[],
        to_json=lambda ctx: {
            "saved_files": [f.to_dict() for f in ctx["saved_files"]],
            "memory": ctx["mem"],
            "limits": ctx["limits"],
            "confirm": ctx["confirm"],
            "events": len(ctx["events"]),
        },
    )


def forget_memory(key: str, memory_id: str):
    ref = forget_jobs.writable_store(key)
    mode = request.form.get("mode")
    if mode == "soft":
        return forget_jobs.start(
            "soft delete",
            [key],
            lambda job: {"soft_deleted": purge.soft_forget(ref, memory_id)},
            background=False,
        )
    if mode != "purge":
        abort(400, _("'mode' must be 'soft' or 'purge'."))
    _ref, mem, _events = resolve.memory(key, memory_id)
    resolve.typed(request.form.get("confirm"), confirm_phrase(mem)["phrase"])
    copies = _saved_files(ref, memory_id)

    def work(job):
        out = {
            "results": [purge.forget_memory(ref, memory_id, progress=job.progress)],
            "memory": {"store": key, "id": memory_id},
        }
        if copies is not None:  # its texts in agentao's saved conversations, redacted
            out.update(saved.erased(*copies, progress=job.progress))
        return out

    return forget_jobs.start("memory purge", [key], work)
