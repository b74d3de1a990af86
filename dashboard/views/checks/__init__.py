"""Memory checks: the ``/checks`` screen, saving and removing a check, and the after-write
hook that says which checks a dashboard write changed (the checks are ``actions/checks.py``)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from flask import Blueprint, abort, current_app, g, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ...actions import checks as ck
from ...agent_cjk import agent_cjk
from ...preview_source import snapshot
from ...store.status import inspect
from ...web import answer, landed, page, page_route, stores
from ...words import store_name
from ..outcomes import form_values

bp = Blueprint("checks", __name__)
TIME_LIMIT_MS = 10_000  # create_app key CHECKS_TIME_LIMIT_MS (None: no limit, as the command runs)

# What a reason code says, with its values (%(memory)s, %(text)s).
WHY = {
    "no_such_memory": _l("No live memory is called “%(memory)s”: it was deleted, renamed or never saved."),
    "not_recalled": _l("“%(memory)s” is not brought up: nothing in the message matches it."),
    "not_recalled_cut_top5": _l("“%(memory)s” matches but is not brought up: five memories score higher."),
    "not_recalled_cut_context_budget": _l(
        "“%(memory)s” matches but is not brought up: the recall block's 1,200 characters are full."
    ),
    "in_stable": _l("“%(memory)s” must not reach the model, but it is in the always-on block."),
    "recalled": _l("“%(memory)s” must not reach the model, but this message recalls it."),
    "text_in_stable": _l(
        "“%(text)s” must never appear, but the always-on block holds it (from “%(memory)s”)."
    ),
    "text_in_context": _l("“%(text)s” must never appear, but the recall block holds it (from “%(memory)s”)."),
    "text_in_stable_tail": _l(
        "“%(text)s” must never appear, but the always-on block holds it (in the session summaries it carries)."
    ),
    "text_in_context_tail": _l("“%(text)s” must never appear, but the recall block holds it."),
    ck.TIE_LEFT_OUT: _l(
        "“%(memory)s” is brought up now, but it ties with others at the cut: agentao picks among equal "
        "scores in no fixed order, which changes each time it starts, so it may be left out."
    ),
    ck.TIE_RECALLED: _l(
        "“%(memory)s” is not brought up now, but it ties with others at the cut: agentao picks among "
        "equal scores in no fixed order, which changes each time it starts, so it may be brought up."
    ),
    "not_run": _l("Not run: this page's time budget ran out first. The check command runs every check."),
    "private_in_stable": _l(
        "The always-on block, sent with every prompt, holds %(text)s from “%(memory)s” (%(category)s)."
    ),
}
CATEGORY = {"secret": _l("a secret"), "personal": _l("personal data")}


def reason_text(reason: dict) -> str:
    values = dict(reason)
    values.setdefault("text", "")
    values.setdefault("memory", "")
    values["category"] = str(CATEGORY.get(values.get("category"), values.get("category", "")))
    code = reason["code"]
    if code.startswith("text_in_") and not values["memory"]:  # no one memory holds it
        code += "_tail"
    return str(WHY.get(code, code)) % values


def _refs():
    return [r for r in stores() if r.exists]


def run_checks() -> ck.Run:
    """Every check of the shown stores, on the files as they are now (read-only)."""
    refs = _refs()
    snap = snapshot([inspect(r, True, deep=False) for r in refs])
    limit = current_app.config.get("CHECKS_TIME_LIMIT_MS", TIME_LIMIT_MS)
    run = ck.run_all(
        refs,
        snap,
        agent_cjk(current_app.config["CJK"]).use,  # Chinese as the agent tokenises it
        time_limit=None if limit is None else limit / 1000,
    )
    run.version = snap.version
    return run


def result_dict(r: ck.Result) -> dict:
    data = r.to_dict()
    data["name"] = data["name"] or str(_("The always-on block holds no secret or personal data"))
    for reason in data["reasons"]:
        reason["text_words"] = reason_text(reason)
    data["why"] = (
        [x["text_words"] for x in data["reasons"]]
        if not r.passed or not r.ran
        else [_("Passes: every expectation holds.")]
    )
    return data


def collect() -> dict:
    """The screen's data and the twin, also what the command line prints."""
    run = run_checks()
    results = [result_dict(r) for r in run.results]
    return {
        "checks": results,
        "total": len(results),
        "failed": run.failed,
        "tied": run.tied,
        "not_run": run.not_run,
        "problems": run.problems,
        "files": run.files,
        "cjk_setting": current_app.config["CJK"],
    }


