"""The byte scan's place-by-place loop as the install compiles it and as numpy runs it where
there was no compiler: the same places, for every shape of gram, few grams and many, on bytes
that hold the texts' own words everywhere (the common case: a store's file)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_diskscan import filler, words

from dashboard.actions import diskscan, grams


def test_the_install_built_the_compiled_loop():
    # Without it every purge's verification runs numpy's form of the loop, slower.
    import dashboard_scan_kernel

    assert grams.kernel is dashboard_scan_kernel


def texts_of_every_shape(rng: random.Random, many: bool) -> list[str]:
    """Long texts (16-byte grams), short sentences (8), tiny ones (4), under 7 bytes (2) and
    one or two bytes (1); ``many``: over 2**14 grams in the tables of all but the last."""
    long, short, tiny, two = (200, 3000, 6000, 9000) if many else (5, 50, 100, 200)
    return (
        [words(rng, 300) for _ in range(long)]
        + [f"pin {k:05d} for {words(rng, 1)}"[:22] for k in rng.sample(range(100_000), short)]
        + [f"p {k:05d}"[:10] for k in rng.sample(range(100_000), tiny)]
        + [f"{k:04d}" for k in rng.sample(range(10_000), two)]
        + ["q", "é", "zz"]
    )


@pytest.mark.parametrize("many", [False, True])
def test_both_loops_give_the_same_places(monkeypatch, many):
    rng = random.Random(71 + many)
    texts = texts_of_every_shape(rng, many)
    needles = diskscan.Needles(texts)
    assert {(g.stride, g.size) for g in needles.grams} == set(diskscan.SHAPES)
    assert all(g.few is not many for g in needles.grams if g.size > 1)
    # A file of the texts' own words, the texts themselves here and there, zeros, random bytes.
    parts = [t.encode() for t in texts] + [filler(rng, 3000), bytes(500), rng.randbytes(700)]
    window = b"".join(rng.choices(parts, k=3000))[: diskscan.PIECE] + diskscan.PAD
    for g in needles.grams:
        compiled = g.candidates(window)
        monkeypatch.setattr(grams, "kernel", None)
        with_numpy = g.candidates(window)
        monkeypatch.undo()
        assert len(compiled[0]) > 0, (g.stride, g.size)
        assert all(np.array_equal(a, b) for a, b in zip(compiled, with_numpy)), (g.stride, g.size)
