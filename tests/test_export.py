"""Export: the page, and JSON / CSV / Markdown downloads of an agentao-written corpus."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3

import pytest
from agentao_world import Agent, file_digest
from bs4 import BeautifulSoup
from hostile import HOSTILE, LONE_SURROGATE, plant

from dashboard.actions import export

HTMX = {"HX-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}
FORMATS = ("json", "csv", "md")


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def download(client, fmt, invisible=False):
    r = client.get(f"/export/memories.{fmt}" + ("?include_invisible=1" if invisible else ""))
    assert r.status_code == 200
    return r


def agent_live(agent: Agent) -> dict:
    """What agentao itself lists, id -> record, as the reference for every format."""
    return {m.id: m for m in agent.manager.get_all_entries()}


def parse_csv(text: str) -> list[dict]:
    assert text.startswith("\ufeff")  # UTF-8 with BOM
    return list(csv.DictReader(io.StringIO(text[1:], newline="")))


def undo(cell: str) -> str:
    """The documented reverse of the formula defusing: drop one leading apostrophe."""
    return cell[1:] if cell.startswith("'") else cell


def md_structure(text: str) -> tuple[list[str], list[str]]:
    """(headings, lines outside fences), following CommonMark's backtick-fence rule."""
    headings, outside, fence = [], [], None
    for line in text.split("\n"):
        run = re.match(r" {0,3}(`{3,})", line)
        if fence is None and run:
            fence = len(run.group(1))
        elif fence is not None:
            if run and len(run.group(1)) >= fence and not line.strip().strip("`"):
                fence = None
        else:
            outside.append(line)
            if line.startswith("#"):
                headings.append(line)
    assert fence is None, "a fence was left open"
    return headings, outside


# -- the page ---------------------------------------------------------------------------


def test_page_fragment_boosted_and_twin(client):
    page = soup(client.get("/export"))
    links = page.select("#export-downloads a[data-format]")
    assert {a["data-format"] for a in links} == set(FORMATS)
    assert all(a.has_attr("download") for a in links)
    assert page.select_one("#export-downloads ul")["hx-boost"] == "false"  # a real download
    assert page.select_one('tr[data-store="project"] [data-field="live"]').text == "4"
    assert page.select_one('nav a[aria-current="page"]').text == "Export"
    invisible = soup(client.get("/export?include_invisible=1"))
    assert all(
        "include_invisible=1" in a["href"] for a in invisible.select("#export-downloads a[data-format]")
    )
    assert invisible.select_one('input[name="include_invisible"]').has_attr("checked")
    assert soup(client.get("/export", headers=BOOSTED)).find("html") is not None
    twin = client.get("/export.json?include_invisible=1").get_json()
    assert twin["include_invisible"] is True
    assert twin["downloads"]["csv"] == "/export/memories.csv?include_invisible=1"
    by_store = {s["store"]: s for s in twin["stores"]}
    assert by_store["project"]["deleted"] == 1 and by_store["project"]["reviews"] == 2


@pytest.mark.parametrize("url", ["/export?include_invisible=yes", "/export/memories.csv?include_invisible=2"])
def test_bad_choice_is_400_with_reason(client, url):
    r = client.get(url)
    assert r.status_code == 400 and "include_invisible" in r.get_data(as_text=True)
    assert "Traceback" not in r.get_data(as_text=True)


@pytest.mark.parametrize(
    "fmt,mimetype", [("json", "application/json"), ("csv", "text/csv"), ("md", "text/markdown")]
)
def test_download_is_an_attachment_with_a_sensible_name(client, fmt, mimetype):
    r = download(client, fmt, invisible=True)
    assert r.mimetype == mimetype and r.mimetype_params["charset"] == "utf-8"
    disposition = r.headers["Content-Disposition"]
    assert re.fullmatch(
        r'attachment; filename="agentao-memory-project-\d{8}-\d{6}'
        rf'-with-invisible\.{fmt}"',
        disposition,
    ), disposition
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Cache-Control"] == "no-store"


# -- content ----------------------------------------------------------------------------


