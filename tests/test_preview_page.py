"""Prompt preview screen: full page, htmx fragment, boosted load and JSON twin."""

from __future__ import annotations

from datetime import datetime, timezone

from agentao_world import agentao_blocks
from bs4 import BeautifulSoup

HTMX = {"HX-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}
ASOF = "2031-01-01T00:00:00"


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_full_page_shows_both_blocks_byte_identical(client, seeded):
    page = soup(
        client.get(
            "/preview", query_string={"q": "which package manager", "asof": ASOF, "session": "session-b"}
        )
    )
    assert page.find("html") is not None and page.select_one("form#preview-form")
    stable, context = agentao_blocks(
        seeded, "which package manager", "session-b", datetime(2031, 1, 1, tzinfo=timezone.utc)
    )
    assert page.select_one("pre#stable-block").text == stable
    expected_context = page.select_one("pre#context-block")
    assert (expected_context.text if expected_context else "") == context
    result = page.select_one("#preview-result")
    assert result["data-stable-used"] == str(len(stable))
    assert result["data-cjk-mode"] in ("jieba", "latin-only")
    assert page.select_one("pre#stable-block").has_attr("hx-disable")
    assert page.select_one("meter#m-stable")["max"] == "2000"
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
    data = client.get(
        "/preview.json",
        query_string={"q": "uv", "asof": "2030-01-01T00:00:00Z", "messages": "look at pyproject.toml\nhi"},
    ).get_json()
    assert data["now"] == "2030-01-01T00:00:00+00:00"
    assert data["context_hints"] == ["pyproject.toml"]
    assert data["budgets"]["stable"]["limit"] == 2000
    cand = data["candidates"][0]
    assert {"score", "terms", "mark", "reasons"} <= cand.keys()
    stale = next(t for t in cand["terms"] if t["name"] == "stale")
    assert stale["value"] == 1.0  # four years on, every memory is stale
    fresh = client.get("/preview.json?q=uv").get_json()
    assert all(
        next(t for t in c["terms"] if t["name"] == "stale")["value"] == 0.0 for c in fresh["candidates"]
    )
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
    assert form["hx-target"] == "#preview-result" and form["hx-post"] == form["action"] == "/preview"
    assert form["method"] == "post"  # the message travels in the body: agentao's 4,000 characters fit
    assert page.select_one('[data-field="cjk-mode"]').text
    for table_body in page.select("#preview-result tbody"):
        assert table_body.has_attr("hx-disable")
    assert not page.select("#preview-result script")


def test_new_memory_shows_up_after_the_counter_moves(client, seeded):
    before = client.get("/preview.json?q=kubernetes").get_json()
    assert before["candidates"] == []
    seeded.save("k8s", "Kubernetes manifests live in deploy/k8s.", ["infra"], type="note")
    after = client.get("/preview.json?q=kubernetes").get_json()
    assert [c["title"] for c in after["candidates"]] == ["k8s"] or "k8s" in after["stable_block"]


# --------------------------------------------------------------------------- the answer first


def _context_titles(block: str) -> set[str]:
    """Titles of the facts in a <memory-context> block (agentao writes one 'title:' line each)."""
    return {line[len("title: ") :] for line in block.splitlines() if line.startswith("title: ")}


def test_answer_in_words_comes_first_and_names_what_agentao_recalls(client, seeded):
    # Four notes only recall brings in; at most 5 match, so agentao's order among equal
    # scores (arbitrary) cannot change which of them it recalls.
    for n in range(4):
        seeded.save(f"service {n:02d}", f"Service {n:02d} listens on port {8000 + n}.", ["ports"])
    query = "which port does service 01 use"
    page = soup(client.get("/preview", query_string={"q": query, "asof": ASOF}))
    stable, context = agentao_blocks(seeded, query, None, datetime(2031, 1, 1, tzinfo=timezone.utc))
    answer = page.select_one("#preview-result > #answer")
    assert answer is not None
    # The answer precedes every number and every raw block in the page.
    html = str(page)
    assert html.index('id="answer"') < html.index('id="recall"') < html.index('id="stable-block"')
    named = {
        li.select_one("a").get_text() for li in answer.select('[data-answer="recalled"] li[data-memory-id]')
    }
    assert named and named == _context_titles(context)
    shown = len(page.select('#stable-entries tr[data-shown="1"]'))
    assert (
        answer.select_one('[data-answer="always-on"]')
        .get_text(" ", strip=True)
        .startswith(f"In the always-on block (every prompt): {shown} memor")
    )
    # Each reason is its own list item, in words, then the words that matched; the codes
    # agentao writes are not the text.
    reasons = [li.select_one(".term") for li in answer.select("ul.reasons > li")]
    assert reasons and all("_" not in r.get_text() and "," not in r.get_text() for r in reasons)
    assert "words of its text are in your message" in [r.get_text() for r in reasons]


def test_raw_blocks_sit_behind_disclosures_byte_exact(client, seeded):
    page = soup(client.get("/preview", query_string={"q": "which package manager", "asof": ASOF}))
    stable, context = agentao_blocks(
        seeded, "which package manager", None, datetime(2031, 1, 1, tzinfo=timezone.utc)
    )
    for name, block in (("stable", stable), ("context", context)):
        holder = page.select_one(f'details[data-prompt-block="{name}"]')
        assert holder is not None and not holder.has_attr("open")
        pre = holder.select_one("pre[data-prompt-block]")
        assert (pre.text if pre else "") == block
    assert page.select_one("#preview-form textarea#p-q") is not None  # the message box
    assert page.select_one('label[for="p-q"]').get_text() == "A message to the agent"


def test_not_recalled_says_why_below_the_cut_and_over_the_budget(tmp_path):
    from unittest import mock

    from agentao_world import Agent

    agent = Agent(tmp_path)
    for n in range(12):  # a second apart: no two scores are equal, so no tie decides the cut
        stamp = f"2030-06-01T10:00:{n:02d}"
        with (
            mock.patch("agentao.memory.storage._now_iso", return_value=stamp),
            mock.patch("agentao.memory.manager._now", return_value=stamp),
        ):
            agent.save(
                f"billing note {n:02d}", f"Billing retry rule number {n:02d}: " + "x" * 300, ["billing"]
            )
    client = agent.app().test_client()
    data = client.get("/preview.json", query_string={"q": "billing retry rule", "asof": ASOF}).get_json()
    marks = {c["title"]: c["mark"] for c in data["candidates"]}
    assert {"cut_top5", "cut_context_budget", "in_block"} <= set(marks.values()), marks
    page = soup(client.get("/preview", query_string={"q": "billing retry rule", "asof": ASOF}))
    missed = {
        li.select_one("a").get_text(): li.get_text(" ", strip=True)
        for li in page.select('#answer [data-answer="not-recalled"] li')
    }
    for title, text in missed.items():
        if marks[title] == "cut_context_budget":
            assert "over the 1,200-character budget" in text
        elif marks[title] == "cut_top5":
            assert "score below the cut" in text and "only the 5 best" in text
    assert {marks[t] for t in missed} >= {"cut_context_budget", "cut_top5"}
    # The twin keeps its codes and numbers, and says the same in words beside them.
    assert data["text"][1].startswith("Recalled for this message: ")
    assert all(c["text"] for c in data["candidates"])
    budget = next(c for c in data["candidates"] if c["mark"] == "cut_context_budget")
    assert "over the 1,200-character budget" in budget["text"]


def test_ranked_table_explains_each_term_in_words_and_rounds(client):
    page = soup(client.get("/preview", query_string={"q": "which package manager pyproject", "asof": ASOF}))
    table = page.select_one("table.recall.rows")
    heads = {th["data-term"]: th.select_one(".term") for th in table.select("th[data-term]")}
    assert heads["title"].get_text() == "title"
    assert "Words of its title are in your message" in heads["title"]["title"]
    assert "counts double" in heads["filepath_hint"]["title"]
    row = table.select_one("tr.candidate")
    score = row.select_one('td[data-label="Score"] strong')
    assert score["title"] == row["data-score"] and len(score.get_text()) <= 5
    assert row.select_one("td.lead a") and all(
        td.has_attr("data-label") for td in row.select("td:not(.lead)")
    )


def test_preview_button_moves_focus_to_the_answer(client):
    typed = soup(client.get("/preview", query_string={"q": "uv"}))
    assert typed.select_one("#p-q").has_attr("autofocus")
    assert not typed.select_one("#answer-title").has_attr("autofocus")
    asked = soup(client.get("/preview", query_string={"q": "uv", "go": "1"}, headers=HTMX))
    heading = asked.select_one("#answer-title")
    assert heading.has_attr("autofocus") and heading["tabindex"] == "-1"


def test_plurals_in_the_answer(tmp_path):
    from agentao_world import Agent

    agent = Agent(tmp_path, with_user_store=False)
    agent.save("kubernetes", "Manifests live in deploy/k8s.", ["infra"], type="note")
    client = agent.app().test_client()
    page = soup(client.get("/preview", query_string={"q": "kubernetes manifests", "asof": ASOF}))
    text = page.select_one("#answer").get_text(" ", strip=True)
    assert "1 memories" not in text
    assert "(every prompt): 1 memory." in text or "(every prompt): 0 memories." in text
