"""The Findings tab's count right after approve and reject, on the real server, with readers racing.

What tests/browser/test_counts_agree.py walks, without the browser and many times over:
the demo served by the command line (waitress, ``--threads 4``), a page's live pulse
every 0.3 s in a thread, and ``--readers`` other processes reading each store read-only
(sqlite3 ``mode=ro``, as the test reads the files) in a loop.  Each round decides the
waiting suggestions (approve, reject, in turn) as a page does: the answer's tab,
and when that is a stand-in, the badge's own request (``/findings/badge``).  Between
rounds they are put back to waiting with the server idle.  Prints how often the tab
said what; any answer that is not the exact count is printed with its words and the
Findings twin's problems (which store, which kind).

    python bench/bench_badge_after_decisions.py               # 10 rounds: 40 decisions
    python bench/bench_badge_after_decisions.py --rounds 50 --readers 2
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from served import login, start_server  # noqa: E402

from dashboard.demo import build_demo  # noqa: E402

READER = """
import sqlite3, sys, time
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
    c.execute("SELECT COUNT(*) FROM memory_review_queue").fetchall() if "project" in sys.argv[1] else None
    c.execute("SELECT COUNT(*) FROM memories").fetchall()
    c.close()
    time.sleep(0.005)
"""


class Client:
    def __init__(self, port: int, cookie: str):
        self.port, self.headers = port, {"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"}

    def __call__(self, method: str, path: str, body: str | None = None, hx: bool = False) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = dict(self.headers)
        if hx:
            headers["HX-Request"] = "true"
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body, headers)
        answer = conn.getresponse()
        text = answer.read().decode()
        conn.close()
        return answer.status, text


def tab(html: str):
    """The Findings tab as an answer draws it: "later" (a stand-in), None (no count), or
    (count, at least, words)."""
    page = BeautifulSoup(html, "html.parser")
    inside = page.select_one('[hx-swap-oob="innerHTML:#tabs a[data-tab=findings]"]') or page.select_one(
        'nav#tabs a[data-tab="findings"]'
    )
    if inside is not None and inside.select_one("[data-later]"):
        return "later"
    count = inside.select_one(".count") if inside is not None else None
    if count is None:
        return None
    return int(count["data-count"]), count.has_attr("data-at-least"), count.get("title", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--readers", type=int, default=1, help="read-only reader processes per store")
    args = parser.parse_args()
    project, user_db = build_demo(Path(tempfile.mkdtemp(prefix="badge-bench-")))
    project_db = project / ".agentao" / "memory.db"
    with sqlite3.connect(project_db) as conn:
        waiting = [r[0] for r in conn.execute("SELECT id FROM memory_review_queue WHERE status = 'pending'")]
    conn.close()
    proc, port, token = start_server(project, user_db, 4)
    get = Client(port, login(port, token))
    readers = [
        subprocess.Popen([sys.executable, "-c", READER, str(db), "3600"])
        for db in (project_db, user_db)
        for _ in range(args.readers)
    ]
    stop = threading.Event()

    def pulse() -> None:
        while not stop.is_set():
            found = re.search(r'hx-get="([^"]*activity/pulse[^"]*)"', get("GET", "/summaries")[1])
            if found:
                get("GET", found.group(1).replace("&amp;", "&"), hx=True)
            time.sleep(0.3)

    threading.Thread(target=pulse, daemon=True).start()
    said: collections.Counter = collections.Counter()
    try:
        exact = len(
            {
                (i["store"], i["table"], i["row_id"])
                for i in json.loads(get("GET", "/findings.json?per_page=1000")[1])["items"]
                if i["category"] in ("secret", "personal", "instruction")
            }
        )
        for _round in range(args.rounds):
            for verb in ("approve", "reject") * (len(waiting) // 2):
                page = BeautifulSoup(get("GET", "/reviews")[1], "html.parser")
                form = {i["name"]: i["value"] for i in page.select("#review-form input[type=hidden]")}
                card = page.select_one("#review-list article.review[data-status=pending]")
                if tab(str(page)) == "later":
                    get("GET", "/findings/badge", hx=True)
                status, answer = get("POST", f"/reviews/{card['data-item-id']}/{verb}", urlencode(form), True)
                shown = tab(answer)
                if shown == "later":
                    shown = tab(get("GET", "/findings/badge", hx=True)[1])
                if shown is not None and shown[:2] == (exact, False):
                    said["exact"] += 1
                    continue
                said["not exact"] += 1
                problems = json.loads(get("GET", "/findings.json")[1]).get("problems")
                print(f"{verb} ({status}): the tab said {shown!r}; the twin's problems: {problems}")
            with sqlite3.connect(project_db) as conn:  # the server is idle between rounds
                conn.executemany(
                    "UPDATE memory_review_queue SET status = 'pending' WHERE id = ?", [(i,) for i in waiting]
                )
            conn.close()
    finally:
        stop.set()
        for reader in readers:
            reader.kill()
        proc.terminate()
        proc.wait()
    print(f"{sum(said.values())} decisions, the exact count is {exact}: {dict(said)}")


if __name__ == "__main__":
    main()
