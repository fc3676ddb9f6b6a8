"""A research worker: runs groups of experiments (one per branch) handed to it by the
executor, in a worker process (``main``) or on a thread of the driver's (``GroupWorker``).

Messages in: ``("run", worker, [TrialSpec, ...], max_log_bytes)`` and ``("stop", number)``.
Messages out are a process worker's (``("started", number, time)``, ``("report", number, time, step,
metrics)``, ``("finished" | "stopped", number, time, metrics)``, ``("failed", number, time,
error, exception)``) plus ``("notice", number, time, text)``: something the driver shows on
its stderr (a wait for free GPU memory, a leak).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import cloudpickle

from hyperlab.executors.base import TrialSpec
from hyperlab.executors.devices import (
    GpuMemoryError,
    gpu_memory,
    leaked_memory,
    wait_for_free_memory,
)
from hyperlab.executors.routing import ROUTER
from hyperlab.reporting.context import TrialContext, set_process_context
from hyperlab.research._runner import Plan, run_group

__all__ = ["GroupWorker", "main", "make_contexts"]

Send = Callable[[tuple], None]


def make_contexts(
    plan: Plan, worker: int, specs: list[TrialSpec], send: Send
) -> list[TrialContext]:
    """One trial context per branch: its actual config (with the worker's and the branch's
    own configs, if any, and ``repetition``) as params, and
    its devices as its process sees them: indices into ``CUDA_VISIBLE_DEVICES`` in a worker
    process (set to the worker's devices), the devices' own indices on threads of the driver's
    process, which sees every device."""
    contexts = []
    visible = plan.worker_devices(worker)
    for branch, spec in enumerate(specs):
        number = spec.number

        def emit(step: int, metrics: dict, number: int = number) -> None:
            send(("report", number, time.time(), step, metrics))

        params = plan.config(spec.params)
        if plan.worker_configs:  # BatchFlow's per-worker and per-branch configs, added last
            params.update(plan.worker_configs[worker])
        if plan.branch_configs:
            params.update(plan.branch_configs[branch])
        params["repetition"] = spec.params.get("repetition", 0)
        devices: tuple[int, ...] = ()
        if plan.devices is not None:
            devices = plan.devices[worker][branch]
            if plan.executor == "processes":  # its process sees only its worker's devices
                devices = tuple(visible.index(d) for d in devices)
        contexts.append(
            TrialContext(
                number,
                spec.trial_id,
                params,
                spec.seed,
                spec.trial_dir,
                emit,
                devices=devices,
                checkpoint_keep=spec.checkpoint_keep,
                checkpoint_score=spec.checkpoint_score,
                attempt=spec.attempt,
            )
        )
    return contexts


class GroupWorker:
    """Runs groups one at a time and takes stops for the running one from any thread.

    Each experiment's output (what its units write to ``sys.stdout``/``sys.stderr`` while
    they run) goes to its ``stdout.log``/``stderr.log``, capped at ``cap`` bytes (the router of
    ``hyperlab.executors.routing`` must be open). With a memory check and devices, the group
    waits for its devices' memory first, and a leak is reported after it.
    """

    def __init__(self, plan: Plan, send: Send, cap: int | None = None) -> None:
        self.plan = plan
        self.send = send
        self.cap = cap
        self.lock = threading.Lock()
        self.contexts: dict[int, TrialContext] = {}
        self.stopped: set[int] = set()  # stops that came before the group started

    def stop(self, number: int) -> None:
        with self.lock:
            ctx = self.contexts.get(number)
            if ctx is not None:
                ctx.request_stop()
            else:
                self.stopped.add(number)

    def run(self, worker: int, specs: list[TrialSpec]) -> None:
        contexts = make_contexts(self.plan, worker, specs, self.send)
        with self.lock:
            for ctx in contexts:
                self.contexts[ctx.number] = ctx
                if ctx.number in self.stopped:
                    self.stopped.discard(ctx.number)
                    ctx.request_stop()
        routed = []
        try:
            for ctx, spec in zip(contexts, specs, strict=True):
                ROUTER.add(ctx, spec, self.cap, self.plan.echo)
                routed.append(ctx)
            devices = self.plan.worker_devices(worker)
            check = self.plan.memory_check
            before = None
            if check is not None and devices:
                before = self._wait_for_memory(devices, check, contexts)
                if before is None:
                    return
            run_group(self.plan, contexts, self.send)
            if check is not None and before:
                leak = leaked_memory(before, check)
                if leak is not None:
                    numbers = ", ".join(str(c.number) for c in contexts)
                    self._notice(contexts[0], f"trials {numbers} leaked GPU memory: {leak}")
        finally:
            for ctx in routed:
                ROUTER.remove(ctx)
            with self.lock:
                for ctx in contexts:
                    self.contexts.pop(ctx.number, None)

    def _notice(self, ctx: TrialContext, text: str) -> None:
        self.send(("notice", ctx.number, time.time(), text))

    def _wait_for_memory(
        self, devices: tuple[int, ...], check: Any, contexts: list[TrialContext]
    ) -> dict | None:
        """Wait until the devices have the memory the check asks for; their memory then, or
        None when it never came (the experiments are failed or, if told to stop, stopped)."""
        numbers = ", ".join(str(c.number) for c in contexts)
        reason = wait_for_free_memory(
            devices,
            check,
            lambda line: self._notice(contexts[0], f"trials {numbers} wait for their GPUs: {line}"),
            cancelled=lambda: all(c.stop_requested for c in contexts),
        )
        if reason is None:
            try:
                return gpu_memory(devices)
            except GpuMemoryError:
                return {}
        for ctx in contexts:
            now = time.time()
            self.send(("started", ctx.number, now))
            if ctx.stop_requested:
                self.send(("stopped", ctx.number, now, None))
            else:
                self.send(("failed", ctx.number, now, reason, None))
        return None


def main(task_fd: str, event_fd: str) -> None:
    """Entry point of a worker process: ``python -c ... TASK_FD EVENT_FD``; the first message
    is the pickled plan."""
    from multiprocessing.connection import Connection

    from hyperlab.executors.workers import die_with_parent

    die_with_parent()
    tasks = Connection(int(task_fd), writable=False)
    events = Connection(int(event_fd), readable=False)
    send_lock = threading.Lock()

    def send(message: tuple) -> None:
        if message[0] == "failed":
            message = (*message[:4], _pickled(message[4]))
        with send_lock:
            events.send(message)

    try:
        plan = cloudpickle.loads(tasks.recv_bytes())
    except (EOFError, OSError):
        os._exit(0)
    ROUTER.open()  # each experiment's output to its own logs
    worker = GroupWorker(plan, send)
    runs: list[tuple[int, list[TrialSpec]]] = []
    ready = threading.Condition()

    def listen() -> None:
        while True:
            try:
                message = tasks.recv()
            except (EOFError, OSError):
                os._exit(0)
            if message[0] == "stop":
                worker.stop(message[1])
            else:
                worker.cap = message[3]
                with ready:
                    runs.append((message[1], message[2]))
                    ready.notify()

    threading.Thread(target=listen, name="hyperlab-tasks", daemon=True).start()
    while True:
        with ready:
            while not runs:
                ready.wait()
            index, specs = runs.pop(0)
        set_process_context(None)
        worker.run(index, specs)


def _pickled(exc: BaseException | None) -> bytes | None:
    """What a unit raised, pickled for the driver; None if it cannot be."""
    if exc is None:
        return None
    try:
        return cloudpickle.dumps(exc)
    except Exception:
        return None
