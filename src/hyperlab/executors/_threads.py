"""Run trials concurrently on threads of the driver's process."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from hyperlab.executors._local import run_here
from hyperlab.executors._requests import Answers
from hyperlab.executors._run import make_context
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Executor,
    Failed,
    Listener,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialEnd,
    TrialSpec,
)
from hyperlab.executors.routing import ROUTER
from hyperlab.reporting.context import RequestKind, TrialContext

__all__ = ["ThreadExecutor"]


class ThreadExecutor(Executor):
    """Up to ``concurrency`` trials at once, each on its own daemon thread.

    Best for objectives that release the GIL (numpy, torch, I/O) or that cannot be pickled.
    A thread cannot be killed: a stopped or timed-out trial is told to stop at its next
    ``report``, and a timed-out trial is recorded FAILED at its deadline and its slot freed
    even if its code never returns. Use ``processes`` when trials must be killable.

    With ``devices``, each trial sees its devices through ``hyperlab.trial_devices()`` only:
    ``CUDA_VISIBLE_DEVICES`` is process-wide, so it is left alone, and the indices are the
    devices as this process sees them (use ``torch.device(f"cuda:{trial_devices()[0]}")``).
    A timed-out trial's devices are released at its deadline even if its thread runs on.
    With ``devices.memory_check``, a trial's thread waits for its devices' memory before the
    trial starts (``trial_timeout`` counts from then).

    While it is open, ``sys.stdout`` and ``sys.stderr`` send what each trial writes through
    them to its ``stdout.log`` and ``stderr.log``; output written below them (C code, child
    processes) or by threads a trial starts still goes to the driver's streams (see
    ``hyperlab.executors.routing``).
    """

    name = "threads"

    def __init__(self, objective, **options) -> None:
        super().__init__(objective, **options)
        self._events: queue.SimpleQueue[Event | None] = queue.SimpleQueue()  # None: wake up
        self._active: dict[int, TrialContext] = {}
        self._deadlines: dict[int, float] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._routing = False  # whether this executor holds the output router open
        self._answers = Answers()

    @property
    def running(self) -> int:
        return len(self._active)

    def open(self, listener: Listener) -> None:
        super().open(listener)
        if not self._routing:
            ROUTER.open()
            self._routing = True

    def submit(self, spec: TrialSpec) -> None:
        spec = self.place(spec)
        put = self._events.put
        number = spec.number

        def emit(step: int, metrics: dict) -> None:
            put(Reported(number, time.time(), step, metrics))

        ctx = make_context(spec, emit, ask=self._ask)
        self._active[number] = ctx
        thread = threading.Thread(
            target=self._work, args=(spec, ctx), name=f"hyperlab-trial-{number}", daemon=True
        )
        self._threads[number] = thread
        thread.start()

    def _work(self, spec: TrialSpec, ctx: TrialContext) -> None:
        def started() -> None:
            self._events.put(Started(ctx.number, time.time()))

        end: TrialEnd
        try:
            end = run_here(self, spec, ctx, started)
        except BaseException as exc:  # SystemExit / KeyboardInterrupt raised by trial code
            end = Failed(ctx.number, time.time(), f"{type(exc).__name__}: {exc}")
        self._events.put(end)

    def poll(self, timeout: float) -> None:
        if self._deadlines:
            timeout = min(timeout, max(0.0, min(self._deadlines.values()) - time.monotonic()))
        try:
            event = self._events.get(timeout=timeout) if timeout > 0 else self._events.get_nowait()
        except queue.Empty:
            event = None
        while event is not None:
            self._deliver(event)
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                event = None
        self._expire()

    def wake(self) -> None:
        self._events.put(None)

    def _deliver(self, event: Event) -> None:
        if event.number not in self._active:
            return  # a trial that was already failed for its timeout
        if isinstance(event, Started) and self.trial_timeout is not None:
            since = max(0.0, time.time() - event.time)
            self._deadlines[event.number] = time.monotonic() - since + self.trial_timeout
        if isinstance(event, END_EVENTS):
            del self._active[event.number]
            self._deadlines.pop(event.number, None)
            self._threads.pop(event.number, None)
        self.listener(event)

    def _expire(self) -> None:
        now = time.monotonic()
        for number, deadline in list(self._deadlines.items()):
            if deadline <= now:
                self._active[number].request_stop()
                error = f"trial exceeded trial_timeout={self.trial_timeout:g}s"
                self._deliver(Failed(number, time.time(), error))

    def _ask(self, ctx: TrialContext, index: int, kind: RequestKind, name: str, spec: dict) -> Any:
        self._events.put(Requested(ctx.number, time.time(), index, kind, name, spec))
        return self._answers.take(ctx, index)

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        self._answers.put(number, index, value, error)

    def stop(self, number: int) -> None:
        ctx = self._active.get(number)
        if ctx is not None:
            ctx.request_stop()

    def close(self) -> None:
        for ctx in self._active.values():
            ctx.request_stop()
        end = time.monotonic() + self.stop_grace
        for thread in list(self._threads.values()):
            thread.join(max(0.0, end - time.monotonic()))
        self.poll(0)
        for number in list(self._active):  # ignored the stop request: abandon the thread
            self._deliver(Stopped(number, time.time()))
        if self._routing:
            ROUTER.close()
            self._routing = False
