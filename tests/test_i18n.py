"""The pages in Simplified Chinese (#23): every message translated, chosen by the browser,
the header switcher or ``--lang``; JSON twins and prompt blocks stay as they are.

The catalog is Flask-Babel's (dashboard/translations/zh_Hans_CN/LC_MESSAGES/messages.po,
compiled to messages.mo); ``pybabel extract -F babel.cfg -k lazy_gettext`` reads what
these tests read.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "dashboard" / "translations" / "zh_Hans_CN" / "LC_MESSAGES"
METHODS = [("dashboard/**.py", "python"), ("templates/**.html", "jinja2")]
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "lazy_gettext": None, "_l": None}


def extracted() -> set:
    """Every message the code and templates ask for, as pybabel extract sees them."""
    from babel.messages.extract import DEFAULT_KEYWORDS

    keywords = {**DEFAULT_KEYWORDS, "lazy_gettext": None, "_l": None}
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(str(ROOT), METHODS, keywords=keywords):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def po():
    with open(CATALOG / "messages.po", "rb") as f:
        return read_po(f, locale="zh_Hans_CN")


def test_every_message_has_a_chinese_translation():
    catalog = po()
    missing = []
    for msgid in sorted(extracted(), key=str):
        key = msgid if isinstance(msgid, str) else msgid[0]
        entry = catalog.get(key)
        strings = (
            []
            if entry is None
            else (list(entry.string) if isinstance(entry.string, (tuple, list)) else [entry.string])
        )
        if entry is None or entry.fuzzy or not strings or not all(strings):
            missing.append(key)
    assert not missing, f"{len(missing)} messages lack a zh_Hans_CN translation: {missing[:20]}"


def test_the_compiled_catalog_is_the_po_file():
    def plain(messages):
        return {
            (m.id if isinstance(m.id, str) else tuple(m.id)): (
                m.string if isinstance(m.string, str) else tuple(m.string)
            )
            for m in messages
            if m.id and not m.fuzzy
        }

    with open(CATALOG / "messages.mo", "rb") as f:
        compiled = plain(read_mo(f))
    written = plain(po())
    assert compiled == written, "run: pybabel compile -d dashboard/translations"


# -- no words a person reads outside a translation call ------------------------------------

JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
WORD = re.compile(r"[A-Za-z]{2,}")
READ_ATTRS = {"title", "aria-label", "placeholder", "alt", "value"}
# Elements whose text is not UI words: code samples and machine tokens, shown as they are.
RAW = {"code", "pre", "script", "style", "kbd", "samp"}


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.raw, self.found = 0, []

    def handle_starttag(self, tag, attrs):
        if tag in RAW:
            self.raw += 1
        for name, value in attrs:
            if (
                name in READ_ATTRS
                and value
                and WORD.search(value)
                and not (
                    name == "value" and tag in ("input", "option") and dict(attrs).get("type") != "submit"
                )
            ):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag):
        if tag in RAW:
            self.raw = max(0, self.raw - 1)

    def handle_data(self, data):
        if not self.raw and WORD.search(data):
            self.found.append(data.strip()[:60])


def test_templates_say_nothing_outside_a_translation_call():
    leftovers = {}
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = JINJA.sub(" ", path.read_text())
        parser = _Text()
        parser.feed(text)
        if parser.found:
            leftovers[str(path.relative_to(ROOT))] = parser.found[:5]
    assert not leftovers, f"text outside _()/ngettext in {len(leftovers)} templates: {leftovers}"


# -- choosing the language ------------------------------------------------------------------


@pytest.fixture
def app(agent):
    return agent.app()


def test_the_browser_asks_for_chinese(app):
    c = app.test_client()
    zh = c.get("/overview", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}).get_data(as_text=True)
    en = c.get("/overview", headers={"Accept-Language": "en-US"}).get_data(as_text=True)
    assert '<html lang="zh-Hans-CN">' in zh and "概览" in zh
    assert '<html lang="en">' in en and "概览" not in en and "Overview" in en


def test_the_switcher_remembers_the_choice_and_ignores_a_forged_cookie(app):
    from dashboard.guard.access import choice_cookie  # noqa: F401  (named per port)

    c = app.test_client()
    r = c.post("/language", data={"lang": "zh_Hans_CN", "next": "/memories"})
    assert r.status_code == 303 and r.headers["Location"].endswith("/memories")
    assert "概览" in c.get("/overview", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert c.post("/language", data={"lang": "klingon"}).status_code == 400
    forged = app.test_client()
    forged.set_cookie("agentao_memory_lang_default", "zh_Hans_CN")  # unsigned: from another port
    assert "概览" not in forged.get("/overview").get_data(as_text=True)


def test_lang_setting_and_json_twins(agent):
    app = agent.app(LANG="zh_Hans_CN")
    c = app.test_client()
    assert "概览" in c.get("/overview").get_data(as_text=True)
    twin = c.get("/reviews.json").get_json()
    assert twin == agent.app().test_client().get("/reviews.json").get_json()
    with pytest.raises(ValueError):
        agent.app(LANG="fr")


def test_a_masked_secret_has_no_english_on_a_chinese_page(agent):
    """A secret's excerpt keeps its label and head and shows each hidden character as a mark,
    like the phone and e-mail masks beside it: nothing in it to translate ("[20 chars hidden]"
    stayed English on the Chinese Findings, About you and Checks pages)."""
    from bs4 import BeautifulSoup

    agent.save("staging deploy", "Deploys read DEPLOY_API_KEY=sk_demo_4f9c2b7e1a8d3f6c", ["workflow"])
    page = agent.app(LANG="zh_Hans_CN").test_client().get("/about").get_data(as_text=True)
    [excerpt] = [c.text for c in BeautifulSoup(page, "html.parser").select("code") if "DEPLOY" in c.text]
    assert excerpt == "DEPLOY_API_KEY=sk_d" + "•" * 20, excerpt


def test_extraction_skips_no_f_string():
    """pybabel skips a message built with an f-string (it prints a warning on stderr and the
    text never reaches the catalog), so the page stays English in Chinese."""
    import contextlib
    import io

    from babel.messages.extract import DEFAULT_KEYWORDS

    keywords = {**DEFAULT_KEYWORDS, "lazy_gettext": None, "_l": None}
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        for _found in extract_from_dir(str(ROOT), METHODS[:1], keywords=keywords):
            pass
    skipped = [line for line in said.getvalue().splitlines() if "Skipping f-string" in line]
    assert not skipped, "messages pybabel cannot extract:\n" + "\n".join(skipped)


def test_error_pages_title_through_the_catalog(app):
    """werkzeug's ``exc.name`` is English only: the page title is our catalog's message (the
    same English words), the JSON twin keeps werkzeug's name as its stable ``error``."""
    messages = extracted()
    c = app.test_client()
    page = c.get("/no-such-page")
    assert page.status_code == 404 and "<h1>Not Found</h1>" in page.get_data(as_text=True)
    assert "Not Found" in messages and "Method Not Allowed" in messages
    assert (
        c.get("/no-such-page.json", headers={"Accept": "application/json"}).get_json()["error"] == "Not Found"
    )


