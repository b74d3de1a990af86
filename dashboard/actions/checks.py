"""Memory checks: saved questions that prove what the agent will and will not bring up.

A check is a message (optionally with earlier messages and a session id, as the preview takes
them) and what must follow: memories that must reach the model (``<memory-context>`` or
``<memory-stable>``), memories that must not, texts in neither block.  The preview engine
itself evaluates it.  Checks live in ``memory-checks.json`` beside their store, a file this
dashboard owns (format: README "Memory checks", ``docs/schemas/memory-checks.schema.json``).
No Flask: the screen, the command line and the after-write hook all call :func:`run_all`.
"""

from __future__ import annotations

import difflib
import json
import os
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import clock
from ..engine import preview, tokenizer_for
from ..findings.rules import scan_text

if TYPE_CHECKING:
    from ..preview_source import Snapshot
    from ..records import Memory
    from ..store import StoreRef

FILE_NAME = "memory-checks.json"
FORMAT = "agentao-memory-checks/1"
MAX_FILE_BYTES = 2_000_000  # a hand-edited file is read only up to this size
MAX_CHECKS = 200  # each check is one preview run
MAX_TEXT = 4000  # the message, as the preview takes it
MAX_ITEMS = 50  # per expectation list
MAX_MESSAGES = 10  # agentao reads hints from the last 10 messages
BUILTIN_ID = "builtin-stable-private"
EXPECTS = ("must_recall", "must_not_recall", "must_not_contain")
# A memory tied at the recall cut: recalled here but agentao may leave it out, or the other way.
TIE_LEFT_OUT, TIE_RECALLED = "tie_may_be_left_out", "tie_may_be_recalled"
_writing = threading.Lock()  # one read-modify-write of a checks file at a time (this process)


class ChecksProblem(Exception):
    """The checks file cannot be read or the check is not valid; the message says why."""


def checks_path(store_path: Path) -> Path:
    """The checks file beside a store file (``.agentao/memory.db`` -> ``.agentao/memory-checks.json``)."""
    return Path(store_path).parent / FILE_NAME


def _strings(value: object, name: str, limit: int = MAX_ITEMS) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):  # a form's textarea: one item a line
        value = value.splitlines()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ChecksProblem(f"'{name}' must be a list of strings")
    out = [v.strip()[:MAX_TEXT] for v in value if v.strip()]
    if len(out) > limit:
        raise ChecksProblem(f"'{name}' holds {len(out)} items; at most {limit}")
    return list(dict.fromkeys(out))


def validate(data: dict[str, Any], *, keep_id: bool = False) -> dict[str, Any]:
    """A check as stored, from a form, a script's JSON or the file; raises ChecksProblem."""
    if not isinstance(data, dict):
        raise ChecksProblem("a check must be a JSON object")
    name = data.get("name")
    message = data.get("message")
    if not isinstance(name, str) or not name.strip():
        raise ChecksProblem("'name' is required")
    if not isinstance(message, str) or not message.strip():
        raise ChecksProblem("'message' is required")
    if len(name) > 200 or len(message) > MAX_TEXT:
        raise ChecksProblem(f"'name' is at most 200 characters and 'message' at most {MAX_TEXT}")
    session = data.get("session") or ""
    if not isinstance(session, str) or len(session) > 200:
        raise ChecksProblem("'session' must be a session id (text, at most 200 characters)")
    check: dict[str, Any] = {
        "id": data.get("id") if keep_id and isinstance(data.get("id"), str) else new_id(),
        "name": name.strip(),
        "message": message,
        "session": session.strip(),
        "messages": _strings(data.get("messages"), "messages", MAX_MESSAGES),
        **{k: _strings(data.get(k), k) for k in EXPECTS},
    }
    if not any(check[k] for k in EXPECTS):
        raise ChecksProblem(
            "a check needs at least one expectation: 'must_recall', 'must_not_recall' or 'must_not_contain'"
        )
    both = set(map(str.casefold, check["must_recall"])) & set(map(str.casefold, check["must_not_recall"]))
    if both:
        raise ChecksProblem(
            "a memory cannot be both in 'must_recall' and 'must_not_recall': " + ", ".join(sorted(both))
        )
    if keep_id:
        check["created_at"] = data.get("created_at") if isinstance(data.get("created_at"), str) else ""
        last = data.get("last_pass")
        if isinstance(last, dict) and all(
            isinstance(last.get(k), str) for k in ("at", "stable_block", "context_block")
        ):
            check["last_pass"] = {k: last[k] for k in ("at", "stable_block", "context_block")}
        if data.get("last_result") in ("pass", "fail"):
            check["last_result"] = data["last_result"]
    return check


