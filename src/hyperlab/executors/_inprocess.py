"""Run trials one after another in the driver's own thread."""

from __future__ import annotations

import time
from collections import deque

from hyperlab.executors._run import make_context, run_trial
from hyperlab.executors.base import Executor, Reported, Started, Stopped, TrialSpec
from hyperlab.reporting import TrialContext

__all__ = ["InProcessExecutor"]


class InProcessExecutor(Executor):
    """Sequential trials in the calling thread: the least overhead, the easiest to debug.

    A trial runs inside ``poll``; its reports reach the listener synchronously, so an assessor's
    stop takes effect at the trial's next ``report``. ``trial_timeout`` is enforced at
    ``report`` too (a trial that never reports cannot be interrupted). ``Ctrl-C`` propagates
    to the driver, which records the trial as USER_CANCELED.
    """

    name = "inprocess"

    def __init__(self, objective, **options) -> None:
        options["concurrency"] = 1
        super().__init__(objective, **options)
        self._queue: deque[TrialSpec] = deque()
        self._ctx: TrialContext | None = None

    @property
    def running(self) -> int:
        return len(self._queue) + (self._ctx is not None)

    def submit(self, spec: TrialSpec) -> None:
        self._queue.append(self.place(spec))

    def poll(self, timeout: float) -> None:
        if not self._queue:
            if timeout > 0:
                time.sleep(timeout)
            return
        spec = self._queue.popleft()
        listener = self.listener
        number = spec.number

        def emit(step: int, metrics: dict) -> None:
            listener(Reported(number, time.time(), step, metrics))

        deadline = None if self.trial_timeout is None else time.monotonic() + self.trial_timeout
        ctx = make_context(spec, emit, deadline=deadline)
        self._ctx = ctx
        try:
            listener(Started(number, time.time()))
            end = run_trial(self.objective, ctx)
        finally:
            self._ctx = None
        listener(end)

    def stop(self, number: int) -> None:
        if self._ctx is not None and self._ctx.number == number:
            self._ctx.request_stop()
            return
        for spec in self._queue:
            if spec.number == number:
                self._queue.remove(spec)
                self.listener(Stopped(number, time.time()))
                return

    def close(self) -> None:
        while self._queue:
            self.stop(self._queue[0].number)
