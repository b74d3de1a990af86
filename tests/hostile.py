"""A corpus of hostile memory text, and the helpers that plant it and walk every page.

Memory content is partly written by an LLM that prompt injection can steer,
so every string here is something an attacker could get saved.  Strings go in
through agentao's own API where it accepts them, and with raw sqlite3 where
only a hand edit, a bug or another tool could put them (invalid UTF-8, bad JSON).
"""

from __future__ import annotations

import sqlite3

MARK = "pwn"  # every active payload mentions it, so a surviving one is easy to spot

HOSTILE = {
    "script": "<script>alert('pwn')</script>",
    "script_src": '<script src="https://evil.example/pwn.js"></script>',
    "img_onerror": "<img src=x onerror=\"alert('pwn')\">",
    "svg_onload": "<svg onload=alert('pwn')><circle/></svg>",
    "attr_breakout_dq": '" onmouseover="alert(\'pwn\')" data-x="',
    "attr_breakout_sq": "' onfocus='alert(\"pwn\")' autofocus='",
    "tag_breakout": '</textarea></pre></td></tr></table><script>alert("pwn")</script>',
    "javascript_url": "<a href=\"javascript:alert('pwn')\">click pwn</a>",
    "javascript_bare": "javascript:alert('pwn')",
    "hx_get": '<div hx-get="/pwn" hx-trigger="load" hx-target="body">pwn</div>',
    "hx_post": '<form hx-post="/pwn" hx-trigger="load"><button>pwn</button></form>',
    "hx_on": '<button hx-on:click="alert(\'pwn\')" hx-on::load="alert(1)">pwn</button>',
    "hx_vals": '<span hx-get="/pwn" hx-vals=\'js:{a: alert("pwn")}\' hx-trigger="load">x</span>',
    "data_hx": '<i data-hx-get="/pwn" data-hx-trigger="load">pwn</i>',
    "jinja": "{{ 7*7 }} {% if true %}pwn{% endif %} {{ config }}",
    "rtl_override": "invoice\u202egpj.exe pwn \u202d",
    "control_chars": "nul\x00bell\x07esc\x1b[31m form\x0c vt\x0b del\x7f pwn",
    "meta_refresh": '<meta http-equiv="refresh" content="0;url=https://evil.example/pwn">',
    "style_exfil": "<style>body{background:url(https://evil.example/pwn)}</style>",
    "iframe": '<iframe src="https://evil.example/pwn" srcdoc="<script>alert(1)</script>">',
    "entity": "&lt;script&gt;alert('pwn')&lt;/script&gt; &amp;amp; &#x3C;b&#x3E;",
    "long": ("<b>pwn</b>" * 400)[:4000],
}

# A lone surrogate: agentao 0.5.17 stores one in a tag (as the JSON escape "\ud800") when a
# model's tool call carries it; it reads back as a str no UTF-8 can encode.
LONE_SURROGATE = "half\ud800pair"

# Written with raw SQL: bytes that are not UTF-8, and JSON columns that are not JSON.
INVALID_UTF8 = b"caf\xe9 \xff\xfe <script>pwn</script> \xc3\x28"
BAD_JSON = [
    '["unterminated',
    '{"a": "<script>pwn</script>"}',
    "not json at all <b>pwn</b>",
    '[1, {"x": "<img onerror=pwn>"}]',
]


def plant(agent) -> dict:
    """Save the corpus through agentao, then add what only raw SQL can write.

    Returns ``{name: (store_key, memory_id)}`` for each planted memory.
    """
    planted = {}
    for i, (name, text) in enumerate(HOSTILE.items()):
        scope = "user" if i % 4 == 0 else "project"
        key = text[:60] if name != "long" else f"long {i}"
        memory = agent.save(key, text, tags=[text[:40], name], scope=scope)
        planted[name] = ("user" if scope == "user" else "project", memory.id)
    agent.summary(HOSTILE["hx_get"] + "\n" + HOSTILE["script"], session_id=HOSTILE["attr_breakout_dq"])
    agent.summary(HOSTILE["jinja"], session_id="<b>pwn</b>")
    agent.crystallize("I prefer " + HOSTILE["script"] + " over spaces.", "We must never " + HOSTILE["hx_get"])
    half = agent.save("lone surrogate", "a tag no UTF-8 can hold", tags=[LONE_SURROGATE, "surrogate"])
    planted["lone_surrogate"] = ("project", half.id)
    agent.save("raw bytes", "placeholder for invalid utf-8")
    raw = agent.save("raw json", "placeholder for invalid json")
    with sqlite3.connect(agent.project_db) as conn:
        conn.execute(
            "UPDATE memories SET content = CAST(? AS TEXT), title = CAST(? AS TEXT) "
            "WHERE key_normalized = 'raw_bytes'",
            (INVALID_UTF8, INVALID_UTF8),
        )
        for n, bad in enumerate(BAD_JSON):
            target = raw.id if n == 0 else None
            if target:
                conn.execute(
                    "UPDATE memories SET tags_json = ?, keywords_json = ? WHERE id = ?",
                    (bad, BAD_JSON[1], target),
                )
        # A type no API validation would stop (the contract says types are stored as given).
        conn.execute(
            "UPDATE memories SET type = ?, source = ? WHERE key_normalized = 'raw_json'",
            (HOSTILE["hx_get"], HOSTILE["img_onerror"]),
        )
    conn.close()
    conn = sqlite3.connect(agent.project_db)
    for memory_id, key in conn.execute(
        "SELECT id, key_normalized FROM memories WHERE key_normalized IN ('raw_bytes', 'raw_json')"
    ):
        planted[key] = ("project", memory_id)
    conn.close()  # an open connection would keep a -wal beside the file
    return planted


def shown_text(element) -> str:
    """The text a page shows in ``element``, each hidden character's mark
    (``<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE">``) read back as that character."""
    from copy import copy

    element = copy(element)
    for mark in element.select("span.ctl"):
        mark.replace_with(chr(int(mark["title"].split()[0][2:], 16)))
    return element.get_text()


def get_routes(app, fill: dict) -> list[str]:
    """A URL for every GET rule in the app, its arguments taken from ``fill``.

    Unknown argument names raise, so a new route cannot silently go untested:
    add a value for it to ``fill`` (or to the caller's filler).
    """
    adapter = app.url_map.bind("localhost")
    urls = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        missing = [a for a in rule.arguments if a not in fill and a not in (rule.defaults or {})]
        if missing:
            raise KeyError(f"route {rule.rule} needs {missing}: add them to the test filler")
        values = {a: fill[a] for a in rule.arguments if a in fill} | dict(rule.defaults or {})
        built = rule.build(values, append_unknown=False)
        if built is not None:
            urls.append(built[1])
    del adapter
    return urls
