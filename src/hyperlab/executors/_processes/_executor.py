"""Run trials concurrently in a pool of spawned worker processes."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import time
from multiprocessing.connection import Connection, wait
from typing import Any

from hyperlab._interrupts import critical
from hyperlab.errors import ConfigError
from hyperlab.executors import pickling
from hyperlab.executors._exceptions import load_exception
from hyperlab.executors._gpu_memory import GpuWatch
from hyperlab.executors._output import WatchedLogs, watch_trial_logs
from hyperlab.executors._reaper import (
    Process,
    descendants,
    kill,
    marked,
    new_mark,
    signal_all,
)
from hyperlab.executors.base import (
    Executor,
    Failed,
    Finished,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.executors.workers import exit_text, spawn_worker
from hyperlab.reporting.metrics import EXPECTED

__all__ = ["ProcessExecutor", "pickle_objective"]

WORKER_STARTUP_GRACE = 60.0
"""Seconds a worker may take to start (interpreter, imports, unpickling the objective) before
its trial's ``trial_timeout`` begins; past them the trial fails as timed out anyway."""
WORKER_COMMAND = (
    "import sys; from hyperlab.executors._processes._worker import main; main(*sys.argv[1:])"
)


def pickle_objective(objective: Any, executor: str = "processes") -> bytes:
    """The objective as cloudpickle bytes; ``ConfigError`` suggesting threads if it cannot be."""
    try:
        return pickling.dumps(objective)
    except Exception as exc:
        raise ConfigError(
            f"objective: {objective!r} cannot be pickled, which the {executor!r} executor needs to "
            f"send it to worker processes ({type(exc).__name__}: {exc}); use executor='threads', "
            "or make the objective a module-level function whose globals can be pickled"
        ) from None


class _Slot:
    """One worker process and the trial it runs."""

    __slots__ = (
        "deadline",
        "devices",
        "events",
        "kill_at",
        "logs",
        "mark",
        "number",
        "process",
        "tasks",
    )

    def __init__(
        self,
        process: subprocess.Popen,
        tasks: Connection,
        events: Connection,
        devices: tuple[int, ...],
        mark: str,
    ) -> None:
        self.process = process  # on Linux, the worker's keeper (hyperlab.executors._reaper)
        self.mark = mark  # in the environment of the worker and of what its trials start
        self.tasks = tasks
        self.events = events
        self.devices = devices  # its CUDA_VISIBLE_DEVICES, fixed for its life
        self.number: int | None = None
        self.deadline: float | None = None  # trial_timeout expires (monotonic)
        self.kill_at: float | None = None  # a stop request's grace expires (monotonic)
        self.logs: WatchedLogs | None = None  # its trial's stdout.log and stderr.log

    def end_trial(self) -> None:
        """Forget the trial: its logs get their last trim (and echo)."""
        self.number = self.deadline = self.kill_at = None
        if self.logs is not None:
            self.logs.finish()
            self.logs = None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the worker's whole process group (the trial and its children), and
        to the processes its trial started that left the group; SIGKILL stops them first."""
        if sig == signal.SIGKILL:
            kill(self._processes)
        else:
            signal_all(self._processes, sig)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def _processes(self, table: dict[int, Process]) -> list[Process]:
        """The processes below the keeper (while its pid is still its own: not reaped), and
        those carrying the worker's mark."""
        below = descendants(self.process.pid, table) if self.process.poll() is None else []
        return below + marked(self.mark, table)


