"""Memory texts the tests and the bench scripts generate: ordinary notes (with the
numbers that trip naive detectors), a realistic vocabulary, and adversarial
contents for the finding rules (label-like heads followed by a long run of one
character, or repeated).  The bench scripts import them from here; no test
imports bench/.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

WORDS = (
    "python uv pytest deploy docker redis postgres cache auth schema migrate logging "
    "review release branch linter ruff mypy wheel queue worker cron backup metrics "
    "grafana sentry nginx celery kafka alembic fixture webhook retry timeout"
).split()
ZH = "部署 缓存 数据库 测试 日志 发布 分支 评审 监控 备份 队列 重试 超时 配置 接口 文档".split()


def ordinary(rng: random.Random) -> str:
    """One ordinary memory with the numbers that trip naive detectors."""
    w = lambda: rng.choice(WORDS)  # noqa: E731
    version = f"{rng.randint(0, 20)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
    date = (datetime(2024, 1, 1) + timedelta(days=rng.randint(0, 900))).strftime("%Y-%m-%d")
    sha = "%040x" % rng.getrandbits(160)
    uid = "%08x-%04x-4%03x-a%03x-%012x" % (
        rng.getrandbits(32),
        rng.getrandbits(16),
        rng.getrandbits(12),
        rng.getrandbits(12),
        rng.getrandbits(48),
    )
    options = [
        f"{w()} {version} is pinned; {w()} and {w()} follow on {date}.",
        f"The {w()} service listens on port {rng.randint(1024, 65535)}; {w()} on {rng.randint(1024, 65535)}.",
        f"Bisected {w()} failure to commit {sha[: rng.choice((7, 12, 40))]} ({w()}).",
        f"Run {uid} reproduced the {w()} {w()} bug.",
        f"CI build {rng.randint(10**9, 10**14)} of {w()} passed in {rng.randint(1, 59)}m.",
        f"Epoch ms {rng.randint(1_600_000_000_000, 1_800_000_000_000)} marks the {w()} cutover.",
        f"See src/{w()}/{w()}.py and tests/test_{w()}.py for the {w()} {w()}.",
        f"{rng.choice(ZH)}版本 {version} 于 {date} 上线，端口 {rng.randint(1024, 65535)}，{rng.choice(ZH)}正常。",
        f"{rng.choice(ZH)}的{rng.choice(ZH)}在 scripts/{w()}.sh，构建号 {rng.randint(10**6, 10**12)}。",
        f"Never {w()} on {w()}; always run {w()} before {w()}.",
        f"Image sha256:{sha}{sha[:24]} for {w()}.",
    ]
    return rng.choice(options)


SIZE = 4000
ISSUE_CONTENTS = [
    ("'<' + spaces + 'x'", "<" + " " * (SIZE - 2) + "x"),
    ("'token is' + spaces + 'x'", "token is" + " " * (SIZE - 9) + "x"),
    ("'%3c' + tabs + 'x'", "%3c" + "\t" * (SIZE - 4) + "x"),
]
# What starts a try of some rule (a label, a tag opener, a token prefix), by
# family, to be followed by a long run of one character, or repeated with one.
HEADS = {
    "secret": [
        "token is",
        "password is",
        "api key is",
        "secret key was",
        "token",
        "key",
        "key=",
        "key:",
        "my_token=",
        "authorization",
        "authorization:",
        "bearer",
        "access_token=",
        '"code":',
        "?code=",
        "-----BEGIN ",
        "-----BEGIN A KEY-----",
        "-----BEGIN PRIVATE KEY-----\n",
        "-----END ",
        "eyJ",
        "eyJa.",
        "sk-",
        "sk-ant-",
        "ghp_",
        "xoxb-",
        "xapp-1-",
        "AKIA",
        "AIza",
        "SG.",
        "AccountKey=",
        "?sig=",
        "x://a:",
        "https://a:",
        "glpat-",
        "pypi-AgE",
        "hf_",
        "npm_",
        "12345678:AA",
        "密码",
        "密码=",
        "访问密钥：",
        "令牌是",
    ],
    "personal": ["+1", "1", "4", "13", "@", "a@", "a@b.", "a.b@", "DE89", "GB82 ", "110101", "ID "],
    "instruction": [
        "<",
        "</",
        "%3c",
        "&lt;",
        "&#60;",
        "&#x3c;",
        "\\u003c",
        "\\x3c",
        "<<",
        "<|",
        "[INST",
        "#",
        "skip",
        "ignore",
        "do not",
        "never ask",
        "without",
        "permission",
        "permissions",
        "system",
        "system:",
        "you are",
        "from now on",
        "pretend",
        "act as",
        "approve",
        "跳过",
        "不要",
        "从现在",
        "你现在",
        "系统提示",
    ],
}
ALL_HEADS = [h for heads in HEADS.values() for h in heads]
PUMPS = [" ", "\t", "\n", "a", "A", "0", "1 ", "-", ".", "/", "=", ":", "a-", "a.", "a1", "@", "é", "密"]
UNITS = [" ", "-", "=", "a-", "\n"]


def adversarial_contents(
    size: int = SIZE, heads=ALL_HEADS, pumps=PUMPS, units=UNITS
) -> list[tuple[str, str]]:
    """(label, text) of adversarial contents of ``size`` characters or nearly:
    each head then a run of each pump, and each head and unit repeated."""
    out = list(ISSUE_CONTENTS) if size == SIZE else []
    for head in heads:
        for pump in pumps:
            out.append((f"{head!r} + {pump!r}*", head + pump * ((size - len(head) - 1) // len(pump)) + "x"))
        for unit in units:
            out.append((f"({head!r} + {unit!r})*", (head + unit) * (size // (len(head) + len(unit)))))
    return out


def ordinary_contents(size: int = SIZE) -> list[tuple[str, str]]:
    """Three kinds of ordinary memories, each joined to ``size`` characters."""
    from findings_labelled import TEXTS

    rng = random.Random(5)
    notes = " ".join(ordinary(rng) for _ in range(size // 20))[:size]
    lookalikes = " ".join(t for t, family in TEXTS if family is None)
    prose = (
        "The deploy runs nightly on the CI box; the summary goes to the team channel and the "
        "dashboard shows the last fifty runs with their durations. "
    )
    return [
        ("notes", notes),
        ("lookalikes", (lookalikes * (size // len(lookalikes) + 1))[:size]),
        ("prose", (prose * (size // len(prose) + 1))[:size]),
    ]


def vocabulary(rng: random.Random, size: int = 2000) -> list[str]:
    """``size`` distinct made-up words, 3-9 letters: what a team's notes draw on."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice("abcdefghijklmnoprstuvwy") for _ in range(rng.randint(3, 9))))
    return sorted(words)


