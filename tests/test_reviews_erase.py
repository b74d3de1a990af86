"""Reject and erase evidence: confirm first, then the text is gone from the files' bytes."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from agentao_world import Agent
from bs4 import BeautifulSoup

HTMX = {"HX-Request": "true"}
JSON = {"Accept": "application/json"}
ZEBRA = "I prefer zebra striped tables in every report."
PAGER = "We must never deploy on Fridays without the pager."


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def raw_hits(db: Path, *texts: str) -> list[tuple[str, str]]:
    """Which texts occur, byte for byte, in the database file or its side files."""
    found = []
    for suffix in ("", "-wal", "-journal"):
        f = Path(str(db) + suffix)
        data = f.read_bytes() if f.exists() else b""
        found += [(f.name, t) for t in texts if t.encode() in data]
    return found


@pytest.fixture
def two(agent) -> Agent:
    agent.crystallize(ZEBRA, PAGER)
    return agent


def item_with(client, evidence, status="pending"):
    items = client.get(f"/reviews.json?status={status}").get_json()["items"]
    return next(i for i in items if i["evidence"] == evidence)


def confirm_form(client, query):
    """The confirming form's fields, as the browser would post them."""
    page = soup(client.get(f"/reviews/erase?{query}"))
    form = page.select_one("#review-erase form")
    data = {}
    for i in form.select("input[type=hidden]"):
        data.setdefault(i["name"], []).append(i["value"])
    return page, data


def test_no_js_flow_confirms_then_erases_bytes_and_row(two):
    client = two.app().test_client()
    zebra = item_with(client, ZEBRA)
    assert raw_hits(two.project_db, ZEBRA, zebra["content"])  # there before
    page = soup(client.get("/reviews"))
    link = page.select_one(f'#review-{zebra["id"]} a[data-action="erase"]')
    assert link["href"] == f"/reviews/erase?ids={zebra['id']}"
    confirm, data = confirm_form(client, f"ids={zebra['id']}")
    [shown] = confirm.select("#review-erase article.erase-item")
    assert shown.select_one('[data-field="content"]').text == zebra["content"]
    assert shown.select_one('[data-field="evidence"]').text == ZEBRA
    assert "rejected, then erased" in shown.select_one('[data-field="effect"]').text
    assert shown.select_one("div").has_attr("hx-disable")

    # Without confirm=1 nothing happens.
    bare = client.post("/reviews/erase", data={"ids": zebra["id"]})
    assert bare.status_code == 400 and soup(bare).select_one('[data-field="problem"]')
    assert item_with(client, ZEBRA)["status"] == "pending"

    r = client.post("/reviews/erase", data=data)
    assert r.status_code == 303 and r.headers["Location"].startswith("/reviews/erased?report=")
    report = soup(client.get(r.headers["Location"]))
    row = report.select_one(f'li[data-item-id="{zebra["id"]}"]')
    assert row["data-erase-status"] == "verified erased"
    assert "(rejected first)" in row.text
    assert raw_hits(two.project_db, ZEBRA, zebra["content"]) == []
    assert raw_hits(two.project_db, PAGER)  # the other item stays
    for status in ("pending", "approved", "rejected"):
        ids = [i["id"] for i in client.get(f"/reviews.json?status={status}").get_json()["items"]]
        assert zebra["id"] not in ids
    assert [i.evidence for i in two.manager.list_review_items()] == [PAGER]


def test_json_answer_and_stale_fingerprint(two):
    client = two.app().test_client()
    zebra, pager = item_with(client, ZEBRA), item_with(client, PAGER)
    listed = client.get(f"/reviews/erase?ids={zebra['id']}&ids={pager['id']}", headers=JSON).get_json()
    seen = {i["id"]: i["seen"] for i in listed["items"]}
    refused = client.post("/reviews/erase", json={"ids": [zebra["id"]]}, headers=JSON)
    assert refused.status_code == 400 and "confirm" in refused.get_json()["message"]
    r = client.post(
        "/reviews/erase",
        headers=JSON,
        json={
            "ids": [zebra["id"], pager["id"]],
            "confirm": 1,
            f"seen-{zebra['id']}": seen[zebra["id"]],
            f"seen-{pager['id']}": "0" * 16,
        },
    )
    body = r.get_json()
    assert r.status_code == 409 and body["ok"] is False
    by_id = {i["id"]: i for i in body["items"]}
    assert by_id[zebra["id"]]["status"] == "verified erased" and by_id[zebra["id"]]["rejected"]
    assert by_id[pager["id"]]["status"] == "conflict"  # changed since: not erased
    assert raw_hits(two.project_db, ZEBRA) == [] and raw_hits(two.project_db, PAGER)
    assert "texts" not in body and ZEBRA not in r.get_data(as_text=True)