def test_json_has_every_live_memory_once_with_provenance(client, seeded):
    doc = download(client, "json").get_json()
    theirs = agent_live(seeded)
    ours = [m for g in doc["groups"] for m in g["memories"]]
    assert sorted(m["id"] for m in ours) == sorted(theirs) and doc["live_count"] == 6
    paths = {"project": str(seeded.project_db), "user": str(seeded.user_db)}
    for m in ours:
        a = theirs[m["id"]]
        assert (m["scope"], m["type"], m["source"], m["confidence"]) == (
            a.scope,
            a.type,
            a.source,
            a.confidence,
        )
        assert (m["key"], m["title"], m["content"], m["tags"], m["keywords"]) == (
            a.key_normalized,
            a.title,
            a.content,
            a.tags,
            a.keywords,
        )
        assert (m["created_at"], m["updated_at"]) == (a.created_at, a.updated_at)
        assert m["store_path"] == paths[m["store"]] and m["store"] == a.scope
        assert m["events"]["by_type"] == {"create": 1} and m["events"]["count"] == 1
    groups = [(g["scope"], g["type"]) for g in doc["groups"]]
    assert groups == sorted(set(groups))  # grouped by scope, then type, each group once
    assert "invisible" not in doc


def test_csv_rows_equal_the_data_and_parse_back(client, seeded):
    doc = download(client, "json", invisible=True).get_json()
    rows = parse_csv(download(client, "csv", invisible=True).get_data(as_text=True))
    assert list(rows[0]) == list(export.CSV_COLUMNS)
    assert [list(r.values()) for r in rows] == [export.csv_row(s, rec) for s, rec in export.records(doc)]
    live = [r for r in rows if r["section"] == "memory"]
    theirs = agent_live(seeded)
    assert sorted(r["id"] for r in live) == sorted(theirs)
    for r in live:
        a = theirs[r["id"]]
        assert undo(r["content"]) == a.content and json.loads(r["tags"]) == a.tags
        assert r["visible_to_agent"] == "yes" and r["store_path"].endswith("memory.db")
        assert r["events"].startswith("1 event (create 1)")
    assert {r["section"] for r in rows} == {"memory", "soft_deleted", "review_item", "session_summary"}
    assert all(r["visible_to_agent"] == "no" for r in rows if r["section"] != "memory")


def test_markdown_has_every_live_memory_once_grouped(client, seeded):
    text = download(client, "md").get_data(as_text=True)
    headings, _ = md_structure(text)
    for memory_id in agent_live(seeded):
        assert len(re.findall(rf"^- \*\*ID:\*\* {memory_id}$", text, re.M)) == 1
        assert text.count(memory_id) == 1
    assert "## Scope: project" in headings and "## Scope: user" in headings
    assert "### Type: project\\_fact (1)" in headings
    assert "Neovim with LazyVim." in text and "部署脚本在 scripts/deploy.sh。" in text
    assert len([h for h in headings if h.startswith("#### ")]) == 6


def test_soft_deleted_and_invisible_only_when_asked(client, seeded):
    plain = {fmt: download(client, fmt).get_data(as_text=True) for fmt in FORMATS}
    full = {fmt: download(client, fmt, invisible=True).get_data(as_text=True) for fmt in FORMATS}
    for fmt in FORMATS:
        assert "The old API lived at /v1." not in plain[fmt], fmt
        assert "I prefer tabs over spaces" not in plain[fmt], fmt  # review evidence
        assert "Fixed the flaky retry test." not in plain[fmt], fmt  # session summary
        assert "The old API lived at /v1." in full[fmt], fmt
        assert "I prefer tabs over spaces" in full[fmt], fmt
        assert "Fixed the flaky retry test." in full[fmt], fmt
    invisible = json.loads(full["json"])["invisible"]
    assert "invisible to the agent" in invisible["note"]
    assert [m["content"] for m in invisible["soft_deleted"]] == ["The old API lived at /v1."]
    assert invisible["soft_deleted"][0]["events"]["by_type"] == {"create": 1, "soft_delete": 1}
    assert {r["status"] for r in invisible["review_queue"]} == {"pending"}
    assert all(r["evidence"] for r in invisible["review_queue"])
    assert len(invisible["session_summaries"]) == 2
    headings, _ = md_structure(full["md"])
    at = headings.index("## Invisible to the agent, still in the files")
    deleted_at = full["md"].index("The old API lived at /v1.")
    assert deleted_at > full["md"].index("## Invisible to the agent, still in the files")
    assert headings[at + 1] == "### Soft-deleted memories (1)"


def test_browsing_and_exporting_never_write(client, seeded):
    before = file_digest(seeded.project_db, seeded.user_db)
    for url in ("/export", "/export.json", "/export?include_invisible=1"):
        assert client.get(url).status_code == 200
    for fmt in FORMATS:
        download(client, fmt)
        download(client, fmt, invisible=True)
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_a_missing_user_store_is_left_out_and_an_unreadable_one_named(tmp_path):
    agent = Agent(tmp_path, with_user_store=False)
    agent.save("editor", "Uses Neovim.")
    client = agent.app().test_client()
    doc = client.get("/export/memories.json").get_json()
    assert [s["store"] for s in doc["stores"]] == ["project"] and doc["live_count"] == 1
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all" * 100)
    doc = agent.app(USER_DB=broken).test_client().get("/export/memories.json").get_json()
    user = next(s for s in doc["stores"] if s["store"] == "user")
    assert user["problem"] and doc["live_count"] == 1