def new_id() -> str:
    return "c-" + secrets.token_hex(4)


def load(path: Path) -> list[dict[str, Any]]:
    """The checks in one file ([] when there is none); raises ChecksProblem when unreadable."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ChecksProblem(f"{path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ChecksProblem(f"{path} is larger than {MAX_FILE_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ChecksProblem(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("checks"), list):
        raise ChecksProblem(f'{path} is not a checks file (expected "format": "{FORMAT}")')
    if len(data["checks"]) > MAX_CHECKS:
        raise ChecksProblem(f"{path} holds more than {MAX_CHECKS} checks")
    out = []
    for n, item in enumerate(data["checks"], 1):
        try:
            out.append(validate(item, keep_id=True))
        except ChecksProblem as exc:
            raise ChecksProblem(f"{path}: check {n}: {exc}") from None
    return out


def save(path: Path, checks: list[dict[str, Any]]) -> None:
    """Write the file atomically (a temporary file, then a rename) into the store's own folder,
    which must exist: only agentao creates it.  Never larger than :func:`load` reads."""
    if len(checks) > MAX_CHECKS:
        raise ChecksProblem(f"at most {MAX_CHECKS} checks per file")
    folder = Path(path).parent
    if not folder.is_dir():
        raise ChecksProblem(f"{folder} does not exist: agentao has not created this store yet")
    body = (json.dumps({"format": FORMAT, "checks": checks}, ensure_ascii=False, indent=2) + "\n").encode()
    if len(body) > MAX_FILE_BYTES:
        raise ChecksProblem(
            f"{path} would be larger than {MAX_FILE_BYTES} bytes, more than the dashboard reads: "
            "delete a check or make this one shorter"
        )
    fd, tmp = tempfile.mkstemp(prefix=".memory-checks.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- evaluation ------------------------------------------------------------------------
@dataclass
class Result:
    """One check run: pass or fail, the reasons as codes with their values, the blocks."""

    check: dict[str, Any]
    store: str  # the file the check lives in: "project" or "user"
    passed: bool
    reasons: list[dict[str, str]] = field(default_factory=list)  # {"code": …, "memory"/"text": …}
    stable_block: str = ""
    context_block: str = ""
    recalled: list[str] = field(default_factory=list)  # keys in either block
    builtin: bool = False
    ran: bool = True  # False: left out when the time budget ran out
    tie: bool = False  # neither pass nor fail: agentao's order among equal scores decides (``TIE_CODES``)

    @property
    def diff(self) -> dict[str, Any] | None:
        """The blocks' line differences since the check last passed (None: never recorded)."""
        last = self.check.get("last_pass")
        if not last:
            return None
        return {
            "since": last["at"],
            "stable": line_diff(last["stable_block"], self.stable_block),
            "context": line_diff(last["context_block"], self.context_block),
        }

    def to_dict(self) -> dict[str, Any]:
        c = self.check
        return {
            "id": c["id"],
            "name": c["name"],
            "store": self.store,
            "builtin": self.builtin,
            "message": c.get("message", ""),
            "session": c.get("session", ""),
            **{k: c.get(k, []) for k in ("messages", *EXPECTS)},
            "passed": self.passed,
            "ran": self.ran,
            "tie": self.tie,
            "reasons": self.reasons,
            "recalled": self.recalled,
            "stable_block": self.stable_block,
            "context_block": self.context_block,
            "last_pass_at": (c.get("last_pass") or {}).get("at"),
            "diff": self.diff,
        }


def line_diff(before: str, after: str) -> list[str]:
    """Changed lines only: '-' before, '+' after (empty when the block is the same)."""
    a, b = before.splitlines(), after.splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out += ["-" + line for line in a[i1:i2]] + ["+" + line for line in b[j1:j2]]
    return out


def _names(memory: Memory) -> set[str]:
    return {memory.key_normalized.casefold(), memory.title.casefold()}


def _label(memory: Memory) -> str:
    return memory.key_normalized or memory.title


def _find(reached: list[Memory], wanted: str) -> Memory | None:
    w = wanted.casefold()
    return next((m for m in reached if w in _names(m)), None)


