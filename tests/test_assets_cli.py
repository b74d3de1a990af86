"""Packaging, vendored htmx, and the command line as a user starts it."""

from __future__ import annotations

import hashlib
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTMX = ROOT / "static" / "htmx-2.0.11.min.js"


def test_vendored_htmx_is_the_published_file():
    recorded = re.search(
        r"sha256 of htmx-2.0.11.min.js: ([0-9a-f]{64})", (ROOT / "static" / "htmx-2.0.11.README").read_text()
    ).group(1)
    assert hashlib.sha256(HTMX.read_bytes()).hexdigest() == recorded
    assert recorded == "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"
    assert "Zero-Clause BSD" in (ROOT / "static" / "htmx-2.0.11.LICENSE").read_text()


def test_vendored_axe_core_is_the_published_file_and_never_served(client):
    vendor = ROOT / "tests" / "browser" / "vendor"
    recorded = re.search(
        r"sha256 of axe-core-4.14.1.min.js: ([0-9a-f]{64})", (vendor / "axe-core-4.14.1.README").read_text()
    ).group(1)
    assert hashlib.sha256((vendor / "axe-core-4.14.1.min.js").read_bytes()).hexdigest() == recorded
    assert "Mozilla Public License" in (vendor / "axe-core-4.14.1.LICENSE").read_text()
    assert not list((ROOT / "static").glob("axe*"))  # a test tool, not part of the app
    assert client.get("/static/axe-core-4.14.1.min.js").status_code == 404


def test_pages_load_the_vendored_htmx(client):
    html = client.get("/overview").get_data(as_text=True)
    assert 'src="/static/htmx-2.0.11.min.js"' in html
    assert client.get("/static/htmx-2.0.11.min.js").data == HTMX.read_bytes()


def run_cli(*args, timeout=30):
    return subprocess.run(
        [sys.executable, "-m", "dashboard", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_missing_project_dir_exits_2(tmp_path):
    r = run_cli("--project", str(tmp_path / "nope"))
    assert r.returncode == 2
    assert "does not exist" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_scan_prints_refused_folder_names_escaped(tmp_path):
    """A folder name with an escape sequence and a line break cannot retitle the terminal
    or forge a line: --scan names it with both written as escapes."""
    evil = "x\x1b]0;pwned\x07\nagentao-memory-dashboard: forged \u202eline"
    (tmp_path / "tree" / evil / ".agentao").mkdir(parents=True)
    (tmp_path / "elsewhere.db").write_bytes(b"")
    (tmp_path / "tree" / evil / ".agentao" / "memory.db").symlink_to(tmp_path / "elsewhere.db")
    r = run_cli("--scan", str(tmp_path / "tree"))
    assert r.returncode == 2 and "left out" in r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr and "\u202e" not in r.stderr
    assert not any(line.startswith("agentao-memory-dashboard: forged") for line in r.stderr.splitlines())
    assert "x\\x1b]0;pwned\\x07\\nagentao-memory-dashboard: forged \\u202eline" in r.stderr


def test_user_db_that_is_a_directory_exits_2(tmp_path):
    r = run_cli("--project", str(tmp_path), "--user-db", str(tmp_path))
    assert r.returncode == 2 and "is a directory" in r.stderr


def test_demo_serves_every_screen(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard", "--demo", "--port", "0", "--no-token"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = None
        deadline = time.time() + 30
        while time.time() < deadline and url is None:
            line = proc.stdout.readline()
            m = re.search(r"(http://127\.0\.0\.1:\d+/\S*)", line)
            url = m.group(1) if m else None
        assert url, "the server did not print its URL"
        base = url.split("?")[0]
        for path in ["overview", "memories", "summaries", "memories.json"]:
            with urllib.request.urlopen(base + path, timeout=10) as r:
                assert r.status == 200
                body = r.read().decode()
                assert "Neovim" in body or path in ("overview", "summaries")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _start_demo(tmp_path):
    """``--demo`` with its temp folder under ``tmp_path``; (process, printed lines, demo folder)."""
    import os

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard", "--demo", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    import threading

    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    deadline = time.time() + 60
    # The link, and what it prints right after it (the test reads both): waited for, not slept.
    while time.time() < deadline and not any("Ctrl+C" in line for line in lines):
        time.sleep(0.05)
    folders = [p for p in tmp_path.iterdir() if p.name.startswith("agentao-memory-demo-")]
    return proc, lines, folders


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["terminate", "ctrl-c"])
def test_demo_says_how_to_stop_and_leaves_no_folder_behind(tmp_path, stop):
    proc, lines, folders = _start_demo(tmp_path)
    try:
        text = "".join(lines)
        assert "Press Ctrl+C to stop." in text, text
        url_line = next(i for i, line in enumerate(lines) if "http://127.0.0.1:" in line)
        assert "Ctrl+C" in "".join(lines[url_line + 1 : url_line + 2])  # right under the link
        assert len(folders) == 1 and (folders[0] / "demo-project" / ".agentao" / "memory.db").is_file()
        assert str(folders[0]) in text
    finally:
        proc.send_signal(stop)
        code = proc.wait(timeout=20)
    assert code == 0
    assert not folders[0].exists(), list(folders[0].rglob("*"))
    assert list(tmp_path.iterdir()) == []


def test_demo_that_cannot_start_removes_its_folder(tmp_path):
    import os
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "dashboard", "--demo", "--port", str(taken.getsockname()[1])],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
    finally:
        taken.close()
    assert r.returncode == 2 and "cannot listen" in r.stderr, r.stderr
    assert "Demo data:" in r.stdout and list(tmp_path.iterdir()) == []


def test_every_subpackage_ships_in_the_wheel():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "dashboard").rglob("__init__.py")}
    assert found <= listed, f"add to pyproject.toml packages: {sorted(found - listed)}"


def test_installed_wheel_serves_pages_from_any_directory(tmp_path):
    """A non-editable install carries templates/ and static/ inside the package."""
    wheel_dir, target, elsewhere = tmp_path / "wheel", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(wheel_dir.glob("*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    code = (
        "from dashboard import create_app; import dashboard, sys;"
        "assert dashboard.__file__.startswith(sys.argv[1]);"
        "c = create_app({'PROJECT_DIR': '.', 'USER_DB': None, 'AUTH_TOKEN': False}).test_client();"
        "assert c.get('/overview').status_code == 200;"
        "zh = c.get('/overview', headers={'Accept-Language': 'zh-CN'}).get_data(as_text=True);"
        "assert 'lang=\"zh-Hans-CN\"' in zh and '概览' in zh, zh[:300];"
        "assert len(c.get('/static/htmx-2.0.11.min.js').data) > 40000; print('ok')"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        cwd=elsewhere,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.stdout.strip() == "ok", r.stderr
