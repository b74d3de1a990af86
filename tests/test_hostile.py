"""Hostile memory text renders inert on every page, fragment and JSON twin.

The pages are discovered from ``app.url_map``, so a screen added later is
covered without editing this file (or fails loudly until its URL arguments
have a filler in ``fill()`` below).
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from agentao_world import file_digest
from bs4 import BeautifulSoup
from hostile import HOSTILE, INVALID_UTF8, LONE_SURROGATE, MARK, get_routes, plant, shown_text

HTMX_SRC = "/static/htmx-2.0.11.min.js"
OUR_SCRIPTS = {HTMX_SRC, "/static/live.js"}  # htmx, and the live pulse's few lines (views/pulse.py)
URL_ATTRS = (
    "href",
    "src",
    "action",
    "formaction",
    "hx-get",
    "hx-post",
    "hx-put",
    "hx-patch",
    "hx-delete",
    "data-hx-get",
    "data-hx-post",
    "poster",
    "srcset",
)
# Text of these elements is never parsed for markup or htmx attributes.
TEXT_ONLY = ("option", "title", "textarea")
SAFE_TAGS_ONLY = ("iframe", "object", "embed", "style", "base", "svg", "img", "frame", "link")
CHART_TAGS = {"title", "desc", "g", "rect", "text", "line"}
# The header's forms carry the page's own address back (``here()``): the one part of a page
# that its query string changes without changing anything ``check_inert`` looks at.
OWN_ADDRESS = re.compile(r'(name="next" value=")[^"]*"')


def is_our_chart(el) -> bool:
    """A picture drawn by dashboard/pictures: role=img, data-chart, only shapes and text."""
    return (
        el.name == "svg"
        and el.get("role") == "img"
        and el.has_attr("data-chart")
        and all(d.name in CHART_TAGS for d in el.find_all(True))
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from agentao_world import Agent

    agent = Agent(tmp_path_factory.mktemp("hostile"))
    planted = plant(agent)
    return agent, planted


@pytest.fixture(scope="module")
def app(corpus):
    return corpus[0].app()


def fill(app, agent, planted) -> list[str]:
    """Every GET URL: list pages once, detail pages once per planted memory."""
    conn = sqlite3.connect(agent.project_db)
    items = conn.execute("SELECT id FROM memory_review_queue").fetchall()
    conn.close()
    urls = set()
    for store, memory_id in planted.values():
        urls.update(
            get_routes(
                app,
                {
                    "store": store,
                    "key": store,
                    "memory_id": memory_id,
                    "item_id": items[0][0],
                    "job_id": "0" * 12,
                    "filename": "app.css",
                    "table": "memories",
                    "row_id": memory_id,
                },
            )
        )
    # The re-check pages as the findings list links them (rule, field, label, signature).
    findings = app.test_client().get("/findings.json?per_page=1000").get_json()["items"]
    urls.update(a["href"] for i in findings for a in i["actions"] if a["code"] == "check")
    return sorted(u for u in urls if not u.startswith("/static/"))


def hx_disabled(element) -> bool:
    return any(
        e.has_attr("hx-disable") or e.has_attr("data-hx-disable")
        for e in [element, *element.parents]
        if hasattr(e, "has_attr")
    )


def check_inert(html: str, where: str) -> None:
    page = BeautifulSoup(html, "html.parser")
    for script in page.find_all("script"):
        assert script.get("src") in OUR_SCRIPTS and not script.string, where
    for el in page.find_all(True):
        assert not [a for a in el.attrs if a.lower().startswith("on")], (where, el.name, el.attrs)
        assert (
            el.name not in SAFE_TAGS_ONLY
            or is_our_chart(el)
            or el.name == "link"
            and el.get("rel") == ["stylesheet"]
        ), (where, el.name)
        if el.name == "meta":
            assert set(el.attrs) <= {"charset", "name", "content"}, (where, el.attrs)
        for attr in URL_ATTRS:
            value = str(el.get(attr, "")).strip().lower()
            assert not re.match(r"(javascript|data|vbscript):", value), (where, attr, value)
        hx = {a: v for a, v in el.attrs.items() if a.startswith(("hx-", "data-hx-"))}
        if hx and not hx_disabled(el):
            assert MARK not in json.dumps(hx), (where, el.name, hx)
    body = page.body or page
    for text in body.find_all(string=lambda s: MARK in s):
        parent = text.parent
        if parent.name in TEXT_ONLY:
            continue
        assert hx_disabled(parent), (where, "memory text outside hx-disable", parent.name, str(parent)[:200])


def test_corpus_was_stored_through_agentao(corpus):
    agent, planted = corpus
    conn = sqlite3.connect(agent.project_db)
    conn.text_factory = bytes
    raw = dict(conn.execute("SELECT key_normalized, content FROM memories"))
    assert INVALID_UTF8 in raw.values()
    # Not through agentao: 0.5.17 cannot read a file holding invalid UTF-8 at all
    # (it logs "cannot be read" and carries on without the store).
    by_id = {}
    for db in (agent.project_db, agent.user_db):
        conn = sqlite3.connect(db)
        conn.text_factory = lambda b: b.decode("utf-8", "replace")
        by_id.update(conn.execute("SELECT id, content FROM memories"))
        conn.close()
    for name, (_store, memory_id) in planted.items():
        if name in HOSTILE:
            assert by_id[memory_id] == HOSTILE[name], name
    assert len(HOSTILE["long"]) == 4000


def test_every_page_and_fragment_renders_hostile_text_inert(corpus, app):
    agent, planted = corpus
    before = file_digest(agent.project_db, agent.user_db)
    client = app.test_client()
    urls = fill(app, agent, planted)
    assert {"/overview", "/memories", "/summaries", "/reviews"} <= set(urls)
    checked, inert = 0, set()
    for url in urls:
        variants = [("", {})]
        if not url.endswith(".json"):
            variants += [
                ("fragment", {"HX-Request": "true"}),
                ("boosted", {"HX-Request": "true", "HX-Boosted": "true"}),
            ]
        for query in ("", "?deleted=1&q=pwn", "?status=approved"):
            for label, headers in variants:
                r = client.get(url + query, headers=headers)
                where = f"{url}{query} {label}"
                text = r.get_data(as_text=True)
                assert r.status_code in (200, 302, 303, 400, 404), (where, r.status_code)
                assert "Traceback" not in text, where
                if r.status_code in (302, 303):
                    assert r.headers["Location"].startswith("/"), where  # never off-site
                elif url.endswith(".json"):
                    assert r.mimetype == "application/json", where
                    json.loads(text)
                elif r.headers.get("Content-Disposition", "").startswith("attachment"):
                    assert r.mimetype != "text/html", where  # a download, never shown as a page
                else:
                    assert r.mimetype == "text/html", where
                    # A page already found inert but for its own address (a detail page asked
                    # with a list's query) is not parsed again.
                    if (same := OWN_ADDRESS.sub(r'\1"', text)) not in inert:
                        check_inert(text, where)
                        inert.add(same)
                checked += 1
    assert checked > 50
    assert file_digest(agent.project_db, agent.user_db) == before


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_detail_shows_text_literally_and_json_round_trips(corpus, app, name):
    agent, planted = corpus
    store, memory_id = planted[name]
    client = app.test_client()
    page = BeautifulSoup(client.get(f"/memories/{store}/{memory_id}").data, "html.parser")
    shown = page.select_one('#memory-detail [data-field="content"]')
    assert shown.name == "pre" and shown_text(shown) == HOSTILE[name]
    data = client.get(f"/memories/{store}/{memory_id}.json").get_json()
    assert data["memory"]["content"] == HOSTILE[name]
    assert json.loads(json.dumps(data))["memory"]["content"] == HOSTILE[name]


def test_jinja_syntax_is_not_evaluated(corpus, app):
    agent, planted = corpus
    store, memory_id = planted["jinja"]
    client = app.test_client()
    html = client.get(f"/memories/{store}/{memory_id}").get_data(as_text=True)
    content = BeautifulSoup(html, "html.parser").select_one('[data-field="content"]').get_text()
    assert content.startswith("{{ 7*7 }}") and "49" not in content
    assert "SECRET_KEY" not in html and "&lt;Config" not in html
    summaries = BeautifulSoup(client.get("/summaries").data, "html.parser").get_text()
    assert "{{ 7*7 }}" in summaries


def test_invalid_utf8_and_bad_json_still_display(corpus, app):
    agent, planted = corpus
    client = app.test_client()
    store, memory_id = planted["raw_bytes"]
    data = client.get(f"/memories/{store}/{memory_id}.json").get_json()
    assert data["memory"]["content"] == INVALID_UTF8.decode("utf-8", "replace")
    assert "\ufffd" in data["memory"]["content"] and "<script>" in data["memory"]["content"]
    page = client.get(f"/memories/{store}/{memory_id}")
    assert page.status_code == 200 and "\ufffd" in page.get_data(as_text=True)
    store, memory_id = planted["raw_json"]
    data = client.get(f"/memories/{store}/{memory_id}.json").get_json()
    assert data["memory"]["tags"] == ['["unterminated']  # shown as the raw text it is
    listed = client.get("/memories.json?per_page=200").get_json()
    assert any(m["type"] == HOSTILE["hx_get"] for m in listed["items"])


def test_control_and_bidi_characters_survive_escaped(corpus, app):
    agent, planted = corpus
    client = app.test_client()
    for name in ("control_chars", "rtl_override"):
        store, memory_id = planted[name]
        raw = client.get(f"/memories/{store}/{memory_id}.json").data
        assert json.loads(raw)["memory"]["content"] == HOSTILE[name]
        assert b"\x00" not in raw  # JSON escapes NUL as \u0000


def test_a_lone_surrogate_in_a_tag_is_shown_marked_on_every_page(corpus, app):
    """agentao stores a lone surrogate in a tag (a model's tool call); no page can carry it
    as UTF-8, so each shows it as a named mark, and the add form's plan over that row works."""
    agent, planted = corpus
    store, memory_id = planted["lone_surrogate"]
    client = app.test_client()
    for url in (
        f"/memories/{store}/{memory_id}",
        "/memories?q=surrogate",
        "/preview?q=surrogate+tag",
        "/memories/new?key=lone+surrogate&value=x",
    ):
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        marks = BeautifulSoup(r.data, "html.parser").select('span.ctl[title^="U+D800"]')
        assert marks or "/preview" in url or "/new" in url, url
    page = BeautifulSoup(client.get(f"/memories/{store}/{memory_id}").data, "html.parser")
    assert LONE_SURROGATE in [shown_text(t) for t in page.select('[data-field="tags"] bdi')]
    data = client.get(f"/memories/{store}/{memory_id}.json").get_json()
    assert LONE_SURROGATE in data["memory"]["tags"]


def test_a_json_body_with_a_lone_surrogate_is_refused_with_a_message(corpus, app):
    agent, planted = corpus
    before = file_digest(agent.project_db, agent.user_db)
    client = app.test_client()
    body = '{"key": "k", "value": "v", "tags": ["x\\ud800"]}'
    for url in ("/memories/new/plan", "/memories/new", "/memories/bulk/plan", "/memories/bulk"):
        r = client.post(
            url, data=body, content_type="application/json", headers={"Accept": "application/json"}
        )
        assert r.status_code == 400 and "lone surrogate" in r.get_json()["message"], url
    assert file_digest(agent.project_db, agent.user_db) == before


def test_add_form_and_its_plan_render_hostile_text_inert(corpus, app):
    """/memories/new echoes what was typed and shows the row it would overwrite: both inert."""
    client = app.test_client()
    for name, text in HOSTILE.items():
        # The planted row's own key: the plan shows that hostile row as overwritten.
        values = {"key": text[:60] if name != "long" else text, "value": text, "tags": text[:40]}
        for headers in ({}, {"HX-Request": "true"}):
            r = client.post("/memories/new/plan", data=values, headers=headers)
            assert r.status_code == 200, (name, r.status_code)
            check_inert(r.get_data(as_text=True), f"/memories/new {name} {headers}")


def test_bulk_dry_runs_render_hostile_text_inert(corpus, app):
    """Every bulk action's dry run over all the hostile rows (titles, keys, warnings naming
    them, the block diff), as a page and as the htmx fragment; nothing is written."""
    agent, planted = corpus
    before = file_digest(agent.project_db, agent.user_db)
    client = app.test_client()
    ids = [f"{store}:{memory_id}" for store, memory_id in planted.values()]
    for action in ("delete", "move-user", "move-project", "tag", "purge"):
        for headers in ({}, {"HX-Request": "true"}):
            r = client.post(
                "/memories/bulk/plan",
                data={"action": action, "ids": ids, "add_tag": HOSTILE["script"][:90]},
                headers=headers,
            )
            page = r.get_data(as_text=True)
            assert r.status_code == 200 and 'id="bulk-plan"' in page, (action, r.status_code)
            check_inert(page, f"bulk {action} {headers}")
    assert file_digest(agent.project_db, agent.user_db) == before


def test_restore_offer_renders_hostile_text_inert(corpus, app):
    """A soft-deleted hostile row's page, with the restore form and its effect (runs last:
    it deletes rows of the shared corpus)."""
    agent, planted = corpus
    client = app.test_client()
    for name in ("script", "hx_get", "attr_breakout_dq", "jinja"):
        store, memory_id = planted[name]
        agent.manager.delete(memory_id)
        for headers in ({}, {"HX-Request": "true"}):
            r = client.get(f"/memories/{store}/{memory_id}", headers=headers)
            page = r.get_data(as_text=True)
            assert r.status_code == 200 and 'id="restore-form"' in page, name
            check_inert(page, f"restore {name} {headers}")
