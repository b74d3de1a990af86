"""The dashboard's pictures: what each screen draws, built from store and engine data.

Pure functions (no SQL; the words through Flask-Babel, in the page's locale): the views pass in what they read, these turn
it into the numbers a person reads in the table fallback and the SVG markup.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from flask_babel import gettext as _
from flask_babel import ngettext
from markupsafe import Markup

from ..words import label
from .svg import PALETTE, columns, number, stacked_bars

DIMENSIONS = ("scope", "type", "source", "confidence")
SCORE_TERMS = ("tag", "title", "keyword", "content", "filepath_hint", "recency", "stale")


# -- overview ---------------------------------------------------------------------------


def composition(statuses) -> list[tuple[str, list[tuple[str, int]]]]:
    """Live memories of the readable stores counted by scope, type, source and confidence."""
    out = []
    for dim in DIMENSIONS:
        totals: dict = {}
        for st in statuses:
            for c in st.counts if st.readable else ():
                if not c["deleted"]:
                    totals[str(c[dim])] = totals.get(str(c[dim]), 0) + c["n"]
        out.append((dim, sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))))
    return out


def _week_start(label: str) -> date:
    # strftime('%W'): week 01 starts on the year's first Monday; days before it are week 00.
    jan1 = date(int(label[:4]), 1, 1)
    first_monday = jan1 + timedelta(days=(7 - jan1.weekday()) % 7)
    week = int(label[6:])
    return jan1 if week == 0 else first_monday + timedelta(weeks=week - 1)


def _next(label: str, by: str) -> str:
    if by == "month":
        y, m = int(label[:4]), int(label[5:7])
        return f"{y + m // 12:04d}-{m % 12 + 1:02d}"
    start = _week_start(label)
    following = start + timedelta(days=7 - start.weekday())
    if following.year > start.year:
        following = date(start.year + 1, 1, 1)  # so the new year's week 00 is not skipped
    return following.strftime("%Y-W%W")


def fill_periods(periods: list[dict], by: str, limit: int = 240) -> list[dict]:
    """The periods with the empty ones in between added, so the columns are a true time axis.

    Labels that are not agentao stamps (hand edits) are kept, after the dated ones.
    """
    dated = {p["period"]: p for p in periods if _parses(p["period"], by)}
    odd = [p for p in periods if p["period"] not in dated]
    if not dated:
        return odd
    label, last = min(dated), max(dated)
    out: list[dict] = []
    while label <= last and len(out) < limit:
        out.append(dated.get(label, {"period": label, "created": 0, "updated": 0}))
        label = _next(label, by)
    return out + odd


def _parses(label: str, by: str) -> bool:
    if by == "month":
        return bool(re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", label or ""))
    return bool(re.fullmatch(r"\d{4}-W([0-4]\d|5[0-3])", label or ""))


def _memories(n: float) -> str:
    return ngettext("%(count)s memory", "%(count)s memories", int(n), count=number(n))


def _bytes(n: float) -> str:
    return ngettext("%(count)s byte", "%(count)s bytes", int(n), count=number(n))


def overview_pictures(statuses, timeline: dict) -> dict:
    """Composition bars and the created/updated timeline, with the numbers behind them."""
    comp = composition(statuses)
    periods = fill_periods(timeline["periods"], timeline["by"])
    return {
        "composition_rows": comp,
        "composition": stacked_bars(
            [
                (label("dimension", dim), [(label(dim, code), n) for code, n in values])
                for dim, values in comp
            ],
            title=_("Live memories by scope, type, source and confidence"),
            chart_id="composition",
            unit=_memories,
            inline=True,
        ),
        "by": timeline["by"],
        "periods": periods,
        "timeline": columns(
            [p["period"] for p in periods],
            {_("created"): [p["created"] for p in periods], _("updated"): [p["updated"] for p in periods]},
            title=_("Live memories created and last updated, per week")
            if timeline["by"] == "week"
            else _("Live memories created and last updated, per month")
            if timeline["by"] == "month"
            else _(
                "Live memories created and last updated, per %(period)s",
                period=label("period", timeline["by"]),
            ),
            chart_id="timeline",
        ),
        "problems": timeline.get("problems", {}),
    }


# -- preview ----------------------------------------------------------------------------


def score_bars(candidates, *, chart_id: str = "scores", title: str | None = None) -> Markup:
    """Each candidate's score as stacked contributions of its terms (the stale penalty leftwards).

    ``candidates`` is ``[(label, [(term, contribution), ...]), ...]``; from the
    engine: ``[(s.memory.title, [(t.name, t.contribution) for t in s.terms]) for s in scored]``.
    """
    # The legend says the terms in the preview table's words (words.LABELS["term"]).
    named = [label("term", t) for t in SCORE_TERMS]
    colours = {t: PALETTE[n] for n, t in enumerate(named)}
    candidates = [(row, [(label("term", t), v) for t, v in terms]) for row, terms in candidates]
    return stacked_bars(
        candidates, title=title or _("Score by term"), chart_id=chart_id, order=named, colours=colours
    )


def candidate_scores(candidates) -> Markup | None:
    """Score-by-term bars for the first 12 recall candidates (engine ``Candidate``s)."""
    rows = [
        # A recalled memory's rank leads its bar ("1. deploy"); one not recalled has none ("– deploy").
        (
            f"{c.rank}. {c.memory.title}" if c.rank else f"– {c.memory.title}",
            [(t.name, t.contribution) for t in c.terms],
        )
        for c in list(candidates)[:12]
    ]
    if not rows:
        return None
    return score_bars(
        rows,
        chart_id="recall-scores",
        title=ngettext(
            "Score of the first candidate, by term",
            "Score of the first %(num)d candidates, by term",
            len(rows),
        ),
    )


# -- forget -----------------------------------------------------------------------------


def residue_rows(report: dict) -> list[tuple[str, list[tuple[str, int]]]]:
    """Per file, the bytes that may still hold forgotten text (from ``purge.residue_report``)."""
    reviews = sum(
        len(str(r.get(k) or "").encode())
        for group in report["reviews"].values()
        for r in group["items"]
        for k in ("title", "content", "evidence")
    )
    rows = [
        (
            _("database"),
            [
                (_("soft-deleted memories"), report["soft_deleted"]["bytes"]),
                (_("review queue"), reviews),
                (_("session summaries"), report["summaries"].get("bytes", 0)),
                (_("free pages"), report["free_pages"]["bytes"]),
            ],
        )
    ]
    if report["wal"].get("exists"):
        rows.append(("-wal", [(_("write-ahead log"), report["wal"].get("size", 0))]))
    if report["journal"].get("exists"):
        rows.append(("-journal", [(_("rollback journal"), report["journal"]["size"])]))
    rows += [
        (c["path"].rsplit("/", 1)[-1], [(_("copy beside the file"), c["size"] or 0)])
        for c in report["copies"]
    ]
    return rows


def residue_bars(report: dict, *, chart_id: str | None = None) -> Markup | None:
    """Where residue sits, per file, in bytes; None when nothing is left anywhere."""
    rows = residue_rows(report)
    if not any(value for _, parts in rows for _, value in parts):
        return None
    return stacked_bars(
        rows,
        title=_("Where forgotten text may still sit, per file"),
        chart_id=chart_id or f"residue-{report['store']}",
        unit=_bytes,
    )
