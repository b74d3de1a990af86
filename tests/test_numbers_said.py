"""A number a person reads has its digits grouped by one rule: Babel's, for the page's locale.

Sentences used to print counts bare ("53248 bytes") while other places grouped them with
Python's own comma; now every count in a sentence, the ``numberformat`` filter and the code's
own numbers say it as Babel does for the page's locale (English outside a request).  The JSON
twins keep numbers as numbers.
"""

from __future__ import annotations

import pytest
from babel.numbers import format_decimal
from bs4 import BeautifulSoup

from dashboard.words import count

LANGS = {"en": "en", "zh": "zh_Hans_CN"}
HTML_LANG = {"en": "en", "zh": "zh-Hans-CN"}


def _page(client, url, lang):
    """The page as a browser asking for ``lang`` sees it (and it is in that language)."""
    page = BeautifulSoup(
        client.get(url, headers={"Accept-Language": lang}).get_data(as_text=True), "html.parser"
    )
    assert page.html["lang"] == HTML_LANG[lang]
    return page


@pytest.mark.parametrize("lang", list(LANGS))
def test_a_count_in_a_sentence_is_grouped_as_the_page_language_says(agent, lang):
    agent.save("a fact", "Something worth keeping.", scope="project")
    client = agent.app().test_client()
    [store] = [s for s in client.get("/overview.json").get_json()["stores"] if s["store"] == "project"]
    assert isinstance(store["size"], int) and store["size"] >= 1000  # the twin: a number
    page = _page(client, "/overview", lang)
    said = page.select_one("[data-field=size]").get_text()
    grouped = format_decimal(store["size"], locale=LANGS[lang])
    assert grouped in said and str(store["size"]) not in said, said


@pytest.mark.parametrize("lang", list(LANGS))
def test_a_refusal_says_its_limit_grouped(agent, lang):
    app = agent.app()
    limit = app.config["MAX_CONTENT_LENGTH"]
    r = app.test_client().post("/preview", data={"q": "x" * (limit + 1)}, headers={"Accept-Language": lang})
    assert r.status_code == 413
    assert format_decimal(limit, locale=LANGS[lang]) in r.get_data(as_text=True)


def test_outside_a_request_a_count_is_said_in_the_default_locale():
    assert count(1234567) == format_decimal(1234567, locale="en") == "1,234,567"
    assert count(-1234) == "-1,234" and count(999) == "999" and count(0) == "0"


@pytest.mark.parametrize("lang", list(LANGS))
def test_a_count_in_a_table_cell_is_grouped_too(agent, lang):
    gone = agent.save("an old fact", "Something no longer true. " * 80, scope="project")
    agent.manager.delete(gone.id)
    client = agent.app().test_client()
    held = client.get("/forget/residue/project.json").get_json()["soft_deleted"]["bytes"]
    assert isinstance(held, int) and held >= 1000  # the twin: a number
    page = _page(client, "/forget/residue/project", lang)
    assert page.select_one("[data-field=soft_deleted_bytes]").get_text() == format_decimal(
        held, locale=LANGS[lang]
    )
