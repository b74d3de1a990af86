"""The findings pages in words (#21): every rule named and explained, places and dates
said as a person says them, phone cards, fix links that land on the form they name,
fixed findings that stay listed with their re-check, and the count in the tabs."""

from __future__ import annotations

import re
from types import SimpleNamespace

from test_findings_view import NOW, NPM, client, corpus, soup  # noqa: F401  (fixtures)

from dashboard import words
from dashboard.contract import SECRET_RULES
from dashboard.findings.fixed import Fixed
from dashboard.findings.rules import EXTRA_SECRETS, TEXT_RULES

CODE = re.compile(r"\b(?:secret|personal|instruction|conflict|upkeep)\.[a-z_]+")
SPAN = re.compile(r"\[\d+:\d+\]")
ISO = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")


def visible(page) -> str:
    main = page.select_one("main")
    for hidden in main.select("[title]"):
        del hidden["title"]
    return " ".join(main.get_text(" ").split())


def test_every_rule_has_a_label_and_a_sentence(client):
    emitted = {i["rule"] for i in client.get("/findings.json").get_json()["items"]}
    every = (
        {f"secret.guard_{n}" for n, _ in SECRET_RULES}
        | {f"secret.{n}" for n, _ in EXTRA_SECRETS}
        | {r.id for r in TEXT_RULES}
        | emitted
    )
    with client.application.test_request_context():
        for rule in every:
            assert rule in words.LABELS["rule"], rule
            assert words.explain("rule", rule).endswith("."), rule
            assert "_" not in words.label("rule", rule), rule
        for category in {i.split(".")[0] for i in every}:
            assert words.explain("category", category), category


def test_the_list_speaks_words_not_codes(client):
    page = soup(client.get("/findings"))
    text = visible(page)
    assert not CODE.search(text), CODE.search(text)
    assert not SPAN.search(text) and not ISO.search(text), text[:400]
    assert "matched in the content" in text and "last changed" in text
    assert "1 memories" not in text and "1 findings" not in text
    # The raw code is still there for a tooltip and for scripts.
    stale = page.select_one('tr[data-rule="upkeep.stale"] .term')
    assert stale["data-code"] == "upkeep.stale" and stale.text == "Not updated for months"
    assert page.select_one('tr[data-rule="upkeep.stale"] time[datetime]')


def test_the_list_becomes_cards_on_a_phone(client):
    table = soup(client.get("/findings")).select_one("#finding-list table")
    assert "rows" in table["class"]
    for row in table.select("tbody tr"):
        cells = row.select("td")
        assert "lead" in cells[0]["class"]
        assert all(td.get("data-label") for td in cells)


def test_the_recheck_page_speaks_words(client):
    item = next(i for i in client.get("/findings.json").get_json()["items"] if i["rule"] == "upkeep.stale")
    href = next(a["href"] for a in item["actions"] if a["code"] == "check")
    page = soup(client.get(href))
    text = visible(page)
    assert not CODE.search(text) and not SPAN.search(text) and not ISO.search(text), text[:400]
    assert page.select_one('[data-field="verdict"]').has_attr("autofocus")


def test_fix_links_land_on_the_form_they_name(client):
    data = client.get("/findings.json").get_json()
    npm = next(i for i in data["items"] if i["rule"] == "secret.npm_token")
    edit = next(a["href"] for a in npm["actions"] if a["code"] == "edit")
    assert edit == f"/memories/{npm['store']}/{npm['row_id']}?field=content"
    assert client.get(edit).status_code == 200
    evidence = next(i for i in data["items"] if i["field"] == "evidence")
    reject = next(a["href"] for a in evidence["actions"] if a["code"] == "reject")
    path, _, card = reject.partition("#")
    assert card == f"review-{evidence['row_id']}"
    assert soup(client.get(path)).select_one(f"#{card}") is not None


def fixed_rules(client, url="/findings.json"):
    return [(f["rule"], f["label"]) for f in client.get(url).get_json()["fixed"]]


