"""Search on the memories list: exactly agentao's `/memory search`, with every filter, sort and page."""

from __future__ import annotations

import pytest

TEXTS = [  # (key, content, tags, type): mixed case, non-ASCII case, LIKE's wildcards as text
    ("Deploy Script", "Run scripts/DEPLOY.sh after the build.", ["Ops"], "workflow"),
    ("deploy target", "Production deploys go to eu-west.", ["ops"], "project_fact"),
    ("Coverage goal", "Keep 100% branch coverage on the core.", ["quality"], "constraint"),
    ("snake_case names", "Functions use snake_case; classes CamelCase.", ["style"], "preference"),
    ("Ümlaut title", "Grüße an café Ökonomie; Straße; ÉCOLE.", ["Tag-Ü"], "note"),
    ("kelvin", "Temperatures in \u212a, not k.", ["units"], "note"),
    ("部署 flow", "部署脚本在 scripts/deploy.sh。", ["运维"], "workflow"),
    ("percent_sign", "Use 50% less memory, a_b testing.", ["perf"], "decision"),
    ("release notes", "Written by hand, no DEPLOY step.", ["docs"], "workflow"),
    ("editor", "Neovim with LazyVim.", ["profile"], "profile"),
]
QUERIES = [
    "deploy",
    "DePloY",
    "deploy.sh",
    "no deploy step",
    "run scripts/",
    "t a",
    "ü",
    "Ü",
    "ö",
    "école",
    "ökonomie",
    "straße",
    "\u212a",
    "k",
    "%",
    "_",
    "100%",
    "a_b",
    "e%y",
    "snake_case",
    "_case",
    "部署",
    "ops",
    "zzz-nothing",
]


@pytest.fixture
def corpus(agent):
    for n, (key, content, tags, type_) in enumerate(TEXTS):
        agent.save(key, content, tags, type=type_, scope="user" if n % 3 == 0 else "project")
    return agent


def ids(client, **params):
    data = client.get("/memories.json", query_string={"per_page": 200, **params}).get_json()
    assert data["total"] == len(data["items"])
    return [m["id"] for m in data["items"]]


@pytest.mark.parametrize("q", QUERIES)
def test_search_is_agentaos_search(corpus, q):
    client = corpus.app().test_client()
    assert sorted(ids(client, q=q)) == sorted(m.id for m in corpus.manager.search(q))


@pytest.mark.parametrize("q", ["deploy", "e", "%", "ü"])
@pytest.mark.parametrize(
    "filters",
    [
        {"type": "workflow"},
        {"scope": "project"},
        {"tag": "OPS"},
        {"source": "explicit"},
        {"confidence": "explicit_user"},
    ],
)
def test_search_combines_with_every_filter(corpus, q, filters):
    client = corpus.app().test_client()
    theirs = corpus.manager.search(q)
    column, value = next(iter(filters.items()))
    if column == "tag":
        expected = {m.id for m in theirs if value.lower() in {t.lower() for t in m.tags}}
    else:
        expected = {m.id for m in theirs if getattr(m, column) == value}
    assert set(ids(client, q=q, **filters)) == expected


@pytest.mark.parametrize("sort", ["updated", "created", "title", "key", "type", "scope"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_search_pages_add_up_to_the_sorted_result(corpus, sort, order):
    client = corpus.app().test_client()
    whole = ids(client, q="e", sort=sort, order=order)
    pages, page = [], 1
    while True:
        data = client.get(
            "/memories.json",
            query_string={"q": "e", "sort": sort, "order": order, "per_page": 3, "page": page},
        ).get_json()
        assert data["total"] == len(whole)
        pages += [m["id"] for m in data["items"]]
        if page >= data["pages"]:
            break
        page += 1
    assert pages == whole
    if sort == "key":
        keys = [
            m["key_normalized"]
            for m in client.get(
                "/memories.json", query_string={"q": "e", "sort": "key", "order": order}
            ).get_json()["items"]
        ]
        assert keys == sorted(keys, reverse=order == "desc")


@pytest.mark.parametrize("q", ["deploy", "kelvin"])  # many hits, one hit
def test_search_follows_an_agent_write_between_two_requests(corpus, q):
    client = corpus.app().test_client()
    before = ids(client, q=q)
    paged = client.get("/memories.json", query_string={"q": q, "per_page": 1}).get_json()
    assert paged["total"] == len(before)  # the same search again, one page at a time
    fresh = corpus.save(f"new {q} fact", "Written by the agent just now.", ["later"])
    assert sorted(ids(client, q=q)) == sorted(before + [fresh.id])
    corpus.manager.delete(fresh.id)
    assert sorted(ids(client, q=q)) == sorted(before)
    assert fresh.id in ids(client, q=q, deleted=1)
    assert sorted(ids(client, q=q)) == sorted(m.id for m in corpus.manager.search(q))


def test_search_with_soft_deleted_rows_applies_the_same_predicate(corpus):
    client = corpus.app().test_client()
    gone = next(m for m in corpus.manager.search("DEPLOY") if m.title == "deploy target")
    corpus.manager.delete(gone.id)
    assert gone.id not in ids(client, q="Deploy")
    with_deleted = ids(client, q="Deploy", deleted=1)
    assert sorted(with_deleted) == sorted([gone.id] + [m.id for m in corpus.manager.search("Deploy")])
    assert gone.id not in ids(client, q="zzz-nothing", deleted=1)


def test_search_on_an_empty_store_finds_nothing(agent):
    client = agent.app().test_client()
    assert client.get("/memories.json?q=deploy").get_json()["total"] == 0
    assert client.get("/memories.json?q=%25").get_json()["total"] == 0


def test_search_follows_agent_updates_past_a_thousand_distinct_words(corpus):
    # Over a thousand distinct words: the search's word list is packed (store/terms.py),
    # and words that come later wait beside it; both must be found.
    bulk = [
        corpus.save(f"word list {k}", " ".join(f"w{n}x" for n in range(k, 1500, 3)), ["bulk"])
        for k in range(3)
    ]
    client = corpus.app().test_client()
    assert ids(client, q="W1234X") == [bulk[1234 % 3].id]
    moving = corpus.save("moving fact", "Mentions quartz only.", ["later"])
    assert ids(client, q="quartz") == [moving.id]
    corpus.save("moving fact", "Now mentions basalt.", ["later"])  # same key: agentao updates the row
    assert ids(client, q="quartz") == []
    assert ids(client, q="basalt") == [moving.id]
    for q in ["w12", "9x", "x w14", "mentions", "basalt.", "w1499x", "Deploy"]:
        assert sorted(ids(client, q=q)) == sorted(m.id for m in corpus.manager.search(q)), q
