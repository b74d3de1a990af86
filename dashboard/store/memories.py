"""Reading memories: the filtered, sorted, paged list across both files, and one row."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import rows
from .connection import read
from .registry import StoreRef
from ..records import Event, Memory

SORTS = {"updated": "updated_at", "created": "created_at", "title": "title",
         "key": "key_normalized", "type": "type", "scope": "scope"}
MAX_PER_PAGE = 200

# A JSON column that is not valid JSON would make json_each fail the whole query.
_TAGS = "json_each(CASE WHEN json_valid(m.tags_json) THEN m.tags_json ELSE '[]' END)"
_KEYWORDS = "json_each(CASE WHEN json_valid(m.keywords_json) THEN m.keywords_json ELSE '[]' END)"


@dataclass(frozen=True)
class MemoryFilters:
    """The list's filters; ``q`` has `/memory search` semantics (contract §6)."""

    scope: str | None = None
    type: str | None = None
    source: str | None = None
    confidence: str | None = None
    tag: str | None = None
    q: str | None = None
    include_deleted: bool = False
    sort: str = "updated"
    descending: bool = True
    page: int = 1
    per_page: int = 50


@dataclass
class MemoryPage:
    items: list[Memory] = field(default_factory=list)
    total: int = 0
    page: int = 1
    per_page: int = 50

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def _where(f: MemoryFilters) -> tuple[str, list]:
    clauses, args = [], []
    if not f.include_deleted:
        clauses.append("m.deleted_at IS NULL")
    for column in ("scope", "type", "source", "confidence"):
        value = getattr(f, column)
        if value:
            clauses.append(f"m.{column} = ?")
            args.append(value)
    if f.tag:
        clauses.append(f"EXISTS (SELECT 1 FROM {_TAGS} t WHERE LOWER(t.value) = LOWER(?))")
        args.append(f.tag)
    if f.q:
        # Same semantics as agentao's search: Python-lowercased, unescaped LIKE.
        pattern = f"%{f.q.lower()}%"
        clauses.append(
            "(LOWER(m.title) LIKE ? OR LOWER(m.content) LIKE ? OR LOWER(m.key_normalized) LIKE ?"
            f" OR EXISTS (SELECT 1 FROM {_TAGS} t WHERE LOWER(t.value) LIKE ?)"
            f" OR EXISTS (SELECT 1 FROM {_KEYWORDS} k WHERE LOWER(k.value) LIKE ?))")
        args.extend([pattern] * 5)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def list_memories(refs: list[StoreRef], f: MemoryFilters) -> MemoryPage:
    """One page of memories from the given (readable) stores, filtered and sorted in SQL."""
    if not refs:
        return MemoryPage(page=f.page, per_page=f.per_page)
    aliases = {"main": refs[0]} | {f"s{i}": r for i, r in enumerate(refs[1:], 1)}
    where, args = _where(f)
    union = " UNION ALL ".join(
        f"SELECT '{ref.key}' AS store, m.* FROM {alias}.memories m{where}"
        for alias, ref in aliases.items())
    order = "DESC" if f.descending else "ASC"
    all_args = args * len(aliases)

    def run(conn):
        total = conn.execute(f"SELECT COUNT(*) FROM ({union})", all_args).fetchone()[0]
        found = conn.execute(
            f"SELECT * FROM ({union}) ORDER BY {SORTS[f.sort]} {order}, store, id"
            " LIMIT ? OFFSET ?", all_args + [f.per_page, (f.page - 1) * f.per_page]).fetchall()
        return total, [rows.memory(r, r["store"]) for r in found]

    total, items = read(refs[0].path, run,
                        attach={a: r.path for a, r in aliases.items() if a != "main"})
    return MemoryPage(items=items, total=total, page=f.page, per_page=f.per_page)


def get_memory(ref: StoreRef, memory_id: str) -> tuple[Memory | None, list[Event]]:
    """One row (live or soft-deleted) and its event history, oldest event first."""
    def run(conn):
        row = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        events = conn.execute("SELECT * FROM memory_events WHERE memory_id = ? ORDER BY id",
                              (memory_id,)).fetchall()
        return (rows.memory(row, ref.key) if row else None), [rows.event(e, ref.key) for e in events]
    return read(ref.path, run)


def live_memories(ref: StoreRef) -> list[Memory]:
    """Every live row of one file in agentao's listing order (created_at ascending)."""
    return read(ref.path, lambda conn: [
        rows.memory(r, ref.key) for r in conn.execute(
            "SELECT * FROM memories WHERE deleted_at IS NULL ORDER BY created_at ASC")])


def distinct_values(refs: list[StoreRef], column: str) -> list[str]:
    """Values present in a column, for filter drop-downs."""
    assert column in ("type", "source", "confidence")
    seen: set[str] = set()
    for ref in refs:
        seen.update(read(ref.path, lambda conn: [
            r[0] for r in conn.execute(f"SELECT DISTINCT {column} FROM memories")]))
    return sorted(seen)