class ProcessExecutor(Executor):
    """Up to ``concurrency`` trials at once, each in a fresh-interpreter worker process.

    Workers are started like ``python -c ...`` (not by re-importing the user's main script,
    so no ``if __name__ == "__main__"`` guard is needed) and reused from trial to trial.
    A trial that raises, exits, segfaults or runs past ``trial_timeout`` is FAILED with the
    reason, its worker replaced, and the others go on.
    A stopped trial gets ``stop_grace`` seconds to end at its next ``report``, then its process
    group is killed. Workers die with the driver, even when it is killed with SIGKILL.

    With ``devices``, a worker is started with ``CUDA_VISIBLE_DEVICES`` set to the devices of
    its first trial (before any trial code could initialise CUDA) and keeps them for life: it
    is reused only for trials placed on the same devices. A trial placed on other devices gets
    a fresh worker, and an idle worker with another device set is dismissed to make room, so
    at most ``concurrency`` workers exist. The pool's least-loaded placement makes a freed
    device set the next one handed out, so workers are still reused in the common case.
    The devices of a timed-out or stopped trial are released when its end is reported, while
    its worker may still be dying (SIGTERM, then SIGKILL after ``stop_grace``). With
    ``devices.memory_check``, the worker waits for the devices' memory before the trial starts.

    A trial's processes end with it, on Linux even those that left the worker's process group
    (a ``setsid`` daemon, a double fork): the worker kills what a trial left when it ends,
    and the driver, when it kills a worker, kills everything started below it or carrying its
    mark in the environment (see ``hyperlab.executors._reaper``).

    A trial with a folder writes its ``stdout.log`` and ``stderr.log`` there: the worker points
    its descriptors 1 and 2 at them for the trial, so C code and child processes are captured
    too. The driver caps them at ``max_log_bytes`` as the ``command`` executor does (looking
    as it polls, twice a second at most, and once more at the end), and echoes them with
    ``echo_output``.
    """

    name = "processes"
    runs_outside = True

    def __init__(self, objective, **options) -> None:
        super().__init__(objective, **options)
        self.objective_bytes: bytes = pickle_objective(objective)
        self._slots: list[_Slot] = []
        self._dying: list[_Slot] = []
        self._pending: list[Failed] = []  # trials that could not be started: for poll

    @property
    def running(self) -> int:
        return sum(slot.number is not None for slot in self._slots) + len(self._pending)

    def _spawn(self, devices: tuple[int, ...]) -> _Slot:
        mark = new_mark()
        process, tasks, events = spawn_worker(
            WORKER_COMMAND, devices, self.objective_bytes, mark=mark
        )
        slot = _Slot(process, tasks, events, devices, mark)
        self._slots.append(slot)
        return slot

    def submit(self, spec: TrialSpec) -> None:
        spec = self.place(spec)
        logs = watch_trial_logs(
            spec.trial_dir, spec.attempt, spec.number, self.max_log_bytes, self.echo_output
        )
        if isinstance(logs, str):
            self._pending.append(Failed(spec.number, time.time(), logs))
            return
        slot = next(
            (s for s in self._slots if s.number is None and s.devices == spec.devices and s.alive),
            None,
        )
        if slot is None:
            self._slots = [s for s in self._slots if s.number is not None or s.alive]
            idle = [s for s in self._slots if s.number is None]
            if idle and len(self._slots) >= self.concurrency:
                self._dismiss(idle[0])
            slot = self._spawn(spec.devices)
        watch = None if self.devices is None else self.devices.watch
        slot.number = spec.number
        slot.logs = logs
        slot.deadline = (  # until the trial starts, a worker's start-up may take its time too
            None
            if self.trial_timeout is None
            else time.monotonic() + self.trial_timeout + WORKER_STARTUP_GRACE + _wait_limit(watch)
        )
        slot.kill_at = None
        slot.tasks.send(("run", spec, watch))

    def poll(self, timeout: float) -> None:
        pending, self._pending = self._pending, []
        for event in pending:
            self.listener(event)
        if pending:
            timeout = 0
        busy = [slot for slot in self._slots if slot.number is not None]
        limits = [t for s in busy for t in (s.deadline, s.kill_at) if t is not None]
        if limits:
            timeout = min(timeout, max(0.0, min(limits) - time.monotonic()))
        if busy:  # a worker that dies closes its end of the events pipe: that wakes us too
            wait([s.events for s in busy], timeout)
        elif timeout > 0:
            time.sleep(timeout)
        for slot in busy:
            self._drain(slot)
            if slot.number is not None and not slot.alive:
                self._drain(slot)  # whatever it sent before dying
                if slot.number is not None:
                    self._end(slot, f"the trial's process {exit_text(slot.process)}")
                self._retire(slot, signal.SIGKILL)
        self._enforce_limits()
        self._reap()
        now = time.monotonic()
        for slot in self._slots:
            if slot.logs is not None:
                slot.logs.check(now)

    def _drain(self, slot: _Slot) -> None:
        try:
            while slot.number is not None and slot.events.poll():
                with critical():  # Ctrl-C between a message's length and body tears the pipe
                    data = slot.events.recv_bytes()
                try:
                    message = pickle.loads(data)
                except Exception as exc:  # pickled there, not loadable here: a report's value
                    self._end(
                        slot,
                        f"the driver could not unpickle what trial {slot.number} sent "
                        f"({type(exc).__name__}: {exc}): {EXPECTED}",
                    )
                    self._retire(slot, signal.SIGKILL)
                    return
                self._handle(slot, message)
        except (EOFError, OSError):
            pass

    def _handle(self, slot: _Slot, message: tuple) -> None:
        tag, number, when = message[0], message[1], message[2]
        if tag == "report":
            self.listener(Reported(number, when, message[3], message[4]))
        elif tag == "request":
            self.listener(Requested(number, when, *message[3:7]))
        elif tag == "started":
            if self.trial_timeout is not None:  # a worker's start-up is not the trial's time
                slot.deadline = time.monotonic() + self.trial_timeout
            self.listener(Started(number, when))
        else:
            slot.end_trial()
            if tag == "failed":
                self.listener(Failed(number, when, message[3], load_exception(message[4])))
            elif tag == "finished":
                self.listener(Finished(number, when, message[3]))
            else:
                self.listener(Stopped(number, when, message[3]))

    def _end(self, slot: _Slot, error: str | None = None) -> None:
        """End the slot's trial: ``Failed`` with ``error``, or ``Stopped`` without one."""
        number = slot.number
        assert number is not None
        slot.end_trial()
        now = time.time()
        self.listener(Stopped(number, now) if error is None else Failed(number, now, error))

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        for slot in list(self._slots):
            if slot.number is None:
                continue
            if slot.deadline is not None and slot.deadline <= now:
                self._end(slot, f"trial exceeded trial_timeout={self.trial_timeout:g}s")
                self._retire(slot, signal.SIGTERM)
            elif slot.kill_at is not None and slot.kill_at <= now:
                self._end(slot)
                self._retire(slot, signal.SIGTERM)

    def _retire(self, slot: _Slot, sig: int) -> None:
        """Take a worker out of the pool and signal its group; SIGKILL follows after grace."""
        self._slots.remove(slot)
        slot.signal(sig)
        slot.kill_at = time.monotonic() + (0 if sig == signal.SIGKILL else self.stop_grace)
        self._dying.append(slot)

    def _dismiss(self, slot: _Slot) -> None:
        """Let an idle worker go: it exits on end-of-file; SIGKILL if it lingers."""
        self._slots.remove(slot)
        slot.tasks.close()
        slot.kill_at = time.monotonic() + 1.0
        self._dying.append(slot)

    def _reap(self) -> None:
        now = time.monotonic()
        for slot in list(self._dying):
            if slot.kill_at is not None and slot.kill_at <= now:
                slot.signal(signal.SIGKILL)
                slot.kill_at = None
            if not slot.alive:
                slot.signal(signal.SIGKILL)  # its children, if any survived it
                self._dying.remove(slot)
                slot.tasks.close()
                slot.events.close()

    def stop(self, number: int) -> None:
        for slot in self._slots:
            if slot.number == number and slot.kill_at is None:
                with contextlib.suppress(OSError):
                    slot.tasks.send(("stop", number))
                slot.kill_at = time.monotonic() + self.stop_grace

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        for slot in self._slots:
            if slot.number == number:
                with contextlib.suppress(OSError):
                    slot.tasks.send(("answer", number, index, value, error))

    def close(self) -> None:
        for slot in self._slots:
            if slot.number is not None:
                self.stop(slot.number)
        end = time.monotonic() + self.stop_grace
        while self.running and time.monotonic() < end:
            self.poll(0.05)
        for slot in list(self._slots):
            if slot.number is not None:
                self._end(slot)
            self._dismiss(slot)
        while self._dying:
            self._reap()
            if self._dying:
                time.sleep(0.01)


def _wait_limit(watch: GpuWatch | None) -> float:
    """At most how long a worker waits for its trial's GPUs' memory (nvidia-smi's time aside)."""
    if watch is None:
        return 0.0
    return watch.check.n_gpu_checks * watch.check.gpu_check_delay
