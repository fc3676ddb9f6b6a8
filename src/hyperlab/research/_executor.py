"""The executor of researches: ``workers`` workers, each running ``branches`` experiments at
once in lockstep (their root units computed once), in processes, on threads, or in the
driver's own thread."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Any

import cloudpickle

from hyperlab.errors import ConfigError
from hyperlab.executors import pickling
from hyperlab.executors.base import (
    Executor,
    Failed,
    Finished,
    Reported,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.executors.routing import ROUTER
from hyperlab.executors.workers import exit_text, spawn_worker
from hyperlab.research._runner import Plan
from hyperlab.research._worker import GroupWorker

__all__ = ["ResearchExecutor"]

WORKER_COMMAND = "import sys; from hyperlab.research._worker import main; main(*sys.argv[1:])"


class _Process:
    """A worker process and the experiments it runs now."""

    def __init__(self, index: int, blob: bytes, devices: tuple[int, ...]) -> None:
        self.process, self.tasks, self.events = spawn_worker(WORKER_COMMAND, devices, blob)
        self.index = index
        self.numbers: set[int] = set()
        self.stopping: set[int] = set()
        self.kill_at: float | None = None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.tasks.close()
        self.events.close()


class _Thread:
    """A worker thread of the driver's process and the experiments it runs now."""

    def __init__(self, index: int, plan: Plan, events: queue.SimpleQueue, cap: int | None) -> None:
        self.index = index
        self.numbers: set[int] = set()
        self.stopping: set[int] = set()
        self.kill_at: float | None = None
        self.worker = GroupWorker(plan, events.put, cap)
        self.thread: threading.Thread | None = None

    def start(self, specs: list[TrialSpec]) -> None:
        self.thread = threading.Thread(
            target=self.worker.run,
            args=(self.index, specs),
            name=f"hyperlab-research-worker-{self.index}",
            daemon=True,
        )
        self.thread.start()


