"""What agentao's saved conversations hold about the person. No Flask.

The files are read by ``store.sessions``; here Findings' own secret and
personal-data rules (``findings.rules.scan_text``) run over every message, and
each finding names the file and the message it is in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..findings.rules import Finding, scan_text
from ..records import plain
from ..store.sessions import Message, Saved, SavedFile, folders, read_saved

ABOUT = ("personal", "secret")  # the findings that are about the person


@dataclass(frozen=True)
class Hit:
    """One finding in one message of one saved file."""

    file: SavedFile
    message: Message
    finding: Finding

    @property
    def span(self) -> str:
        return self.message.text[self.finding.start : self.finding.end]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file.name,
            **plain(self.file, "kind", "session_id"),
            "message": self.message.index,
            "role": self.message.role,
            **plain(self.finding, "rule", "category", "excerpt"),
        }


def hits(saved: Saved) -> list[Hit]:
    """Every secret and personal-data finding in every message read, newest file first."""
    out = []
    for f in saved.files:
        for m in f.messages:
            for finding in scan_text(m.text, "message"):
                if finding.category in ABOUT:
                    out.append(Hit(f, m, finding))
    return out


def counts(saved: Saved, found: list[Hit]) -> dict[str, Any]:
    """How many saved conversations and replays there are, how old, and how many hold something
    about the person."""
    holding = {h.file.path for h in found}
    return {
        "sessions": len(saved.sessions),
        "replays": len(saved.replays),
        "oldest": saved.oldest(),
        "newest": saved.newest(),
        "holding": len(holding),
        "conversations_holding": len({h.file.session_id or h.file.name for h in found}),
        "findings": len(found),
        "unread": sum(1 for f in saved.files if not f.read),
    }


# -- forgetting: every copy of a text in the saved conversations ---------------------------

REMOVED = "[removed]"  # what stands where an erased text was, in a redacted message


@dataclass
class FilePlan:
    """What a forget does to one saved file: delete it whole, redact some messages, or keep it."""

    file: SavedFile
    action: str  # "delete" | "redact" | "keep"
    messages: tuple[int, ...] = ()  # the messages (or replay lines) redacted

    def to_dict(self) -> dict[str, Any]:
        return {**self.file.to_dict(), "action": self.action, "redacted": list(self.messages)}


def targets(found: list[Hit], row_texts: Iterable[str] = ()) -> list[str]:
    """The texts to erase from the saved conversations: what Findings flags in them (personal
    data, secrets) and the texts of the rows the purge erases, longest first."""
    texts = {h.span for h in found} | {t for t in row_texts if t}
    return sorted((t for t in texts if t.strip()), key=lambda t: (-len(t), t))


def plan_files(
    saved: Saved, texts: list[str], delete_sessions: Iterable[str] = (), everything: bool = False
) -> list[FilePlan]:
    """Per file, what goes: the whole file (``everything``, or a conversation forgotten whole),
    or only the messages holding one of ``texts``; a file it could not read stays as it is."""
    whole = set(delete_sessions)
    out = []
    for f in saved.files:
        if everything or (f.session_id and f.session_id in whole):
            out.append(FilePlan(f, "delete"))
        elif f.read:
            hit = tuple(m.index for m in f.messages if any(t in m.text for t in texts))
            out.append(FilePlan(f, "redact" if hit else "keep", hit))
        else:
            out.append(FilePlan(f, "keep"))
    return out


def goes(plans: list[FilePlan]) -> list[FilePlan]:
    return [p for p in plans if p.action != "keep"]


@dataclass
class FileResult:
    """What became of one saved file, checked on its bytes afterwards."""

    name: str
    path: str
    kind: str
    action: str
    status: str = ""  # "erased" (deleted or redacted, nothing found) | "still holds" | "kept"
    reason: str = ""  # why a file was not changed: "permission", "changed", "gone", "error"
    redacted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            **plain(self, "name", "path", "kind", "action", "status"),
            "reason": self.reason or None,
            "redacted": self.redacted,
        }


def erase(
    root: Path, plans: list[FilePlan], texts: list[str], progress: Callable[..., None] = lambda *a: None
) -> list[FileResult]:
    """Carry out ``plans`` (re-reading each file first), then scan the bytes of every file in
    both folders for every text.  A file it could not change, or that changed meanwhile, is
    reported as still holding the text when the scan finds it there, never as erased."""
    results = []
    for p in plans:
        r = FileResult(p.file.name, str(p.file.path), p.file.kind, p.action)
        if p.action == "delete":
            r.reason = _delete(p.file)
        elif p.action == "redact":
            r.reason, r.redacted = _redact(p.file, texts)
        results.append(r)
    progress("saved conversations", None)
    _verify(root, results, texts)
    return results


def erased(
    root: Path, plans: list[FilePlan], texts: list[str], progress: Callable[..., None] = lambda *a: None
) -> dict[str, Any]:
    """``erase`` as a job's result: what became of each file, and (``saved_again``, kept in this
    process only, never shown) what a retry does again: the texts, and the files deleted whole."""
    deleted = tuple(str(p.file.path) for p in plans if p.action == "delete")
    return {"saved_files": erase(root, plans, texts, progress), "saved_again": (root, tuple(texts), deleted)}


def again(root: Path, texts: Iterable[str], deleted: Iterable[str]) -> tuple[Path, list[FilePlan], list[str]]:
    """A retry's share: the folders read again, each file the first run deleted deleted again,
    every other file redacted of the texts it still holds."""
    whole, texts = set(deleted), list(texts)
    plans = [
        FilePlan(p.file, "delete") if str(p.file.path) in whole else p
        for p in plan_files(read_saved(root), texts)
    ]
    return root, plans, texts


def _unchanged(f: SavedFile) -> str:
    try:
        st = os.lstat(f.path)
    except FileNotFoundError:
        return "gone"
    if (st.st_size, st.st_mtime) != (f.size, f.mtime):
        return "changed"
    if not may_change(f.path, st.st_mode):
        return "permission"
    return ""


def may_change(path: Path, mode: int) -> bool:
    """Whether the dashboard may rewrite the file: writable for this process, by its mode bits
    too (a file its owner made read-only stays so, even for root), in a folder it may write."""
    return bool(mode & 0o222) and os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _delete(f: SavedFile) -> str:
    try:
        if not may_change(f.path, os.lstat(f.path).st_mode):
            return "permission"
    except FileNotFoundError:
        return ""
    try:
        if open_elsewhere(f.path):
            os.truncate(f.path, 0)  # agentao's open handle keeps the inode: empty it, not just its name
        os.unlink(f.path)
    except FileNotFoundError:
        return ""
    except PermissionError:
        return "permission"
    except OSError:
        return "error"
    return ""


def _redact(f: SavedFile, texts: list[str]) -> tuple[str, int]:
    why = _unchanged(f)
    if why:
        return why, 0
    try:
        raw = f.path.read_bytes()
    except PermissionError:
        return "permission", 0
    except OSError:
        return "error", 0
    try:
        new, n = (_redact_session if f.kind == "session" else _redact_replay)(raw, texts)
    except ValueError:
        return "changed", 0
    if n:
        why = _in_place(f, new) if open_elsewhere(f.path) else _replace(f, new)
    return why, n


def _scrub(value: Any, texts: list[str]) -> Any:
    """``value`` with every text replaced by REMOVED in each of its strings (keys kept).  A loop,
    not recursion: a line nested as deeply as ``json.loads`` reads is scrubbed too."""

    def copy(v: Any) -> Any:
        if isinstance(v, str):
            for t in texts:
                if t in v:
                    v = v.replace(t, REMOVED)
            return v
        out: Any
        if isinstance(v, dict):
            out = {}
        elif isinstance(v, list):
            out = [None] * len(v)
        else:
            return v
        todo.append((v, out))
        return out

    todo: list[tuple[Any, Any]] = []
    top = copy(value)
    while todo:
        source, out = todo.pop()
        for k, v in source.items() if isinstance(source, dict) else enumerate(source):
            out[k] = copy(v)
    return top


def _escaped(texts: list[str]) -> list[str]:
    """The texts as they may sit inside a string that is itself JSON (a tool call's arguments)."""
    out = list(texts)
    for t in texts:
        for form in (json.dumps(t, ensure_ascii=False)[1:-1], json.dumps(t)[1:-1]):
            if form not in out:
                out.append(form)
    return out


def _redact_session(raw: bytes, texts: list[str]) -> tuple[bytes, int]:
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise ValueError("not a session")
    forms = _escaped(texts)
    n, changed = 0, set()
    for i, m in enumerate(data["messages"]):
        clean = _scrub(m, forms)
        if clean != m:
            data["messages"][i], n = clean, n + 1
            changed.add(i)
    title = data.get("title")
    if isinstance(title, str):
        # agentao titles a session with its first user message's opening words.
        first = next(
            (i for i, m in enumerate(data["messages"]) if isinstance(m, dict) and m.get("role") == "user"),
            None,
        )
        clean_title = _title_of(data["messages"][first]) if first in changed else _scrub(title, forms)
        if clean_title != title:
            data["title"], n = clean_title, max(n, 1)
    # As agentao writes it (indent 2, UTF-8), so agentao reads and resumes it as before.
    return json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"), n


def _title_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    text = content.strip() if isinstance(content, str) else ""
    return text[:60] + ("…" if len(text) > 60 else "")


def _redact_replay(raw: bytes, texts: list[str]) -> tuple[bytes, int]:
    forms = _escaped(texts)
    out, n = [], 0
    for line in raw.split(b"\n"):
        if not any(t.encode("utf-8") in line for t in forms):
            out.append(line)
            continue
        n += 1
        try:
            event = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            continue  # an unfinished, damaged or too deeply nested line holding the text: dropped whole
        out.append(json.dumps(_scrub(event, forms), ensure_ascii=False).encode("utf-8"))
    return b"\n".join(out), n


def _replace(f: SavedFile, data: bytes) -> str:
    """Write ``data`` beside the file and rename it over the file (atomic), keeping its
    permissions and times; refused when the file moved since it was read."""
    tmp = f.path.with_name(f.path.name + ".dashboard-tmp")
    try:
        st = os.stat(f.path)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, st.st_mode & 0o7777)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, st.st_mode & 0o7777)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        if _unchanged(f):
            os.unlink(tmp)
            return "changed"
        os.replace(tmp, f.path)
    except PermissionError:
        _drop(tmp)
        return "permission"
    except OSError:
        _drop(tmp)
        return "error"
    return ""


