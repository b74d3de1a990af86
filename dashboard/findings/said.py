"""Words a scan keeps, said when they are read.

A scan's report is kept across requests (and a full scan runs in a job
thread), so a sentence it carries is made each time someone reads it, in that
reader's language: ``Said(lambda: _("…", n=n))``.  Not HTML: Jinja escapes it
like any text; ``str()`` it for a JSON twin.
"""

from __future__ import annotations

from collections.abc import Callable


class Said:
    __slots__ = ("_say",)

    def __init__(self, say: Callable[[], str]):
        self._say = say

    def __str__(self) -> str:
        return self._say()

    def __contains__(self, part: str) -> bool:
        return part in str(self)

    def __eq__(self, other) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"Said({str(self)!r})"
