"""agentao 0.5.17's save rules as pure functions (contract §4 and §15): what its save path
would write, and whether it would refuse, with no clock and no files.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

KEY_MAX = 80
TITLE_MAX = 120
CONTENT_MAX = 4000
KEYWORDS_MAX = 20
IDENTIFIERS_SCANNED = 30

KNOWN_TYPES = ("preference", "profile", "project_fact", "workflow", "decision", "constraint", "note")
# Tag -> type, first match wins in this order (contract §4.4).
_TYPE_BY_TAG = ("preference", "workflow", "decision", "constraint", "profile", "project_fact")
_USER_TAGS = frozenset({"preference", "profile", "personal"})
_KEYWORD_STOPWORDS = frozenset("a an the is in of to and or for with on at by be it as are was were".split())

REFUSED_SECRET = "Refused to save: content appears to contain sensitive credentials"
REFUSED_EMPTY_KEY = "Memory key is empty after normalization"


class SaveRefused(ValueError):
    """agentao would refuse this save, in agentao's words; ``agentao_error`` names its exception
    (``SensitiveMemoryError`` or ``ValueError``)."""

    agentao_error = "ValueError"

    @staticmethod
    def of(message: str) -> SaveRefused:
        """The refusal for a text kept from an earlier plan, of the class agentao raises."""
        return (SensitiveRefused if message == REFUSED_SECRET else SaveRefused)(message)

    @staticmethod
    def error_for(message: str | None) -> str | None:
        """agentao's exception name for a refusal known only by its text (a plan's)."""
        return None if message is None else SaveRefused.of(message).agentao_error


class SensitiveRefused(SaveRefused):
    """The content holds a credential: agentao's guard raises ``SensitiveMemoryError``."""

    agentao_error = "SensitiveMemoryError"


