"""Run one pure function in a forked child process while the caller goes on.

A findings scan of a large store has two independent halves of similar cost
(the per-row text rules, and the near-duplicate join over every live row,
``findings.duplicates``), and Python runs one of them at a time per process.
The machine this dashboard runs on has at least two cores, so on Linux the
scan forks a child for the join right after reading the stores: the child
already holds the rows (fork copies nothing until a page is written),
computes, sends back a pickled result through a pipe and exits.  (A fresh
helper interpreter that reads the texts itself measured no faster and used
more CPU: notes/findings-speed.md, with the tested patch beside it.)

Everything the child runs must be pure computation on objects that already
exist: it starts with only the forking thread, so it must not touch a lock
another thread might have held at the fork (SQLite, logging, imports).  The
result is never different from running the function in-process: when fork
is unavailable, the child fails or it does not answer in time, the caller
runs the function itself.
"""

from __future__ import annotations

import os
import pickle
import re
import select
import signal
import sys
import time
import warnings
from typing import Any, Callable

# The child must answer within this long; past it, the scan kills it and does
# the work itself (a child stuck on a lock inherited mid-use would never answer).
TIMEOUT_S = 60.0

# Python 3.12+ warns on fork() in a process with threads (the web server's);
# the child only computes, see above.  One narrow filter for this module's fork:
# warnings.catch_warnings() around the call would swap the process-wide filters
# under the server's other threads.
warnings.filterwarnings("ignore", r"This process .* is multi-threaded, use of fork\(\)",
                        DeprecationWarning, re.escape(__name__))


def _can_fork() -> bool:
    # Linux only: macOS's system libraries are not safe to use after fork().
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and len(os.sched_getaffinity(0)) >= 2)


class Beside:
    """``fn(*args)``, computed in a forked child when possible; ``result()`` waits for it.

    ``in_child``: keyword arguments ``fn`` gets only in the child, such as a
    list to keep what it would free on return: the child exits without freeing.
    """

    def __init__(self, fn: Callable[..., Any], *args: Any, fork: bool = True,
                 in_child: dict[str, Any] | None = None):
        self._fn, self._args, self._in_child = fn, args, in_child or {}
        self.pid = self._fd = None   # the child's, until its answer is read
        self.forked = False          # whether the result came from a child (tests, benchmarks)
        self.waited = 0.0            # seconds result() spent waiting for the child (benchmarks)
        if fork and _can_fork():
            self._start()

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:                                    # the child
            code = 1
            try:
                os.close(read_fd)
                payload = pickle.dumps(self._fn(*self._args, **self._in_child),
                                       pickle.HIGHEST_PROTOCOL)
                view = memoryview(payload)
                while view:
                    view = view[os.write(write_fd, view):]
                code = 0
            finally:
                # No cleanup of the parent's objects (open files, atexit, buffers):
                # they belong to the parent.
                os._exit(code)
        os.close(write_fd)
        self.pid, self._fd = pid, read_fd

    def result(self) -> Any:
        """The function's value: the child's if it answered in time, else computed here."""
        if self.pid is not None:
            payload = self._collect()
            if payload is not None:
                self.forked = True
                return pickle.loads(payload)
        return self._fn(*self._args)

    def _collect(self) -> bytes | None:
        chunks, fd, started = [], self._fd, time.monotonic()
        deadline = started + TIMEOUT_S
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    os.kill(self.pid, signal.SIGKILL)
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            self.waited = time.monotonic() - started
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None
