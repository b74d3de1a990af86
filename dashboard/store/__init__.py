"""Every SQL statement the dashboard runs: reads open files read-only (``connection``),
writes use short ``BEGIN IMMEDIATE`` transactions.
"""

from .connection import StoreProblem, file_stamp, read, write
from .memories import MAX_PER_PAGE, PER_PAGE, SORTS, MemoryFilters, MemoryPage, get_memory, list_memories
from .registry import StoreRef, build_refs, default_user_db, project_db_path
from .status import StoreStatus, inspect
from .summaries import list_review_items, list_summaries

__all__ = [
    "StoreProblem",
    "file_stamp",
    "read",
    "write",
    "MAX_PER_PAGE",
    "PER_PAGE",
    "SORTS",
    "MemoryFilters",
    "MemoryPage",
    "get_memory",
    "list_memories",
    "StoreRef",
    "build_refs",
    "default_user_db",
    "project_db_path",
    "StoreStatus",
    "inspect",
    "list_review_items",
    "list_summaries",
]
