"""An action's block effect, worked out from the selection it changes (a memory's page at
10,000 rows asks for two): the same selection as running every row through the stable rules
again, over stores with the cases that decide it (an id in both files, equal stamps, the
three recent incidental picks, saved rows of every kind)."""

from __future__ import annotations

import random
from types import SimpleNamespace

from dashboard.actions.effects import NEW_ID, _picked_afresh, _picked_after
from dashboard.engine import all_entries
from dashboard.engine.stable import select
from dashboard.records import Memory

TYPES = ["note", "project_fact", "decision", "workflow", "constraint", "preference", "profile"]


def _row(rng: random.Random, i: int, store: str, ids: list[str]) -> Memory:
    # Few distinct stamps and a few shared ids: ties and doubles are common, not rare.
    mid = rng.choice(ids) if rng.random() < 0.08 else f"{store[0]}{i:05x}"
    day = f"2025-01-{rng.randint(1, 9):02d}T10:00:00"
    return Memory(
        id=mid,
        scope="user" if store == "user" and rng.random() < 0.8 else "project",
        type=rng.choice(TYPES),
        key_normalized=f"key_{store}_{i}",
        title=f"t{i}",
        content="c" * rng.randint(1, 90),
        created_at=day,
        updated_at=f"2025-02-{rng.randint(1, 9):02d}T10:00:00",
        store=store,
    )


def _files(rng: random.Random):
    ids: list[str] = ["shared0"]
    project, user = [], []
    for i in range(rng.randint(3, 40)):
        store = "user" if rng.random() < 0.3 else "project"
        row = _row(rng, i, store, ids)
        ids.append(row.id)
        (user if store == "user" else project).append(row)
    for rows in (project, user):
        rows.sort(key=lambda m: (m.created_at, m.scope, m.key_normalized))
    return project, user


def _saved(rng: random.Random, project: list[Memory], user: list[Memory]) -> list[Memory]:
    """A row as a save, a move or an edit would leave it: new, or overwriting one in place."""
    store = rng.choice(["project", "user"])
    rows = user if store == "user" else project
    over = rng.choice(rows) if rows and rng.random() < 0.5 else None
    stamp = rng.choice(["2025-01-05T10:00:00", "2025-03-01T10:00:00", "2025-03-01T10:00:01"])
    return [
        Memory(
            id=over.id if over else NEW_ID,
            scope="user" if store == "user" else "project",
            type=rng.choice(TYPES),
            key_normalized=over.key_normalized if over else "new_key",
            title="saved",
            content="s" * rng.randint(1, 90),
            created_at=over.created_at if over else stamp,
            updated_at=stamp,
            store=store,
        )
    ]


def test_the_shortcut_selects_what_every_row_through_the_rules_selects():
    rng = random.Random(30)
    shortcuts = 0
    for _ in range(3000):
        project, user = _files(rng)
        every = project + user
        hidden = frozenset(rng.choice(every).id for _ in range(rng.randint(0, 2)) if every)
        saved = _saved(rng, project, user) if rng.random() < 0.6 else []
        snap = SimpleNamespace(project=project, user=user)
        now = select(all_entries(project, user))
        quick = _picked_after(snap, now, saved, hidden)  # type: ignore[arg-type]
        if quick is not None:
            shortcuts += 1
            assert quick == _picked_afresh(snap, saved, hidden)  # type: ignore[arg-type]
    assert shortcuts > 1000  # the common case takes it
