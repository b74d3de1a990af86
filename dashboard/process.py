"""How the server's process is set up before it serves: glibc's malloc and the cycle collector.

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
    _malloc_settings()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION, middle, old)


def _malloc_settings() -> None:
    """Two settings of glibc's malloc, as MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=1048576
    would make them; elsewhere, nothing.  Both measured with bench/bench_rss.py at 1,000
    memories (RSS after every screen) and bench/bench_pages.py (page times unchanged):

    - two arenas: glibc gives each busy thread an arena of its own, and with eight workers
      the server held about 10 MiB more than with two;
    - blocks over 1 MiB always from mmap, given back when freed: by default glibc raises that
      threshold to the largest block freed so far (up to 32 MiB; jieba's dictionary load
      frees several MiB at once), after which page-sized blocks come from the heap, whose
      freed middle is never given back: about 4 MiB more after every screen, kept for good."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
        mallopt(-8, 2)  # M_ARENA_MAX, before any worker thread starts
        mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD (setting it also stops glibc moving it)
    except (OSError, AttributeError):
        pass