# -- hostile text -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory):
    agent = Agent(tmp_path_factory.mktemp("hostile-export"))
    planted = plant(agent)
    return agent, planted, agent.app().test_client()


def test_hostile_text_round_trips_in_json_and_csv(hostile_client):
    agent, planted, client = hostile_client
    doc = download(client, "json", invisible=True).get_json()
    by_id = {m["id"]: m for g in doc["groups"] for m in g["memories"]}
    rows = {r["id"]: r for r in parse_csv(download(client, "csv", invisible=True).get_data(as_text=True))}
    for name, text in HOSTILE.items():
        memory_id = planted[name][1]
        assert by_id[memory_id]["content"] == text, name
        assert undo(rows[memory_id]["content"]) == text, name
    typed = next(m for m in by_id.values() if m["key"] == "raw_json")
    assert typed["type"] == HOSTILE["hx_get"] and typed["tags"] == ['["unterminated']
    for r in rows.values():  # no cell can start a formula
        assert not any(v.startswith(("=", "+", "-", "@", "\t", "\r")) for v in r.values())


def test_a_lone_surrogate_in_a_tag_leaves_every_export_whole(hostile_client):
    """No UTF-8 holds a lone surrogate: each format writes it as its JSON escape and goes on,
    so the file ends as it should and holds every row (before: a 200 cut off at that row)."""
    agent, planted, client = hostile_client
    memory_id = planted["lone_surrogate"][1]
    live = set()  # from the files (agentao itself cannot read a store holding invalid UTF-8)
    for db in (agent.project_db, agent.user_db):
        conn = sqlite3.connect(db)
        live |= {r[0] for r in conn.execute("SELECT id FROM memories WHERE deleted_at IS NULL")}
        conn.close()
    doc = json.loads(download(client, "json").get_data(as_text=True))
    assert doc["groups"] and "incomplete" not in doc
    by_id = {m["id"]: m for g in doc["groups"] for m in g["memories"]}
    assert set(by_id) == live and LONE_SURROGATE in by_id[memory_id]["tags"]
    rows = {
        r["id"]: r
        for r in parse_csv(download(client, "csv").get_data(as_text=True))
        if r["section"] == "memory"
    }
    assert set(rows) == live
    assert LONE_SURROGATE in json.loads(rows[memory_id]["tags"])
    md = download(client, "md").get_data(as_text=True)
    assert "half\\ud800pair" in md and md.count("\n#### ") == len(live)


def test_formula_cells_are_defused():
    for value in (
        "=1+1",
        "+1",
        "-2",
        "@SUM(A1)",
        "\tx",
        "\rx",
        "'quoted",
        '=HYPERLINK("x")',
        "＝1+1",
        "＋1",
        "－2",
        "＠SUM(A1)",
        '＝HYPERLINK("x")',
        "﹦1",
        "﹢1",
        "﹣1",
        "﹫x",
        "＇q",
    ):
        assert export.csv_cell(value) == "'" + value
    for value in ("plain", "a=b", "", "部署", " =x", "ａ＝ｂ", "（＝）"):
        assert export.csv_cell(value) == value
    assert export.csv_cell(["a", "=b"]) == '["a", "=b"]' and export.csv_cell(None) == ""


def test_hostile_text_cannot_break_the_markdown(hostile_client):
    agent, planted, client = hostile_client
    text = download(client, "md", invisible=True).get_data(as_text=True)
    headings, outside = md_structure(text)
    ours = re.compile(
        r"^(# What the agent knows|## Scope: |### Type: |#### |## Invisible"
        r"|### (Soft-deleted|Review-queue|Session summaries))"
    )
    assert all(ours.match(h) for h in headings), [h for h in headings if not ours.match(h)]
    for line in outside:  # raw HTML, links and code spans need an unescaped < [ `
        assert not re.search(r"(?<!\\)[<\[`]", line), line
    assert text.count("<script>alert('pwn')</script>") >= 1  # inside fences, literal


def test_formula_cells_behind_invisible_characters_are_defused():
    """A spreadsheet skips NUL, a zero-width space, a BOM... before a formula: so does the rule."""
    for lead in ("\x00", "\u200b", "\ufeff", "\u2060", "\u202e", "\x00\u200b\ufeff"):
        for start in ("=1+1", "+1", "-2", "@SUM(A1)", "＝1"):
            assert export.csv_cell(lead + start) == "'" + lead + start, repr(lead + start)
    for value in ("\u200bplain", "\x00x", "\ufeff部署", "a\u200b=b"):
        assert export.csv_cell(value) == value


