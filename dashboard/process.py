"""How the server's process is set up before it serves: memory allocation and the cycle collector.

For the command line's server only (``cli._serve``): an app made by ``create_app`` in
another process (the tests, a script) keeps its interpreter's settings.
"""

from __future__ import annotations

import gc

# Container allocations (net of frees) between two young collections; Python's default is 700.
# A preview at 10,000 memories allocates about 10,000 while it holds its scored rows: at 700 the
# young collections that meet them move them to the old generation, and once a quarter of the
# old generation's size (36,000 objects) has moved, Python collects the whole heap (the 144,000
# objects the held rows make: 50-100 ms) inside whichever request comes next.  At 7,000 a request
# that size meets one or two young collections: over 30 rounds of every screen, 1-2 full
# collections instead of 15 (2,000: 6; 20,000: 0), young collections costing the same in all
# (bench/results/jitter-gc.txt).  Only with no reference cycle per request: with one, garbage
# waits longer and each collection grows (main at 7,000: 232,000 objects tracked, 251 MiB).
YOUNG_COLLECTION = 7000


def tune() -> None:
    """Set up the process, before any worker thread starts."""
    _two_malloc_arenas()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION, middle, old)


def _two_malloc_arenas() -> None:
    """glibc gives each busy thread a malloc arena of its own: with eight workers the
    server holds about 10 MiB more after every screen than with two (the RSS line of
    bench/bench_pages.py).  Two, as MALLOC_ARENA_MAX=2 would; elsewhere, nothing."""
    import ctypes

    try:
        ctypes.CDLL(None).mallopt(-8, 2)  # M_ARENA_MAX, before any worker thread starts
    except (OSError, AttributeError):
        pass
