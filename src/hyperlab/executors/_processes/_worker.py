"""The code of a ``processes`` worker: a child process that runs trials one at a time.

It talks to the driver through two one-way pipes: tasks come in (``("run", spec, watch)``,
with the ``GpuWatch`` of its devices or None, ``("stop", number)`` and ``("answer", number,
index, value, error)``), tagged tuples go out: ``("started", number, time)``, ``("report",
number, time, step, metrics)``, ``("request", number, time, index, kind, name,
spec)``, ``("finished" |
"stopped", number, time, metrics)`` and ``("failed", number, time, error, exception)`` (the
exception cloudpickled, or None). It leads its own session and process group (the driver starts
it so), so the driver can signal the trial and everything it started, and it exits as soon as
the driver goes away.

On Linux the process the driver starts forks at once: its parent half stays a keeper, a child
subreaper that runs no trial code (``hyperlab.executors._reaper``), and the child half is the
worker. A process a trial leaves behind, even one that left the group (a ``setsid`` daemon), is
killed when the trial ends, before its end is reported: everything below the keeper but the
worker. When the worker dies, the keeper kills what is left and exits as the worker did.

For each trial with a folder, its descriptors 1 and 2 point at the trial's ``stdout.log`` and
``stderr.log`` (made by the driver, which caps them): what the trial, its C code and its child
processes print lands there. Between trials they are the driver's again.
"""

from __future__ import annotations

import io
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle

from hyperlab.errors import TrialError
from hyperlab.executors._exceptions import dump_exception
from hyperlab.executors._gpu_memory import GpuMemory, GpuWatch
from hyperlab.executors._output import RedirectedOutput, log_paths
from hyperlab.executors._reaper import descendants, kill, reap_children, start_keeper, tree_is_bare
from hyperlab.executors._requests import Answers
from hyperlab.executors._run import format_error, make_context, run_trial
from hyperlab.executors.base import Failed, Finished, Stopped, TrialEnd, TrialSpec
from hyperlab.executors.workers import die_with_parent
from hyperlab.reporting.context import RequestKind, TrialContext, set_process_context
from hyperlab.reporting.metrics import EXPECTED, MetricsError, clean_metrics

LEFTOVERS_REAP_WAIT = 1.0
"""Seconds the worker waits for the children a trial left (and it killed) to exit, to reap
them, before it reports the trial's end."""


def _end_leftovers(keeper: int | None) -> None:
    """Kill every process the trial left, below the keeper (or this worker, without one),
    and reap this worker's children: those killed, and those that exited unwaited for (the
    trial is over)."""
    me = os.getpid()
    if keeper is not None and tree_is_bare(keeper, me):
        return
    root = me if keeper is None else keeper
    killed = kill(lambda table: [p for p in descendants(root, table) if p.pid != me])
    reap_children([p.pid for p in killed if p.ppid == me], LEFTOVERS_REAP_WAIT)


