"""The real command line as a server on a free port, and its login: for the tests
that need a running server and for the bench scripts (bench/load.py) that time one.
"""

from __future__ import annotations

import http.client
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]


def start_server(project: Path, user_db: Path, threads: int):
    """The real CLI; returns (process, port, token).  The token is ours, passed in the
    environment (not in ps): the printed URL carries only a one-time code."""
    token = secrets.token_urlsafe(32)
    log = open(project.parent / "server.log", "w")  # noqa: SIM115 (the server writes it while it runs)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dashboard",
            "--project",
            str(project),
            "--user-db",
            str(user_db),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--threads",
            str(threads),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env={**os.environ, "AGENTAO_DASHBOARD_TOKEN": token},
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if m:
            return proc, int(m.group(1)), token
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"the server did not start; see {project.parent / 'server.log'}")


def login(port: int, token: str) -> str:
    """The login form's POST (the token in the body, never in a URL): 303 + the cookie.

    The cookie's Path is the server's random prefix; http.client sends it on any
    path, and the server answers un-prefixed paths too, so the bench's URLs stay plain.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(
        "POST",
        "/login",
        urlencode({"token": token}),
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{port}"},
    )
    r = conn.getresponse()
    r.read()
    conn.close()
    assert r.status == 303, r.status
    return r.getheader("Set-Cookie").split(";")[0]
