"""Every finding rule: what in a memory should not be there.

Pure functions of text (and a clock for staleness): no Flask, no sqlite3.
Each rule is a named function whose docstring's first line is the reason the
page shows.  Text rules yield ``(start, end)`` spans; ``scan_text`` turns them
into findings with a masked excerpt.  Rules needing the whole corpus
(conflicts and duplicates) live in ``findings.corpus``.

Families (the ``category`` of a finding):
  secret       what agentao 0.5.17's guard refuses today, plus formats it misses
  personal     e-mail, phone, payment card (Luhn), PRC resident ID (MOD 11-2), IBAN (mod 97)
  instruction  text aimed at the agent's own rules, role markers, prompt-block tags
  conflict     same key in both scopes, near duplicates, contradicted preferences
  upkeep       near the 4,000-character limit, stale (> 90 days, recall penalty)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ..contract import CONTENT_MAX, SECRET_RULES
from ..engine.recall import STALE_DAYS, Ages
from ..guard.invisible import hidden_spans
from . import linear
from .checks import iban_ok, luhn_ok, mask_digits, mask_email, mask_secret, prc_id_ok, text_signature
from .gates import FAMILY_GATES, open_families

NEAR_LIMIT = 3600
CONTEXT_CHARS = 30


@dataclass(slots=True)  # not frozen: a frozen __init__ is slower, and scans make many
class Finding:
    """One reason a field of one row deserves a look; spans index into the field."""

    rule: str
    category: str
    field: str
    start: int
    end: int
    excerpt: str  # masked for secret and personal findings
    why: str
    related: tuple[str, ...] = ()
    signature: str = ""  # of the flagged text (checks.text_signature), for text rules only

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "category": self.category,
            "field": self.field,
            "span": [self.start, self.end],
            "excerpt": self.excerpt,
            "why": self.why,
            "related": list(self.related),
        }


@dataclass(frozen=True)
class TextRule:
    id: str
    category: str
    find: Callable[[str], Iterable[tuple[int, int]]]
    mask: Callable[[str], str] | None = None

    @property
    def why(self) -> str:
        return (self.find.__doc__ or self.id).strip().splitlines()[0]


def _spans(pattern: re.Pattern[str], text: str, ok=None) -> Iterator[tuple[int, int]]:
    for m in pattern.finditer(text):
        if ok is None or ok(m.group(0)):
            yield m.span()


# ---------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------
# Formats agentao's guard lets through.  Each is anchored on a vendor prefix or
# a label, which keeps false positives on build notes close to zero.
EXTRA_SECRETS: tuple[tuple[str, re.Pattern[str] | Callable], ...] = (
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}")),
    ("gitlab_token", re.compile(r"\bgl(?:pat|dt|rt|ptt|ft|cbt)-[A-Za-z0-9_-]{20,}")),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}")),
    ("twilio_api_key", re.compile(r"\bSK[0-9a-f]{32}\b")),
    ("azure_account_key", re.compile(r"\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}")),
    ("azure_sas_signature", re.compile(r"[?&;]sig=[A-Za-z0-9%+/]{30,}={0,2}")),
    ("digitalocean_token", re.compile(r"\bdo[por]_v1_[a-f0-9]{64}\b")),
    ("shopify_token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]{20,}"),
    ),
    ("telegram_bot_token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b")),
    # scheme://user:password@host — the usual way a database password lands in a note.
    ("url_credentials", re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:(?![$<{%*])[^\s:/@]{3,}@[^\s/]+")),
    # DB_PASSWORD=..., my_token=...: the guard skips labels glued to a word.
    (
        "labelled_secret",
        re.compile(
            r"\b[A-Za-z0-9_]*?[A-Za-z0-9](?:_|-)?(?:api[_-]?key|token|secret|password|passwd)"
            r"\s*[:=]\s*[\"']?(?![$<{%])[^\s\"']{8,}",
            re.I,
        ),
    ),
    # "the API key is 3f9a...": a value with both letters and digits after "is".
    # Possessive runs of spaces (``\s*+``): ``\s*[:=]?\s*`` split "token is" +
    # 4,000 spaces between its two \s* in every way before failing (quadratic).
    (
        "stated_secret",
        re.compile(
            r"\b(?:api[ _-]?key|access[ _-]?key|secret(?:[ _-]?key)?|token|password|passphrase)"
            r"\s++(?:is|was)\s*+(?:[:=]\s*+)?[\"'`]?(?=[^\s\"'`]*\d)(?=[^\s\"'`]*[A-Za-z])[^\s\"'`]{8,}",
            re.I,
        ),
    ),
    (
        "key_hex_value",
        re.compile(
            r"\bkey\s*[:=]\s*[\"']?(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Za-z])"
            r"[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])",
            re.I,
        ),
    ),
    # (?:密码|…)\s*(?:是|为|[:：=])\s*["'“]?(?=[^\s"'”，。；,;]*[A-Za-z0-9])[^\s"'”，。；,;]{6,},
    # in linear time (findings/linear.py).
    ("chinese_secret", linear.chinese_secret),
)
# agentao's own shapes, but its JWT one in linear time (findings/linear.py).
_GUARD_RULES = tuple((name, linear.jwt if name == "jwt" else p) for name, p in SECRET_RULES)


def _rule_spans(rule, text: str) -> Iterator[tuple[int, int]]:
    # A rule is a compiled pattern or a function of the text giving spans.
    return (m.span() for m in rule.finditer(text)) if isinstance(rule, re.Pattern) else rule(text)


def secret_spans(text: str) -> list[tuple[int, int, str]]:
    """Every secret in ``text`` as ``(start, end, rule id)``, overlaps removed
    (agentao's own rules win over ours, then the earlier, longer span)."""
    found = [
        (s, e, i, f"secret.guard_{name}")
        for i, (name, p) in enumerate(_GUARD_RULES)
        for s, e in _rule_spans(p, text)
    ]
    base = len(_GUARD_RULES)
    found += [
        (s, e, base + i, f"secret.{name}")
        for i, (name, p) in enumerate(EXTRA_SECRETS)
        for s, e in _rule_spans(p, text)
    ]
    found.sort(key=lambda f: (f[2], f[0]))
    kept = linear.Disjoint()
    for start, end, _order, rule in found:
        if not kept.overlaps(start, end):
            kept.add(start, end, rule)
    return list(kept)


GUARD_WHY = (
    "agentao 0.5.17 refuses to save this today ({name}); it got in through an older "
    "version, a hand edit or a path the guard does not check"
)
EXTRA_WHY = "credential format agentao's guard does not detect ({name})"


# ---------------------------------------------------------------------------
# Personal data
# ---------------------------------------------------------------------------
# Bounded by ASCII only (Chinese text glues an address to the words around it),
# and a full stop after it may end the sentence.
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9_.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
    r"[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9_:@]|\.[A-Za-z0-9])"
)
_PLACEHOLDER_DOMAIN = re.compile(
    r"@(?:[\w-]+\.)*(?:example\.(?:com|org|net)|[\w-]+\.(?:example|invalid|test|localhost))$", re.I
)


