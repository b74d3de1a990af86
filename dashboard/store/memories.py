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
           bitmap: bytes | None = None, narrow: bool = False) -> tuple[str, list]:
    """The WHERE clause of the list; ``bitmap``: the search hits (``Mirror.mark_hits``);
    ``narrow``: drive from the tag or search rows.

    With ``narrow`` the ``live`` test is written ``+m.live`` so that SQLite
    cannot walk a live index over every row: for a count of a few thousand
    tagged or matching rows, looking each one up is many times cheaper.
    """
    clauses: list[str] = []
    args: list = []
    if set(labels) != held:
        # The copy also holds files not shown now (a project switch); keep to these.
        clauses.append(f"m.store IN ({', '.join('?' * len(labels))})")
        args.extend(labels)
    if not f.include_deleted:
        clauses.append("+m.live = 1" if narrow else "m.live = 1")
    for column in ("scope", "type", "source", "confidence"):
        value = getattr(f, column)
        if value:
            clauses.append(f"m.{column} = ?")
            args.append(value)
    if f.tag:
        clauses.append("m.rid IN (SELECT rid FROM tags WHERE tag = LOWER(?))")
        args.append(f.tag)
    if f.q and bitmap is None:
        clauses.append("m.rid IN (SELECT rid FROM hits)")
    elif f.q:
        clauses.append("substr(?, m.rid + 1, 1) = x'01'")
        args.append(bitmap)
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
        bitmap = m.mark_hits(f.q) if f.q else None
        # A search with few hits (in the temp table) is driven from them, sorted
        # and counted; so is a tag's count.  Otherwise SQLite walks a sort index.
        few = bool(f.q) and bitmap is None
        where, args = _where(f, labels, m.held(), bitmap, few)
        conn = m.conn
        # The count is the same for every page and sort of one filter set.
        count_where, count_args = _where(f, labels, m.held(), bitmap, few or bool(f.tag))

        def count():
            # Many hits and no other filter: counted from the search's own masks.
            plain = not (f.scope or f.type or f.source or f.confidence or f.tag)
            quick = m.count_hits(labels, not f.include_deleted) if plain else None
            return quick if quick is not None else conn.execute(
                f"SELECT COUNT(*) FROM memories m{count_where}", count_args).fetchone()[0]
        total = _remember(m, ("count", f.q, count_where, tuple(count_args)), count)
        # Page over the index alone, then fetch the page's rows.
        rids = [r[0] for r in conn.execute(
            f"SELECT m.rid FROM memories m{where} ORDER BY m.{column} {order}, m.store {order},"
            f" m.id {order} LIMIT ? OFFSET ?", args + [f.per_page, (f.page - 1) * f.per_page])]
        found = {r["rid"]: r for r in conn.execute(
            f"SELECT * FROM memories WHERE rid IN ({', '.join('?' * len(rids))})", rids)}
        values = {c: m.tallies.values(labels, c) for c in choices}   # live rows only
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


def _remember(m: Mirror, key: tuple, compute):
    # Small derived results, valid until the copy changes (the generation moves).
    key = (m.generation, *key)
    if key not in m.memo:
        if len(m.memo) > 64:
            m.memo.clear()
        m.memo[key] = compute()
    return m.memo[key]
