"""Pictures: SVG builders (escaping, geometry, text alternatives) and where the screens show them."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter

import pytest
from agentao_world import Agent, file_digest
from bs4 import BeautifulSoup
from markupsafe import Markup

from dashboard.pictures import (
    columns,
    fill_periods,
    residue_rows,
    score_bars,
    stacked_bars,
)
from dashboard.pictures.svg import number
from dashboard.words import label

HOSTILE_LABEL = "</text><script>alert('pwn')</script><text onload=\"x\">&amp;"
HTMX = {"HX-Request": "true"}


def svg(markup) -> BeautifulSoup:
    found = BeautifulSoup(str(markup), "html.parser").find("svg")
    assert found is not None
    return found


def assert_accessible_and_csp_clean(el) -> None:
    assert el["role"] == "img" and el.has_attr("data-chart")
    title_id, desc_id = el["aria-labelledby"].split()
    assert el.find("title", id=title_id).text and el.find("desc", id=desc_id).text
    for node in el.find_all(True):
        assert "style" not in node.attrs and not [a for a in node.attrs if a.startswith("on")]
        assert node.name in {"title", "desc", "rect", "text", "line", "g"}, node.name


def widths(el, cls="seg") -> list[float]:
    return [float(r["width"]) for r in el.find_all("rect", class_=cls)]


# -- builders ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda label: stacked_bars([(label, [(label, 3), ("b", 1)])], title=label, chart_id="t"),
        lambda label: stacked_bars([(label, [(label, 3)])], title=label, chart_id="t", inline=True),
        lambda label: columns([label], {label: [2]}, title=label, chart_id="t"),
        lambda label: score_bars([(label, [("title", 3.0), ("stale", -2.0)])]),
    ],
)
def test_hostile_labels_are_escaped_text(build):
    markup = build(HOSTILE_LABEL)
    assert isinstance(markup, Markup)
    assert "<script>" not in markup and "</text><script>" not in markup
    assert "&lt;/text&gt;&lt;script&gt;" in markup and "&amp;amp;" in markup
    el = svg(markup)
    assert el.find("script") is None
    assert_accessible_and_csp_clean(el)
    assert HOSTILE_LABEL in el.find("desc").text  # shown literally, as text


def test_control_and_bidi_characters_are_replaced():
    el = svg(stacked_bars([("a\x00b\u202ec\x1b", [("x", 1)])], title="t", chart_id="c"))
    label = el.find("text", class_="bar-label").text
    assert label == "a\ufffdb\ufffdc\ufffd"


def test_stacked_bars_scale_stack_and_describe():
    el = svg(
        stacked_bars(
            [("one", [("a", 2), ("b", 6)]), ("two", [("a", 4)])], title="T", chart_id="bars", unit="memories"
        )
    )
    a1, b1, a2 = widths(el)
    assert a1 * 2 == pytest.approx(a2, abs=0.2) and b1 == pytest.approx(3 * a1, abs=0.2)
    rects = el.find_all("rect", class_="seg")
    assert float(rects[1]["x"]) == pytest.approx(float(rects[0]["x"]) + a1, abs=0.2)  # stacked
    assert rects[0]["fill"] == rects[2]["fill"] != rects[1]["fill"]  # colour per segment name
    assert el.find("desc").text == ("one: a 2, b 6 (total 8 memories); two: a 4 (total 4 memories).")
    assert [t.text for t in el.find_all("text", class_="legend")] == ["a", "b"]


def test_chinese_labels_get_room_for_their_width():
    """A Chinese character is drawn about twice as wide as a letter: the bar label is not
    cut at the picture's left edge, and a segment name is drawn inside only when it fits."""
    el = svg(
        stacked_bars([("作用域", [("本项目", 60), ("工作流程", 1)])], title="T", chart_id="zh", inline=True)
    )
    first = el.find("rect", class_="seg")
    assert float(first["x"]) >= 3 * 13 + 6  # room for the three characters of 作用域
    assert [t.text for t in el.find_all("text", class_="seg-label")] == ["本项目"]


def test_negative_terms_go_left_of_the_zero_line():
    el = svg(score_bars([("m", [("title", 3.0), ("recency", 0.5), ("stale", -2.0)]), ("n", [("tag", 1.5)])]))
    zero = float(el.find("line", class_="zero")["x1"])
    rects = el.find_all("rect", class_="seg")
    stale = next(r for r in rects if "stale" in r.title.text)
    assert float(stale["x"]) + float(stale["width"]) == pytest.approx(zero, abs=0.2)
    assert all(float(r["x"]) >= zero - 0.2 for r in rects if r is not stale)
    assert "m: title 3, recency 0.5, stale -2 (total 1.5)" in el.find("desc").text

    # The same term keeps its colour in every picture (stale: always the penalty red).
    def colours(chart):
        return {
            r.title.text.split(": ")[1].split()[0]: r["fill"] for r in chart.find_all("rect", class_="seg")
        }

    first, again = colours(el), colours(svg(score_bars([("z", [("stale", -1.0), ("title", 1.0)])])))
    assert again["title"] == first["title"] and again["stale"] == first["stale"] != first["title"]