def realistic_text(rng: random.Random, vocab: list[str], weights: list[float], chars: int) -> str:
    """Words drawn with Zipf weights from ``vocab`` until ``chars`` characters."""
    out, size = [], 0
    while size < chars:
        w = rng.choices(vocab, weights, k=16)
        out += w
        size += sum(map(len, w)) + 16
    return " ".join(out)[:chars]


def rule_runners() -> dict:
    """name -> (family, function of a text running one rule or gate of a findings
    scan to the end); family None for what runs over every text."""
    from dashboard.actions.export import md_block, md_inline
    from dashboard.engine.tokenize import Tokenizer
    from dashboard.findings import checks, gates, rules

    # (As the tree before issue 19 has them too, to time old and new code alike.)
    spans = getattr(rules, "_rule_spans", lambda rule, t: (m.span() for m in rule.finditer(t)))
    out = {}
    for name, rule in getattr(rules, "_GUARD_RULES", rules.SECRET_RULES):
        out[f"secret.guard_{name}"] = ("secret", lambda t, r=rule: list(spans(r, t)))
    for name, rule in rules.EXTRA_SECRETS:
        out[f"secret.{name}"] = ("secret", lambda t, r=rule: list(spans(r, t)))
    for rule in rules.TEXT_RULES:
        out[rule.id] = (rule.category, lambda t, f=rule.find: list(f(t)))
    out["counter words (whole text)"] = ("personal", lambda t: list(rules._NOT_PERSONAL_BEFORE.finditer(t)))
    out["mask_secret"] = ("secret", checks.mask_secret)
    out["gate: open_families"] = (None, gates.open_families)
    out["token_set"] = (None, checks.token_set)
    out["recall tokens (no jieba)"] = (None, Tokenizer(use_jieba=False).tokens)
    out["export md_inline/md_block"] = (None, lambda t: (md_inline(t), md_block(t)))
    out["scan_text"] = (None, rules.scan_text)
    out["scan_text(gate=False)"] = (None, lambda t: rules.scan_text(t, gate=False))
    return out
