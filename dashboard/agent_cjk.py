"""Which Chinese mode the person's agent recalls in, so the preview recalls the same way.

``--cjk on``/``off`` say it; ``auto`` asks the interpreter of the ``agentao`` command (in a
child process, ``find_spec`` only, nothing imported or written) whether it finds jieba.
The answer is held for the command's file as it is, for at most a minute.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask_babel import gettext as _

from .engine.tokenize import CJK_RUN, MODE_JIEBA, MODE_LATIN
from .records import plain
from .store import held

PROBE_TIMEOUT_S = 3.0
REPROBE_S = 60.0
HEAD_BYTES = 1024  # of the command's file: the shebang and pip's /bin/sh trampoline
# Looks jieba up without importing it; the current directory is taken off the path first,
# as it is not on the path of an installed command either.
PROBE = (
    "import sys\n"
    "sys.path[:1] = [p for p in sys.path[:1] if p]\n"
    "from importlib.util import find_spec\n"
    "print('jieba' if find_spec('jieba') else 'none')\n"
)
# pip writes a /bin/sh trampoline when the interpreter's path is too long or has spaces:
#   '''exec' "/path/to/python" "$0" "$@"
_TRAMPOLINE = re.compile(r"^'''exec' (?:\"([^\"]+)\"|(\S+)) ", re.MULTILINE)
SHOWN_QUERY = 16  # characters of the message quoted in the latin-only warning

# How the mode was decided.
BY_SETTING = "setting"  # --cjk on / off
BY_AGENT = "agent"  # the agent's interpreter answered
BY_DEFAULT = "default"  # no agentao found, or it did not answer: as with jieba


class Said:
    """One sentence of the mode line as plain data: the translated ``message`` with its
    placeholders unfilled, ``words`` (the message's own words, shown as they are), ``why`` (a
    clause said inside it) and ``code`` (paths, flags and commands, shown as code on a page)."""

    def __init__(self, message: str, words: str = "", why: Said | None = None, **code: str) -> None:
        self.message, self.words, self.why, self.code = message, words, why, code

    def text(self) -> str:
        """The sentence as plain text."""
        return self.message % {**self.code, "words": self.words, "why": self.why.text() if self.why else ""}


@dataclass(frozen=True)
class AgentCJK:
    """The mode the preview uses and how it was decided."""

    setting: str  # the --cjk setting: auto, on or off
    mode: str  # MODE_JIEBA or MODE_LATIN
    decided_by: str  # BY_SETTING, BY_AGENT or BY_DEFAULT
    agentao: str | None = None  # the agentao command found
    python: str | None = None  # its interpreter
    problem: str = ""  # with BY_DEFAULT: not_found, no_interpreter or no_answer

    @property
    def use(self) -> str:
        """The tokenizer setting (``engine.tokenizer_for``) for this mode."""
        return "on" if self.mode == MODE_JIEBA else "off"

    def warns(self, query: str) -> bool:
        """Whether ``query`` has Chinese (Japanese, Korean) text this mode does not split."""
        return self.mode == MODE_LATIN and bool(_chinese(query))

    def text(self, query: str = "") -> str:
        """One line for a person: the mode, why, and what it means for ``query``."""
        return self.said(query).text()

    def said(self, query: str = "") -> Said:
        """The line as plain data; ``preview/_cjk.html`` shows it on a page, paths and flags as code."""
        if self.decided_by == BY_SETTING:
            if self.mode == MODE_JIEBA:
                return Said(
                    _("Chinese words are recalled as with jieba installed (%(flag)s)."), flag="--cjk on"
                )
            return Said(
                _("Chinese is not split into words (%(flag)s): only Latin words and numbers are matched."),
                flag="--cjk off",
            )
        python = self.python or ""
        if self.decided_by == BY_AGENT:
            if self.mode == MODE_JIEBA:
                return Said(
                    _("Chinese words recalled as your agent does: jieba is installed for %(python)s."),
                    python=python,
                )
            chinese = _chinese(query)
            if chinese:
                return Said(
                    _(
                        "Your agent has no jieba (%(python)s): Chinese is not split into words, so “%(words)s” "
                        "recalls nothing by its Chinese words. Install %(extra)s there to change that."
                    ),
                    words=chinese,
                    python=python,
                    extra="agentao[i18n]",
                )
            return Said(
                _(
                    "Your agent has no jieba (%(python)s): Chinese is not split into words, as your agent does."
                ),
                python=python,
            )
        if self.problem == "not_found":
            why = Said(_("no agentao command was found on %(path)s"), path="PATH")
        elif self.problem == "no_interpreter":
            why = Said(_("the Python interpreter of %(path)s could not be read"), path=self.agentao or "")
        else:
            why = Said(_("the interpreter of %(path)s did not answer"), path=self.agentao or "")
        return Said(
            _(
                "Chinese words are recalled as with jieba: %(why)s. Start with %(flag)s if your agent "
                "runs without jieba."
            ),
            why=why,
            flag="--cjk off",
        )

    def to_dict(self, query: str = "") -> dict[str, Any]:
        """Plain form for the JSON twin."""
        return {
            **plain(self, "mode", "setting", "decided_by", "agentao", "python"),
            "problem": self.problem or None,
            "text": self.text(query),
        }


def _chinese(query: str) -> str:
    """The message's first CJK characters, as the tokenizer tells them."""
    runs = " ".join(CJK_RUN.findall(query))
    return runs if len(runs) <= SHOWN_QUERY else runs[:SHOWN_QUERY] + "…"


