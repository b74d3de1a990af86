"""A memory's page and the forget pages say things once, in words (#31, item 10): one way to
forget for good, a history of what happened and when (no event numbers), a block size that
says which memories come in and go out, and typed confirmations that take the phrase a
Chinese page shows as well as the English one."""

from __future__ import annotations

from agentao_world import wait_for_job
from bs4 import BeautifulSoup

JSON = {"Accept": "application/json"}
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


def soup(r):
    assert r.status_code == 200, r.status_code
    return BeautifulSoup(r.data, "html.parser")


def test_one_forget_link_and_a_history_in_words(client):
    m = client.get("/memories.json").get_json()["items"][0]
    page = soup(client.get(f"/memories/{m['store']}/{m['id']}"))
    links = page.select("a[href*='/forget/memory/']")
    assert len(links) == 1 and links[0]["data-action"] == "forget-for-good"
    assert "danger" in links[0]["class"]
    history = page.select_one("#events")
    assert [th.text for th in history.select("thead th")] == ["What happened", "When"]
    rows = history.select("tbody tr[data-event]")
    assert rows
    for row in rows:
        what, when = row.select("td")
        assert what.text.strip() in {"saved", "updated", "deleted", "restored"}, what.text
        assert when.select_one("time") and when.select_one(".exact").text.strip(
            "()"
        )  # the date, not only "ago"
        assert row["data-event-id"] not in [td.text.strip() for td in row.select("td")]  # no internal number


def test_a_delete_that_lets_an_older_memory_in_says_so(agent):
    # Newest first into 2,000 characters: "small" and "middle" fit, "big" does not (each "&"
    # is five characters once escaped); deleting "small" frees room for "big": the block
    # grows after a delete.
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
    agent.save("big", "&" * 240, scope="user")
    agent.save("middle", "&" * 60 + (words * 3)[:180], scope="user")
    agent.save("small", "&" * 40 + (words * 3)[:200], scope="user")
    client = agent.app().test_client()
    small = next(
        m for m in client.get("/memories.json").get_json()["items"] if m["key_normalized"] == "small"
    )
    page = soup(client.get(f"/memories/user/{small['id']}"))
    effect = page.select_one("[data-field=delete-effect]")
    sizes = effect.select_one("[data-block-effect]")
    assert int(sizes["data-after-chars"]) > int(sizes["data-before-chars"])
    summary = effect.select_one("summary")
    assert "Comes in, now that it fits: big." in summary.select_one("[data-field=block-entered]").text
    assert "Goes out: small." in summary.select_one("[data-field=block-left]").text
    # A move saves it again in the other store: the same memory, not one coming and going.
    moved = page.select_one("[data-field=move-effect] summary")
    said = [x.text for x in moved.select("[data-field=block-entered], [data-field=block-left]")]
    assert not any("small" in x for x in said), said


def test_chinese_forget_pages_take_the_chinese_phrase_they_show(seeded):
    client = seeded.app().test_client()
    page = soup(client.get("/forget", headers=ZH))
    shown = page.select_one("#everything-form [data-field=phrase]").text.strip()
    assert shown == "遗忘全部"
    assert "忘记我" in client.get("/forget/about", headers=ZH).get_data(as_text=True)
    wrong = client.post("/forget/everything", data={"confirm": "遗忘"}, headers={**ZH, **JSON})
    assert wrong.status_code == 400
    r = client.post("/forget/everything", data={"confirm": shown}, headers={**ZH, **JSON})
    assert r.status_code == 202, r.get_data(as_text=True)
    assert wait_for_job(client, r.get_json()["url"])["verdict"] == "verified erased"


def test_the_english_phrase_still_works_on_a_chinese_page(seeded):
    client = seeded.app().test_client()
    r = client.post("/forget/everything", data={"confirm": "forget everything"}, headers={**ZH, **JSON})
    assert r.status_code == 202, r.get_data(as_text=True)
    wait_for_job(client, r.get_json()["url"])


def test_destructive_buttons_share_one_look(client):
    page = soup(client.get("/forget"))
    for action in ("forget-everything", "wipe"):
        assert "danger" in page.select_one(f"button[data-action={action}]")["class"]
    # "Your user store" is said once, not followed by the store's own name "user store".
    headings = [h.get_text(" ", strip=True) for h in page.select("#stores-residue h3, #purge-picker legend")]
    assert "Your user store" in headings and not any("user store user store" in h for h in headings)