def test_a_fence_inside_content_does_not_close_the_block():
    content = "before\n```\n# not a heading\n````\n<script>x</script>"
    block = export.md_block(content)
    assert block.startswith("`````text\n") and block.endswith("\n`````")
    headings, outside = md_structure("# top\n\n" + block + "\n")
    assert headings == ["# top"] and "# not a heading" not in outside


# -- streamed in pieces -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_download_read_in_pieces_is_the_same_file(client, seeded, monkeypatch, fmt):
    """Rows are read a few at a time while the file is sent; the file does not depend on it."""
    whole = download(client, fmt, invisible=True)
    monkeypatch.setattr("dashboard.actions.export_document.PIECE", 2)
    monkeypatch.setattr("dashboard.actions.export.CHUNK", 1)
    pieces = client.get(f"/export/memories.{fmt}?include_invisible=1", buffered=False)
    assert pieces.is_streamed
    chunks = list(pieces.response)
    assert len(chunks) > 5  # sent as it is read, not built whole first
    # The same file but for the moment it was made (to the second: two downloads on a busy
    # machine fall in different seconds).
    made = re.compile(rb'(generated_at": "|Exported )[0-9T:.-]+')
    assert made.sub(rb"\1<now>", b"".join(chunks)) == made.sub(rb"\1<now>", whole.get_data())
    pieces.close()


def _first_then_rest(client, url, between):
    """Read the first chunk of a download, run ``between``, then read the rest."""
    r = client.get(url, buffered=False)
    chunks = iter(r.response)
    head = next(chunks)
    between()
    body = head + b"".join(chunks)
    r.close()
    return body.decode("utf-8")


def test_a_store_written_during_the_download_is_named_at_its_end(seeded, monkeypatch):
    monkeypatch.setattr("dashboard.actions.export_document.PIECE", 1)
    monkeypatch.setattr("dashboard.actions.export.CHUNK", 1)
    client = seeded.app().test_client()
    text = _first_then_rest(
        client, "/export/memories.json", lambda: seeded.save("late arrival", "Saved while the export ran.")
    )
    doc = json.loads(text)  # still one valid JSON document
    assert "Saved while the export ran." not in text  # the outline was taken before
    assert len(doc["incomplete"]) == 1 and str(seeded.project_db) in doc["incomplete"][0]
    assert "changed while it was exported" in doc["incomplete"][0]
    rows = parse_csv(
        _first_then_rest(
            client, "/export/memories.csv", lambda: seeded.save("later", "Saved during the CSV.")
        )
    )
    assert rows[-1]["section"] == "incomplete" and "Export again" in rows[-1]["content"]
    # Nothing written meanwhile: no such note.
    assert "incomplete" not in download(client, "json").get_json()
    assert all(
        r["section"] != "incomplete" for r in parse_csv(download(client, "csv").get_data(as_text=True))
    )


def test_a_store_gone_during_the_download_is_named_not_silently_cut(seeded, monkeypatch, tmp_path):
    monkeypatch.setattr("dashboard.actions.export_document.PIECE", 1)
    monkeypatch.setattr("dashboard.actions.export.CHUNK", 1)
    client = seeded.app().test_client()
    full = download(client, "md").get_data(as_text=True)
    aside = tmp_path / "aside.db"
    text = _first_then_rest(client, "/export/memories.md", lambda: seeded.user_db.rename(aside))
    aside.rename(seeded.user_db)
    assert len(text) < len(full)
    tail = text[text.index("## This export is incomplete") :]
    assert "could not be read and is missing from this file" in tail  # one row: singular
    assert export.md_inline(str(seeded.user_db)) in tail


def test_page_speaks_plain_words_and_becomes_cards_on_a_phone(client):
    page = soup(client.get("/export"))
    # What each download is for, next to it; the downloads come before the details.
    links = {
        a["data-format"]: a.find_parent("li").get_text(" ", strip=True)
        for a in page.select("#export-downloads a[data-format]")
    }
    assert "spreadsheet" in links["csv"] and "programs" in links["json"]
    html = str(page)
    assert html.index('id="export-downloads"') < html.index('id="export-contents"')
    table = page.select_one("#export-contents table.rows")
    row = table.select_one('tr[data-store="project"]')
    assert row.select_one("th.lead").get_text(" ", strip=True).startswith("Project ")
    assert all(td.has_attr("data-label") for td in row.select("td"))
    assert table.select_one('tr[data-store="user"] th.lead').get_text().startswith("Your user store")
    assert "journal" not in page.get_text().lower()
