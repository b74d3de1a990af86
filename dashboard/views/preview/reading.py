"""The preview's inputs, prepared in the background when they take long (#30: 100,000 memories).

The first preview over a store reads every row, loads the tokenizer and builds the token index
of every memory (agentao builds the same index on its first recall); at 100,000 memories that
takes longer than a page may.  A request waits ``WAIT_S`` for it, then says it is still reading
instead of showing a partial, inexact answer; the work goes on in one thread per pair of files,
and a later request answers exactly from what it left behind (held rows, the engine's index).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from ...engine import tokenizer_for, warm
from ...preview_source import snapshot
from ...store import held
from ...store.connection import read_time_limit
from ...store.status import StoreStatus

WAIT_S = 3.0  # how long a request over large files waits before it says "still reading"
BUILD_READ_S = 600.0  # a read in the background thread: bounded, by far more than a request
LARGE_BYTES = 16 * 2**20  # smaller files (about 25,000 memories) are always read in the request
_lock = threading.Lock()
# the files' paths -> (the stamps and tokenizer prepared last or being prepared, its thread)
_builds: dict[tuple[str, ...], tuple[Hashable, threading.Thread]] = {}


def build(statuses: list[StoreStatus], cjk: str) -> None:
    """Read the files and build the index the preview reads (each kept where it is held).
    No request waits on this thread: a request's 5 s read limit would stop the read of a large
    file on a busy machine, and the index would hold the other file's rows alone."""
    read_time_limit.set(BUILD_READ_S)  # this thread's own context
    snap = snapshot(statuses)
    tokenizer = tokenizer_for(cjk)
    snap.cache.stable()  # the always-on selection and its facts' lengths
    warm(snap.cache.state(tokenizer))


def size(statuses: list[StoreStatus]) -> int:
    """The bytes of the readable files."""
    return sum(st.size for st in statuses if st.readable)


def ready(statuses: list[StoreStatus], cjk: str) -> bool:
    """Whether the preview's inputs are prepared for these files as they are now, waiting as long
    as it takes for small files and at most ``WAIT_S`` seconds for large ones; starts preparing
    them if nobody is."""
    paths = tuple(str(st.ref.path) for st in statuses if st.readable)
    key = (held.stamps(paths), cjk)
    with _lock:
        found = _builds.get(paths)
        if found is None or found[0] != key:
            if found is not None and found[1].is_alive():
                return False  # the files' previous state is still being read: one build at a time
            thread = threading.Thread(target=build, args=(statuses, cjk), name="preview-index", daemon=True)
            _builds[paths] = (key, thread)
            thread.start()
        else:
            thread = found[1]
    thread.join(WAIT_S if size(statuses) > LARGE_BYTES else None)
    return not thread.is_alive()
