"""Long forget actions run in a background thread; the page polls a job by id.

One ``Jobs`` per app (``app.extensions``), locked because waitress serves from several
threads.  A second job on a file a running job works on is refused, not queued.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field

from flask import Flask, current_app, has_app_context
from flask_babel import force_locale, get_locale
from flask_babel import gettext as _

KEEP = 50  # finished jobs remembered; older ones are dropped


@dataclass
class Job:
    """A forget action: ``state`` is running, done or error; ``result`` is set when done."""

    id: str
    kind: str
    stores: tuple[str, ...]
    state: str = "running"
    step: str = "starting"
    fraction: float | None = None
    result: object = None
    error: str | None = None
    started: float = field(default_factory=time.time)
    finished: float | None = None

    def progress(self, step: str, fraction: float | None = None) -> None:
        self.step, self.fraction = step, fraction

    @property
    def percent(self) -> int | None:
        return None if self.fraction is None else int(self.fraction * 100)


def _asked_in() -> tuple[Flask | None, str | None]:
    """(app, locale) of the current request, or (None, None) outside one."""
    if not has_app_context():
        return None, None
    return current_app._get_current_object(), str(get_locale())  # type: ignore[attr-defined]  # werkzeug's LocalProxy, typed as the Flask it stands for


class Busy(Exception):
    """Another job is already working on one of the stores."""


class Jobs:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def finished(self) -> list[Job]:
        """The finished jobs still remembered, oldest first."""
        with self._lock:
            return [j for j in self._jobs.values() if j.state != "running"]

    def running(self) -> list[Job]:
        """The jobs still running, oldest first."""
        with self._lock:
            return [j for j in self._jobs.values() if j.state == "running"]

    def check_idle(self, stores: Iterable[str]) -> None:
        """Raise Busy when a running job works on any of ``stores``."""
        with self._lock:
            self._check_idle(set(stores))

    def _check_idle(self, stores: set[str]) -> None:
        running = {s for j in self._jobs.values() if j.state == "running" for s in j.stores}
        if running & stores:
            raise Busy(_("A forget action is already running on this store; wait for it to finish."))

    def start(
        self, kind: str, stores: Iterable[str], work: Callable[[Job], object], background: bool = True
    ) -> Job:
        """Run ``work(job)``; in a daemon thread unless ``background`` is false."""
        names = tuple(stores)
        with self._lock:
            self._check_idle(set(names))
            job = Job(secrets.token_hex(8), kind, names)
            self._jobs[job.id] = job
            for old in [j for j in self._jobs.values() if j.state != "running"][:-KEEP]:
                del self._jobs[old.id]
        if background:
            threading.Thread(
                target=self._run_in, args=(job, work, *_asked_in()), daemon=True, name=f"forget-{job.id}"
            ).start()
        else:
            self._run(job, work)
        return job

    def add_done(self, job_id: str, kind: str, stores: Iterable[str], result: object) -> Job:
        """A job this process did not start but finished (one interrupted by a restart, see
        ``actions.twofile``): its page answers again, with ``result``."""
        job = Job(job_id, kind, tuple(stores), state="done", step="done", result=result, finished=time.time())
        with self._lock:
            self._jobs[job_id] = job
        return job

    @classmethod
    def _run_in(cls, job: Job, work: Callable[[Job], object], app: Flask | None, locale: str | None) -> None:
        """``_run`` in the app and locale of the request that started the job, so what the
        job says (its verdicts) is in the language of the person who asked for it."""
        with ExitStack() as stack:
            if app is not None:
                stack.enter_context(app.app_context())
                stack.enter_context(force_locale(locale))
            cls._run(job, work)

    @staticmethod
    def _run(job: Job, work: Callable[[Job], object]) -> None:
        try:
            job.result = work(job)
            job.state = "done"
        except Exception as exc:  # a job must end in a state the page can show
            job.error, job.state = f"{type(exc).__name__}: {exc}", "error"
        finally:
            job.finished = time.time()
