"""What agentao's saved conversations hold about the person. No Flask.

The files are read by ``store.sessions``; here Findings' own secret and
personal-data rules (``findings.rules.scan_text``) run over every message, and
each finding names the file and the message it is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..findings.rules import Finding, scan_text
from ..store.sessions import Message, Saved, SavedFile

ABOUT = ("personal", "secret")  # the findings that are about the person


@dataclass(frozen=True)
class Hit:
    """One finding in one message of one saved file."""

    file: SavedFile
    message: Message
    finding: Finding

    @property
    def span(self) -> str:
        return self.message.text[self.finding.start : self.finding.end]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file.name,
            "kind": self.file.kind,
            "session_id": self.file.session_id,
            "message": self.message.index,
            "role": self.message.role,
            "rule": self.finding.rule,
            "category": self.finding.category,
            "excerpt": self.finding.excerpt,
        }


def hits(saved: Saved) -> list[Hit]:
    """Every secret and personal-data finding in every message read, newest file first."""
    out = []
    for f in saved.files:
        for m in f.messages:
            for finding in scan_text(m.text, "message"):
                if finding.category in ABOUT:
                    out.append(Hit(f, m, finding))
    return out


def counts(saved: Saved, found: list[Hit]) -> dict[str, Any]:
    """How many saved conversations and replays there are, how old, and how many hold something
    about the person."""
    holding = {h.file.path for h in found}
    return {
        "sessions": len(saved.sessions),
        "replays": len(saved.replays),
        "oldest": saved.oldest(),
        "newest": saved.newest(),
        "holding": len(holding),
        "conversations_holding": len({h.file.session_id or h.file.name for h in found}),
        "findings": len(found),
        "unread": sum(1 for f in saved.files if not f.read),
    }
