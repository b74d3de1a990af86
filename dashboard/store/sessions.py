"""agentao's saved conversations, read only: ``<project>/.agentao/sessions/*.json`` and
``<project>/.agentao/replays/*.jsonl``.

agentao 0.5.17 writes them (its ``embedding/sessions.py`` and ``replay/`` modules;
nothing here imports either):

* a **session file** is one JSON object per checkpoint — ``session_id``, ``title``
  (the first user message's opening words), ``created_at``, ``updated_at``, ``model``,
  ``active_skills`` and ``messages`` (chat messages: ``role``, ``content`` a string or a
  list of ``{"type": "text", "text": …}`` parts, an assistant's ``tool_calls``).  agentao
  keeps the ten newest (by file name) and ``agentao --resume`` loads one back into the
  model's context;
* a **replay file** ``<session>.<instance>.jsonl`` is one event per line — ``session_id``,
  ``instance_id``, ``seq``, ``ts``, ``kind`` (``replay_header`` first, carrying
  ``schema_version``; ``user_message``, ``memory_write``, tool events…) and ``payload``.

Every file is read whole up to ``MAX_BYTES`` and at most ``MAX_FILES`` of each folder
(newest first); anything else — a missing folder, a file too large, not JSON, not
agentao's shape, a newer replay schema, a link — is kept with a note saying why, and
never changed.  The text of a message is every string it holds, so a phone number in a
tool call's arguments counts as much as one in what the person typed.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask_babel import lazy_gettext as _l

from ..records import plain

SESSIONS = ("sessions", "*.json")
REPLAYS = ("replays", "*.jsonl")
MAX_FILES = 50  # of each folder; agentao keeps 10 sessions and (by default) 20 replays
MAX_BYTES = 8 << 20  # read of one file
MAX_TOTAL = 64 << 20  # read of all files of a project, at once
KNOWN_REPLAY = (1, 6)  # the newest replay schema agentao 0.5.17 writes

NOTES = {
    "too_large": _l("larger than the dashboard reads (8 MB): not read"),
    "not_json": _l("not valid JSON: not read"),
    "not_utf8": _l("not UTF-8 text: not read"),
    "foreign": _l("not in agentao's session format: not read"),
    "unreadable": _l("the dashboard may not read it"),
    "not_file": _l("not a plain file (a link, a folder…): left alone"),
    "newer": _l("written by a newer agentao (replay schema %(version)s): read as far as it is understood"),
    "malformed": _l("some lines are not valid JSON and were skipped"),
    "partial": _l("the last line is unfinished (agentao was stopped while writing): skipped"),
    "more_files": _l("more files than the dashboard reads: only the newest were read"),
    "over_budget": _l(
        "the dashboard read as many saved conversation bytes as it reads at once (64 MB) before this file: not read"
    ),
}


@dataclass(frozen=True)
class Message:
    """One message of a session file or one event of a replay: where it is and its text."""

    index: int  # position in ``messages``, or the line number (from 1) in a replay
    role: str  # the message's role, or the event's kind
    text: str  # every string it holds, one per line
    stamp: str = ""  # a replay event's ``ts``


@dataclass(frozen=True)
class AgentSave:
    """A ``save_memory`` call that a replay's ``memory_write`` event shows took effect.

    agentao records the call (``tool_started``: tool, args) and, once the turn's tools ran,
    ``memory_write`` (the memory version moved) under the same ``turn_id``; a call whose
    ``tool_completed`` says it failed is left out."""

    turn: int  # the turn's position in the replay, from 1
    line: int  # the memory_write event's line
    key: str
    value: str
    stamp: str


@dataclass
class SavedFile:
    """One file of either folder, as far as it could be read."""

    kind: str  # "session" or "replay"
    path: Path
    size: int = 0
    mtime: float = 0.0
    session_id: str = ""
    title: str = ""
    created_at: str = ""
    updated_at: str = ""
    messages: list[Message] = field(default_factory=list)
    note: str = ""  # a NOTES code when the file was not (fully) understood
    note_args: dict[str, str] = field(default_factory=dict)
    writable: bool = True
    agent_saves: list[AgentSave] = field(default_factory=list)  # a replay's confirmed saves

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def read(self) -> bool:
        """Whether its messages were read (a file with a blocking note has none)."""
        return self.note in ("", "newer", "malformed", "partial")

    def note_text(self) -> str:
        return str(NOTES[self.note]) % self.note_args if self.note else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "path": str(self.path),
            **plain(self, "size", "session_id", "title", "created_at", "updated_at"),
            "messages": len(self.messages),
            "note": self.note or None,
            "note_text": self.note_text() or None,
        }


@dataclass
class Saved:
    """Both folders of one project: the files (newest first) and what could not be listed."""

    root: Path
    sessions: list[SavedFile] = field(default_factory=list)
    replays: list[SavedFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # NOTES codes about a folder

    @property
    def files(self) -> list[SavedFile]:
        return self.sessions + self.replays

    def oldest(self) -> str:
        return min(
            (f.created_at or f.updated_at for f in self.files if f.created_at or f.updated_at), default=""
        )

    def newest(self) -> str:
        return max(
            (f.updated_at or f.created_at for f in self.files if f.updated_at or f.created_at), default=""
        )


def folders(root: Path) -> list[Path]:
    return [Path(root) / ".agentao" / sub for sub, _pattern in (SESSIONS, REPLAYS)]


def paths(root: Path) -> list[Path]:
    """Both folders and every file in them: what ``read_saved`` depends on (its held stamps)."""
    out = folders(root)
    for (_sub, pattern), folder in zip((SESSIONS, REPLAYS), out[:]):
        out += sorted(_listed(folder, pattern))
    return out


def read_saved(root: Path) -> Saved:
    """Both folders of the project at ``root``. Reads only; never raises on a file."""
    out = Saved(Path(root))
    budget = MAX_TOTAL
    for (sub, pattern), into in ((SESSIONS, out.sessions), (REPLAYS, out.replays)):
        folder = Path(root) / ".agentao" / sub
        paths = _listed(folder, pattern)
        if len(paths) > MAX_FILES:
            out.notes.append("more_files")
        for p in paths[:MAX_FILES]:
            f = read_file(p, "session" if sub == "sessions" else "replay", budget)
            budget -= f.size if f.note != "over_budget" else 0
            into.append(f)
    return out


def _listed(folder: Path, pattern: str) -> list[Path]:
    """The folder's files of ``pattern``, newest first (agentao's names sort by time)."""
    try:
        found = [p for p in folder.glob(pattern) if not p.name.endswith(".tmp")]
    except OSError:
        return []
    stamped = []
    for p in found:
        try:
            stamped.append((p.lstat().st_mtime, p.name, p))
        except OSError:
            continue
    return [p for _m, _n, p in sorted(stamped, reverse=True)]


def read_file(path: Path, kind: str, budget: int = MAX_TOTAL) -> SavedFile:
    f = SavedFile(kind, Path(path))
    try:
        st = os.lstat(path)
    except OSError:
        f.note = "unreadable"
        return f
    f.size, f.mtime = st.st_size, st.st_mtime
    f.writable = (
        bool(st.st_mode & 0o222) and os.access(path, os.W_OK) and os.access(Path(path).parent, os.W_OK)
    )
    if not stat.S_ISREG(st.st_mode):
        f.note = "not_file"
        return f
    if st.st_size > MAX_BYTES:
        f.note = "too_large"
        return f
    if st.st_size > budget:
        f.note = "over_budget"
        return f
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError:
        f.note = "unreadable"
        return f
    if len(raw) > MAX_BYTES:
        f.note = "too_large"
        return f
    (_session if kind == "session" else _replay)(f, raw)
    return f


def _session(f: SavedFile, raw: bytes) -> None:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        f.note = "not_utf8"
        return
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
        f.note = "not_json"
        return
    if not isinstance(data, dict) or not isinstance(data.get("messages", []), list):
        f.note = "foreign"
        return
    f.session_id = _str(data.get("session_id")) or f.path.stem
    f.title = _str(data.get("title"))
    f.created_at = _str(data.get("created_at"))
    f.updated_at = _str(data.get("updated_at"))
    for i, m in enumerate(data.get("messages", [])):
        role = _str(m.get("role")) if isinstance(m, dict) else ""
        f.messages.append(Message(i, role, "\n".join(strings(m))))


def _replay(f: SavedFile, raw: bytes) -> None:
    lines = raw.split(b"\n")
    bad = 0
    saves = _Saves(f.agent_saves)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            if n == len(lines) and not raw.endswith(b"\n"):
                f.note = f.note or "partial"
            else:
                bad += 1
            continue
        if not isinstance(event, dict):
            bad += 1
            continue
        kind = _str(event.get("kind"))
        payload = event.get("payload")
        f.session_id = f.session_id or _str(event.get("session_id"))
        saves.see(n, kind, event, payload)
        if kind == "replay_header" and isinstance(payload, dict):
            f.created_at = _str(payload.get("created_at"))
            version = _str(payload.get("schema_version"))
            if _newer(version):
                f.note, f.note_args = "newer", {"version": version}
            continue
        f.updated_at = _str(event.get("ts")) or f.updated_at
        text = "\n".join(strings(payload))
        if text:
            f.messages.append(Message(n, kind, text, _str(event.get("ts"))))
        if kind == "user_message" and not f.title and isinstance(payload, dict):
            f.title = _str(payload.get("content")).strip()[:60]
    if bad and not f.note:
        f.note = "malformed"
    if not f.session_id and "." in f.path.stem:
        f.session_id = f.path.stem.split(".", 1)[0]
    if not f.messages and not f.session_id:
        f.note = "foreign"


class _Saves:
    """Follows a replay's turns and its ``save_memory`` calls until ``memory_write`` confirms them."""

    def __init__(self, into: list[AgentSave]):
        self.into = into
        self.turns: dict[str, int] = {}
        self.calls: dict[str, dict[str, tuple[str, str]]] = {}  # turn_id -> call_id -> (key, value)

    def see(self, line: int, kind: str, event: dict[str, Any], payload: Any) -> None:
        turn = _str(event.get("parent_turn_id")) or _str(event.get("turn_id"))  # a subagent's: its parent's
        if not turn or not isinstance(payload, dict):
            return
        if kind in ("turn_started", "user_message") and turn not in self.turns and len(self.turns) < 100_000:
            self.turns[turn] = len(self.turns) + 1
        calls = self.calls.setdefault(turn, {})
        if kind == "tool_started" and payload.get("tool") == "save_memory":
            args = payload.get("args")
            if (
                isinstance(args, dict)
                and isinstance(args.get("key"), str)
                and isinstance(args.get("value"), str)
            ):
                calls[_str(payload.get("call_id")) or str(line)] = (args["key"], args["value"])
        elif kind == "tool_completed" and payload.get("status", "ok") != "ok":
            calls.pop(_str(payload.get("call_id")), None)
        elif kind == "memory_write" and turn in self.turns:
            stamp = _str(event.get("ts"))
            self.into.extend(AgentSave(self.turns[turn], line, k, v, stamp) for k, v in calls.values())
            calls.clear()


def _newer(version: str) -> bool:
    try:
        parts = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        return bool(version)
    return parts > KNOWN_REPLAY


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string inside a JSON value (keys left out), depth-first, bounded in depth."""
    if isinstance(value, str):
        if value:
            yield value
    elif depth < 32 and isinstance(value, dict):
        for v in value.values():
            yield from strings(v, depth + 1)
    elif depth < 32 and isinstance(value, list):
        for v in value:
            yield from strings(v, depth + 1)
