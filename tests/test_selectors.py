"""Stored values never become part of a CSS selector that htmx acts on.

A review id is whatever the row holds (raw SQL can write ``a, body``); the
Approve and Reject buttons used to target ``#review-{{ id }}``, and htmx then
swapped the answer over ``<body>``.  Every selector-valued htmx attribute on
every page must be one the templates spell out, whatever the rows hold.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from agentao_world import seed_corpus
from bs4 import BeautifulSoup
from hostile import get_routes

SELECTOR_ATTRS = (
    "hx-target",
    "hx-select",
    "hx-include",
    "hx-indicator",
    "hx-select-oob",
    "hx-swap-oob",
    "hx-disabled-elt",
    "hx-sync",
    "hx-disinherit",
)
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
# "list" made the Approve button of item "list" target #review-list, the whole queue.
HOSTILE_IDS = [
    "a, body",
    "b,#main",
    "c body",
    "d)*",
    'e" hx-target="body',
    "f:is(html)",
    "g'~*",
    "list",
    "erase",
    "h\u202eydob ,",
]


def template_selectors() -> dict[str, set[str]]:
    """Every selector-valued htmx attribute the templates write, by template."""
    found: dict[str, set[str]] = {}
    attr = "|".join(SELECTOR_ATTRS)
    for path in TEMPLATES.rglob("*.html"):
        for value in re.findall(rf'(?:data-)?(?:{attr})="([^"]*)"', path.read_text()):
            found.setdefault(str(path.relative_to(TEMPLATES)), set()).add(value)
    return found


def test_templates_spell_out_every_selector():
    found = template_selectors()
    assert "reviews/_item.html" in found
    built = {t: v for t, values in found.items() for v in values if "{" in v}
    assert not built, f"selectors built from data: {built}"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from agentao_world import Agent

    agent = seed_corpus(Agent(tmp_path_factory.mktemp("selectors")))
    with sqlite3.connect(agent.project_db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(memory_review_queue)")]
        first = dict(
            zip(
                cols,
                conn.execute("SELECT * FROM memory_review_queue WHERE status = 'pending' LIMIT 1").fetchone(),
            )
        )
        mem_cols = [r[1] for r in conn.execute("PRAGMA table_info(memories)")]
        mem = dict(
            zip(mem_cols, conn.execute("SELECT * FROM memories WHERE deleted_at IS NULL LIMIT 1").fetchone())
        )
        for n, hostile in enumerate(HOSTILE_IDS):
            row = dict(first, id=hostile, key_normalized=f"selector_{n}", title=f"Item {hostile}")
            conn.execute(
                f"INSERT INTO memory_review_queue ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
            row = dict(mem, id=hostile, key_normalized=f"selector_{n}")
            conn.execute(
                f"INSERT INTO memories ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
    conn.close()
    return agent


def selector_values(html: str):
    page = BeautifulSoup(html, "html.parser")
    for el in page.find_all(True):
        for attr, value in el.attrs.items():
            if attr.removeprefix("data-") in SELECTOR_ATTRS:
                yield attr, value, el


def test_review_buttons_target_their_own_card(world):
    client = world.app().test_client()
    for headers in ({}, {"HX-Request": "true"}, {"HX-Request": "true", "HX-Boosted": "true"}):
        page = BeautifulSoup(client.get("/reviews", headers=headers).data, "html.parser")
        for hostile in HOSTILE_IDS:
            # Attributes show a hidden character as its mark (dashboard/textmarks.py).
            shown_id = hostile.replace("\u202e", "⟨U+202E⟩")
            card = next(a for a in page.select("article.review") if a["data-item-id"] == shown_id)
            buttons = card.select("button[hx-post]")
            assert {b["data-action"] for b in buttons} == {"approve", "reject"}, hostile
            # "closest article" from the button is this card, whatever the id says.
            assert all(b["hx-target"] == "closest article" for b in buttons)
            assert all(b.find_parent("article") is card for b in buttons)


def test_no_selector_anywhere_holds_stored_data(world):
    app = world.app()
    client = app.test_client()
    urls = set()
    for hostile in HOSTILE_IDS:
        urls.update(
            get_routes(
                app,
                {
                    "store": "project",
                    "key": "project",
                    "memory_id": hostile,
                    "item_id": hostile,
                    "job_id": "0" * 12,
                    "filename": "app.css",
                    "table": "memory_review_queue",
                    "row_id": hostile,
                },
            )
        )
        urls.add(f"/reviews/effect?id={hostile}")
    literal = set().union(*template_selectors().values())
    seen = 0
    for url in sorted(u for u in urls if not u.startswith("/static/") and ".json" not in u):
        for headers in ({}, {"HX-Request": "true"}):
            r = client.get(url, headers=headers)
            if r.mimetype != "text/html":
                continue
            for attr, value, _el in selector_values(r.get_data(as_text=True)):
                seen += 1
                assert value in literal, (url, attr, value)
    assert seen > 20