def email_address(text: str):
    """E-mail address (personal data the guard never looks for)"""
    return _spans(
        _EMAIL,
        text,
        lambda s: (
            not _PLACEHOLDER_DOMAIN.search(s) and not s.lower().startswith(("noreply@", "no-reply@", "git@"))
        ),
    )


_INTL_PHONE = re.compile(r"(?<![\w+])\+[1-9](?:[\s.()-]{0,2}\d){7,14}(?![\d])")
# The digit rules take their first character before the look-behind that
# checks what precedes it (same matches): a pattern that starts with a
# character lets sre skip in C to where it occurs, 2-6x faster on digit-dense text.
_CN_MOBILE = re.compile(r"1(?<![0-9A-Za-z_.+/-]1)[3-9]\d(?:[\s-]?\d{4}){2}(?![0-9A-Za-z_])")


# A long number right after one of these words is a build, order or run number.
# (Possessive, as stated_secret: no separator is a space.)
_NOT_PERSONAL_BEFORE = re.compile(
    r"(?:build|run|job|order|invoice|ticket|commit|pipeline|id|no\.?|#|构建号?|订单号?|流水号?|编号|工单)"
    r"\s*+(?:[:：#]\s*+)?$",
    re.I,
)


def _not_a_counter(text: str, start: int) -> bool:
    return _NOT_PERSONAL_BEFORE.search(text, max(0, start - 16), start) is None


def phone_number(text: str):
    """Phone number (+country code, or a Chinese mobile number 1[3-9]xxxxxxxxx)"""
    yield from _spans(_INTL_PHONE, text, lambda s: 8 <= sum(c.isdigit() for c in s) <= 15)
    for s, e in _spans(_CN_MOBILE, text):
        if _not_a_counter(text, s):
            yield s, e


# The ten digits every card needs after its first three are spelled out: a
# repeated group costs sre a frame per step (1.8x slower).
_CARD = re.compile(
    r"[2-6](?<![0-9A-Za-z_.-][2-6])\d{2}" + r"[ -]?\d" * 10 + r"(?:[ -]?\d){0,6}(?![0-9A-Za-z_-])"
)


