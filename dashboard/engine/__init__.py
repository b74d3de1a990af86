"""The pure preview engine: agentao 0.5.17's prompt memory, computed and explained.

No Flask, no sqlite3, no clock of its own: callers hand in records
(:class:`dashboard.records.Memory` / :class:`~dashboard.records.Summary`) and
a ``now``, and get back the exact ``<memory-stable>`` and
``<memory-context>`` text agentao would inject, with every number behind it.

Input order
    The engine takes the two files' rows *separately*, each in the file's
    ``ORDER BY created_at`` order (SQLite keeps rowid order among equal
    stamps), and builds agentao's "all entries" list itself: project rows,
    then user rows, stably sorted by ``created_at`` (contract §6).  Summaries
    are the project file's rows either in rowid order or as ``ORDER BY
    created_at DESC`` returns them (SQLite keeps rowid order among equal
    stamps either way); the engine sorts them newest first, stably.

Tie order
    agentao sorts recall candidates by score only; records with equal scores
    come out in hash-set order, which changes between processes.  We rank by
    score descending, then ``updated_at`` descending (string order), then id
    ascending.  That is one of the orders agentao can produce, so our blocks
    equal agentao's whenever there is no tie, and otherwise equal one of its
    possible outputs (same scores, same set of tied records above the cut).

Laziness
    The blocks, budgets, stable entries and top 5 are computed by
    :func:`preview`; the full ranked table (``Preview.candidates``) and the
    never-recalled list are built when first read, because on a large store
    thousands of records can have a signal.

Caching
    Pass an :class:`EngineCache` and ``version=(project counter, user
    counter)`` (``schema_meta.memories_change``) to reuse token bundles and
    the stable selection while the counters hold, as agentao keys its own index.

CJK
    :class:`Tokenizer` uses jieba when importable; ``Tokenizer(use_jieba=False)``
    behaves like agentao without its ``i18n`` extra.  ``Preview.cjk_mode`` says
    which was used.  ``tokenizer_for(setting)`` gives the one for a ``--cjk``
    setting (auto, on, off); the views pass ``on`` or ``off`` as the person's agent
    recalls (``dashboard/agent_cjk.py``), so the preview matches the agent's environment.
"""

from .cache import EngineCache
from .hints import extract_hints
from .preview import preview, stable_block_size, stable_view
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
    "stable_block_size",
    "stable_view",
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
