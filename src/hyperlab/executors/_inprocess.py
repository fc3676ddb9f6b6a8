"""Run trials one after another in the driver's own thread."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from hyperlab.errors import HyperlabError
from hyperlab.executors._local import run_here
from hyperlab.executors._run import make_context
from hyperlab.executors.base import (
    Executor,
    Listener,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.executors.routing import ROUTER
from hyperlab.reporting.context import RequestKind, TrialContext, activate, deactivate

__all__ = ["InProcessExecutor"]


class InProcessExecutor(Executor):
    """Sequential trials in the calling thread: the least overhead, the easiest to debug.

    A trial runs inside ``poll``; its reports reach the listener synchronously, so an assessor's
    stop takes effect at the trial's next ``report``. ``trial_timeout`` is enforced at
    ``report`` too (a trial that never reports cannot be interrupted). ``Ctrl-C`` propagates
    to the driver, which records the trial as USER_CANCELED.

    With ``devices.memory_check``, the wait for a trial's devices' memory happens in ``poll``
    too (the driver's thread: nothing else runs meanwhile). While it is open, what a trial
    writes through ``sys.stdout`` and ``sys.stderr`` goes to its ``stdout.log`` and
    ``stderr.log``, as with ``threads`` (see ``hyperlab.executors.routing``).
    """

    name = "inprocess"

    def __init__(self, objective, **options) -> None:
        options["concurrency"] = 1
        super().__init__(objective, **options)
        self._queue: deque[TrialSpec] = deque()
        self._ctx: TrialContext | None = None
        self._routing = False  # whether this executor holds the output router open
        self._answers: dict[tuple[int, int], tuple[Any, str | None]] = {}

    @property
    def running(self) -> int:
        return len(self._queue) + (self._ctx is not None)

    @property
    def free_slots(self) -> int:
        if self.devices is not None:
            return super().free_slots
        # the base class's rule, without its two property calls (asked twice per loop turn)
        return max(0, self._concurrency - len(self._queue) - (self._ctx is not None))

    def open(self, listener: Listener) -> None:
        super().open(listener)
        if not self._routing:
            ROUTER.open()
            self._routing = True

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
            token = activate(None)  # the driver's own output, while it takes the report
            try:
                listener(Reported(number, time.time(), step, metrics))
            finally:
                deactivate(token)

        ctx = make_context(spec, emit, ask=self._ask, synchronous=True)

        def started() -> None:
            if self.trial_timeout is not None:
                ctx.deadline = time.monotonic() + self.trial_timeout
            listener(Started(number, time.time()))

        self._ctx = ctx
        try:
            end = run_here(self, spec, ctx, started)
        finally:
            self._ctx = None
        listener(end)

    def _ask(self, ctx: TrialContext, index: int, kind: RequestKind, name: str, spec: dict) -> Any:
        """The driver answers in this thread, at once (its listener calls ``answer``)."""
        token = activate(None)
        try:
            self.listener(Requested(ctx.number, time.time(), index, kind, name, spec))
        finally:
            deactivate(token)
        got = self._answers.pop((ctx.number, index), None)
        if got is None:
            raise HyperlabError(f"trial {ctx.number}: request {index} got no answer")
        if got[1] is not None:
            raise ValueError(got[1])
        return got[0]

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        self._answers[(number, index)] = (value, error)

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
        if self._routing:
            ROUTER.close()
            self._routing = False