def _card_brand_ok(d: str) -> bool:
    n, two, four = len(d), int(d[:2]), int(d[:4])
    return (
        (d[0] == "4" and n in (13, 16, 19))
        or (51 <= two <= 55 and n == 16)
        or (2221 <= four <= 2720 and n == 16)
        or (two in (34, 37) and n == 15)
        or ((two in (36, 38) or 300 <= int(d[:3]) <= 305) and 14 <= n <= 19)
        or (3528 <= four <= 3589 and 16 <= n <= 19)
        or ((d.startswith(("6011", "65", "62")) or 644 <= int(d[:3]) <= 649) and 16 <= n <= 19)
    )


def _card_ok(span: str) -> bool:
    if " " in span and "-" in span:  # one kind of separator at most
        return False
    digits = span.replace(" ", "").replace("-", "")  # _CARD's only separators
    return 13 <= len(digits) <= 19 and _card_brand_ok(digits) and luhn_ok(digits)


def payment_card(text: str):
    """Payment card number (known issuer range and length, Luhn check passes)"""
    for s, e in _spans(_CARD, text, _card_ok):
        if _not_a_counter(text, s):
            yield s, e


_PRC_ID = re.compile(r"[1-9](?<![0-9A-Za-z][1-9])\d{16}[\dXx](?![0-9A-Za-z])")  # see _CN_MOBILE


def prc_resident_id(text: str):
    """PRC resident ID number (18 digits: real province, valid birth date, MOD 11-2 check)"""
    return _spans(_PRC_ID, text, prc_id_ok)


_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


def iban(text: str):
    """IBAN bank account number (country length and mod-97 check pass)"""
    from .checks import IBAN_LENGTHS

    for m in _IBAN.finditer(text):
        cc = m.group(0)[:2]
        want = IBAN_LENGTHS.get(cc)
        places = [i for i, ch in enumerate(m.group(0)) if ch != " "]
        if want and len(places) >= want:
            compact = "".join(m.group(0)[i] for i in places[:want])
            if iban_ok(compact):
                yield m.start(), m.start() + places[want - 1] + 1


# ---------------------------------------------------------------------------
# Instruction-like content
# ---------------------------------------------------------------------------
_OVERRIDE_EN = re.compile(
    r"\b(?:skip|ignore|bypass|disable|turn\s+off|override|circumvent|suppress|disregard|"
    r"forget|get\s+around|work\s+around)\b[^.!?\n;]{0,40}?\b(?:confirmations?|confirming|"
    r"approvals?|permission\s+(?:checks?|prompts?|requests?|dialogs?)|permissions(?!\s+(?:bits?|"
    r"modes?|changes?|errors?|on|of)\b)|safety(?:\s+checks?)?|safeguards?|guardrails?|"
    r"security\s+checks?|(?:all|any|every|safety|security|these)\s+checks|sandbox(?:ing)?|"
    r"(?:previous|prior|above|earlier|all|your|system|original)\s+(?:instructions?|rules?|"
    r"prompts?|guidelines?)|restrictions?|content\s+polic(?:y|ies)|(?:the\s+)?user'?s?\s+consent)\b",
    re.I,
)
_NO_ASK_EN = re.compile(
    r"\b(?:do\s+not|don'?t|never|no\s+need\s+to|stop)\s+(?:ask(?:ing)?|wait(?:ing)?\s+for|"
    r"prompt(?:ing)?|request(?:ing)?|seek(?:ing)?|check(?:ing)?\s+with)\b[^.!?\n;]{0,25}?"
    r"\b(?:confirm\w*|permission\w*|approv\w*|consent|the\s+user|me|first|before)\b"
    r"|\bwithout\s+(?:asking|confirm\w*|approval|permission|consent)\b"
    r"|\b(?:do\s+not|don'?t|never|no\s+need\s+to)\s+(?:confirm|verify\s+with\s+(?:the\s+)?user)\b"
    r"|\b(?:always|automatically)\s+approve\b|\bauto[- ]?approv\w*"
    r"|\bapprove\s+(?:all|everything|anything|every\s+\w+)\b|\b(?:always|just)\s+(?:say|answer)\s+yes\b"
    r"|--dangerously-skip-permissions|\byolo\s+mode\b",
    re.I,
)
_OVERRIDE_ZH = re.compile(
    r"(?:跳过|忽略|绕过|绕开|无视|关闭|禁用|取消|不理会)[^。！？\n；]{0,10}?(?:二次确认|确认|审批|审核|权限|"
    r"安全检查|安全限制|安全策略|安全规则|沙箱|防护|护栏|(?:之前|以上|上面|前面|所有|系统|你的|原来|原有)的?"
    r"(?:规则|指令|提示词?|设定|限制))"
    r"|(?:不要|不用|不必|无需|无须|不需要|别)再?(?:向我|跟我)?(?:确认|询问|请示|征求|问我|审批|批准)"
    r"|(?:自动|总是|一律|全部|始终)(?:批准|同意)"
)


