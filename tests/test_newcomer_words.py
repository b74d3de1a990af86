"""The words a first-time user trips on, walked on the demo as they are read: numbers grouped
as the rest of the page groups them, each language punctuating its own sentences, a thing said
once and in plain words, a saved check confirmed where the eye is, and what to type after
agentao's refusal."""

from __future__ import annotations

import re

import pytest
from agentao_world import BrowserClient
from bs4 import BeautifulSoup

from dashboard import create_app
from dashboard.demo import build_demo

HTMX = {"HX-Request": "true"}
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
UNGROUPED = re.compile(r"\d{4}")  # "1845"; "1,845" is how the page writes it


@pytest.fixture
def client(tmp_path):
    project_dir, user_db = build_demo(tmp_path)
    app = create_app({"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False})
    app.project_dir = project_dir
    app.test_client_class = BrowserClient
    return app.test_client()


def soup(r):
    assert r.status_code in (200, 422), r.status_code
    return BeautifulSoup(r.get_data(as_text=True), "html.parser")


def words(node) -> str:
    return " ".join(node.get_text(" ").split())


def _memory(client, key) -> str:
    m = next(m for m in client.get("/memories.json").get_json()["items"] if m["key_normalized"] == key)
    return f"/memories/{m['store']}/{m['id']}"


def test_block_sizes_are_grouped_in_english_and_chinese(client):
    url = _memory(client, "preference_commit_messages_in_english")
    for headers in ({}, ZH):
        page = soup(client.get(url, headers=headers))
        for field in ("move-effect", "delete-effect"):
            said = words(page.select_one(f"[data-field={field}]"))
            assert "2,000" in said and not UNGROUPED.search(said), said
    # What approving did, on the card that answers the click.
    card = soup(client.get("/reviews")).select_one("article.review[data-item-id]")
    fields = {i["name"]: i["value"] for i in card.select("input[type=hidden]")}
    done = soup(client.post(f"/reviews/{card['data-item-id']}/approve", data=fields, headers=HTMX))
    said = words(done.select_one("[data-field=stable-after]"))
    assert re.search(r"now \d,\d{3} of 2,000 characters", said), said
    # The plan of a new memory.
    plan = soup(
        client.post("/memories/new/plan", data={"key": "coffee order", "value": "black"}, headers=HTMX)
    )
    said = words(plan.select_one("[data-field=block-size]"))
    assert re.search(r"\d,\d{3} → \d,\d{3} of 2,000 characters \([+-]\d+\)", said), said


def test_chinese_sentences_end_with_chinese_punctuation(client):
    about = soup(client.get("/about", headers=ZH)).select_one("#about-saved p")
    checks = soup(client.get("/checks", headers=ZH)).select_one("#checks-summary")
    preview = soup(client.get("/preview", query_string={"q": "deploy"}, headers=ZH)).select_one(
        "#how-read .summary"
    )
    for said in (words(about), words(checks), words(preview)):
        assert "." not in said and said.endswith("。"), said
    assert "项检查：" in words(checks)
    # English keeps its own.
    assert words(soup(client.get("/checks")).select_one("#checks-summary")) == "1 check: 1 fails."


def test_forget_about_you_says_goes_once(client):
    page = soup(client.get("/forget/about"))
    for part in page.select("section.about-store"):
        said = [s for s in part.stripped_strings if "Goes" in s]
        assert said == ["Goes"], said  # the heading; the line under it gives the counts
        assert words(part.select_one("[data-field=goes]")).startswith("In all: ")


def test_where_a_memory_came_from_is_in_plain_words(client):
    section = soup(client.get(_memory(client, "preference_commit_messages_in_english"))).select_one(
        "#provenance"
    )
    said = words(section)
    assert "crystallizer" not in said and "The person" not in said
    assert "You said it in 1 message." in said and "From your words:" in said
    assert (
        words(section.select_one("[data-field=evidence]")) == "from now on I want commit messages in English"
    )


def test_saving_a_check_says_what_was_saved_and_where(client):
    check = {
        "name": "deploy notes come up",
        "message": "how do I deploy the service?",
        "must_recall": "deploy",
    }
    r = client.post("/checks", data={**check, "store": "project"})
    assert r.status_code == 303
    status = soup(client.get(r.headers["Location"])).select_one("#status [data-said]")
    path = client.application.project_dir / ".agentao" / "memory-checks.json"
    assert words(status) == f"Saved the check “deploy notes come up” in {path}. It passes now."
    # Said once: a reload says nothing.
    assert soup(client.get(r.headers["Location"])).select_one("#status [data-said]") is None


def test_what_goes_out_looks_as_it_does_on_a_suggestion_card(client):
    card_warning = soup(client.get("/reviews")).select_one("[data-shared-warning], [data-warning]")
    plan = soup(
        client.post("/memories/new/plan", data={"key": "coffee order", "value": "black"}, headers=HTMX)
    )
    going = plan.select_one("[data-field=block-size] [data-field=block-left]")
    assert words(going).startswith("Goes out:")
    assert "consequence-bad" in card_warning["class"] and "consequence-bad" in going["class"]


@pytest.mark.parametrize(
    "headers, hint", [({}, "Type a key with at least one letter a–z"), (ZH, "请输入至少含")]
)
def test_an_empty_key_refusal_says_what_to_type(client, headers, hint):
    page = soup(
        client.post("/memories/new/plan", data={"key": "部署!", "value": "x"}, headers={**HTMX, **headers})
    )
    refusal = page.select_one("[data-field=new-refusal]")
    assert "Memory key is empty after normalization" in words(refusal)  # agentao's words, as they are
    assert words(refusal.select_one("[data-field=refusal-hint]")).startswith(hint)