class ResearchExecutor(Executor):
    """Runs a research's experiments (trials): up to ``plan.workers`` groups at once, each of
    up to ``plan.branches`` experiments sharing their root units.

    ``plan.executor`` says where workers run: ``"processes"`` (each worker a fresh
    interpreter, started with ``CUDA_VISIBLE_DEVICES`` set to its devices, killed with the
    driver), ``"threads"``, or ``"inprocess"`` (the workers take turns in the driver's thread,
    one group at a time: for debugging). A group's experiments run in lockstep; each ends
    with its own event. A stopped experiment ends at its next iteration; a worker whose every
    experiment was asked to stop and has not ended after ``stop_grace`` is killed (processes).
    """

    name = "research"

    def __init__(self, objective: Plan, **options: Any) -> None:
        super().__init__(objective, **options)
        self.plan: Plan = objective
        self.concurrency = max(self.concurrency, 1)
        self._processes = objective.executor == "processes"
        self.objective_bytes: bytes = pickling.dumps(objective)
        self._queue: deque[TrialSpec] = deque()
        self._workers: dict[int, Any] = {}
        self._events: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self._inline: GroupWorker | None = None
        self._turn = 0  # the worker whose turn it is to run the next group in this thread

    def open(self, listener: Any) -> None:
        super().open(listener)
        if not self._processes:
            ROUTER.open()  # worker processes open their own

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        if not isinstance(objective, Plan):
            raise ConfigError(
                f"objective: the 'research' executor runs a research's plan, got {objective!r}"
            )

    @property
    def runs_outside(self) -> bool:  # type: ignore[override]
        """Processes run outside the driver: the store is flushed before each submit."""
        return self._processes

    @property
    def running(self) -> int:
        inline = 0 if self._inline is None else len(self._inline.contexts)
        return len(self._queue) + sum(len(w.numbers) for w in self._workers.values()) + inline

    def submit(self, spec: TrialSpec) -> None:
        self._queue.append(spec)

    # ---- dispatching and events ---------------------------------------------------------

    def _group(self) -> list[TrialSpec]:
        size = min(self.plan.branches, len(self._queue))
        return [self._queue.popleft() for _ in range(size)]

    def _dispatch(self) -> None:
        if self.plan.executor == "inprocess":
            return
        for index in range(self.plan.workers):
            if not self._queue:
                return
            worker = self._workers.get(index)
            if worker is not None and worker.numbers:
                continue
            specs = self._group()
            if self._processes:
                if worker is None or not worker.alive:
                    worker = _Process(index, self.objective_bytes, self.plan.worker_devices(index))
                    self._workers[index] = worker
                worker.tasks.send(("run", index, specs, self.max_log_bytes))
            else:
                worker = _Thread(index, self.plan, self._events, self.max_log_bytes)
                self._workers[index] = worker
                worker.start(specs)
            worker.numbers = {s.number for s in specs}
            worker.stopping = set()
            worker.kill_at = None

    def poll(self, timeout: float) -> None:
        if self.plan.executor == "inprocess":
            self._run_inline(timeout)
            return
        self._dispatch()
        busy = [w for w in self._workers.values() if w.numbers]
        if self._processes:
            if busy:
                wait([w.events for w in busy], timeout)
            elif timeout > 0:
                time.sleep(timeout)
            for worker in busy:
                self._drain(worker)
        else:
            with contextlib.suppress(queue.Empty):
                self._handle(
                    self._events.get(timeout=timeout) if timeout > 0 else self._events.get_nowait()
                )
                while True:
                    self._handle(self._events.get_nowait())
        self._enforce()

    def _run_inline(self, timeout: float) -> None:
        if not self._queue:
            if timeout > 0:
                time.sleep(timeout)
            return
        specs = self._group()
        worker, self._turn = self._turn, (self._turn + 1) % self.plan.workers
        self._inline = GroupWorker(self.plan, self._handle, self.max_log_bytes)
        try:  # workers take turns, one group at a time (BatchFlow's parallel=False)
            self._inline.run(worker, specs)
        finally:
            self._inline = None

    def _drain(self, worker: _Process) -> None:
        try:
            while worker.numbers and worker.events.poll():
                self._handle(worker.events.recv())
        except (EOFError, OSError):
            pass
        if worker.numbers and not worker.alive:
            with contextlib.suppress(EOFError, OSError):
                while worker.numbers and worker.events.poll():
                    self._handle(worker.events.recv())
            how = exit_text(worker.process)
            for number in sorted(worker.numbers):
                self.listener(Failed(number, time.time(), f"the research worker process {how}"))
            worker.numbers = set()
            worker.kill()
            del self._workers[worker.index]

    def _handle(self, message: tuple) -> None:
        tag, number, when = message[0], message[1], message[2]
        if tag == "notice":
            print(f"hyperlab: {message[3]}", file=sys.stderr, flush=True)
            return
        if tag == "report":
            self.listener(Reported(number, when, message[3], message[4]))
            return
        if tag == "started":
            self.listener(Started(number, when))
            return
        for worker in self._workers.values():
            worker.numbers.discard(number)
        if tag == "failed":
            self.listener(_failed(number, when, message[3], message[4]))
        elif tag == "finished":
            self.listener(Finished(number, when, message[3]))
        else:
            self.listener(Stopped(number, when, message[3]))

    def _enforce(self) -> None:
        """Kill a process worker whose experiments were all told to stop and outlived the
        grace; their ends are recorded as stopped."""
        now = time.monotonic()
        for worker in list(self._workers.values()):
            if not (self._processes and worker.numbers and worker.kill_at is not None):
                continue
            if worker.kill_at <= now and worker.numbers <= worker.stopping:
                for number in sorted(worker.numbers):
                    self.listener(Stopped(number, time.time()))
                worker.numbers = set()
                worker.kill()
                del self._workers[worker.index]

    # ---- stopping -----------------------------------------------------------------------

    def stop(self, number: int) -> None:
        for spec in self._queue:
            if spec.number == number:
                self._queue.remove(spec)
                self.listener(Stopped(number, time.time()))
                return
        if self._inline is not None:
            self._inline.stop(number)
            return
        for worker in self._workers.values():
            if number in worker.numbers and number not in worker.stopping:
                worker.stopping.add(number)
                if self._processes:
                    with contextlib.suppress(OSError):
                        worker.tasks.send(("stop", number))
                else:
                    worker.worker.stop(number)
                if worker.numbers <= worker.stopping:
                    worker.kill_at = time.monotonic() + self.stop_grace

    def close(self) -> None:
        while self._queue:
            self.stop(self._queue[0].number)
        for worker in list(self._workers.values()):
            for number in sorted(worker.numbers):
                self.stop(number)
        end = time.monotonic() + self.stop_grace
        while self.running and time.monotonic() < end:
            self.poll(0.05)
        for worker in list(self._workers.values()):
            for number in sorted(worker.numbers):
                self.listener(Stopped(number, time.time()))
            worker.numbers = set()
            if isinstance(worker, _Process):
                worker.kill()
        self._workers.clear()
        if not self._processes:
            ROUTER.close()


def _failed(number: int, when: float, error: str, exception: Any) -> Failed:
    """A ``Failed`` event, with the unit's exception when it could be carried."""
    if isinstance(exception, bytes):
        try:
            exception = cloudpickle.loads(exception)
        except Exception:
            exception = None
    if not isinstance(exception, BaseException):
        exception = None
    return Failed(number, when, error, exception=exception)
