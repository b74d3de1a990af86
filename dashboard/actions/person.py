"""Who the person is, as their own memories say: their name and their contact details.

No Flask.  "Forget what is about me" (``actions.about``) decides from this.  Contacts are the
personal data Findings sees (``scan_text``, category ``personal``) in memories of scope
``user``, compared by their letters and digits ("+49 151 2345 6789" = "+4915123456789").  The
name is what one of them says ("My name is Lena Vogel", "Call me Sam", "我叫李雷", or the value
of a memory keyed like a name); each part counts, looked for as written, as whole words, with
``str.find``: no pattern is built from a stored text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ..findings.rules import Finding, scan_text

MAX_NAME_WORDS = 4
_SAID = re.compile(
    r"\b(?:my name is|my name's|name is|call me|i am called|i'm called|known as)\s++(\S[^\n]{0,80})", re.I
)
_SAID_ZH = re.compile(
    r"(?:我叫|我的名字是|我的名字叫|名字是|名字叫|叫我)\s*+([\u3400-\u4dbf\u4e00-\u9fff]{2,4})"
)
_NAME_KEYS = ("name", "名字", "姓名")
_TRIM = ".,;:!?()[]\"'“”‘’。，；：！？"


def contact_value(text: str) -> str:
    """A contact compared by its letters and digits only, case folded."""
    return "".join(c for c in text.casefold() if c.isalnum())


def personal(text: str) -> list[Finding]:
    """The personal data Findings flags in ``text``."""
    return [f for f in scan_text(text) if f.category == "personal"]


def _cjk(word: str) -> bool:
    return all(unicodedata.east_asian_width(c) in "WF" for c in word)


def _capitalised(words: Iterable[str]) -> list[str]:
    out = []
    for raw in words:
        word = raw.strip(_TRIM)
        if len(word) < 2 or not word[0].isupper() or not word.replace("-", "").isalpha():
            break
        out.append(word)
        if len(out) == MAX_NAME_WORDS or raw[-1:] in _TRIM:
            break
    return out


def names_in_memory(key: str, content: str) -> list[str]:
    """The name a memory of the person states, as its words: [] when it states none."""
    if m := _SAID.search(content):
        return _capitalised(m.group(1).split())
    if m := _SAID_ZH.search(content):
        return [m.group(1)]
    if any(k in key.casefold() for k in _NAME_KEYS):
        words = content.split()
        if len(words) == 1 and _cjk(words[0].strip(_TRIM)) and 2 <= len(words[0].strip(_TRIM)) <= 4:
            return [words[0].strip(_TRIM)]
        found = _capitalised(words)
        if found and len(found) == len(words):
            return found
    return []


@dataclass(frozen=True)
class Person:
    """The person's names (whole and each part) and contacts (``contact_value``, and as shown masked)."""

    names: tuple[str, ...] = ()
    contacts: frozenset[str] = frozenset()
    shown_contacts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        return {"names": list(self.names), "contacts": list(self.shown_contacts)}

    def name_in(self, texts: Iterable[str]) -> str | None:
        """The first of the person's names written in one of ``texts`` as a whole word."""
        return next((name for text in texts for name in self.names if _word_at(text, name)), None)

    def contact_in(self, texts: Iterable[str]) -> str | None:
        """One of the person's contacts in ``texts``, as Findings masks it; None when there is none."""
        found = (f for t in texts for f in personal(t) if contact_value(t[f.start : f.end]) in self.contacts)
        return next((f.excerpt for f in found), None)


def _word_at(text: str, name: str) -> bool:
    cjk = _cjk(name)
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if cjk or ((at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum())):
            return True
        at = text.find(name, at + 1)
    return False


def person(memories: Iterable[tuple[str, str, str, bool]]) -> Person:
    """Who the person is, from their own memories: ``(key, title, content, personal)`` of scope
    ``user``, where ``personal`` says Findings flags personal data in it (only those are read
    for contacts: the scan has done the looking)."""
    names: list[str] = []
    contacts: dict[str, str] = {}
    for key, title, content, flagged in memories:
        words = names_in_memory(key, content)
        for name in ([" ".join(words)] if len(words) > 1 else []) + words:
            if name not in names:
                names.append(name)
        for text in (title, content) if flagged else ():
            for f in personal(text):
                contacts.setdefault(contact_value(text[f.start : f.end]), f.excerpt)
    # Longest first: "Lena Vogel" is named before "Lena".
    return Person(tuple(sorted(names, key=len, reverse=True)), frozenset(contacts), tuple(contacts.values()))
