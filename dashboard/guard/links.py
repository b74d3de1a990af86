"""``agentao-memory-dashboard link``: a new one-time login link for a dashboard already running.

The printed link works once, so a second browser, or a browser whose cookie is
gone, needs another without a restart.  At start-up the server writes a *link
file* it owns, ``dashboard-link-<port>.json`` in its own folder (``folder()``; mode 0600, removed
when it stops): its pid, its address under the random prefix, and a key drawn
at this start (``Access.link_key``, never the access token).  The command reads
the file and signs a fresh nonce with that key; ``Access.use_code`` takes such a
code once, like a printed one.  Whoever can read the file is the user who started
the server (who could read its memory anyway); nothing travels over the network
to make a link, and a file left by a killed server names a dead pid and is skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import sys
from pathlib import Path
from urllib.parse import urlencode

PREFIX, SUFFIX = "dashboard-link-", ".json"
COMMAND = "agentao-memory-dashboard link"


def folder() -> Path:
    """Where link files live: the dashboard's own folder, never agentao's (``~/.agentao`` holds
    the person's memory, which starting a dashboard must not touch): the user's runtime
    folder when the system gives one, else ``~/.cache``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and Path(runtime).is_dir() else Path.home() / ".cache"
    return base / "agentao-memory-dashboard"


def sign(key: bytes, nonce: str) -> str:
    """The MAC a link code carries for ``nonce`` (the server checks it with the same key)."""
    return hmac.new(key, f"link|{nonce}".encode(), hashlib.sha256).hexdigest()


def write(port: int, base: str, key: bytes | None) -> Path:
    """Write this server's link file (0600, by rename so it is never seen half written)."""
    where = folder()
    where.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = where / f"{PREFIX}{port}{SUFFIX}"
    record = {"pid": os.getpid(), "base": base, "key": key.hex() if key else None}
    temp = where / f".{PREFIX}{port}-{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(record, f)
    os.replace(temp, path)
    return path


def remove(path: Path | None) -> None:
    if path is not None:
        try:
            path.unlink()
        except OSError:
            pass


def _alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge, but alive
    return True


def running(port: int | None = None) -> list[dict]:
    """The link files of dashboards still running (``port`` keeps one), newest first."""
    found = []
    for path in sorted(folder().glob(f"{PREFIX}*{SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True):
        if port is not None and path.name != f"{PREFIX}{port}{SUFFIX}":
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and isinstance(record.get("base"), str) and _alive(record.get("pid")):
            found.append(record)
    return found


def new_link(record: dict) -> str:
    """A one-time login link for the server of ``record`` (its address when it needs no login)."""
    if not record.get("key"):
        return record["base"] + "/"
    nonce = secrets.token_urlsafe(24)
    code = f"{nonce}.{sign(bytes.fromhex(record['key']), nonce)}"
    return f"{record['base']}/login?{urlencode({'code': code})}"


def run(argv: list[str], _) -> int:
    """The ``link`` command: print one new link per running dashboard (or the one on --port)."""
    parser = argparse.ArgumentParser(
        prog=COMMAND, description=_("Print a new one-time login link for a dashboard that is running.")
    )
    parser.add_argument("--port", type=int, help=_("the port of the dashboard, when several are running"))
    args = parser.parse_args(argv)
    servers = running(args.port)
    if not servers:
        print(
            _(
                "No dashboard is running for this user (start one with %(command)s).",
                command="agentao-memory-dashboard",
            ),
            file=sys.stderr,
        )
        return 1
    for record in servers:
        print(_("Open this link in your browser; it logs you in once: %(url)s", url=new_link(record)))
    return 0
