"""The demo shows every headline feature on first run (issue 21): the findings scan
reports each family, and the review queue warns before the approvals that would
invert their evidence or push the user's own memories out of the always-on block.

Both through the dashboard's real answers (/findings.json, /reviews.json), as the
pages show them: nothing here lists what the demo holds.
"""

from __future__ import annotations

import pytest

from dashboard import create_app
from dashboard.demo import build_demo
from dashboard.findings.scan import CATEGORIES


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    project_dir, user_db = build_demo(tmp_path_factory.mktemp("demo"))
    return create_app(
        {"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False}
    ).test_client()


@pytest.fixture(scope="module")
def findings(client):
    answer = client.get("/findings.json").get_json()
    assert answer["complete"], answer["cut"]
    return answer["items"]


def test_every_finding_family_shows_up(findings):
    found = {i["category"] for i in findings}
    assert found == set(CATEGORIES)


def test_a_secret_agentao_lets_through_reaches_the_model(findings):
    secrets = [i for i in findings if i["category"] == "secret"]
    assert secrets and all(i["reach"] != "disk" for i in secrets)
    # Masked on the page: the value itself is never in the answer.
    assert all("sk_demo_4f9c2b7e1a8d3f6c" not in i["excerpt"] and "•" in i["excerpt"] for i in secrets)


def test_personal_data_in_english_and_chinese(findings):
    rules = {i["rule"] for i in findings if i["category"] == "personal"}
    assert {"personal.email", "personal.phone", "personal.prc_id"} <= rules
    phones = [i for i in findings if i["rule"] == "personal.phone"]
    # One international number, one Chinese mobile number, in different memories.
    assert len({i["row_id"] for i in phones}) >= 2
    assert any(i["excerpt"].startswith("+") for i in phones)
    assert any(not i["excerpt"].startswith("+") for i in phones)


def test_an_injected_instruction_and_contradicting_preferences(findings):
    rules = {i["rule"] for i in findings}
    assert "instruction.override" in rules
    assert "conflict.contradicted" in rules


@pytest.fixture(scope="module")
def warnings(client):
    items = client.get("/reviews.json").get_json()["items"]
    return {i["content"]: [w["code"] for w in i["plan"]["warnings"]] for i in items}


def test_a_candidate_that_inverts_its_evidence(warnings):
    assert any("contradicts_evidence" in codes for codes in warnings.values())


def test_a_candidate_that_evicts_what_the_user_saved(warnings):
    assert any("evicts_explicit" in codes for codes in warnings.values())
    # And one candidate without the evidence warning: the warning is not on everything.
    assert any("contradicts_evidence" not in codes for codes in warnings.values())


def test_the_demos_saved_conversations_are_ones_agentao_loads_and_the_pages_show(tmp_path):
    from agentao.embedding.sessions import list_sessions, load_session_record

    from dashboard.demo import CONVERSATIONS

    project_dir, user_db = build_demo(tmp_path)
    listed = list_sessions(project_dir)
    assert {s["session_id"] for s in listed} == {c[0] for c in CONVERSATIONS}
    assert listed[-1]["title"] == "Reach me on +1 415 555 0134 or at sam.lee@fastmail.com when …"
    for session, _days, messages in CONVERSATIONS:
        sid, loaded, model, skills = load_session_record(session, project_root=project_dir)
        assert (sid, loaded, model, skills) == (session, messages, "demo-model", [])
    client = create_app(
        {"PROJECT_DIR": project_dir, "USER_DB": user_db, "TESTING": True, "AUTH_TOKEN": False}
    ).test_client()
    saved = client.get("/about.json").get_json()["saved"]
    assert saved["sessions"] == len(CONVERSATIONS)
    assert saved["conversations_holding"] == 1  # the contact details, said in the first one
    assert {"personal.email", "personal.phone"} <= {f["rule"] for f in saved["found"]}
    # "Forget what is about you" masks the contacts it lists; the saved conversation's title
    # beside them (the person's first message) is masked the same way, not quoted in full.
    page = client.get("/forget/about").get_data(as_text=True)
    assert 'data-field="saved-files"' in page and "0134" in page
    assert "sam.lee@fastmail.com" not in page and "415 555" not in page
