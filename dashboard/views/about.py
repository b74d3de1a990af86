"""About you: everything the stores hold about the person, in one place (#21 journey 1).

The question is "what does the agent know about me?", so the page lists what
answers it wherever it sits: memories of scope ``user`` (live, and the
soft-deleted ones still on disk, apart), personal-data and secret findings in
any store, the person's own words kept as review-queue evidence, and the
project's session summaries.  Every section is bounded (``store.about``): the
first rows, "and N more", and a link to the full filtered list.
"""

from __future__ import annotations

from flask import Blueprint, current_app, url_for
from flask_babel import lazy_gettext as _l

from .. import facts
from ..findings.scan import CATEGORIES, REACH
from ..store import StoreProblem
from ..store.about import LIMIT, Section, review_evidence, session_summaries, user_memories
from ..web import page, page_route, status_of, statuses
from .findings import current_report, cut_facts, held_report
from .findings.links import lead
from .memories.page import row_context

bp = Blueprint("about", __name__)

ABOUT_CATEGORIES = ("personal", "secret")  # findings that are about the person
# Where a finding sits, in words: the table, then the file.
PLACES = {
    "memories": _l("memory"),
    "memory_review_queue": _l("suggestion"),
    "session_summaries": _l("session summary"),
}
FILES = {"user": _l("your user store"), "project": _l("this project's store")}


def _memories() -> tuple[Section, Section, list[dict]]:
    live, gone, problems = Section(), Section(), []
    for st in statuses():
        if not st.readable:
            continue
        try:
            mine, deleted = user_memories(st.ref)
        except StoreProblem as exc:  # damaged since its health was read: say so, go on
            problems.append({"store": st.ref.key, "message": str(exc)})
            continue
        live.add(mine, LIMIT)
        gone.add(deleted, LIMIT)
    return live, gone, problems


def _project_sections() -> tuple[Section, Section]:
    project = status_of("project")
    if project is None or not project.readable:
        return Section(), Section()
    return review_evidence(project.ref), session_summaries(project.ref)


def _findings() -> tuple[dict, dict, int]:
    """category -> Section of the report's items in it; how far the scan read
    (``cut_facts``: a scan out of time says so on the page, as the findings list does); and
    how many places (rows) hold them: a memory with a phone number and an ID number is one.

    Personal data and secrets depend on the files alone, never on the clock: the scan held
    for the files as they are answers however old it is (the findings list scans again
    after a minute, for what ages); only files that moved since make this page scan."""
    report = held_report() or current_report()[0]
    out = {c: Section() for c in ABOUT_CATEGORIES}
    for item in report.items:
        section = out.get(item.finding.category)
        if section is not None:
            section.total += 1
            if len(section.items) < LIMIT:
                section.items.append(item)
    return out, cut_facts(report), facts.risky_in(report, ABOUT_CATEGORIES).count


@page_route(bp, "/about")
def index(fmt: str):
    live, gone, problems = _memories()
    evidence, summaries = _project_sections()
    findings, scan, holding = _findings()
    files, hits = facts.saved()
    return page(
        fmt,
        "about/index.html",
        to_json=_json,
        memories=live,
        deleted=gone,
        findings=findings,
        holding=holding,
        scan_complete=scan["complete"],
        scan=scan,
        evidence=evidence,
        summaries=summaries,
        problems=problems,
        limit=LIMIT,
        finding_link=lambda item: lead(item).href,
        categories=CATEGORIES,
        reaches=REACH,
        places=PLACES,
        files=FILES,
        has_forget_about="forget.about" in current_app.view_functions,
        saved=facts.saved_counts(),
        saved_files=files.files if files is not None else [],
        saved_hits=hits[:LIMIT],
        **row_context(),
    )


def _json(ctx) -> dict:
    findings = {
        c: {**s.to_dict(), "items": [{**i.to_dict(), "href": ctx["finding_link"](i)} for i in s.items]}
        for c, s in ctx["findings"].items()
    }
    return {
        "memories": ctx["memories"],
        "deleted": ctx["deleted"],
        "findings": findings,
        "scan_complete": ctx["scan_complete"],
        "scan": ctx["scan"],
        "evidence": ctx["evidence"],
        "summaries": ctx["summaries"],
        "problems": ctx["problems"],
        "saved": {
            **ctx["saved"],
            "files": [f.to_dict() for f in ctx["saved_files"]],
            "found": [h.to_dict() for h in ctx["saved_hits"]],
        },
        "forget_about": url_for("forget.about") if ctx["has_forget_about"] else None,
    }