def override_instruction(text: str):
    """Instruction aimed at the agent's own rules (skip confirmations, bypass permissions or safety)"""
    for pattern in (_OVERRIDE_EN, _NO_ASK_EN, _OVERRIDE_ZH):
        yield from _spans(pattern, text)


_ROLE = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|"
    r"end_header_id)\|>|\[/?INST\]|<<\s*/?SYS\s*>>|\[/?SYSTEM\]"
    r"|^[ \t]*#{1,6}[ \t]*(?:system|instructions?)\b"
    r"|^[ \t]*(?:system|assistant|developer)[ \t]*:[ \t]*(?=you\b|ignore\b|always\b|never\b|"
    r"from\s+now\b|new\b|the\s+user\b|do\s+not\b|don'?t\b|disregard\b|forget\b)"
    r"|\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|should)\b"
    r"|\bnew\s+(?:system\s+)?instructions\s*:|\bpretend\s+(?:to\s+be|you\s+are)\b"
    r"|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|jailbroken|DAN)\b"
    r"|你现在(?:是一个|是一名|扮演)|从现在(?:开始|起)[，,]?\s*你(?:是|要|必须|应该|将)|(?:系统提示|系统指令)[:：]",
    re.I | re.M,
)


def role_marker(text: str):
    """Role or system-prompt marker (system:, <|im_start|>, ### System, you are now, 你现在扮演…)"""
    return _spans(_ROLE, text)


# Possessive, as stated_secret and the gate's fragments (gates.py): "<" + 4,000
# spaces cost 100 ms a row with \s*(?:/…)?\s*.
_BLOCK_TAG = re.compile(
    r"(?:<|&lt;?|&#0*+60;?|&#x0*+3c;?|\\u003c|\\x3c|%3c)\s*+(?:(?:/|\\/|&#0*+47;?|&#x0*+2f;?|%2f)\s*+)?"
    r"(?:memory-stable|memory-context|fact|session|system-reminder)(?![\w-])",
    re.I,
)


def prompt_block_tag(text: str):
    """Tag of a prompt block agentao renders memory into (</fact>, </memory-stable>, </system-reminder>, even escaped)"""
    return _spans(_BLOCK_TAG, text)


def hidden_characters(text: str):
    """Bidirectional control or invisible character (reorders or hides what a reader sees: a known carrier of prompt injection)"""
    # U+202E shows "invoice \u202efdp.exe" as "invoice exe.pdf"; tag characters spell out
    # text no screen shows but a model reads.  Which characters, and where they are
    # honest (emoji sequences, joiners inside Indic or Persian words): dashboard.guard.invisible.
    return hidden_spans(text, controls=False)


TEXT_RULES: tuple[TextRule, ...] = (
    TextRule("personal.email", "personal", email_address, mask_email),
    TextRule("personal.phone", "personal", phone_number, mask_digits),
    TextRule("personal.prc_id", "personal", prc_resident_id, mask_digits),
    TextRule("personal.card", "personal", payment_card, mask_digits),
    TextRule("personal.iban", "personal", iban, mask_digits),
    TextRule("instruction.override", "instruction", override_instruction),
    TextRule("instruction.role_marker", "instruction", role_marker),
    TextRule("instruction.block_tag", "instruction", prompt_block_tag),
    TextRule("instruction.hidden_characters", "instruction", hidden_characters),
)


# ---------------------------------------------------------------------------
# Running the text rules
# ---------------------------------------------------------------------------
def _excerpt(text: str, start: int, end: int, hidden: linear.Disjoint) -> str:
    """The span with a little context, one line; every span of ``hidden`` in
    the window (secrets and personal data, each with its mask) shown masked."""
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    out, pos = [], lo
    for s, e, mask in hidden.within(lo, hi):
        out.append(text[pos : max(pos, s)])
        out.append(mask(text[s:e]))
        pos = max(pos, e)
    out.append(text[pos:hi])
    body = " ".join("".join(out).split())
    return ("…" if lo else "") + body + ("…" if hi < len(text) else "")