def evaluate(check: dict[str, Any], store: str, snap: Snapshot, cjk: str, now: datetime) -> Result:
    """Run one check through the preview engine, as the ``/preview`` page runs its message."""
    p = preview(
        snap.project,
        snap.user,
        snap.summaries,
        query=check["message"],
        messages=[{"role": "user", "content": m} for m in check.get("messages", [])],
        session_id=check.get("session") or None,
        now=now,
        cache=snap.cache,
        tokenizer=tokenizer_for(cjk),
    )
    stable = [s.memory for s in p.stable_entries if s.shown]
    context = [s.memory for s in p.recall.top[: p.recall.kept]]  # the block's facts, in order
    # Recalled here or not, by agentao's order among equal scores (it changes per process).
    moving = [c.memory for c in p.candidates if c.varies]
    reasons: list[dict[str, str]] = []
    ties: list[dict[str, str]] = []

    def tie(name: str) -> bool:
        """Whether ``name``'s recall depends on a tie; if so the tie is noted (its code says which way)."""
        m = _find(moving, name)
        if m is not None:
            code = TIE_LEFT_OUT if any(x.id == m.id for x in context) else TIE_RECALLED
            ties.append({"code": code, "memory": _label(m)})
        return m is not None

    for wanted in check.get("must_recall", []):
        if _find(stable, wanted) is None and not tie(wanted) and _find(context, wanted) is None:
            near = next((c for c in p.candidates if wanted.casefold() in _names(c.memory)), None)
            known = near is not None or any(wanted.casefold() in _names(m) for m in p.pool)
            reasons.append(
                {
                    "code": ("not_recalled_" + near.mark)
                    if near is not None
                    else ("not_recalled" if known else "no_such_memory"),
                    "memory": wanted,
                }
            )
    for unwanted in check.get("must_not_recall", []):
        if (m := _find(stable, unwanted)) is not None:
            reasons.append({"code": "in_stable", "memory": _label(m)})
        elif not tie(unwanted) and (m := _find(context, unwanted)) is not None:
            reasons.append({"code": "recalled", "memory": _label(m)})
    blocks = (("text_in_stable", p.stable_block, stable), ("text_in_context", p.context_block, context))

    def holds(m: Memory, t: str) -> bool:
        return t in (m.title + "\n" + m.content).casefold()

    for text in check.get("must_not_contain", []):
        t = text.casefold()
        for code, block, shown in blocks:
            if t in block.casefold():
                holders = [m for m in shown if holds(m, t)]
                if code == "text_in_context" and holders and all(m.id in p.recall.varies for m in holders):
                    ties.append({"code": TIE_LEFT_OUT, "text": text, "memory": _label(holders[0])})
                    continue
                holder = holders[0] if holders else None
                reasons.append({"code": code, "text": text, "memory": _label(holder) if holder else ""})
            elif code == "text_in_context":
                now_in = {m.id for m in context}
                out = next((m for m in moving if m.id not in now_in and holds(m, t)), None)
                if out is not None:  # not in the block now, but a memory holding it may be recalled
                    ties.append({"code": TIE_RECALLED, "text": text, "memory": _label(out)})
    return Result(
        check,
        store,
        not reasons and not ties,
        reasons + ties,
        p.stable_block,
        p.context_block,
        [_label(m) for m in stable + context],
        tie=bool(ties) and not reasons,
    )


def builtin(snap: Snapshot) -> Result:
    """The check every store gets: nothing in ``<memory-stable>`` (in every prompt) that
    Findings flags as a secret or personal data."""
    from ..engine import stable_view

    block, fitted = stable_view(snap.project, snap.user, snap.summaries, cache=snap.cache)
    reasons: list[dict[str, str]] = []
    for s in fitted.shown():
        m = s.memory
        for f in scan_text(m.title, "title") + scan_text(m.content, "content"):
            if f.category in ("secret", "personal"):
                reasons.append(
                    {
                        "code": "private_in_stable",
                        "memory": _label(m),
                        "rule": f.rule,
                        "category": f.category,
                        "text": f.excerpt,
                    }
                )
    return Result(
        {"id": BUILTIN_ID, "name": "", "message": "", **{k: [] for k in EXPECTS}},
        "builtin",
        not reasons,
        reasons,
        block,
        "",
        [_label(s.memory) for s in fitted.shown()],
        builtin=True,
    )


