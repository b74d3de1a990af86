"""Prompt preview screen: full page, htmx fragment, boosted load and JSON twin."""

from __future__ import annotations

from datetime import datetime, timezone

from bs4 import BeautifulSoup

from agentao_world import agentao_blocks

HTMX = {"HX-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}
ASOF = "2031-01-01T00:00:00"


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_full_page_shows_both_blocks_byte_identical(client, seeded):
    page = soup(client.get("/preview", query_string={"q": "which package manager", "asof": ASOF,
                                                      "session": "session-b"}))
    assert page.find("html") is not None and page.select_one("form#preview-form")
    stable, context = agentao_blocks(seeded, "which package manager", "session-b",
                                     datetime(2031, 1, 1, tzinfo=timezone.utc))
    assert page.select_one("pre#stable-block").text == stable
    expected_context = page.select_one("pre#context-block")
    assert (expected_context.text if expected_context else "") == context
    result = page.select_one("#preview-result")
    assert result["data-stable-used"] == str(len(stable))
    assert result["data-cjk-mode"] in ("jieba", "latin-only")
    assert page.select_one("pre#stable-block").has_attr("hx-disable")
    assert page.select_one('meter#m-stable')["max"] == "2000"
    assert page.select_one('a[href="/preview"]') is not None  # in the menu


def test_fragment_and_boosted(client):
    fragment = soup(client.get("/preview?q=deploy", headers=HTMX))
    assert fragment.find("html") is None
    assert fragment.select_one("section#preview-result") is not None
    assert soup(client.get("/preview?q=deploy", headers=BOOSTED)).find("html") is not None
    assert "HX-Request" in client.get("/preview").headers["Vary"]


def test_recall_table_terms_and_tokens(client):
    page = soup(client.get("/preview", query_string={"q": "redis tests pyproject", "asof": ASOF}))
    tokens = {t["data-token"]: t["data-origin"] for t in page.select("[data-token]")}
    assert tokens["redis"] == "word" and tokens["redi"] == "variant" and tokens["test"] == "variant"
    rows = page.select("tr.candidate")
    assert rows, "pyproject matches the package-manager memory"
    terms = {td["data-term"] for td in rows[0].select("td[data-term]")}
    assert terms == {"tag", "title", "keyword", "content", "filepath_hint", "recency", "stale"}
    assert page.select_one("details#never-recalled") is not None


def test_json_twin_with_asof_and_hints(client):
    data = client.get("/preview.json", query_string={
        "q": "uv", "asof": "2030-01-01T00:00:00Z", "messages": "look at pyproject.toml\nhi"}).get_json()
    assert data["now"] == "2030-01-01T00:00:00+00:00"
    assert data["context_hints"] == ["pyproject.toml"]
    assert data["budgets"]["stable"]["limit"] == 2000
    cand = data["candidates"][0]
    assert {"score", "terms", "mark", "reasons"} <= cand.keys()
    stale = next(t for t in cand["terms"] if t["name"] == "stale")
    assert stale["value"] == 1.0  # four years on, every memory is stale
    fresh = client.get("/preview.json?q=uv").get_json()
    assert all(next(t for t in c["terms"] if t["name"] == "stale")["value"] == 0.0
               for c in fresh["candidates"])
    assert client.get("/preview.json?asof=yesterday").status_code == 400


def test_what_if_hiding_shows_diff(client):
    base = client.get("/preview.json?q=editor").get_json()
    victim = base["stable_entries"][0]["id"]
    data = client.get("/preview.json", query_string={"q": "editor", "hide": victim}).get_json()
    assert victim not in {s["id"] for s in data["stable_entries"]}
    assert data["what_if"]["stable_block_before"] == base["stable_block"]
    assert any(line.startswith("-") for line in data["what_if"]["stable_diff"])
    page = soup(client.get("/preview", query_string={"q": "editor", "hide": victim}))
    assert page.select_one('#hidden-ids input[value="%s"]' % victim).has_attr("checked")
    assert page.select_one('pre[data-diff="stable"] del') is not None


def test_empty_query_explains_itself(client):
    page = soup(client.get("/preview"))
    assert page.select_one('[data-field="recall-note"]') is not None
    assert page.select_one("#context-block")["data-empty"] is not None


def test_form_debounces_and_marks_hostile_text_inert(client):
    page = soup(client.get("/preview?q=deploy"))
    form = page.select_one("form#preview-form")
    assert "keyup changed delay:300ms from:#p-q" in form["hx-trigger"]
    assert form["hx-target"] == "#preview-result" and form.has_attr("hx-push-url")
    assert page.select_one('[data-field="cjk-mode"]').text
    for table_body in page.select("#preview-result tbody"):
        assert table_body.has_attr("hx-disable")
    assert not page.select("#preview-result script")


def test_new_memory_shows_up_after_the_counter_moves(client, seeded):
    before = client.get("/preview.json?q=kubernetes").get_json()
    assert before["candidates"] == []
    seeded.save("k8s", "Kubernetes manifests live in deploy/k8s.", ["infra"], type="note")
    after = client.get("/preview.json?q=kubernetes").get_json()
    assert [c["title"] for c in after["candidates"]] == ["k8s"] or \
        "k8s" in after["stable_block"]