_FDS_LOOKED_AT = 200_000  # a bound on the descriptors read under /proc


def open_elsewhere(path: Path) -> bool:
    """Whether another process of this user holds ``path`` open (agentao appending to a replay
    while its conversation goes on), from ``/proc/<pid>/fd``; False where there is no /proc."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    me, looked = str(os.getpid()), 0
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit() and p != me]
    except OSError:
        return False
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            looked += 1
            if looked > _FDS_LOOKED_AT:
                return False
            try:
                held = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if (held.st_dev, held.st_ino) == (st.st_dev, st.st_ino):
                return True
    return False


def _in_place(f: SavedFile, data: bytes) -> str:
    """Write ``data`` over the file itself, same inode, for a file another process holds open:
    renaming a copy over it would leave that process writing on into the old, unlinked inode,
    with the text in it and out of reach of the byte check.  agentao appends (``O_APPEND``), so
    its next line lands after ``data``; a line it appended since the read is kept after it."""
    try:
        st = os.stat(f.path)
        if _unchanged(f):
            return "changed"
        fd = os.open(f.path, os.O_RDWR)
        try:
            late = os.pread(fd, 1 << 20, f.size)  # appended since the file was read
            os.pwrite(fd, data + late, 0)
            os.ftruncate(fd, len(data) + len(late))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.utime(f.path, ns=(st.st_atime_ns, st.st_mtime_ns))
    except PermissionError:
        return "permission"
    except OSError:
        return "error"
    return ""


def _drop(p: Path) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


def _verify(root: Path, results: list[FileResult], texts: list[str]) -> None:
    from . import diskscan  # numpy: loaded by the first scan, not by every start (RSS)

    paths = [
        p for folder in folders(root) if folder.is_dir() for p in sorted(folder.iterdir()) if p.is_file()
    ]
    hits, _scanned = diskscan.scan(paths, _escaped(texts)) if texts and paths else ({}, [])
    holding = {path for h in hits.values() for path in h.files}
    named = {r.path for r in results}
    for r in results:
        gone = not Path(r.path).exists()
        if r.path in holding:
            r.status = "still holds"
        elif r.action == "keep":
            r.status = "kept"
        elif r.reason and not gone:
            r.status = "still holds" if r.action == "delete" else "kept"
        else:
            r.status = "erased"
    for path in sorted(holding - named):
        results.append(FileResult(Path(path).name, path, "other", "keep", "still holds", "not read"))
