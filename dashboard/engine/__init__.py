"""The pure preview engine: agentao 0.5.17's prompt memory, computed and explained.

No Flask, no sqlite3, no clock: callers hand in each file's rows (``ORDER BY
created_at``), summaries and a ``now``, and get the exact ``<memory-stable>`` and
``<memory-context>`` text agentao would inject, with every number behind it.
Equal scores (agentao: hash-set order) rank by ``updated_at`` descending, then id:
one of agentao's possible orders.  The full ranked table is built when first read.
An ``EngineCache`` over the rows reuses their token index and stable selection.
``tokenizer_for(setting)`` splits Chinese as the person's agent does (``agent_cjk``).
"""

from .cache import EngineCache
from .hints import extract_hints
from .preview import preview, stable_view, warm
from .ranking import Candidate
from .recall import CUT_BUDGET, CUT_TOP_K, EXCLUDED_STABLE, IN_BLOCK, Term
from .results import Budget, Preview
from .stable import Selected, all_entries, session_tail
from .tokenize import (
    CJK_SETTINGS,
    MODE_JIEBA,
    MODE_LATIN,
    Tokenizer,
    TokenOrigin,
    default_tokenizer,
    tokenizer_for,
)

__all__ = [
    "preview",
    "stable_view",
    "warm",
    "extract_hints",
    "session_tail",
    "all_entries",
    "EngineCache",
    "Preview",
    "Candidate",
    "Budget",
    "Selected",
    "Term",
    "Tokenizer",
    "TokenOrigin",
    "default_tokenizer",
    "tokenizer_for",
    "CJK_SETTINGS",
    "MODE_JIEBA",
    "MODE_LATIN",
    "IN_BLOCK",
    "CUT_TOP_K",
    "CUT_BUDGET",
    "EXCLUDED_STABLE",
]