def find_agentao() -> Path | None:
    """The ``agentao`` command a person runs: on PATH, else beside this interpreter."""
    found = shutil.which("agentao")
    if found:
        return Path(found)
    here = Path(sys.executable).parent / "agentao"
    return here if here.is_file() and os.access(here, os.X_OK) else None


def interpreter_of(command: Path) -> str | None:
    """The Python interpreter a console script starts, from its first line (or pip's
    trampoline); None when it names none."""
    try:
        with command.open("rb") as f:
            head = f.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith("#!"):
        return None
    words = head[2:].splitlines()[0].split()
    if not words:
        return None
    if Path(words[0]).name == "sh":
        found = _TRAMPOLINE.search(head)
        return (found.group(1) or found.group(2)) if found else None
    if Path(words[0]).name == "env":
        names = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(names[0]) if names else None
    return words[0]


def has_jieba(python: str) -> bool | None:
    """Whether ``python`` finds jieba; None when it does not answer in time."""
    try:
        done = subprocess.run(
            [python, "-B", "-c", PROBE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    answer = done.stdout.strip()
    return {"jieba": True, "none": False}.get(answer) if done.returncode == 0 else None


def _probe(setting: str, command: Path) -> AgentCJK:
    python = interpreter_of(command)
    if python is None:
        return AgentCJK(setting, MODE_JIEBA, BY_DEFAULT, str(command), None, "no_interpreter")
    found = has_jieba(python)
    if found is None:
        return AgentCJK(setting, MODE_JIEBA, BY_DEFAULT, str(command), python, "no_answer")
    return AgentCJK(setting, MODE_JIEBA if found else MODE_LATIN, BY_AGENT, str(command), python)


def agent_cjk(setting: str) -> AgentCJK:
    """The mode for a ``--cjk`` setting: ``on`` and ``off`` as said, ``auto`` as the agent."""
    if setting in ("on", "off"):
        return AgentCJK(setting, MODE_JIEBA if setting == "on" else MODE_LATIN, BY_SETTING)
    command = find_agentao()
    if command is None:
        return AgentCJK(setting, MODE_JIEBA, BY_DEFAULT, problem="not_found")
    found = held.peek("agent_cjk", [command])
    if found is not None and time.monotonic() - found[0] < REPROBE_S:
        return found[1]
    stamp = held.stamps([command])
    result = _probe(setting, command)
    held.keep("agent_cjk", [command], (time.monotonic(), result), stamp=stamp)
    return result
