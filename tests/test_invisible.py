"""Characters that reorder or hide text are shown by name on every page, and memory text is isolated.

U+202E in a title showed ``invoice ‮fdp.exe`` as "invoice exe.pdf"; zero-width
and tag characters show nothing at all; NUL went into the HTML raw.  On every
page each of them is a visible mark now, and the text a person reads sits in
``<bdi>``, so its direction cannot spill into the page around it.  Only the
form fields that send a value back (the edit box) keep the stored characters.
"""

from __future__ import annotations

import sqlite3

import pytest
from bs4 import BeautifulSoup, NavigableString
from hostile import get_routes, shown_text

TITLE = "invoice \u202efdp.exe"
CONTENT = "Send invoice \u202efdp.exe to al\u200bice\U000e0041; nul\x00byte, esc\x1b[0m."
ROUND_TRIP = {("textarea", None), ("input", "value"), ("option", "value")}


@pytest.fixture
def world(agent):
    saved = agent.save("invoice", CONTENT, tags=["fi\u200dnance", "plain"])
    agent.crystallize("I prefer invoices named \u202efdp.exe over plain names.")
    with sqlite3.connect(agent.project_db) as conn:
        conn.execute("UPDATE memories SET title = ? WHERE id = ?", (TITLE, saved.id))
        conn.execute("UPDATE memory_review_queue SET title = ?", (TITLE,))
        item = conn.execute("SELECT id FROM memory_review_queue").fetchone()[0]
    conn.close()
    return agent, saved.id, item


def hidden_spans(text: str):
    """Where ``text`` holds a character that reorders or hides text (an independent list:
    bidi controls, zero-width and format characters, tags, C0/C1 controls but TAB/LF/CR)."""
    import unicodedata

    for i, ch in enumerate(text):
        if (
            unicodedata.category(ch) in ("Cf", "Zl", "Zp")
            and ch not in "\u200c\u200d"
            or unicodedata.category(ch) == "Cc"
            and ch not in "\t\n\r"
        ):
            yield i, i + 1


def raw_hidden(html: str) -> list:
    """Hidden characters a page shows raw: in its text outside a round-trip field, or in an attribute."""
    page = BeautifulSoup(html, "html.parser")
    bad = []
    for node in page.find_all(string=True):
        if isinstance(node, NavigableString) and node.parent.name != "textarea":
            bad += [(node.parent.name, node[s:e]) for s, e in hidden_spans(str(node))]
    for el in page.find_all(True):
        for attr, value in el.attrs.items():
            if (el.name, attr) in ROUND_TRIP:
                continue
            value = " ".join(value) if isinstance(value, list) else value
            bad += [(el.name, attr, value[s:e]) for s, e in hidden_spans(value)]
    return bad


def test_no_page_shows_a_hidden_character_raw(world):
    agent, memory_id, item = world
    app = agent.app()
    client = app.test_client()
    urls = get_routes(
        app,
        {
            "store": "project",
            "key": "project",
            "memory_id": memory_id,
            "item_id": item,
            "job_id": "0" * 12,
            "filename": "app.css",
            "table": "memories",
            "row_id": memory_id,
        },
    )
    urls += [
        f"/reviews/effect?id={item}",
        f"/memories/project/{memory_id}/effect?value=x",
        "/memories?q=invoice",
        "/preview?q=invoice+fdp",
        f"/findings/check/project/memory_review_queue/{item}",
        "/reviews?status=pending",
    ]
    checked = 0
    for url in sorted(set(u for u in urls if not u.startswith("/static/"))):
        for headers in ({}, {"HX-Request": "true"}):
            r = client.get(url, headers=headers)
            if r.mimetype != "text/html":
                continue
            html = r.get_data(as_text=True)
            assert "\x00" not in html, url
            assert raw_hidden(html) == [], url
            checked += 1
    assert checked > 30


def test_memory_text_is_isolated_and_its_hidden_characters_named(world):
    agent, memory_id, item = world
    client = agent.app().test_client()
    page = BeautifulSoup(client.get(f"/memories/project/{memory_id}").data, "html.parser")
    content = page.select_one('#memory-detail [data-field="content"]')
    assert content.find("bdi") is not None
    assert [m["title"] for m in content.select("span.ctl")] == [
        "U+202E RIGHT-TO-LEFT OVERRIDE",
        "U+200B ZERO WIDTH SPACE",
        "U+E0041 TAG LATIN CAPITAL LETTER A",
        "U+0000 NULL",
        "U+001B ESCAPE",
    ]
    assert content.select_one("span.ctl").get_text() == "⟨U+202E⟩"
    assert shown_text(content) == CONTENT  # every character accounted for
    assert page.select_one('[data-field="title"] span.ctl')["title"].startswith("U+202E")
    assert [t.get_text() for t in page.select('[data-field="tags"] .tag')] == ["fi⟨U+200D⟩nance", "plain"]
    # The edit box sends the stored value back unchanged (NUL aside: browsers make it U+FFFD).
    assert page.select_one("#edit-value").get_text() == CONTENT.replace("\x00", "\ufffd")
    listed = BeautifulSoup(client.get("/memories").data, "html.parser")
    row = next(r for r in listed.select("tr.memory") if r["data-memory-id"] == memory_id)
    says = row.select_one(".says bdi")  # the row leads with what the memory says
    assert says is not None and says.select_one("span.ctl")["title"].startswith("U+202E")
    review = BeautifulSoup(client.get("/reviews").data, "html.parser").select_one("article.review")
    assert review.select_one('[data-field="title"] span.ctl')["title"].startswith("U+202E")


def test_the_markup_is_built_from_escaped_pieces():
    from dashboard.guard.textmarks import as_stored, shown

    assert shown('<b onclick="x">\u202e&</b>') == (
        '<bdi>&lt;b onclick=&#34;x&#34;&gt;<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE">'
        "⟨U+202E⟩</span>&amp;&lt;/b&gt;</bdi>"
    )
    assert shown("plain") == "<bdi>plain</bdi>" and shown(42) == "<bdi>42</bdi>"
    assert as_stored('a\x00<b>"\u202e') == "a\ufffd&lt;b&gt;&#34;\u202e"
