"""The stable selection patched across versions must equal select() over the rows every time."""

from __future__ import annotations

import random
from dataclasses import replace

from dashboard.engine import all_entries
from dashboard.engine.selection import Selection
from dashboard.engine.stable import fit, select
from dashboard.records import Memory

TYPES = ["note", "project_fact", "decision", "workflow", "preference"]


def _row(rnd: random.Random, n: int, store: str) -> Memory:
    # Few distinct stamps, so ties in created_at and updated_at are common.
    created = f"2026-01-{rnd.randint(1, 9):02d}"
    return Memory(id=f"m{n}", scope=rnd.choice(["project", "user"]) if store == "project" else "user",
                  type=rnd.choice(TYPES), key_normalized=f"k{n}", title=f"t{n}", content="c",
                  created_at=created, updated_at=max(created, f"2026-01-{rnd.randint(1, 9):02d}"),
                  store=store)


def _ordered(rows: list[Memory]) -> list[Memory]:
    # The file's listing order: created_at, then (scope, key).
    return sorted(rows, key=lambda m: (m.created_at, m.scope, m.key_normalized))


def _expected(project, user, hidden):
    return select([m for m in all_entries(project, user) if m.id not in hidden])


def _fits(fitted) -> list:
    return [(e.memory, e.cost, e.shown, e.room_before) for e in fitted]


def _same(a, b) -> bool:
    # By value: a row replaced by an equal row may stay the old object.
    return a == b


def test_patched_selection_equals_a_full_walk_through_random_edits():
    rnd = random.Random(11)
    for trial in range(30):
        project = [_row(rnd, i, "project") for i in range(rnd.randint(0, 40))]
        user = [_row(rnd, 100 + i, "user") for i in range(rnd.randint(0, 10))]
        counter = 200
        sel = Selection.build(_ordered(project), _ordered(user))
        for step in range(25):
            action = rnd.choice(["edit", "touch", "delete", "add", "retype", "twin"])
            pool = project if rnd.random() < 0.7 or not user else user
            if action == "add" or not pool:
                counter += 1
                pool.append(_row(rnd, counter, "project" if pool is project else "user"))
            elif action == "twin":
                # The same id in both files: select's own tie rules must decide.
                src = rnd.choice(pool)
                other = user if pool is project else project
                other.append(replace(src, store="user" if pool is project else "project",
                                     key_normalized=src.key_normalized + "x"))
            else:
                i = rnd.randrange(len(pool))
                m = pool[i]
                if action == "delete":
                    pool[i] = replace(m, deleted_at="2026-02-01")
                elif action == "edit":
                    pool[i] = replace(m, content=m.content + "!" * rnd.randint(1, 400))
                elif action == "touch":
                    pool[i] = replace(m, updated_at=f"2026-01-{rnd.randint(1, 12):02d}")
                else:
                    pool[i] = replace(m, type=rnd.choice(TYPES))
            p, u = _ordered(project), _ordered(user)
            sel = sel.moved_to(p, u)
            live_ids = [m.id for m in p + u if m.deleted_at is None]
            for hidden in (frozenset(), frozenset(rnd.sample(live_ids, min(2, len(live_ids))))):
                assert _same(sel.picked(hidden), _expected(p, u, hidden)), (trial, step, action)
                assert _fits(sel.fit("", hidden)) == _fits(fit(_expected(p, u, hidden), "")), step
                fitted = sel.fit("", hidden)
                for m in rnd.sample(p + u, min(3, len(p + u))):
                    entry = fitted.find(m)
                    listed = [e for e in fitted if (e.memory.id, e.memory.store) == (m.id, m.store)]
                    assert entry == (listed[0] if listed else None), step


def test_an_unchanged_version_is_the_same_selection():
    rnd = random.Random(3)
    project = _ordered([_row(rnd, i, "project") for i in range(20)])
    sel = Selection.build(project, [])
    assert sel.moved_to(list(project), []) is sel


def _saved(rows: list[Memory], row: Memory) -> list[Memory]:
    # The file's live rows after the save, in its listing order: the row takes
    # the place of its id, else it is added.
    out = [row if m.id == row.id else m for m in rows if m.deleted_at is None]
    return _ordered(out if any(m.id == row.id for m in rows) else out + [row])


def test_a_hypothetical_save_equals_a_full_walk_over_the_saved_rows():
    rnd = random.Random(17)
    for trial in range(60):
        project = _ordered([_row(rnd, i, "project") for i in range(rnd.randint(0, 30))])
        user = _ordered([_row(rnd, 100 + i, "user") for i in range(rnd.randint(0, 8))])
        if rnd.random() < 0.2 and project:
            user = _ordered(user + [replace(project[0], store="user", scope="user")])
        sel = Selection.build(project, user)
        store = rnd.choice(["project", "user"])
        pool = project if store == "project" else user
        other = user if store == "project" else project
        pick = rnd.random()
        if pick < 0.4 and pool:          # overwrite a row of the same file
            base = rnd.choice(pool)
        elif pick < 0.6 and other:       # a row whose id lives in the other file
            base = replace(rnd.choice(other), store=store)
        else:                            # a new row: created now
            base = replace(_row(rnd, 999, store), created_at="2026-01-12")
        row = replace(base, content="saved", type=rnd.choice(TYPES), updated_at="2026-01-12")
        p = _saved(project, row) if store == "project" else project
        u = _saved(user, row) if store == "user" else user
        hidden = frozenset(rnd.sample([m.id for m in p + u], min(1, len(p + u))))
        assert _same(sel.with_row(row).picked(hidden), _expected(p, u, hidden)), trial


def test_difference_finds_every_changed_row_by_identity():
    from dashboard.engine.selection import _difference
    rnd = random.Random(23)
    for trial in range(200):
        before = [_row(rnd, i, "project") for i in range(rnd.randint(0, 300))]
        after = list(before)
        for _ in range(rnd.randint(0, 4)):
            op = rnd.choice(["append", "insert", "drop", "replace"])
            if op == "append" or not after:
                after.append(_row(rnd, 1000 + len(after), "project"))
            elif op == "insert":
                after.insert(rnd.randrange(len(after)), _row(rnd, 2000 + len(after), "project"))
            elif op == "drop":
                del after[rnd.randrange(len(after))]
            else:
                i = rnd.randrange(len(after))
                after[i] = replace(after[i], content=after[i].content + "!")
        gone, new = _difference(before, after)
        assert {id(m) for m in gone} == {id(m) for m in before} - {id(m) for m in after}, trial
        assert {id(m) for m in new} == {id(m) for m in after} - {id(m) for m in before}, trial
