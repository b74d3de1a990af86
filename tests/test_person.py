"""Who "forget what is about me" takes the person to be: the name and contacts their own
memories state, found as written (whole words, no pattern built from a stored text)."""

from __future__ import annotations

import pytest

from dashboard.actions.person import names_in_memory, person


@pytest.mark.parametrize(
    "key, content, names",
    [
        ("user_name", "Lena Vogel", ["Lena", "Vogel"]),
        ("user_nickname", "Call me Sam.", ["Sam"]),
        ("user_profile", "My name is Lena Vogel, I work on the billing team.", ["Lena", "Vogel"]),
        ("姓名", "李雷", ["李雷"]),
        ("user_intro", "我叫韩梅梅，负责测试。", ["韩梅梅"]),
        ("user_name", "lena (lowercase, not a name as written)", []),
        ("user_editor", "Uses Neovim With LazyVim", []),  # not keyed as a name, says none
        ("user_name", "A.* (?:x)", []),  # text, never a pattern
    ],
)
def test_the_name_a_memory_states(key, content, names):
    assert names_in_memory(key, content) == names


def test_names_are_whole_words_and_contacts_match_however_written():
    me = person(
        [
            ("user_name", "user_name", "Lena Vogel", False),
            ("user_phone", "user_phone", "My phone is +49 151 23456789", True),
        ]
    )
    assert me.names == ("Lena Vogel", "Vogel", "Lena")
    assert me.name_in(["Then Lena asked for uv."]) == "Lena"
    assert me.name_in(["Magdalena and Lenape are other words.", "lena in lower case"]) is None
    assert me.contact_in(["Call +4915123456789 for releases."]) is not None
    assert me.contact_in(["Marta's phone is +49 170 5550123"]) is None
    assert "23456789" not in str(me.to_dict())  # shown masked, as Findings shows it
    assert person([("user_phone", "t", "My phone is +49 151 23456789", False)]).contacts == frozenset()
