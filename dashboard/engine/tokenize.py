"""Recall tokenization as agentao 0.5.17 does it (contract §10.2).

A Latin path (lower-cased, split, stop words dropped, variants added) and, only when
jieba imports, a CJK path (jieba's precise mode, words of 2+ characters); ``mode`` says which.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CJK = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK}]")
CJK_RUN = re.compile(f"[{_CJK}]+")
# A seam between Latin (ASCII letters, any decimal digit) and CJK, either way.
_SEAM = re.compile(rf"(?<=[a-zA-Z\d])(?=[{_CJK}])|(?<=[{_CJK}])(?=[a-zA-Z\d])")
# Backtick and tilde are deliberately absent: agentao does not split on them.
_SEPARATORS = re.compile(r"[\s/\\_\-.,:;|@#$%^&*()+=\[\]{}<>?!'\"]+")

STOPWORDS = frozenset(
    """
    a an the is are was were be been have has had do does did will would can
    could should may might shall to of in for on with at by from as into and or
    but not no so if then that this it its i you we they my your
""".split()
)

_SEGMENT_MEMO = 50_000  # distinct CJK runs remembered per tokenizer

MODE_JIEBA = "jieba"
MODE_LATIN = "latin-only"


def variant(word: str) -> str | None:
    """The extra normalized form agentao adds beside ``word``, or None. ``v`` + digits gives the digits
    (``str.isdigit``, so superscripts count); otherwise a word longer than 3 ending in ``s`` but not ``ss``
    loses the s."""
    if len(word) >= 2 and word[0] == "v" and word[1:].isdigit():
        return word[1:]
    if len(word) > 3 and word[-1] == "s" and not word.endswith("ss"):
        return word[:-1]
    return None


@dataclass(frozen=True)
class TokenOrigin:
    """One token of a text and how it arose: ``word``, ``variant`` or ``jieba``."""

    token: str
    origin: str
    source: str = ""  # for a variant: the word it came from

    def to_dict(self) -> dict[str, str]:
        """Plain form for the JSON twin."""
        return {"token": self.token, "origin": self.origin, "source": self.source}


@contextmanager
def _without_pkg_resources() -> Iterator[None]:
    """jieba reads its data files through setuptools' ``pkg_resources`` when that imports,
    else straight from its own folder: the same bytes, so the same dictionary and splits.
    Importing ``pkg_resources`` indexes every installed distribution, about 5 MiB resident
    for the life of the server (bench/bench_rss.py), so jieba is shown it as missing (a
    ``None`` in ``sys.modules`` is how the import system spells "not installed") unless
    something imported it already.  Nothing else in the dashboard imports it."""
    if "pkg_resources" in sys.modules:
        yield
        return
    sys.modules["pkg_resources"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if sys.modules.get("pkg_resources", False) is None:
            del sys.modules["pkg_resources"]


def _load_jieba(userdict: Path | None) -> Any:
    """Import and initialise jieba quietly; None when it is not installed."""
    try:
        with warnings.catch_warnings(), _without_pkg_resources():
            # jieba 0.42.1 has non-raw regex literals that newer Pythons warn on.
            warnings.filterwarnings("ignore", category=SyntaxWarning)
            import jieba
    except ImportError:
        return None
    jieba.setLogLevel(logging.WARNING)  # keep its "Building prefix dict" chatter out
    jieba.initialize()
    if userdict is None:
        userdict = Path.home() / ".agentao" / "userdict.txt"
    try:
        if userdict.is_file():
            jieba.load_userdict(str(userdict))
    except Exception:  # a broken or unreadable user dict must not take recall down; agentao agrees
        pass
    return jieba


class Tokenizer:
    """agentao's recall tokenizer; ``use_jieba``: None "if importable", False as agentao without
    jieba, True (ImportError if missing).  ``userdict``: ``~/.agentao/userdict.txt`` by default."""

    def __init__(self, use_jieba: bool | None = None, userdict: Path | None = None):
        self._jieba = None if use_jieba is False else _load_jieba(userdict)
        self._segments: dict[str, tuple[str, ...]] = {}
        if use_jieba is True and self._jieba is None:
            raise ImportError("jieba is not installed (pip install jieba)")

    @property
    def mode(self) -> str:
        """``"jieba"`` when CJK text is segmented, else ``"latin-only"``."""
        return MODE_JIEBA if self._jieba is not None else MODE_LATIN

    def _latin(self, text: str, has_cjk: bool) -> list[str]:
        # The seam rule needs a CJK character; skipping it otherwise is only speed.
        prepped = _SEAM.sub(" ", text) if has_cjk else text
        return [p for p in _SEPARATORS.split(prepped.lower()) if len(p) > 1 and p not in STOPWORDS]

    def _cjk_words(self, text: str, has_cjk: bool) -> list[str]:
        if self._jieba is None or not has_cjk:
            return []
        words: list[str] = []
        memo = self._segments
        for run in CJK_RUN.findall(text):
            found = memo.get(run)
            if found is None:
                # The same short runs recur across thousands of records; jieba
                # is deterministic for a given dictionary, so remember them.
                found = tuple(
                    w for w in self._jieba.lcut(run, cut_all=False) if len(w) >= 2 and _CJK_CHAR.match(w)
                )
                if len(memo) >= _SEGMENT_MEMO:
                    memo.clear()
                memo[run] = found
            words.extend(found)
        return words

    def tokens(self, text: str) -> frozenset[str]:
        """The token set of ``text``, as agentao's retriever computes it."""
        has_cjk = _CJK_CHAR.search(text) is not None
        pieces = self._latin(text, has_cjk)
        out = set(pieces)
        for piece in pieces:
            if piece[-1] == "s" or piece[0] == "v":  # the only shapes with a variant
                alt = variant(piece)
                if alt is not None:
                    out.add(alt)
        out.update(self._cjk_words(text, has_cjk))
        return frozenset(out)

    def explain(self, text: str) -> tuple[TokenOrigin, ...]:
        """Each distinct token of ``text`` once, in first-seen order, with its origin."""
        seen: dict[str, TokenOrigin] = {}
        has_cjk = _CJK_CHAR.search(text) is not None
        for piece in self._latin(text, has_cjk):
            seen.setdefault(piece, TokenOrigin(piece, "word"))
            alt = variant(piece)
            if alt is not None:
                seen.setdefault(alt, TokenOrigin(alt, "variant", piece))
        for word in self._cjk_words(text, has_cjk):
            seen.setdefault(word, TokenOrigin(word, "jieba"))
        return tuple(seen.values())


_DEFAULT: Tokenizer | None = None


def default_tokenizer() -> Tokenizer:
    """A process-wide tokenizer using jieba when importable (built on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Tokenizer()
    return _DEFAULT


CJK_SETTINGS = ("auto", "on", "off")


@functools.cache
def tokenizer_for(cjk: str) -> Tokenizer:
    """The tokenizer for a ``--cjk`` setting (as the agent splits, not the dashboard), one per
    process and setting: ``off`` without jieba, ``on`` requires it, ``auto`` if importable."""
    if cjk not in CJK_SETTINGS:
        raise ValueError(f"CJK must be one of {', '.join(CJK_SETTINGS)}, not {cjk!r}")
    return default_tokenizer() if cjk == "auto" else Tokenizer(use_jieba=cjk == "on")
