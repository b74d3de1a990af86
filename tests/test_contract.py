"""Our save rules against agentao's real guard, case by case."""

import pytest
from agentao.memory import MemoryGuard

from dashboard import contract

GUARD = MemoryGuard()

KEYS = [
    "Package Manager",
    "user_回答语言",
    "项目语言",
    "Build::Pipeline -- Stage #1 (✓ verified) / Ümlaut …",
    "İstanbul",
    "café au lait",
    "ＡＢＣ",
    "v3.11 release",
    "a" * 79 + " b",
    "  spaced   out  ",
    "\u212aelvin",
    "x" * 130,
]


@pytest.mark.parametrize("key", KEYS)
def test_key_normalisation_matches_agentao(key):
    try:
        expected = GUARD.normalize_key(key)
    except ValueError as exc:
        with pytest.raises(contract.SaveRefused, match=str(exc)):
            contract.normalize_key(key)
    else:
        assert contract.normalize_key(key) == expected


SECRETS_REFUSED = [
    "token=abcdefgh",
    "PASSWORD = hunter2hunter2",
    "secret: abcdefgh",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY----- truncated",
    "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
    "xoxb-1234567890",
    "?code=abcdefgh",
    "sk-ant-" + "a" * 20,
    "sk-" + "b" * 20,
    "AIza" + "c" * 35,
    "GOCSPX-" + "d" * 20,
    "AKIA" + "A1" * 8,
    "ghp_" + "e" * 36,
    "github_pat_" + "f" * 20,
    "xapp-1-" + "g" * 10,
    "sk_live_" + "h" * 20,
    "whsec_" + "i" * 20,
    "eyJabcdefgh.eyJabcdefgh.abcdefgh",
    "Bearer " + "j" * 20,
    "Authorization: Bearer " + "k" * 20,
    '"access_token": "abcdefgh"',
    '"code": "abcdefgh"',
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: 1\n\nabc",
]
SECRETS_ACCEPTED = [
    "xapi_key=abcdefgh",
    "my_token=abcdefgh",
    "password=1234567",
    "the word token: short",
    "x&code=abcdefg",
    "bearer " + "j" * 19,
    "AKIA" + "a" * 16,
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "-----BEGIN CERTIFICATE-----",
    "Use pnpm for installs",
    "端口 8080 上运行",
]


@pytest.mark.parametrize("text", SECRETS_REFUSED + SECRETS_ACCEPTED)
def test_secret_detection_matches_agentao(text):
    try:
        GUARD.detect_sensitive(text)
        agentao_refuses = False
    except ValueError:
        agentao_refuses = True
    assert (contract.find_secret(text) is not None) == agentao_refuses
    assert agentao_refuses == (text in SECRETS_REFUSED)


KEYWORD_CASES = [
    ("Package Manager", ["tooling", "语言"], "Use pnpm; see README.md and agentao/memory/retriever.py"),
    ("用户偏好", [], "python版本 3.11.2 with __init__ and foo_bar, Python camelCase abc中文"),
    ("the of and", ["", "Tag"], "the is " + " ".join(f"w{i}abc" for i in range(40))),
    ("x", [], " ".join(["alpha_beta"] * 5 + [f"word{chr(97 + i)}xyz" for i in range(26)] + ["late"])),
]


@pytest.mark.parametrize("title,tags,content", KEYWORD_CASES)
def test_keywords_match_agentao(title, tags, content):
    assert contract.extract_keywords(title, tags, content) == GUARD.extract_keywords(title, tags, content)


@pytest.mark.parametrize(
    "key,tags,scope",
    [
        ("user_lang", [], None),
        ("lang", ["User"], None),
        ("lang", ["Preference"], None),
        ("lang", ["personal"], None),
        ("lang", [], "user"),
        ("user_x", [], "project"),
        ("lang", [], "global"),
        ("lang", ["profile"], "bogus"),
    ],
)
def test_scope_matches_agentao(key, tags, scope):
    assert contract.classify_scope(key, tags, scope) == GUARD.classify_scope(key, tags, scope)


@pytest.mark.parametrize(
    "tags,type_",
    [
        ([], None),
        (["Workflow", "decision"], None),
        (["profile", "project_fact"], None),
        ([], "anything-goes"),
        (["constraint"], ""),
    ],
)
def test_type_matches_agentao(tags, type_):
    assert contract.classify_type(tags, type_) == GUARD.classify_type("k", tags, type_)


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("line\nbreak", "v", "single-line"),
        ("ok", "   ", "empty"),
        ("ok", "x" * 4001, r"\(4001 > 4000\)"),
        ("ok", "token=abcdefgh", "Refused to save"),
        ("!!!", "fine", "empty after normalization"),
    ],
)
def test_plan_save_refuses_with_agentao_wording(key, value, message):
    with pytest.raises(contract.SaveRefused, match=message):
        contract.plan_save(key, value)


def test_plan_save_downgrades_user_scope_without_user_store():
    plan = contract.plan_save("user_editor", "vim", has_user_store=False)
    assert (plan.scope, plan.store, plan.downgraded) == ("project", "project", True)
