"""Reading memories: the filtered, sorted, paged list across both files, and one row."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import rows
from .connection import read
from .mirror import Mirror
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
    problems: dict = field(default_factory=dict)  # store key -> StoreProblem left out
    choices: dict = field(default_factory=dict)   # column -> values, when asked for

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def _where(f: MemoryFilters, labels: dict[str, str], held: set[str],
           all_exact: bool = False) -> tuple[str, list]:
    clauses: list[str] = []
    args: list = []
    if set(labels) != held:
        # The copy also holds files not shown now (a project switch); keep to these.
        clauses.append(f"m.store IN ({', '.join('?' * len(labels))})")
        args.extend(labels)
    if not f.include_deleted:
        clauses.append("m.live = 1")
    for column in ("scope", "type", "source", "confidence"):
        value = getattr(f, column)
        if value:
            clauses.append(f"m.{column} = ?")
            args.append(value)
    if f.tag:
        clauses.append("m.rid IN (SELECT rid FROM tags WHERE tag = LOWER(?))")
        args.append(f.tag)
    if f.q and all_exact:
        # Every hit is certain (plain query, plain rows): let SQLite drive from them.
        clauses.append("m.rid IN (SELECT rid FROM hits)")
    elif f.q:
        # agentao's search: Python-lowercased query, unescaped LIKE over title,
        # content, key and every tag and keyword.  ``hits`` (filled by the
        # mirror) is a superset; the exact predicate decides.
        pattern = f"%{f.q.lower()}%"
        clauses.append(
            "(m.rid IN (SELECT rid FROM hits WHERE exact = 1) OR"
            " (m.rid IN (SELECT rid FROM hits WHERE exact = 0) AND (LOWER(m.title) LIKE ?"
            " OR LOWER(m.content) LIKE ? OR LOWER(m.key_normalized) LIKE ?"
            f" OR EXISTS (SELECT 1 FROM {_TAGS} t WHERE LOWER(t.value) LIKE ?)"
            f" OR EXISTS (SELECT 1 FROM {_KEYWORDS} k WHERE LOWER(k.value) LIKE ?))))")
        args.extend([pattern] * 5)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def list_memories(refs: list[StoreRef], f: MemoryFilters, mirror: Mirror,
                  choices: tuple[str, ...] = ()) -> MemoryPage:
    """One page of memories from the given stores, filtered, sorted and paged in SQL.

    The SQL runs on the app's indexed in-memory copy (see ``mirror``), brought
    up to date with the files first.  A store that cannot be read is left out
    and named in ``MemoryPage.problems``.  ``choices`` names columns whose
    values the filter drop-downs need, read in the same pass.
    """
    order = "DESC" if f.descending else "ASC"
    column = SORTS[f.sort]

    def run(m: Mirror, labels):
        if not labels:
            return 0, [], {c: [] for c in choices}
        all_exact = m.mark_hits(f.q) if f.q else False
        where, args = _where(f, labels, m.held(), all_exact)
        conn = m.conn
        total = conn.execute(f"SELECT COUNT(*) FROM memories m{where}", args).fetchone()[0]
        # Page over the index alone, then fetch the page's rows.
        rids = [r[0] for r in conn.execute(
            f"SELECT m.rid FROM memories m{where} ORDER BY m.{column} {order}, m.store {order},"
            f" m.id {order} LIMIT ? OFFSET ?", args + [f.per_page, (f.page - 1) * f.per_page])]
        found = {r["rid"]: r for r in conn.execute(
            f"SELECT * FROM memories WHERE rid IN ({', '.join('?' * len(rids))})", rids)}
        values = {c: _distinct(m, c, labels) for c in choices}
        return total, [rows.memory(found[rid], labels[found[rid]["store"]]) for rid in rids], values

    (total, items, values), problems = mirror.query(refs, run)
    return MemoryPage(items=items, total=total, page=f.page, per_page=f.per_page,
                      problems=problems, choices=values)


def get_memory(ref: StoreRef, memory_id: str) -> tuple[Memory | None, list[Event]]:
    """One row (live or soft-deleted) and its event history, oldest event first."""
    def run(conn):
        row = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        events = conn.execute("SELECT * FROM memory_events WHERE memory_id = ? ORDER BY id",
                              (memory_id,)).fetchall()
        return (rows.memory(row, ref.key) if row else None), [rows.event(e, ref.key) for e in events]
    return read(ref.path, run)



def _distinct(m: Mirror, column: str, labels) -> list[str]:
    # A full pass over the copy; remembered until the copy changes.
    if column not in ("type", "source", "confidence"):
        raise ValueError(column)
    key = (column, tuple(sorted(labels)), m.generation)
    if key not in m.memo:
        m.memo.clear() if len(m.memo) > 64 else None
        m.memo[key] = [r[0] for r in m.conn.execute(
            f"SELECT DISTINCT {column} FROM memories WHERE live = 1"
            f" AND store IN ({', '.join('?' * len(labels))}) ORDER BY 1", list(labels))]
    return m.memo[key]
