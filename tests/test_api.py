"""The JSON API as a script meets it: names, inputs and answers checked against agentao itself."""

from __future__ import annotations

import json
import random
import sqlite3
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from agentao.memory import MemoryGuard, MemoryRetriever, SQLiteMemoryStore
from agentao.memory.guards import SensitiveMemoryError
from agentao.prompts.helpers import extract_context_hints
from agentao_world import Agent, agentao_blocks

JSON = {"Accept": "application/json"}
ASOF = "2031-01-01T00:00:00"
WHEN = datetime(2031, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def ticking(monkeypatch):
    """agentao's save clock, one second a save: newer notes push older ones out of the
    stable block's three incidental places, whatever second the test runs in."""
    import agentao.memory.manager as agentao_manager
    import agentao.memory.storage as agentao_storage

    clock = {"t": datetime(2030, 6, 1)}

    def now():
        clock["t"] += timedelta(seconds=1)
        return clock["t"].strftime("%Y-%m-%dT%H:%M:%S")

    monkeypatch.setattr(agentao_manager, "_now", now)
    monkeypatch.setattr(agentao_storage, "_now_iso", lambda: clock["t"].strftime("%Y-%m-%dT%H:%M:%S"))


# --------------------------------------------------------------------------- preview inputs
def _eleven_messages():
    """Eleven messages, the first of three lines: agentao's last-10 window drops only it."""
    first = {"role": "user", "content": "look at\nbilling/first.py\nplease"}
    rest = [
        {
            "role": "assistant" if n % 2 else "user",
            "content": [{"type": "text", "text": f"see pyproject.toml line {n}"}],
        }
        for n in range(10)
    ]
    return [first] + rest


def test_messages_as_agentao_message_objects(client):
    msgs = (
        [{"role": "user", "content": "notes\nfix scripts/deploy.sh\nthen docs/a.md"}]
        + [{"role": "user", "content": "ok"}] * 8
        + [{"role": "user", "content": "and pyproject.toml"}]
    )
    want = extract_context_hints(msgs)
    got = client.get("/preview.json", query_string={"q": "uv", "messages": json.dumps(msgs)}).get_json()
    assert got["messages_format"] == "json" and got["messages_count"] == 10
    assert got["context_hints"] == want == ["scripts/deploy.sh", "docs/a.md", "pyproject.toml"]
    # One message per line would have shifted agentao's window: the same text as lines differs.
    lines = "\n".join(m["content"] for m in msgs)
    as_lines = client.get("/preview.json", query_string={"q": "uv", "messages": lines}).get_json()
    assert as_lines["messages_format"] == "lines" and as_lines["context_hints"] != want

    eleven = _eleven_messages()
    posted = client.post("/preview.json", json={"q": "uv", "messages": eleven}).get_json()
    assert posted["context_hints"] == extract_context_hints(eleven)
    assert "billing/first.py" not in posted["context_hints"]


def test_bad_messages_are_refused_with_a_reason(client):
    r = client.get("/preview.json", query_string={"q": "uv", "messages": '["just text"]'})
    assert r.status_code == 400 and "message objects" in r.get_json()["message"]
    r = client.post("/preview.json", json={"q": 3})
    assert r.status_code == 400 and "'q'" in r.get_json()["message"]
    assert client.post("/preview.json", data="not json", content_type="application/json").status_code == 400
    assert client.get("/preview.json?per_page=201").status_code == 400


def test_context_hints_given_directly_recall_as_agentao(client, seeded, ticking):
    """``context_hints`` as agentao's recall_candidates takes them, instead of the messages'."""
    seeded.save("retries", "Failed charges are retried by billing/retry_worker.py.", ["jobs"], type="note")
    for n in range(3):  # newer notes take the stable block's incidental places
        seeded.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    hints = ["billing/retry_worker.py"]
    got = client.get(
        "/preview.json",
        query_string={
            "q": "where is the code",
            "context_hints": hints,
            "asof": ASOF,
            "messages": "ignored.py",
        },
    ).get_json()
    assert got["context_hints"] == hints and got["context_hints_from"] == "request"
    mgr = seeded.manager
    stable_ids = {e["id"] for e in got["stable_entries"] if e["shown"]}
    import agentao.memory.retriever as agentao_retriever

    real = agentao_retriever.datetime

    class Pinned(real):
        @classmethod
        def now(cls, tz=None):
            return WHEN.astimezone(tz)

    agentao_retriever.datetime = Pinned
    try:
        theirs = MemoryRetriever(mgr).recall_candidates(
            "where is the code", context_hints=hints, exclude_ids=stable_ids
        )
    finally:
        agentao_retriever.datetime = real
    assert [c.title for c in theirs] == ["retries"], "the hint alone recalls it"
    in_block = [c for c in got["candidates"] if c["mark"] == "in_block"]
    assert [c["id"] for c in in_block] == [c.memory_id for c in theirs]
    # excerpt: agentao's RecallCandidate.excerpt, per candidate
    assert [c["excerpt"] for c in in_block] == [c.excerpt for c in theirs]


# --------------------------------------------------------------------------- preview size
def _bulk(agent: Agent, n: int) -> None:
    """``n`` memories in agentao's schema, keys and keywords by agentao's guard, in one
    transaction (saving one by one through the manager costs 10 ms a row)."""
    guard, rng = MemoryGuard(), random.Random(n)
    words = "billing retry region cache deploy queue token worker sync report".split()
    rows = []
    for i in range(n):
        scope = "user" if i % 5 == 0 else "project"
        title = f"note {i} " + " ".join(rng.sample(words, 2))
        content = "billing " + " ".join(rng.choice(words) for _ in range(30))
        tags = rng.sample(words, 2)
        stamp = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10:{i % 60:02d}:00"
        rows.append(
            (
                scope,
                uuid.uuid4().hex[:12],
                "preference" if scope == "user" else "note",
                guard.normalize_key(title),
                title,
                content,
                json.dumps(tags),
                json.dumps(guard.extract_keywords(title, tags, content)),
                stamp,
                stamp,
            )
        )
    for scope, path in (("project", agent.project_db), ("user", agent.user_db)):
        SQLiteMemoryStore.open(path)
        with sqlite3.connect(path) as conn:
            conn.executemany(
                "INSERT INTO memories (id, scope, type, key_normalized, title, content, "
                "tags_json, keywords_json, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [(r[1], r[0], *r[2:]) for r in rows if r[0] == scope],
            )
        conn.close()


def _twin(tmp_path, n):
    agent = Agent(tmp_path / str(n))
    _bulk(agent, n)
    client = agent.app().test_client()
    return client, client.get("/preview.json", query_string={"q": "billing retry", "asof": ASOF})


def test_preview_twin_does_not_grow_with_the_store(tmp_path):
    small, large = (len(_twin(tmp_path, n)[1].get_data()) for n in (200, 2000))
    print(f"preview twin: {small} bytes at 200 memories, {large} at 2,000")
    assert large < small * 1.25, (small, large)


@pytest.mark.parametrize("n", [200, 2000])
def test_preview_twin_pages_the_candidates(tmp_path, n):
    client, r = _twin(tmp_path, n)
    data = r.get_json()
    assert data["candidates_total"] >= n * 4 // 5  # nearly every row matches "billing"
    assert len(data["candidates"]) == 100 and data["candidates_pages"] > 1
    assert (
        data["marks"].get("in_block", 0)
        + data["marks"].get("cut_context_budget", 0)
        + data["marks"].get("cut_top5", 0)
        + data["marks"].get("excluded_stable", 0)
        == data["candidates_total"]
    )
    assert data["stable_entries_total"] >= n // 5 > len(data["stable_entries"]) - 100
    assert data["never_recalled"] == {"reason": "no signal", "count": n - data["candidates_total"]}
    # The first page holds the block and its cuts, ranked; the next one goes on from there.
    ranks = [c["rank"] for c in data["candidates"]]
    assert ranks == list(range(1, 101))
    page2 = client.get(
        "/preview.json",
        query_string={"q": "billing retry", "asof": ASOF, "candidates_page": 2, "per_page": 100},
    ).get_json()
    assert [c["rank"] for c in page2["candidates"]][:1] == [101]
    # The page's table shows the first rows in the twin's order and says how many more match.
    from bs4 import BeautifulSoup

    from dashboard.views.preview import RANKED_FIRST

    html = BeautifulSoup(
        client.get("/preview", query_string={"q": "billing retry", "asof": ASOF}).get_data(as_text=True),
        "html.parser",
    )
    shown = [tr["data-memory-id"] for tr in html.select("#recall tbody tr[data-memory-id]")]
    assert shown == [c["id"] for c in data["candidates"][:RANKED_FIRST]]
    assert int(html.select_one("[data-more]")["data-more"]) == data["candidates_total"] - RANKED_FIRST
    # 200 candidates of about 1.5 kB plus 2,000-character blocks: far under 600 kB at any size.
    assert len(r.get_data()) < 600_000, len(r.get_data())


# --------------------------------------------------------------------------- reviews
@pytest.fixture
def queue(agent) -> Agent:
    agent.crystallize(
        "I prefer tabs over spaces. We must never push to main.",
        "I use token=abcdefgh12345678 for the staging API.",
    )
    return agent


def test_all_tab_in_agentao_order(queue):
    client = queue.app().test_client()
    first = client.get("/reviews.json").get_json()["items"][0]
    r = client.post(
        f"/reviews/{first['id']}/reject", json={"seen": first["plan"]["item_fingerprint"]}, headers=JSON
    )
    assert r.status_code == 200
    got = client.get("/reviews.json?status=all").get_json()
    want = [i.id for i in queue.manager.project_store.list_review_items(status=None)]
    assert [i["id"] for i in got["items"]] == want and len(want) == 3
    assert {i["status"] for i in got["items"]} == {"pending", "rejected"}


def test_decided_item_answers_its_state_without_placeholders(queue):
    client = queue.app().test_client()
    item = next(i for i in client.get("/reviews.json").get_json()["items"] if not i["plan"]["refusal"])
    plan = item["plan"]
    ok = client.post(
        f"/reviews/{item['id']}/approve",
        headers=JSON,
        json={"seen": plan["item_fingerprint"], "target": plan["target_fingerprint"]},
    )
    assert ok.status_code == 200
    for action in ("approve", "reject"):
        again = client.post(f"/reviews/{item['id']}/{action}", json={}, headers=JSON)
        outcome = again.get_json()["outcomes"][0]
        assert again.status_code == 409, again.get_json()
        assert outcome["outcome"] == "not_pending" and outcome["state"] == "approved"
        assert "no longer pending (it is approved)" in outcome["message"]
    gone = client.post("/reviews/nosuchitem/reject", json={}, headers=JSON)
    assert gone.status_code == 404 and gone.get_json()["outcomes"][0]["outcome"] == "not_pending"
    # A pending item still needs the versions the page showed.
    pending = next(i for i in client.get("/reviews.json").get_json()["items"])
    assert client.post(f"/reviews/{pending['id']}/reject", json={}, headers=JSON).status_code == 400


def test_refusal_names_agentaos_exception(queue):
    client = queue.app().test_client()
    secret = next(i for i in client.get("/reviews.json").get_json()["items"] if i["plan"]["refusal"])
    assert secret["plan"]["refusal_error"] == "SensitiveMemoryError"
    r = client.post(
        f"/reviews/{secret['id']}/approve",
        headers=JSON,
        json={"seen": secret["plan"]["item_fingerprint"], "target": secret["plan"]["target_fingerprint"]},
    )
    outcome = r.get_json()["outcomes"][0]
    assert r.status_code == 422 and outcome["outcome"] == "refused"
    with pytest.raises(Exception) as theirs:
        queue.manager.approve_review_item(secret["id"])
    assert outcome["error_type"] == type(theirs.value).__name__ == SensitiveMemoryError.__name__
    assert outcome["message"] == str(theirs.value)


# --------------------------------------------------------------------------- one memory
def test_memory_twin_carries_what_an_edit_sends_back(client, seeded):
    listing = client.get("/memories.json?q=Neovim").get_json()["items"][0]
    detail = client.get(f"/memories/{listing['store']}/{listing['id']}.json").get_json()
    write = detail["write"]
    status = next(
        s for s in client.get("/overview.json").get_json()["stores"] if s["store"] == listing["store"]
    )
    assert write["change"] == status["change_counter"] is not None
    assert write["writable"] is True and write["target"]
    r = client.post(
        write["actions"]["edit"],
        headers=JSON,
        json={
            "value": "Uses Helix now.",
            "updated_at": write["updated_at"],
            "row": write["row"],
            "change": write["change"],
        },
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["outcome"] == "edited"
    # an empty value is agentao's ValueError, not a sensitive-content refusal
    after = client.get(f"/memories/{listing['store']}/{listing['id']}.json").get_json()["write"]
    r = client.post(
        after["actions"]["edit"],
        headers=JSON,
        json={"value": "   ", "updated_at": after["updated_at"], "row": after["row"]},
    )
    assert r.status_code == 422 and r.get_json()["error_type"] == "ValueError"
    with pytest.raises(ValueError) as theirs:
        seeded.save("editor", "   ")
    assert type(theirs.value) is ValueError


# --------------------------------------------------------------------------- --cjk
@pytest.fixture
def chinese(agent, ticking) -> Agent:
    agent.save("部署 deploy", "部署脚本在 scripts/deploy.sh。", ["运维"], type="note")
    for n in range(3):  # newer notes take the stable block's incidental places
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    return agent


def test_cjk_setting_matches_the_agents_jieba(chinese, monkeypatch):
    """The same Chinese query recalls the memory with jieba and not without; each equals
    agentao run the same way, whatever the dashboard's own environment has."""
    import agentao.memory.retriever as agentao_retriever

    answers = {}
    for setting in ("on", "off"):
        client = chinese.app(CJK=setting).test_client()
        data = client.get("/preview.json", query_string={"q": "脚本", "asof": ASOF}).get_json()
        page = client.get("/preview", query_string={"q": "脚本", "asof": ASOF}).get_data(as_text=True)
        assert data["cjk_setting"] == setting and f'data-cjk-setting="{setting}"' in page
        assert data["cjk_mode"] == ("jieba" if setting == "on" else "latin-only")
        with monkeypatch.context() as mp:
            if setting == "off":

                def missing():
                    raise ImportError("jieba hidden for this test")

                mp.setattr(agentao_retriever, "_import_jieba", missing)
            _, theirs = agentao_blocks(chinese, "脚本", now=WHEN)
        assert data["context_block"] == theirs
        answers[setting] = data["context_block"]
    assert "部署" in answers["on"] and answers["off"] == ""


def test_cjk_on_without_jieba_stops_at_start(monkeypatch, capsys):
    from dashboard import cli, create_app
    from dashboard.engine import tokenize

    def no_jieba(setting):
        raise ImportError("jieba is not installed")

    monkeypatch.setattr(tokenize, "tokenizer_for", no_jieba)
    with pytest.raises(SystemExit) as stop:
        cli.main(["--cjk", "on", "--no-token", "--port", "0"])
    assert stop.value.code == 2 and "--cjk on needs jieba" in capsys.readouterr().err
    with pytest.raises(ValueError, match="CJK must be one of"):
        create_app({"CJK": "maybe"})


def test_findings_recheck_tokenises_as_the_cjk_setting(agent, ticking):
    """A finding's re-check renders <memory-context> for the row's own words with the same
    tokenizer as the preview (--cjk), so its verdict speaks of the agent's environment."""
    agent.save("contact", "张三的邮箱 zhangsan1988@163.com，部署脚本前先联系他。", ["联系人"], type="note")
    # Shares only Chinese words with the row above: jieba finds them, latin-only does not.
    agent.save("deploy notes", "部署脚本在 scripts/deploy.sh。", ["运维"], type="note")
    for n in range(3):
        agent.save(f"filler {n}", f"Filler note {n}.", ["misc"], type="note")
    sizes = {}
    for setting in ("on", "off"):
        client = agent.app(CJK=setting).test_client()
        listing = client.get("/findings.json", query_string={"category": "personal"}).get_json()
        item = next(i for i in listing["items"] if i["table"] == "memories")
        href = next(a["href"] for a in item["actions"] if a["code"] == "check")
        path, _, args = href.partition("?")
        check = client.get(f"{path}.json?{args}").get_json()
        context = next(b for b in check["blocks"] if b["block"] == "context")
        memory = client.get(f"/memories/{item['store']}/{item['row_id']}.json").get_json()["memory"]
        query = f"{memory['title']}\n{memory['content']}"
        preview = client.get("/preview.json", query_string={"q": query}).get_json()
        assert context["chars"] == len(preview["context_block"]), setting
        sizes[setting] = context["chars"]
    assert sizes["on"] != sizes["off"]


def test_preview_page_lists_a_bounded_number_of_evicted_entries(tmp_path):
    """Every user-scope row is selected for <memory-stable>; at 2,000 memories hundreds are
    evicted by the budget. The page lists the shown ones and the first EVICTED_SHOWN
    evicted, in the block's order, and says how many more there are."""
    from bs4 import BeautifulSoup

    from dashboard.views.preview import EVICTED_ON_PAGE as EVICTED_SHOWN

    client, twin = _twin(tmp_path, 2000)
    data = twin.get_json()
    evicted_total = data["stable_entries_total"] - sum(s["shown"] for s in data["stable_entries"])
    assert evicted_total > EVICTED_SHOWN
    page = BeautifulSoup(
        client.get("/preview", query_string={"q": "billing retry", "asof": ASOF}).get_data(as_text=True),
        "html.parser",
    )
    rows = page.select("#stable-entries tbody tr")
    assert len(page.select("#stable-entries tr[data-shown='0']")) == EVICTED_SHOWN
    # the same entries as the twin lists (the shown ones, then the first evicted)
    listed = {s["id"] for s in data["stable_entries"]}
    assert {r["data-memory-id"] for r in rows} <= listed
    assert len(rows) == sum(s["shown"] for s in data["stable_entries"]) + EVICTED_SHOWN
    more = page.select_one("[data-field=evicted-more]")
    assert more and more.text.startswith(f"{evicted_total - EVICTED_SHOWN} more entries")
