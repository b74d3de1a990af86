"""Findings: memories that should not be there, where they are, how they reach the model."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import datetime, timezone

from flask import Blueprint, abort, current_app, request

from ..findings.scan import CATEGORIES, REACH, Report, scan
from ..store import file_stamp
from ..web import page_route, readable_refs, render, statuses, stores, twin

bp = Blueprint("findings", __name__)

PER_PAGE = 100
MAX_PER_PAGE = 1000
# A scan is shown again (another page, another filter) while no file has
# changed, for at most this long: staleness moves with the clock.
REUSE_S = 60
_scanning = threading.Lock()   # one scan at a time: two at once only share the CPU


def _now() -> datetime:
    # FINDINGS_NOW lets tests and demos pin the clock used for staleness.
    return current_app.config.get("FINDINGS_NOW") or datetime.now(timezone.utc)


def parse_filters(args) -> dict:
    """Query string -> filters; anything unknown is a 400 naming the allowed values."""
    allowed = {"category": list(CATEGORIES), "store": [r.key for r in stores()],
               "reach": list(REACH)}
    out = {}
    for name, values in allowed.items():
        value = (args.get(name) or "").strip()
        if value and value not in values:
            abort(400, f"'{name}' must be one of: {', '.join(values)}.")
        out[name] = value or None
    return out


def _number(args, name: str, default: int, high: int) -> int:
    raw = args.get(name)
    if raw in (None, ""):
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= high:
        abort(400, f"'{name}' must be a whole number from 1 to {high}.")
    return int(raw)


def _report(refs) -> tuple[Report, datetime, bool]:
    """The scan to show, when it ran, and whether it is an earlier one shown again.

    ``?rescan=1`` always scans.  The files' stamps are taken before the scan,
    so a write during it makes the next view scan again.
    """
    key = (tuple((r.key, str(r.path), file_stamp(r.path)) for r in refs),
           current_app.config.get("FINDINGS_NOW"))
    with _scanning:
        held = current_app.extensions.get("findings")
        if (held and held[0] == key and time.monotonic() - held[1] < REUSE_S
                and request.args.get("rescan") != "1"):
            return held[2], held[3], True
        now = _now()
        report = scan(refs, now)
        current_app.extensions["findings"] = (key, time.monotonic(), report, now)
        return report, now, False


@page_route(bp, "/findings")
def index(fmt: str):
    filters = parse_filters(request.args)
    page = _number(request.args, "page", 1, 10**6)
    per_page = _number(request.args, "per_page", PER_PAGE, MAX_PER_PAGE)
    report, scanned_at, reused = _report(readable_refs())
    matching = [i for i in report.items
                if all(v is None or v == (i.finding.category if k == "category" else getattr(i, k))
                       for k, v in filters.items())]
    pages = max(1, -(-len(matching) // per_page))
    items = matching[(page - 1) * per_page:page * per_page]
    counts = {"category": Counter(i.finding.category for i in report.items),
              "store": Counter(i.store for i in report.items),
              "reach": Counter(i.reach for i in report.items)}
    problems = report.problems + [{"store": st.ref.key, "kind": st.problem.kind,
                                   "message": str(st.problem)}
                                  for st in statuses() if st.problem]
    if fmt == "json":
        return twin({"filters": filters, "total": len(matching), "all": len(report.items),
                     "page": page, "pages": pages, "per_page": per_page,
                     "counts": {k: dict(v) for k, v in counts.items()},
                     "scanned": report.scanned, "scanned_at": scanned_at.isoformat(),
                     "reused": reused, "items": [i.to_dict() for i in items],
                     "problems": problems})
    return render("findings/index.html", "findings/list.html", items=items, filters=filters,
                  total=len(matching), page=page, pages=pages,
                  counts=counts, categories=CATEGORIES, reaches=REACH, report=report,
                  scanned_at=scanned_at, reused=reused,
                  problems=problems, store_keys=[r.key for r in stores()])