def test_busy_checkpoint_reports_pending_retry_then_retry_verifies(two):
    client = two.app().test_client()
    zebra = item_with(client, ZEBRA)
    _, data = confirm_form(client, f"ids={zebra['id']}")
    reader = sqlite3.connect(two.project_db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memory_review_queue").fetchone()  # the agent, reading
    try:
        r = client.post("/reviews/erase", data=data, headers=JSON)
        item = r.get_json()["items"][0]
        assert item["status"] == "pending, retry" and "retry" in item["message"].lower()
        assert r.get_json()["retryable"] is True
        token = r.get_json()["token"]
        page = soup(client.get(f"/reviews/erased?report={token}"))
        assert page.select_one(f'li[data-item-id="{zebra["id"]}"]')["data-erase-status"] == "pending, retry"
        assert page.select_one('button[data-action="erase-retry"]')
    finally:
        reader.close()
    again = client.post(f"/reviews/erased/{token}/retry")
    assert again.status_code == 303
    page = soup(client.get(again.headers["Location"]))
    assert page.select_one(f'li[data-item-id="{zebra["id"]}"]')["data-erase-status"] == "verified erased"
    assert raw_hits(two.project_db, ZEBRA, zebra["content"]) == []


def test_erase_from_rejected_tab_with_htmx_and_copies_named(two):
    client = two.app().test_client()
    pager = item_with(client, PAGER)
    page = soup(client.get("/reviews"))
    card = page.select_one(f"#review-{pager['id']}")
    client.post(
        f"/reviews/{pager['id']}/reject",
        data={i["name"]: i["value"] for i in card.select("input[type=hidden]")},
    )
    copy = Path(str(two.project_db) + ".bak")
    shutil.copy(two.project_db, copy)
    rejected = soup(client.get("/reviews?status=rejected"))
    bulk = rejected.select_one('button[data-bulk="erase"]')
    assert (bulk["formmethod"], bulk["formaction"]) == ("get", "/reviews/erase")  # no-JS bulk
    assert rejected.select_one(f'#review-{pager["id"]} a[data-action="erase"]')
    frag = soup(client.get(f"/reviews/erase?ids={pager['id']}", headers=HTMX))
    assert frag.find("html") is None and "erased" in frag.select_one('[data-field="effect"]').text
    _, data = confirm_form(client, f"ids={pager['id']}")
    r = client.post("/reviews/erase", data=data, headers=HTMX)
    out = soup(r)
    row = out.select_one(f'li[data-item-id="{pager["id"]}"]')
    assert row["data-erase-status"] == "verified erased"
    assert [c.text for c in row.select("[data-copy]")] == [str(copy)]
    assert out.select_one("#review-tabs")["hx-swap-oob"] == "true"
    assert raw_hits(two.project_db, PAGER) == []


def test_bad_input_is_a_clear_message(two):
    client = two.app().test_client()
    assert client.get("/reviews/erase").status_code == 400
    assert client.get("/reviews/erase?ids=not%20an%20id").status_code == 400
    missing = soup(client.get("/reviews/erase?ids=abcdef"))
    assert "abcdef" in missing.select_one('[data-field="missing"]').text
    assert client.get("/reviews/erased?report=unknown").status_code == 404


def test_hostile_text_on_confirm_report_and_effect_pages_stays_inert(agent):
    from hostile import plant
    from test_hostile import check_inert

    planted = plant(agent)
    client = agent.app().test_client()
    ids = [i["id"] for i in client.get("/reviews.json").get_json()["items"]]
    query = "&".join(f"ids={i}" for i in ids)
    for headers in ({}, HTMX):
        html = client.get(f"/reviews/erase?{query}", headers=headers).get_data(as_text=True)
        assert "pwn" in html
        check_inert(html, "confirm")
    store, memory_id = planted["script"]
    memory = client.get(f"/memories/{store}/{memory_id}.json").get_json()["memory"]
    check_inert(client.get(f"/memories/{store}/{memory_id}").get_data(as_text=True), "detail")
    effect = client.get(
        f"/memories/{store}/{memory_id}/effect",
        query_string={"value": memory["content"] + " <b>pwn</b>", "tags": "pwn"},
    )
    assert effect.status_code == 200 and soup(effect).select_one("#edit-effect [data-block-effect]")
    check_inert(effect.get_data(as_text=True), "edit effect")
    _, data = confirm_form(client, query)
    r = client.post("/reviews/erase", data=data)
    check_inert(client.get(r.headers["Location"]).get_data(as_text=True), "report")