# ---------------------------------------------------------------------------
# Secret detection (contract §15).  Names are ours; the shapes are agentao's.
# ---------------------------------------------------------------------------
_B64_LINE = r"[A-Za-z0-9+/=]+"
_EOL = r"(?:\r?\n|\\n)"
SECRET_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "pem_block",
        re.compile(
            r"-----BEGIN [A-Z ]+KEY(?: BLOCK)?-----(?:(?!-----BEGIN )[\s\S])+?"
            r"-----END [A-Z ]+KEY(?: BLOCK)?-----"
        ),
    ),
    (
        "private_key_unterminated",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[ \t]*"
            + _EOL
            + r"(?:[A-Za-z][A-Za-z0-9-]*:[^\r\n\\]*"
            + _EOL
            + r")*"
            + r"(?:\s|\\n)*"
            + _B64_LINE
        ),
    ),
    ("private_key_header", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(r"\bsk-(?!ant-)(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("google_oauth_secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("github_fine_grained_pat", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("slack_token", re.compile(r"\bxox[baprs]-[0-9A-Za-z-]{10,}\b")),
    ("slack_app_token", re.compile(r"\bxapp-\d-[A-Za-z0-9-]{10,}")),
    ("stripe_key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("stripe_webhook_secret", re.compile(r"\bwhsec_[A-Za-z0-9]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    ("bearer_token", re.compile(r"\bbearer\s+[A-Za-z0-9_.=+/-]{20,}", re.I)),
    (
        "authorization_header",
        re.compile(r"\bauthorization\s*[:=]\s*(?:bearer\s+)?[A-Za-z0-9_.=+/-]{20,}", re.I),
    ),
    (
        "oauth_value",
        re.compile(
            r"(?:\b(?:access_token|refresh_token|id_token|code_verifier)[\"']?\s*[:=]\s*[\"']?"
            r"|(?<=[?&])code=|\"code\"\s*:\s*\")[^\s\"'&,}]{8,}",
            re.I,
        ),
    ),
    (
        "key_value_secret",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:api[_-]?key|token|secret|password|passwd)"
            r"\s*[:=]\s*[\"']?[^\s\"']{8,}",
            re.I,
        ),
    ),
)


def find_secret(content: str) -> tuple[str, re.Match[str]] | None:
    """Return ``(rule name, match)`` for the first secret rule that matches, else None."""
    for name, pattern in SECRET_RULES:
        m = pattern.search(content)
        if m:
            return name, m
    return None


# ---------------------------------------------------------------------------
# Key, title, content (contract §4.1)
# ---------------------------------------------------------------------------
def normalize_key(key: str) -> str:
    """agentao's key normalisation; raises SaveRefused when nothing is left."""
    k = key.strip().lower()
    k = re.sub(r"\s+", "_", k)
    k = re.sub(r"[^a-z0-9_]+", "_", k)
    k = re.sub(r"_+", "_", k).strip("_")
    if not k:
        raise SaveRefused(REFUSED_EMPTY_KEY)
    return k[:KEY_MAX]


def title_for(key: str) -> str:
    """The title agentao stores for a raw key: single line, stripped, 120 chars."""
    if "\n" in key or "\r" in key:
        raise SaveRefused("Memory key/title must be single-line")
    return key.strip()[:TITLE_MAX]


def clean_content(value: str) -> str:
    """Stripped content, or SaveRefused with agentao's message (never truncates)."""
    text = value.strip()
    if not text:
        raise SaveRefused("Memory content is empty")
    if len(text) > CONTENT_MAX:
        raise SaveRefused(f"Memory content exceeds max length ({len(text)} > {CONTENT_MAX})")
    return text


# ---------------------------------------------------------------------------
# Classification and keywords (contract §4.2, §4.4, §4.5)
# ---------------------------------------------------------------------------
def classify_scope(key_normalized: str, tags, scope: str | None = None) -> str:
    """Scope agentao infers for a save; an explicit ``user``/``project`` wins."""
    if scope in ("user", "project"):
        return scope
    lowered = {t.lower() for t in tags}
    if "user" in lowered or key_normalized.startswith("user_") or lowered & _USER_TAGS:
        return "user"
    return "project"


def classify_type(tags, type_: str | None = None) -> str:
    """Type agentao stores: the given one verbatim, else the first tag match, else note."""
    if type_:
        return type_
    lowered = {t.lower() for t in tags}
    for candidate in _TYPE_BY_TAG:
        if candidate in lowered:
            return candidate
    return "note"


_WORD_RUN = re.compile(r"\w+")
# agentao's path pattern is ``[\w/]+\.\w{2,4}``.  Searched as written, a long run of
# [\w/] that does not end in ".xx" is re-read from each of its characters: quadratic
# ('x' + '/' * 4000 took 95 ms).  A match can only put its "." right after the whole
# run, so when that fails at one start it fails at every later start in the run; the
# second branch consumes the run in one step and its matches (no group) are dropped.
_PATH_LIKE = re.compile(r"([\w/]+\.\w{2,4})|[\w/]++")
_IDENTIFIER = re.compile(r"\b[a-z_]{3,}\b")


def extract_keywords(title: str, tags, content: str) -> list[str]:
    """The ``keywords_json`` list agentao derives from title, tags and content."""
    found = {w.lower() for w in _WORD_RUN.findall(title) if len(w) > 2}
    found.update(t.lower() for t in tags)
    found.update(path for path in _PATH_LIKE.findall(content) if path)
    found.update(w.lower() for w in _IDENTIFIER.findall(content)[:IDENTIFIERS_SCANNED])
    found -= _KEYWORD_STOPWORDS
    return sorted(found)[:KEYWORDS_MAX]


@dataclass(frozen=True)
class PlannedSave:
    """Everything a save will write, computed before touching a file."""

    key_normalized: str
    title: str
    content: str
    tags: tuple[str, ...]
    keywords: tuple[str, ...]
    scope: str  # the scope column value after any downgrade
    store: str  # "user" or "project": the file it lands in
    type: str
    source: str
    confidence: str
    downgraded: bool  # asked for user scope but there is no user store

    def to_dict(self) -> dict:
        """Every field, tuples as lists: what a plan's JSON says the save will write."""
        return {**asdict(self), "tags": list(self.tags), "keywords": list(self.keywords)}


def plan_save(
    key: str,
    value: str,
    tags=(),
    *,
    scope: str | None = None,
    type_: str | None = None,
    source: str = "explicit",
    has_user_store: bool = True,
) -> PlannedSave:
    """Run agentao's guard pipeline in its order; raise SaveRefused on the first failure."""
    tags = tuple(tags)
    normalized = normalize_key(key)
    title = title_for(key)
    content = clean_content(value)
    if find_secret(content):
        raise SensitiveRefused(REFUSED_SECRET)
    target = classify_scope(normalized, tags, scope)
    downgraded = target == "user" and not has_user_store
    if downgraded:
        target = "project"
    return PlannedSave(
        key_normalized=normalized,
        title=title,
        content=content,
        tags=tags,
        keywords=tuple(extract_keywords(title, tags, content)),
        scope=target,
        store=target,
        type=classify_type(tags, type_),
        source=source,
        confidence="explicit_user" if source == "explicit" else "auto_summary",
        downgraded=downgraded,
    )