@dataclass
class Run:
    """Every check of the shown stores, run once."""

    results: list[Result]
    problems: dict[str, str]  # store key -> why its checks file could not be read
    files: dict[str, str]  # store key -> the checks file's path
    version: tuple[object, ...] = ()  # the files' snapshot the run read (set by the caller)

    @property
    def failed(self) -> int:
        return sum(r.ran and not r.passed and not r.tie for r in self.results)

    @property
    def tied(self) -> int:
        """Checks neither passing nor failing: agentao's order among equal scores decides."""
        return sum(r.ran and r.tie for r in self.results)

    @property
    def not_run(self) -> int:
        return sum(not r.ran for r in self.results)

    def states(self) -> dict[str, bool]:
        """Pass or fail of each check that has one (not run and tied ones have neither)."""
        return {r.check["id"]: r.passed for r in self.results if r.ran and not r.tie}


def run_all(
    refs: list[StoreRef],
    snap: Snapshot,
    cjk: str,
    time_limit: float | None = None,
) -> Run:
    """The built-in check, then every check in each shown store's checks file, in file order;
    with ``time_limit`` (seconds), those not started by then are listed as not run."""
    deadline = None if time_limit is None else time.monotonic() + time_limit
    now = clock.now().replace(microsecond=0)
    results: list[Result] = [builtin(snap)]
    problems: dict[str, str] = {}
    files: dict[str, str] = {}
    for ref in refs:
        path = checks_path(ref.path)
        if str(path) in files.values():  # both stores in one folder: one file, run once
            continue
        files[ref.key] = str(path)
        try:
            checks = load(path)
        except ChecksProblem as exc:
            problems[ref.key] = str(exc)
            continue
        for c in checks:
            if deadline is not None and time.monotonic() > deadline:
                results.append(Result(c, ref.key, False, [{"code": "not_run"}], ran=False))
            else:
                results.append(evaluate(c, ref.key, snap, cjk, now))
    return Run(results, problems, files)


def changed(before: dict[str, bool], after: Run) -> list[dict[str, Any]]:
    """Checks whose pass/fail differs between two runs (a new check counts as changed)."""
    return [
        {"id": r.check["id"], "name": r.check["name"] or r.check["id"], "passed": r.passed}
        for r in after.results
        if r.ran and not r.tie and before.get(r.check["id"]) != r.passed
    ]


def record(refs: list[StoreRef], run: Run) -> None:
    """Keep each passing check's blocks (``last_pass``) and every result (``last_result``) in
    its file, so the difference since a check last passed survives a restart.  Called only
    after a dashboard write or a check's save — browsing writes nothing."""
    by_store: dict[str, dict[str, Result]] = {}
    for r in run.results:
        if not r.builtin and r.ran and not r.tie:  # a tie is neither a pass nor a fail to keep
            by_store.setdefault(r.store, {})[r.check["id"]] = r
    stamp = clock.now().replace(microsecond=0).isoformat()
    with _writing:
        _record(refs, by_store, stamp)


def _record(refs: list[StoreRef], by_store: dict[str, dict[str, Result]], stamp: str) -> None:
    for ref in refs:
        mine = by_store.get(ref.key)
        if not mine:
            continue
        path = checks_path(ref.path)
        checks = load(path)
        before = json.dumps(checks)
        for c in checks:
            if (r := mine.get(c["id"])) is None:
                continue
            blocks = {"stable_block": r.stable_block, "context_block": r.context_block}
            last = c.get("last_pass") or {}
            if r.passed and {k: last.get(k) for k in blocks} != blocks:
                c["last_pass"] = {"at": stamp, **blocks}
            c["last_result"] = "pass" if r.passed else "fail"
        if json.dumps(checks) != before:
            try:
                save(path, checks)
            except ChecksProblem:  # the blocks would make the file too large to read back:
                pass  # it keeps the checks as they were, readable


def add(ref: StoreRef, data: dict[str, Any]) -> dict[str, Any]:
    """Validate and append one check to the store's file; the stored check is returned."""
    check = validate(data)
    check["created_at"] = clock.now().replace(microsecond=0).isoformat()
    path = checks_path(ref.path)
    with _writing:
        checks = load(path)
        if len(checks) >= MAX_CHECKS:
            raise ChecksProblem(f"{path} already holds {MAX_CHECKS} checks")
        save(path, checks + [check])
    return check


def remove(ref: StoreRef, check_id: str) -> bool:
    """Remove one check from the store's file; False when it holds no such check."""
    path = checks_path(ref.path)
    with _writing:
        checks = load(path)
        kept = [c for c in checks if c["id"] != check_id]
        if len(kept) == len(checks):
            return False
        save(path, kept)
    return True
