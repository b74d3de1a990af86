"""Warnings before approval: how right the ``contradicts_evidence`` rule is.

Precision and recall of ``dashboard.actions.polarity.contradicts`` over the
labelled pairs in tests/warnings_labelled.py (English and Chinese; the pairs
agentao's crystallizer made, and hand-written ones), overall and per set, with
every miss and false alarm listed so a change to the rule shows what it moved.

    python bench/bench_warnings.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from warnings_labelled import CRYSTALLIZED, HAND, PAIRS, score  # noqa: E402

from dashboard.actions.polarity import contradicts  # noqa: E402


def _worst(n: int) -> list[tuple[str, str]]:
    """Texts of ``n`` characters built to make a careless scan quadratic: cue after cue,
    excluded compounds, a content found nowhere and one found at the end."""
    zh = "不同" * (n // 2)
    en = ("never " * (n // 6))[:n]
    return [
        (zh, "用表情" * 10),
        (zh + "不要用表情", "用表情"),
        (en, "use emojis " * 5),
        (en + " use emojis", "use emojis"),
        ("a" * n, "a" * (n // 2) + "b"),
        ("别" * n, "别" * (n // 2)),
    ]


def timing() -> None:
    """Time per pair at 400 and 4,000 characters (agentao's content limit): about 10x is linear."""
    times = {}
    for n in (400, 4000):
        pairs = _worst(n)
        t = time.perf_counter()
        for _ in range(20):
            for evidence, content in pairs:
                contradicts(evidence, content)
        times[n] = (time.perf_counter() - t) / (20 * len(pairs))
        print(f"worst-case pair, {n:5} chars: {times[n] * 1e3:7.3f} ms")
    print(f"ratio 4000/400: {times[4000] / times[400]:.1f} (10 = linear, 100 = quadratic)")


def main() -> None:
    for name, pairs in (("crystallized", CRYSTALLIZED), ("hand", HAND), ("all", PAIRS)):
        p, r, misses, alarms = score(pairs)
        positives = sum(label for *_, label in pairs)
        print(f"{name:13} pairs={len(pairs):3} positive={positives:3} precision={p:.2f} recall={r:.2f}")
    _, _, misses, alarms = score(PAIRS)
    for evidence, content in misses:
        print(f"  missed:      {evidence!r} -> {content!r}")
    for evidence, content in alarms:
        print(f"  false alarm: {evidence!r} -> {content!r}")
    timing()


if __name__ == "__main__":
    main()