def test_columns_heights_follow_the_values():
    el = svg(
        columns(["2026-01", "2026-02"], {"created": [4, 2], "updated": [0, 1]}, title="T", chart_id="tl")
    )
    heights = [float(r["height"]) for r in el.find_all("rect", class_="col")]
    assert heights[0] == pytest.approx(2 * heights[2]) and heights[1] == 0
    assert heights[3] == pytest.approx(heights[0] / 4)
    assert el.find("desc").text == "2026-01: created 4, updated 0; 2026-02: created 2, updated 1."


def test_fill_periods_adds_empty_months_and_weeks_across_a_year():
    rows = [
        {"period": "2025-11", "created": 1, "updated": 0},
        {"period": "2026-02", "created": 2, "updated": 1},
    ]
    assert [p["period"] for p in fill_periods(rows, "month")] == ["2025-11", "2025-12", "2026-01", "2026-02"]
    weeks = fill_periods(
        [
            {"period": "2025-W51", "created": 1, "updated": 0},
            {"period": "2026-W02", "created": 1, "updated": 0},
        ],
        "week",
    )
    assert [p["period"] for p in weeks] == ["2025-W51", "2025-W52", "2026-W00", "2026-W01", "2026-W02"]
    odd = fill_periods([{"period": "garbage", "created": 1, "updated": 0}], "month")
    assert [p["period"] for p in odd] == ["garbage"]


# -- the overview's tallies against agentao-written rows ------------------------------