def scan_text(text: str, field: str = "content", gate: bool = True) -> list[Finding]:
    """All secret, personal-data and instruction findings in one field.

    ``gate=False`` runs every rule whatever the gates say (for tests).
    """
    if not text:
        return []
    open_ = open_families(text) if gate else dict.fromkeys(FAMILY_GATES, True)
    secrets = secret_spans(text) if open_["secret"] else []
    out = []
    for s, e, rule in secrets:
        name = rule.split(".", 1)[1]
        why = GUARD_WHY.format(name=name[6:]) if name.startswith("guard_") else EXTRA_WHY.format(name=name)
        out.append(
            Finding(
                rule, "secret", field, s, e, mask_secret(text[s:e]), why, signature=text_signature(text[s:e])
            )
        )
    # What an unmasked excerpt must not show around its span: the secrets, and the
    # personal data (the masked rules come first in TEXT_RULES), each as its finding shows it.
    hidden = linear.Disjoint()
    for s, e, _r in secrets:
        hidden.add(s, e, mask_secret)
    for rule in TEXT_RULES:
        if not open_[rule.category]:
            continue
        for s, e in rule.find(text):
            if rule.mask is not None:
                # A number inside a secret is part of the secret, not a second finding.
                if hidden.overlaps(s, e):
                    continue
                hidden.add(s, e, rule.mask)
                excerpt = rule.mask(text[s:e])
            else:
                excerpt = _excerpt(text, s, e, hidden)
            out.append(
                Finding(
                    rule.id,
                    rule.category,
                    field,
                    s,
                    e,
                    excerpt,
                    rule.why,
                    signature=text_signature(text[s:e]),
                )
            )
    return out


# ---------------------------------------------------------------------------
# Oversized or stale
# ---------------------------------------------------------------------------
def near_size_limit(content: str, field: str = "content") -> Finding | None:
    """Content at or above 3,600 characters: near agentao's 4,000 limit, likely a pasted document"""
    n = len(content)
    if n < NEAR_LIMIT:
        return None
    if n > CONTENT_MAX:
        why = f"{n} characters: over agentao's {CONTENT_MAX} limit, so a hand edit or another tool wrote it"
        return Finding("upkeep.over_limit", "upkeep", field, 0, n, f"{n} characters", why)
    why = (
        f"{n} characters, near agentao's {CONTENT_MAX} limit: a pasted document? "
        "Only its first 240 (stable) or 200 (recall) characters ever reach the model"
    )
    return Finding("upkeep.near_limit", "upkeep", field, 0, n, f"{n} characters", why)


@lru_cache(maxsize=8)
def stale_cutoff(now: datetime) -> str:
    """The stamp after which a canonical ``updated_at`` (``is_canonical_stamp``) is never stale at ``now``."""
    # Canonical stamps are naive, read as UTC, and compare as strings.
    utc = now.astimezone(timezone.utc) if now.tzinfo else now
    return (utc - timedelta(days=STALE_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")


def is_canonical_stamp(stamp: str) -> bool:
    """``YYYY-MM-DDTHH:MM:SS`` as agentao writes it: compared as a string with ``stale_cutoff``."""
    return len(stamp) == 19 and stamp[10] == "T"


def stale(updated_at: str, now: datetime, stable: bool = False) -> Finding | None:
    """Live memory not updated for more than 90 days: recall subtracts the stale penalty

    ``stable``: the memory is in ``<memory-stable>``, where the penalty is moot.
    """
    return Staleness(now)(updated_at, stable)


class Staleness:
    """``stale`` at one ``now``, for the many rows of a scan: what depends only
    on the clock (the cutoff stamp, ``now`` in microseconds) is worked out once."""

    __slots__ = ("fresh_after", "_ages")

    def __init__(self, now: datetime):
        self.fresh_after = stale_cutoff(now)
        self._ages = Ages(now)

    def __call__(self, updated_at: str, stable: bool = False) -> Finding | None:
        if updated_at > self.fresh_after and is_canonical_stamp(updated_at):
            return None  # fast path; anything unusual goes through agentao's parse
        days = self._ages.once(updated_at or "")
        if days <= STALE_DAYS:
            return None
        return Finding(
            "upkeep.stale",
            "upkeep",
            "updated_at",
            0,
            len(updated_at),
            updated_at,
            _stale_why(int(days), stable),
        )


@lru_cache(maxsize=4096)
def _stale_why(days: int, stable: bool) -> str:
    # One text per age in days: a large store has tens of thousands of stale rows.
    if stable:
        return (
            f"updated {days} days ago (> {STALE_DAYS}): not recall-scored but injected "
            "every turn through <memory-stable> — is it still true?"
        )
    return (
        f"updated {days} days ago (> {STALE_DAYS}): recall scores it −2 (stale_penalty), "
        "so it has mostly stopped being recalled — still true? update or delete it"
    )
