"""``/findings/check/...``: one finding re-checked after a fix.

It scans again (the one shared scan, ``findings.current_report``), and looks
for the flagged text, by its keyed digest, in both prompt blocks as the preview
engine renders them now.  Its answer comes first on the page, focused.
"""

from __future__ import annotations

import re

from flask import abort, current_app, request
from flask_babel import gettext as _

from ...engine import preview, tokenizer_for
from ...findings.checks import signature_in, signed_here, valid_signature
from ...findings.scan import CATEGORIES, REACH
from ...preview_source import snapshot
from ...store.scan import SCANNED, scan_row
from ...web import page as page_
from ...web import status_of, statuses, store_by_key
from .links import actions, shown
from . import clock, current_report, cut_facts


_RULE = re.compile(r"[a-z]{1,20}\.[a-z0-9_]{1,60}")
_FIELD = re.compile(r"[a-z_]{1,40}")
VERDICTS = {
    "fixed": "Fixed: the row no longer has this finding.",
    "on_disk": "Out of the prompt but still in the file: agentao never reads it, the text stays "
               "on disk until a hard purge.",
    "reaches": "Not fixed: the text still reaches the model.",
    "unknown": "Not known yet: the scan ran out of time before it reached every row. Run the "
               "full scan in the background from the findings list, then check again.",
}


def _row_state(table: str, row) -> str:
    if row is None:
        return "gone"
    if table == "memories":
        return "live" if row.deleted_at is None else "deleted"
    return row.status if table == "memory_review_queue" else "kept"


def _own_words(table: str, row) -> str:
    """The recall query most likely to bring the row back: its own title and content."""
    if row is None or table == "session_summaries":
        return ""
    return f"{row.title}\n{row.content}"


def check(store: str, table: str, row_id: str, fmt: str):
    ref = store_by_key(store)
    if ref is None or table not in SCANNED or len(row_id) > 200:
        abort(404, _("No scanned table '%(table)s' in store '%(store)s'.", table=table, store=store))
    rule, field, label, sig = (request.args.get(k, "") for k in ("rule", "field", "label", "sig"))
    if not _RULE.fullmatch(rule) or not _FIELD.fullmatch(field):
        abort(400, _("'rule' and 'field' must name a finding, as the findings list links it."))
    if sig and not valid_signature(sig):
        abort(400, _("'sig' is not a signature of flagged text; open the check from the findings list."))
    status = status_of(store)
    if status.problem:
        raise status.problem
    row = scan_row(ref, table, row_id)
    report, scanned_at, reused = current_report()
    on_row = [i for i in report.items if (i.store, i.table, i.row_id) == (store, table, row_id)]
    same = [i for i in on_row if (i.finding.rule, i.finding.field) == (rule, field)]
    # The blocks agentao would send now: <memory-stable> for a new session, and
    # <memory-context> for the row's own words (or its key, once it is gone).
    own = _own_words(table, row)
    query = own or label[:500]
    snap = snapshot(statuses())
    # Tokenised as the agent's environment does (--cjk), as the preview page does.
    blocks_now = preview(snap.project, snap.user, snap.summaries, query=query, now=clock(),
                         cache=snap.cache, version=snap.version,
                         tokenizer=tokenizer_for(current_app.config["CJK"]))
    looked = bool(sig) and signed_here(sig)
    blocks = [{"block": name, "text_found": signature_in(text, sig) if looked else None,
               "chars": len(text)}
              for name, text in (("stable", blocks_now.stable_block),
                                 ("context", blocks_now.context_block))]
    reaching = any(i.reach != "disk" for i in same)
    # The text in a block while this row's own copy does not reach: another row holds it.
    # (Only a complete scan can tell: a cut one may not have reached the row.)
    elsewhere = not reaching and report.complete and any(b["text_found"] for b in blocks)
    found = any(b["text_found"] for b in blocks)
    verdict = ("reaches" if reaching or elsewhere or found else "on_disk" if same
               else "fixed" if report.complete else "unknown")
    data = {"store": store, "table": table, "row_id": row_id, "rule": rule, "field": field,
            "label": label, "row": _row_state(table, row), "verdict": verdict,
            "verdict_text": VERDICTS[verdict], "still_flagged": bool(same),
            "text_looked_for": looked, "signature_expired": bool(sig) and not looked,
            "held_elsewhere": elsewhere,
            "blocks": blocks, "query": "the row's own title and content" if own else "the row's label",
            "findings": [shown(i) for i in on_row],
            "scanned_at": scanned_at.isoformat(), "reused": reused, **cut_facts(report)}
    return page_(fmt, "findings/check.html", check=data, items=on_row, reaches=REACH,
                 categories=CATEGORIES, scanned_at=scanned_at, actions=actions,
                 to_json=lambda ctx: ctx["check"])
