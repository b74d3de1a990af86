"""Getting in (#31): the start-up line says the link works once and how to get another; the
bare address and a used link answer a page that says how; ``agentao-memory-dashboard link``
prints a new one-time link for the server that is running, without a restart."""

from __future__ import annotations

import http.client
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]


def links_folder(home):
    """Where a server started with HOME=home keeps its link file (never agentao's ~/.agentao)."""
    return home / ".cache" / "agentao-memory-dashboard"


def start(seeded, home):
    env = {**os.environ, "HOME": str(home), "LANG": "C.UTF-8"}
    env.pop("XDG_RUNTIME_DIR", None)  # the link file then goes under HOME/.cache
    args = ["--project", str(seeded.project_dir), "--user-db", str(seeded.user_db), "--port", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    deadline = time.time() + 30
    while time.time() < deadline and not any("Ctrl+C" in line for line in lines):
        lines.append(proc.stdout.readline())
    threading.Thread(target=lambda: [*proc.stdout], daemon=True).start()
    return proc, env, lines


def get(url, headers=None):
    m = re.match(r"http://127\.0\.0\.1:(\d+)(/\S*)", url)
    conn = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=10)
    conn.request("GET", m.group(2), headers=headers or {})
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    return r, body


def link_command(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "dashboard", "link", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_new_link_for_the_running_server(seeded, tmp_path):
    proc, env, lines = start(seeded, tmp_path)
    try:
        text = "".join(lines)
        assert "it logs you in once" in text and "agentao-memory-dashboard link" in text, text
        first = re.search(r"http://\S+/login\?code=\S+", text).group(0)
        port = re.search(r":(\d+)/", first).group(1)
        [file] = links_folder(tmp_path).glob("dashboard-link-*.json")
        assert not (tmp_path / ".agentao").exists()  # agentao's folder is the person's: untouched
        assert file.name == f"dashboard-link-{port}.json"
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert set(json.loads(file.read_text())) == {"pid", "base", "key"}  # a key of its own, not the token

        # The printed link works once; opened again it says how to get a new one.
        assert get(first)[0].status == 303
        used, body = get(first)
        page = BeautifulSoup(body, "html.parser")
        assert used.status == 403 and "already been used" in page.select_one(".error-message").text
        assert page.select_one("#new-link code").text == "agentao-memory-dashboard link"
        assert page.select_one("link[rel=stylesheet]")["href"].endswith("/static/app.css")

        # The bare address (no random path, so no cookie) says the same, styled.
        bare, body = get(f"http://127.0.0.1:{port}/")
        page = BeautifulSoup(body, "html.parser")
        assert bare.status == 403 and page.select_one("#new-link code")
        sheet, css = get(f"http://127.0.0.1:{port}" + page.select_one("link[rel=stylesheet]")["href"])
        assert sheet.status == 200 and "body.denied" in css

        # The command prints a new link for this server, which logs in once.
        made = link_command(env)
        assert made.returncode == 0, made.stderr
        fresh = re.search(r"http://\S+/login\?code=\S+", made.stdout).group(0)
        assert fresh != first and fresh.split("/login")[0] == first.split("/login")[0]
        r, _ = get(fresh)
        assert r.status == 303 and r.getheader("Set-Cookie", "").startswith(f"agentao_dashboard_{port}=")
        assert get(fresh)[0].status == 403
        forged = fresh[:-3] + ("aaa" if not fresh.endswith("aaa") else "bbb")
        assert get(forged)[0].status == 403
        assert link_command(env, "--port", "1").returncode == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert not list(links_folder(tmp_path).glob("dashboard-link-*.json"))  # gone with the server
    gone = link_command(env)
    assert gone.returncode == 1 and "No dashboard is running" in gone.stderr