class _Worker:
    def __init__(self, tasks: Connection, events: Connection, keeper: int | None) -> None:
        self.tasks = tasks
        self.events = events
        self.keeper = keeper  # the pid of the subreaper above us, if any
        self.send_lock = threading.Lock()
        self.queue: queue.SimpleQueue[tuple[TrialSpec, GpuWatch | None] | None] = (
            queue.SimpleQueue()
        )
        self.lock = threading.Lock()  # orders stops against the start and end of trials
        self.ctx: TrialContext | None = None
        self.queued: set[int] = set()  # trials received and not started yet
        self.stop_early: set[int] = set()  # of those, the ones already told to stop
        self.answers = Answers()  # to the trials' requests for parameters

    def send(self, message: tuple) -> None:
        with self.send_lock:
            self.events.send(message)

    def listen(self) -> None:
        """Read the task pipe until the driver closes it or dies, then exit the process."""
        while True:
            try:
                message = self.tasks.recv()
            except (EOFError, OSError):
                os._exit(0)
            if message[0] == "run":
                with self.lock:
                    self.queued.add(message[1].number)
                self.queue.put((message[1], message[2]))
            elif message[0] == "answer":
                self.answers.put(*message[1:])
            elif message[0] == "stop":
                with self.lock:
                    ctx = self.ctx
                    if ctx is not None and ctx.number == message[1]:
                        ctx.request_stop()
                    elif message[1] in self.queued:
                        self.stop_early.add(message[1])
                    # else: a stop that crossed the trial's end: a resumed run of the same
                    # trial number must not inherit it

    def ask(self, ctx: TrialContext, index: int, kind: RequestKind, name: str, spec: dict) -> Any:
        """A trial's request to the driver: up the event pipe; the answer comes down."""
        self.send(("request", ctx.number, time.time(), index, kind, name, spec))
        return self.answers.take(ctx, index)

    def serve(self, objective) -> None:
        while (task := self.queue.get()) is not None:
            self.run(objective, *task)

    def run(self, objective, spec: TrialSpec, watch: GpuWatch | None) -> None:
        number = spec.number
        send = self.send

        def emit(step: int, metrics: dict) -> None:
            try:
                send(("report", number, time.time(), step, metrics))
            except Exception as exc:  # pickled whole before a byte is sent: the pipe is intact
                raise TrialError(_unsendable(number, "reported", metrics, exc)) from None

        ctx = make_context(spec, emit, ask=self.ask)
        with self.lock:
            self.queued.discard(number)
            if number in self.stop_early:
                self.stop_early.discard(number)
                ctx.request_stop()
            self.ctx = ctx
        end = self.attempt(objective, spec, watch, ctx)
        with self.lock:
            self.ctx = None
        try:
            if isinstance(end, Failed):
                send(("failed", number, end.time, end.error, dump_exception(end.exception)))
            else:
                tag = "finished" if isinstance(end, Finished) else "stopped"
                send((tag, number, end.time, end.metrics))
        except Exception as exc:  # the final metrics could not be pickled
            error = _unsendable(number, "returned", getattr(end, "metrics", None) or {}, exc)
            send(("failed", number, time.time(), error, None))

    def attempt(
        self, objective, spec: TrialSpec, watch: GpuWatch | None, ctx: TrialContext
    ) -> TrialEnd:
        """Run the trial with its output in its logs, the error of a failed one at the end of
        its ``stderr.log``."""
        if spec.trial_dir is None:
            return self.wait_and_run(objective, spec, watch, ctx, _to_stderr)
        with RedirectedOutput(log_paths(spec.trial_dir)) as redirect:

            def say(line: str) -> None:  # the driver's stderr and the trial's
                redirect.driver(line)
                _to_stderr(line)

            end = self.wait_and_run(objective, spec, watch, ctx, say)
            if isinstance(end, Failed):
                _to_stderr(end.error)
        return end

    def wait_and_run(
        self,
        objective,
        spec: TrialSpec,
        watch: GpuWatch | None,
        ctx: TrialContext,
        say: Callable[[str], None],
    ) -> TrialEnd:
        """Wait for the trial's GPUs' memory, run it, and look for memory it kept."""
        number = spec.number
        before: dict[int, GpuMemory] = {}
        if watch is not None and spec.devices:  # CUDA_VISIBLE_DEVICES holds them: nvidia-smi's
            reason, before = watch.before(
                number, spec.devices, say, cancelled=lambda: ctx.stop_requested
            )
            if ctx.stop_requested:
                return Stopped(number, time.time())
            if reason is not None:
                return Failed(number, time.time(), reason)
        self.send(("started", number, time.time()))
        set_process_context(ctx)
        try:
            end = run_trial(objective, ctx)
        finally:
            set_process_context(None)
            _end_leftovers(self.keeper)  # before its GPUs' memory is looked at, too
        if watch is not None and before:
            watch.after(number, before, say)
        return end


def _unsendable(number: int, done: str, metrics: dict, exc: Exception) -> str:
    """Why trial ``number``'s metrics could not be pickled up to the driver, naming the metric
    and its type as the driver does for what it cannot store."""
    try:
        clean_metrics(metrics)
    except MetricsError as refused:
        return f"trial {number} {done} {refused}"
    return (
        f"trial {number} {done} metrics that cannot be sent from its process to the driver "
        f"({type(exc).__name__}: {exc}): {EXPECTED}"
    )


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(task_fd: str, event_fd: str) -> None:
    """Entry point of a worker process: ``python -c ... TASK_FD EVENT_FD``.

    The first message on the task pipe is the pickled objective.
    """
    keeper = start_keeper(close=(int(task_fd), int(event_fd)))
    die_with_parent()
    if isinstance(sys.stdout, io.TextIOWrapper):  # a trial's prints reach its log at once
        sys.stdout.reconfigure(line_buffering=True)
    tasks = Connection(int(task_fd), writable=False)
    events = Connection(int(event_fd), readable=False)
    try:
        blob = tasks.recv_bytes()
    except (EOFError, OSError):
        os._exit(0)
    worker = _Worker(tasks, events, keeper)
    threading.Thread(target=worker.listen, name="hyperlab-tasks", daemon=True).start()
    try:
        objective = cloudpickle.loads(blob)
    except Exception:
        reason = format_error()

        def objective(*_args: object) -> None:
            raise RuntimeError(
                f"the objective could not be loaded in the worker process:\n{reason}"
            )

    worker.serve(objective)