def test_a_fixed_finding_stays_listed_with_its_recheck(client, corpus):
    assert fixed_rules(client) == []
    corpus.save("publish", "Publish from CI only; the token lives in the CI secret store.", ["release"])
    assert fixed_rules(client) == [("secret.npm_token", "publish")]
    page = soup(client.get("/findings"))
    (li,) = page.select("#findings-fixed li[data-fixed]")
    assert li["data-rule"] == "secret.npm_token" and "Fixed" in li.text
    check = soup(client.get(li.select_one('a[data-action="check"]')["href"]))
    assert check.select_one("#finding-check")["data-verdict"] == "fixed"
    assert "Fixed" in check.select_one('[data-field="verdict"]').text
    # Still listed on a later scan (any file change), and under its filter only.
    corpus.save("another note", "Nothing to see here.", ["misc"])
    assert fixed_rules(client) == [("secret.npm_token", "publish")]
    assert fixed_rules(client, "/findings.json?category=personal") == []
    # Undone, it is a finding again, not a fix.
    corpus.save("publish", f"Publish with {NPM} from CI only.", ["release"])
    assert fixed_rules(client) == []


def test_a_scan_cut_short_proves_nothing_fixed(corpus):
    app = corpus.app(CLOCK=lambda: NOW)
    client = app.test_client()
    client.get("/findings.json")
    app.config["FINDINGS_TIME_LIMIT_MS"] = 0  # every scan now stops after its first batch
    corpus.save("another note", "Nothing to see here.", ["misc"])
    cut = client.get("/findings.json").get_json()
    assert not cut["complete"] and cut["fixed"] == []


def item(store, row, rule="personal.email"):
    finding = SimpleNamespace(rule=rule, field="content", signature="s")
    return SimpleNamespace(store=store, table="memories", row_id=row, finding=finding)


def report(*items, timed_out=False):
    return SimpleNamespace(
        items=list(items), scanned={"project": {}, "user": {}}, problems=[], timed_out=timed_out
    )


def test_each_project_file_is_compared_with_its_own_last_scan():
    fixed, when = Fixed(), NOW
    a, b = {"project": "/a.db", "user": "/u.db"}, {"project": "/b.db", "user": "/u.db"}
    fixed.update(report(item("project", "1"), item("user", "9")), a, when)
    # The switcher shows project B under the same key: nothing of A is "fixed".
    fixed.update(report(item("user", "9")), b, when)
    assert fixed.shown(["/a.db", "/b.db", "/u.db"]) == []
    # Back on A, the finding is gone: fixed, in A's file only.
    fixed.update(report(item("user", "9")), a, when)
    assert [g.item.row_id for g in fixed.shown(["/a.db"])] == ["1"]
    assert fixed.shown(["/b.db", "/u.db"]) == []


def test_the_tab_count_comes_from_a_scan_already_made(client, corpus):
    def badge():
        tab = soup(client.get("/summaries")).select_one('header a[data-tab="findings"]')
        count = tab.select_one(".count")
        return None if count is None else (int(count["data-count"]), count["title"])

    assert badge() is None  # no scan yet: no count, and no scan made for it
    data = client.get("/findings.json").get_json()
    # The risky entries, in the words of the Findings headline and the overview.
    risky = {
        (i["store"], i["table"], i["row_id"])
        for i in data["items"]
        if i["category"] in ("secret", "personal", "instruction")
    }
    assert badge() == (len(risky), data["risky"]["text"]) and data["risky"]["count"] == len(risky)
    corpus.save("another note", "Nothing to see here.", ["misc"])
    assert badge() is None  # the files moved: the held count may be wrong
    # In its place a stand-in asks for the count once the page is shown: a fresh scan's.
    later = soup(client.get("/summaries")).select_one('header a[data-tab="findings"] [data-later]')
    assert later["hx-trigger"] == "load" and later["hx-swap"] == "none"
    answer = soup(client.get(later["hx-get"], headers={"HX-Request": "true"}))
    tab = answer.select_one('[hx-swap-oob="innerHTML:#tabs a[data-tab=findings]"]')
    assert tab.select_one("[data-later]") is None
    assert int(tab.select_one(".count")["data-count"]) == len(risky)
    assert badge() == (len(risky), data["risky"]["text"])  # held for the next page