def _file_kinds(db) -> list[dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [
            dict(r)
            for r in conn.execute(
                "SELECT scope, type, source, confidence, deleted_at IS NOT NULL AS deleted,"
                " COUNT(*) AS n FROM memories GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
            )
        ]
    finally:
        conn.close()


def _assert_overview_equals_agentao(client, agent):
    before = file_digest(agent.project_db, agent.user_db)
    data = client.get("/overview.json").get_json()
    assert file_digest(agent.project_db, agent.user_db) == before  # browsing never writes
    periods = data["timeline"]["periods"]
    entries = agent.manager.get_all_entries()  # what agentao itself sees
    week = sqlite3.connect(":memory:")
    label = {
        "month": lambda stamp: stamp[:7],
        "week": lambda stamp: week.execute("SELECT strftime('%Y-W%W', ?)", (stamp,)).fetchone()[0],
    }[data["timeline"]["by"]]
    created = Counter(label(e.created_at) for e in entries)
    updated = Counter(label(e.updated_at) for e in entries if e.updated_at > e.created_at)
    assert {p["period"]: p["created"] for p in periods if p["created"]} == dict(created)
    assert {p["period"]: p["updated"] for p in periods if p["updated"]} == dict(updated)
    assert [p["period"] for p in periods] == sorted(p["period"] for p in periods)
    counts = {st["store"]: st["counts"] for st in data["stores"]}
    assert counts["project"] == _file_kinds(agent.project_db)
    assert counts["user"] == _file_kinds(agent.user_db)


def test_overview_tallies_follow_agentao_writes(agent):
    # The copy keeps the counts row by row: after a first view, saves, an
    # update and a soft delete arrive as events, and a hand edit (no events)
    # makes it reload the file; the numbers must equal the file's each time.
    client = agent.app().test_client()
    agent.save("seed", "the first row")
    client.get("/overview.json")
    for n in range(6):
        agent.save(f"fact {n}", f"value {n}", scope="project" if n % 2 else "user")
    agent.save("fact 1", "changed value")  # an update
    gone = agent.save("gone", "soon deleted")
    agent.manager.delete(gone.id)
    _assert_overview_equals_agentao(client, agent)  # all in one month: by week
    conn = sqlite3.connect(agent.project_db)  # spread the project rows over months
    conn.execute("UPDATE memories SET created_at = '2025-10-03T10:00:00' WHERE key_normalized = 'fact_3'")
    conn.execute(
        "UPDATE memories SET created_at = '2025-12-24T10:00:00',"
        " updated_at = '2026-01-02T09:00:00' WHERE key_normalized = 'fact_5'"
    )
    conn.commit()
    conn.close()
    _assert_overview_equals_agentao(client, agent)
    assert client.get("/overview.json").get_json()["timeline"]["by"] == "month"


# -- on the screens ---------------------------------------------------------------------


def test_overview_shows_composition_and_timeline_with_numbers(client, seeded):
    before = file_digest(seeded.project_db, seeded.user_db)
    page = BeautifulSoup(client.get("/overview").data, "html.parser")
    section = page.select_one("#overview-pictures")
    assert section.has_attr("hx-disable")
    for chart in ("composition", "timeline"):
        assert_accessible_and_csp_clean(section.select_one(f'svg[data-chart="{chart}"]'))
    counts = {
        (r["data-dimension"], r["data-value"]): int(r["data-count"])
        for r in section.select('[data-table="composition"] tr[data-dimension]')
    }
    assert counts[("scope", "project")] == 4 and counts[("scope", "user")] == 2
    assert counts[("source", "explicit")] == 6 and counts[("type", "project_fact")] == 1
    desc = section.select_one('svg[data-chart="composition"] desc').text
    assert "scope: this project 4, about you 2 (total 6 memories)" in desc
    timeline = client.get("/overview.json").get_json()["timeline"]
    assert sum(p["created"] for p in timeline["periods"]) == 6
    rows = section.select('[data-table="timeline"] tr[data-period]')
    assert sum(int(r.select_one('[data-field="created"]').text) for r in rows) == 6
    assert section.select_one("#picture-timeline")["data-by"] == timeline["by"]
    fragment = BeautifulSoup(client.get("/overview", headers=HTMX).data, "html.parser")
    assert fragment.select_one("#store-cards") and fragment.select_one("#overview-pictures") is None
    assert file_digest(seeded.project_db, seeded.user_db) == before


def test_overview_pictures_with_empty_and_missing_stores(tmp_path):
    agent = Agent(tmp_path, with_user_store=False)
    page = BeautifulSoup(agent.app().test_client().get("/overview").data, "html.parser")
    assert page.select_one('svg[data-chart="timeline"] desc').text == "No memories yet."
    assert page.select('[data-table="composition"] tr[data-dimension]') == []


def test_hostile_type_on_overview_is_text(agent):
    agent.save("x", "y", type=HOSTILE_LABEL)
    page = agent.app().test_client().get("/overview").get_data(as_text=True)
    soup = BeautifulSoup(page, "html.parser")
    assert [s.get("src") for s in soup.find_all("script")] == [
        "/static/htmx-2.0.11.min.js",
        "/static/live.js",
    ]
    chart = soup.select_one('svg[data-chart="composition"]')
    assert chart.find("script") is None and "type: " + HOSTILE_LABEL in chart.find("desc").text
    assert HOSTILE_LABEL in [r["data-value"] for r in soup.select('tr[data-dimension="type"]')]


def test_forget_residue_shows_where_residue_sits(client, seeded):
    page = BeautifulSoup(client.get("/forget/residue/project").data, "html.parser")
    chart = page.select_one('[data-picture="residue"] svg[data-chart="residue-project"]')
    assert_accessible_and_csp_clean(chart)
    report = client.get("/forget/residue/project.json").get_json()
    rows = dict(residue_rows(report))
    assert dict(rows["database"])["soft-deleted memories"] == report["soft_deleted"]["bytes"] > 0
    assert dict(rows["database"])["free pages"] == report["free_pages"]["bytes"]
    assert ("-wal" in rows) == bool(report["wal"]["exists"])
    assert re.search(r"database: soft-deleted memories \d+", chart.find("desc").text)


def test_preview_shows_each_candidates_score_as_its_terms(client):
    for headers in ({}, HTMX):
        page = BeautifulSoup(
            client.get("/preview?q=which package manager pyproject deploy", headers=headers).data,
            "html.parser",
        )
        chart = page.select_one('[data-picture="scores"] svg[data-chart="recall-scores"]')
        assert_accessible_and_csp_clean(chart)
        rows = page.select("tr.candidate")[:12]
        labels = chart.find_all("text", class_="bar-label")
        assert len(labels) == len(rows) > 0
        desc = chart.find("desc").text
        for row in rows:  # the picture's numbers are the table's numbers
            terms = [
                (td["data-term"], float(td["data-contribution"]))
                for td in row.select("td[data-term]")
                if float(td["data-contribution"])
            ]
            for name, value in terms:
                assert f"{label('term', name)} {number(value)}" in desc  # the table header's word
    empty = BeautifulSoup(client.get("/preview?q=zzzz-nothing-matches").data, "html.parser")
    assert empty.select_one('[data-picture="scores"]') is None


@pytest.mark.parametrize(
    "value,text",
    [(3, "3"), (3.0, "3"), (0.5, "0.5"), (1 / 3, "0.33"), (-2.0, "-2"), (0.001, "0.001"), (2.999, "3")],
)
def test_numbers_read_well(value, text):
    assert number(value) == text


def test_no_residue_no_picture(agent):
    agent.save("editor", "Uses Neovim.")
    client = agent.app().test_client()
    page = BeautifulSoup(client.get("/forget/residue/project").data, "html.parser")
    report = client.get("/forget/residue/project.json").get_json()
    assert not any(v for _, parts in residue_rows(report) for _, v in parts)
    assert page.select_one('[data-picture="residue"]') is None
    assert page.select_one('[data-field="soft_deleted"]').text == "0"


def test_a_score_bar_numbers_only_the_memories_recalled(tmp_path):
    """The preview's bars lead with the rank of what the message recalls ("1. deploy"); a memory
    that matches but is not recalled (the demo's two deploy notes are always on already) has no
    rank, and no stray "–." before its title."""
    from dashboard import create_app
    from dashboard.demo import build_demo

    project_dir, user_db = build_demo(tmp_path)
    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    page = BeautifulSoup(
        app.test_client().get("/preview?q=how+do+I+deploy+the+service").get_data(as_text=True), "html.parser"
    )
    bars = [t.get_text() for t in page.select("#recall svg text")]
    assert "– deploy 部署" in bars and "– staging deploy" in bars, bars
    assert not [b for b in bars if b.startswith("–.")], bars
