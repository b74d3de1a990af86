"""File-path hints from recent messages (contract §10.1): the last 10 messages, first 20 paths.

The pattern has no word boundary: ``foo.toolongext`` yields ``foo.toolon``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

HINT_MESSAGES = 10
HINT_LIMIT = 20
# agentao's ``[\w./\\-]+\.\w{2,6}``, linear (4,000 dots took 147 ms): when no "." of a
# run is followed by two word characters, no later start in the run finds one either,
# so the second branch consumes the run and its matches (no group) are dropped.
_PATHLIKE = re.compile(r"([\w./\\-]+\.\w{2,6})|[\w./\\-]++")


def _texts(message: Any) -> list[str]:
    """The scanned texts of one message: a string, or an agentao-style dict whose ``content`` is
    a string or blocks (only ``{"type": "text"}`` count)."""
    if isinstance(message, str):
        return [message]
    content = message.get("content", "") if isinstance(message, dict) else ""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return []


def extract_hints(messages: Iterable[Any]) -> tuple[str, ...]:
    """Path-like hints from the last 10 of ``messages``, first 20 kept, in order."""
    found: list[str] = []
    for message in list(messages)[-HINT_MESSAGES:]:
        for text in _texts(message):
            found.extend(path for path in _PATHLIKE.findall(text) if path)
    return tuple(found[:HINT_LIMIT])