def _said_saved(context: dict):
    """The status line on the page a no-JavaScript save lands on: which check was saved, into
    which file, and its result (``create`` flashed its id); None on a plain visit or a reload."""
    saved = landed().get("check")
    mine = next((c for c in context["checks"] if c["id"] == saved), None)
    if mine is None:
        return None
    said = _(
        "Saved the check “%(name)s” in %(file)s.",
        name=mine["name"],
        file=context["files"].get(mine["store"], store_name(mine["store"])),
    )
    if mine["ran"] and not mine["tie"]:
        said += " " + (_("It passes now.") if mine["passed"] else _("It fails now: its row below says why."))
    return said


@page_route(bp, "/checks")
def index(fmt: str):
    context = collect()
    if fmt == "json":
        return page(fmt, "checks/index.html", **context)
    return page(fmt, "checks/index.html", said=_said_saved(context), **context)


@page_route(bp, "/checks/new")
def new(fmt: str):
    """The form to save a check, pre-filled from the query (the preview and the forget report
    link here with ``message``, ``must_recall``, ``must_not_contain``)."""
    a = request.args
    form = {
        "name": a.get("name", "")[:200],
        "message": a.get("message", "")[: ck.MAX_TEXT],
        "session": a.get("session", "")[:200],
        "store": a.get("store", "project"),
    }
    for key in ("must_recall", "must_not_recall", "must_not_contain"):
        form[key] = "\n".join(v[: ck.MAX_TEXT] for v in a.getlist(key)[: ck.MAX_ITEMS])
    return page(fmt, "checks/new.html", form=form, store_keys=[r.key for r in _refs()])


def _ref(key: str):
    ref = next((r for r in _refs() if r.key == key), None)
    if ref is None:
        abort(404, _("There is no %(store)s store here to keep checks beside.", store=key))
    return ref


def _refuse_read_only():
    if current_app.config["READ_ONLY"]:
        abort(403, _("The dashboard was started with --read-only: it writes nothing."))


@bp.post("/checks")
def create():
    """Save one check (form or JSON), then run it: the answer says whether it passes."""
    _refuse_read_only()
    values = form_values()
    fields = ("name", "message", "session", "messages", "must_recall", "must_not_recall", "must_not_contain")
    data = {k: values.get(k) for k in fields}
    ref = _ref(values.get("store") or "project")
    try:
        check = ck.add(ref, data)
    except ck.ChecksProblem as exc:
        abort(400, _("The check was not saved: %(reason)s", reason=str(exc)))
    run = run_checks()
    ck.record(_refs(), run)
    mine = next(r for r in run.results if r.check["id"] == check["id"])
    return answer(
        {"saved": True, "check": result_dict(mine)},
        201,
        to=url_for("checks.index") + "#check-" + check["id"],
        done={"check": check["id"]},
    )


@bp.post("/checks/<item_id>/delete")
def delete(item_id: str):
    _refuse_read_only()
    ref = _ref(form_values().get("store") or "project")
    try:
        gone = ck.remove(ref, item_id)
    except ck.ChecksProblem as exc:
        abort(400, str(exc))
    if not gone:
        abort(404, _("No check %(id)s in the %(store)s store's checks file.", id=item_id, store=ref.key))
    return answer({"deleted": item_id}, to=url_for("checks.index"))


