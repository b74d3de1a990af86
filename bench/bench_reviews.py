"""Review queue: time to render the pending tab (one approval plan per item) and to approve.

Builds a project + user store through agentao, proposes N review items with
its crystallizer (each a distinct preference or constraint), then measures
through the Flask test client:

* GET /reviews (full page, every plan computed) and /reviews.json;
* approving every item one by one (two transactions each), then the
  per-approval mean;
* with ``--memories N`` live memories already in the project store: the same
  page (each card now also computes its effect on <memory-stable>), a memory
  detail page (delete and move effects), an edit-effect preview, and one
  "reject and erase evidence" (VACUUM + checkpoint + byte scan of the file).

    python bench/bench_reviews.py            # quick: 50 items, 2,000 memories
    python bench/bench_reviews.py --items 500 --memories 10000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bs4 import BeautifulSoup  # noqa: E402
from conftest import Agent  # noqa: E402
from load import build  # noqa: E402

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()


def phrase(n: int) -> str:
    # Letters only: the crystallizer key keeps [A-Za-z] runs, so each n gets its own key.
    return " ".join(WORDS[int(d)] for d in str(n).zfill(4))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--memories", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(Path(tmp))
        ids = build(agent.project_db, args.memories, "project", 7) if args.memories else []
        messages = [f"I prefer {phrase(n)}." if n % 2 else f"We must {phrase(n)}." for n in range(args.items)]
        agent.crystallize(*messages)
        client = agent.app().test_client()

        client.get("/reviews")  # first request compiles the templates
        t = time.perf_counter()
        html = client.get("/reviews").get_data(as_text=True)
        t_page = time.perf_counter() - t
        page = BeautifulSoup(html, "html.parser")
        t = time.perf_counter()
        client.get("/reviews.json")
        t_json = time.perf_counter() - t
        cards = page.select("article.review")
        effects = len(page.select("[data-block-effect]"))
        extra = _curation(client, ids[0]) if ids else {}
        extra.update(_erase(client, cards.pop()["data-item-id"]))

        t = time.perf_counter()
        for card in cards:
            data = {i["name"]: i["value"] for i in card.select("input[type=hidden]")}
            r = client.post(
                f"/reviews/{card['data-item-id']}/approve", data=data, headers={"Accept": "application/json"}
            )
            assert r.status_code == 200, r.get_json()
        t_approve = time.perf_counter() - t

    print(f"live memories          {args.memories}  (cards with a block effect: {effects})")
    print(f"pending items          {len(cards) + 1}")
    print(f"GET /reviews           {t_page * 1000:8.1f} ms")
    print(f"GET /reviews.json      {t_json * 1000:8.1f} ms")
    print(
        f"approve all (1 by 1)   {t_approve * 1000:8.1f} ms"
        f"  ({t_approve / max(1, len(cards)) * 1000:.1f} ms each)"
    )
    for name, seconds in extra.items():
        print(f"{name:<22} {seconds * 1000:8.1f} ms")


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _curation(client, memory_id: str) -> dict:
    url = f"/memories/project/{memory_id}"
    client.get(url)
    html, t_detail = _timed(lambda: client.get(url).get_data(as_text=True))
    assert "data-block-effect" in html
    r, t_edit = _timed(lambda: client.get(url + "/effect", query_string={"value": "bench edit"}))
    assert r.status_code == 200
    return {"GET memory detail": t_detail, "GET edit effect": t_edit}


def _erase(client, item_id: str) -> dict:
    page = BeautifulSoup(client.get(f"/reviews/erase?ids={item_id}").get_data(as_text=True), "html.parser")
    data = {i["name"]: i["value"] for i in page.select("#review-erase input[type=hidden]")}
    r, t_erase = _timed(
        lambda: client.post("/reviews/erase", data=data, headers={"Accept": "application/json"})
    )
    assert r.get_json()["items"][0]["status"] == "verified erased", r.get_json()
    return {"reject and erase 1": t_erase}


if __name__ == "__main__":
    main()