# -- Python-side text in the page's locale (a test catalog: the real one is the translator's) --


def _test_catalog(tmp_path, messages: dict) -> str:
    """A compiled zh_Hans_CN catalog holding ``messages``; its folder for BABEL_TRANSLATION_DIRECTORIES."""
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo

    catalog = Catalog(locale="zh_Hans_CN")
    for msgid, msgstr in messages.items():
        catalog.add(msgid, msgstr)
    folder = tmp_path / "zh_Hans_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with open(folder / "messages.mo", "wb") as f:
        write_mo(f, catalog)
    return str(tmp_path)


def test_the_streamed_export_stays_in_the_page_locale(seeded, tmp_path, monkeypatch):
    """Most of the Markdown file is written after the view returned (it is streamed), where
    Flask-Babel alone would answer English: the headings and field names stay Chinese."""
    monkeypatch.setattr("dashboard.actions.export_document.PIECE", 1)
    folder = _test_catalog(
        tmp_path, {"What the agent knows": "智能体知道的", "Scope": "范围", "Not Found": "找不到"}
    )
    app = seeded.app(LANG="zh_Hans_CN", BABEL_TRANSLATION_DIRECTORIES=folder)
    c = app.test_client()
    text = c.get("/export/memories.md").get_data(as_text=True)
    assert text.startswith("# 智能体知道的") and "- **范围:**" in text and "- **Scope:**" not in text
    assert "<h1>找不到</h1>" in c.get("/no-such-page").get_data(as_text=True)
    english = seeded.app().test_client().get("/export/memories.md").get_data(as_text=True)
    assert english.startswith("# What the agent knows") and "- **Scope:**" in english