# ---------------------------------------------------------------------------
# After a dashboard write: which checks changed
# ---------------------------------------------------------------------------
_QUIET = ("checks.", "language.", "static", "security.", "projects.")


def _watched() -> bool:
    endpoint = request.endpoint or ""
    return (
        request.method == "POST"
        and not endpoint.startswith(_QUIET)
        and any(ck.checks_path(r.path).is_file() for r in _refs())
    )


# The last results this process saw, per set of checks files: what "now fails" is said
# against when the agent writes (kept in memory: browsing writes nothing).  The sets served
# most recently, at most SEEN_KEPT; one forgotten falls back to the results in its files.
SEEN_KEPT = 16
_seen: OrderedDict[tuple[str, ...], dict[str, bool]] = OrderedDict()
_seen_lock = threading.Lock()


def _files_key() -> tuple[str, ...]:
    return tuple(str(ck.checks_path(r.path)) for r in _refs())


def _recall(files: tuple[str, ...]) -> dict[str, bool] | None:
    with _seen_lock:
        if files in _seen:
            _seen.move_to_end(files)
        return _seen.get(files)


def _remember(files: tuple[str, ...], states: dict[str, bool]) -> None:
    with _seen_lock:
        _seen[files] = states
        _seen.move_to_end(files)
        while len(_seen) > SEEN_KEPT:
            _seen.popitem(last=False)


def _moved_words(before: dict[str, bool], run: ck.Run) -> list[dict]:
    moved = ck.changed(before, run)
    _remember(_files_key(), run.states())
    for m in moved:
        m["text"] = (
            _("Check “%(name)s” now passes.", name=m["name"])
            if m["passed"]
            else _("Check “%(name)s” now fails.", name=m["name"])
        )
    return moved


def after_agent_wrote() -> list[str]:
    """For the live pulse, when the agent wrote: the checks it turned, in words.  Compared
    with the last results this process saw, else with those recorded in the files."""
    if not any(ck.checks_path(r.path).is_file() for r in _refs()):
        return []
    try:
        run = run_checks()
    except Exception:  # noqa: BLE001 - the pulse never fails over a check
        return []
    before = _recall(_files_key())
    if before is None:
        before = {
            r.check["id"]: r.check.get("last_result") == "pass"
            for r in run.results
            if r.check.get("last_result")
        }
        before.setdefault(ck.BUILTIN_ID, True)
    return [m["text"] for m in _moved_words(before, run) if m["id"] in before]


@bp.before_app_request
def _before_write():
    if _watched():
        try:
            run = run_checks()
            g.checks_before = (run.version, run.states())
        except Exception:  # noqa: BLE001 - a check that cannot run never blocks a write
            g.checks_before = None


@bp.after_app_request
def _after_write(response):
    """The one hook: a write that worked says which checks it changed — the header
    ``X-Checks-Changed`` (JSON: id, name, passed, text) on every answer, and for htmx the
    sentences added to the pinned status line — and records the results in the checks files."""
    stashed = g.pop("checks_before", None)
    if stashed is None or response.status_code >= 400:
        return response
    version, before = stashed
    try:
        run = run_checks()
        if run.version == version:  # a POST that only read (a dry run, a preview): no write here either
            return response
        ck.record(_refs(), run)
    except Exception:  # noqa: BLE001 - the write is done; a check file problem shows on /checks
        return response
    moved = _moved_words(before, run)
    if not moved:
        return response
    response.headers["X-Checks-Changed"] = json.dumps(moved)  # ASCII: \u escapes
    if response.mimetype == "text/html" and request.headers.get("HX-Request") == "true":
        said = [(m["text"], "ok" if m["passed"] else "bad") for m in moved]
        response.set_data(
            response.get_data(as_text=True) + render_template("partials/said_oob.html", added=said)
        )
    return response