def test_finding_whys_say_the_scan_words_in_english():
    """findings.why re-says every finding's ``why`` through the catalog; in English it is the
    scan's own sentence to the letter (so a reworded rule cannot drift from its message)."""
    from datetime import datetime, timezone

    from dashboard.findings import corpus
    from dashboard.findings import rules as r
    from dashboard.findings.why import WHY, why_text
    from dashboard.words import LABELS

    text_rules = {
        x.id: x
        for v in vars(r).values()
        if isinstance(v, (list, tuple))
        for x in v
        if isinstance(x, r.TextRule)
    }
    found = [r.Finding(x.id, x.category, "content", 0, 1, "", x.why) for x in text_rules.values()]
    found += [
        r.Finding(
            rule,
            "secret",
            "content",
            0,
            1,
            "",
            r.GUARD_WHY.format(name=rule[13:])
            if rule.startswith("secret.guard_")
            else r.EXTRA_WHY.format(name=rule[7:]),
        )
        for rule in LABELS["rule"]
        if rule.startswith("secret.")
    ]
    found += [
        r.near_size_limit("x" * 3700, "content"),
        r.near_size_limit("x" * 4100, "content"),
        r.stale("2020-01-01T00:00:00", datetime(2026, 1, 1, tzinfo=timezone.utc)),
        r.stale("2020-01-01T00:00:00", datetime(2026, 1, 1, tzinfo=timezone.utc), stable=True),
    ]
    found += [
        r.Finding(rule, "conflict", "content", 0, 1, "", getattr(corpus, fn).__doc__.splitlines()[0])
        for rule, fn in (
            ("conflict.same_key", "same_key_both_scopes"),
            ("conflict.duplicate", "near_duplicates"),
            ("conflict.contradicted", "contradicted_preferences"),
        )
    ]
    assert set(WHY) <= {f.rule for f in found} and len(found) > 30
    for f in found:
        assert why_text(f) == f.why, f.rule


def test_kept_scan_words_and_pictures_follow_each_reader(seeded, tmp_path):
    """A scan's reach words are said when read (the same kept object, two readers, two
    languages); a picture's <title> comes from the catalog, plural rules included."""
    from dashboard.findings.rows import Later

    folder = _test_catalog(
        tmp_path,
        {
            "recall only: in %(tag)s when a query scores it": "仅在查询给它打分时进入 %(tag)s",
            ("Score of the first candidate, by term", "Score of the first %(num)d candidates, by term"): (
                "前 %(num)d 个候选按项的分数",
            ),
        },
    )
    app = seeded.app(BABEL_TRANSLATION_DIRECTORIES=folder)
    kept = Later("recall")
    with app.test_request_context(headers={"Accept-Language": "zh-CN"}):
        assert str(kept) == "仅在查询给它打分时进入 <memory-context>"
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert str(kept) == "recall only: in <memory-context> when a query scores it"
    zh = app.test_client().get("/preview?q=uv", headers={"Accept-Language": "zh-CN"})
    assert ">前 1 个候选按项的分数</title>" in zh.get_data(as_text=True)
    en = app.test_client().get("/preview?q=uv").get_data(as_text=True)
    assert ">Score of the first candidate, by term</title>" in en


def test_a_background_job_speaks_the_language_of_who_started_it(seeded, tmp_path):
    """A forget job runs in a thread, outside any request: its verdict is said in the
    locale of the request that started it, not in English."""
    import time

    from flask_babel import gettext

    from dashboard.actions.jobs import Jobs

    folder = _test_catalog(tmp_path, {"There was nothing to erase.": "没有可抹除的内容。"})
    app = seeded.app(BABEL_TRANSLATION_DIRECTORIES=folder)
    jobs = Jobs()
    with app.test_request_context(headers={"Accept-Language": "zh-CN"}):
        job = jobs.start("purge", ["project"], lambda job: gettext("There was nothing to erase."))
    deadline = time.monotonic() + 10
    while job.state == "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert job.state == "done" and job.result == "没有可抹除的内容。"


def test_the_command_line_speaks_the_chosen_language():
    import subprocess
    import sys

    zh = subprocess.run(
        [sys.executable, "-m", "dashboard", "--lang", "zh_Hans_CN", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    en = subprocess.run(
        [sys.executable, "-m", "dashboard", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "LANG": "C"},
    )
    assert zh.returncode == en.returncode == 0, zh.stderr + en.stderr
    assert "never write to any store" in en.stdout and "never write to any store" not in zh.stdout
    assert re.search(r"[\u4e00-\u9fff]{4}", zh.stdout), zh.stdout[:400]
    by_env = subprocess.run(
        [sys.executable, "-m", "dashboard", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "LANG": "zh_CN.UTF-8"},
    )
    assert by_env.stdout == zh.stdout
