"""One trial run in the driver's process (``threads`` and ``inprocess`` executors): wait for its
GPUs' memory, send its output to its logs, run it, and check its GPUs' memory came back."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable

from hyperlab.executors._gpu_memory import GpuMemory, nvidia_indices
from hyperlab.executors._run import run_trial
from hyperlab.executors.base import Executor, Failed, Stopped, TrialEnd, TrialSpec
from hyperlab.executors.routing import ROUTER
from hyperlab.reporting.context import TrialContext

__all__ = ["run_here"]


def run_here(
    executor: Executor,
    spec: TrialSpec,
    ctx: TrialContext,
    started: Callable[[], None],
) -> TrialEnd:
    """Run ``spec``'s trial in this thread, with ``ctx`` as its context, as ``executor`` says.

    Its output goes to its logs (made at its first write, see ``hyperlab.executors.routing``),
    and the error of a failed trial ends its ``stderr.log``, as a command's traceback would.
    With a memory check on ``executor.devices``, the trial first waits for its devices' memory
    (saying so on the driver's stderr and in its log) and fails if it never frees, or ends
    stopped if told to stop meanwhile; ``started`` is called once it may start.
    ``KeyboardInterrupt`` and ``SystemExit`` propagate, as from ``run_trial``.
    """
    try:
        streams = ROUTER.add(ctx, spec, executor.max_log_bytes, executor.echo_output)
    except OSError as exc:
        return Failed(spec.number, time.time(), f"the trial's logs could not be made: {exc}")
    try:
        say = _to_driver
        if streams is not None:
            trial = streams

            def say(line: str) -> None:  # the driver's stderr, and the trial's if it can
                _to_driver(line)
                with contextlib.suppress(OSError):
                    trial.write_bytes(1, f"{line}\n".encode())

        end = _run(executor, spec, ctx, started, say)
        if isinstance(end, Failed) and streams is not None:
            with contextlib.suppress(OSError):
                streams.write_bytes(1, f"{end.error}\n".encode())
    finally:
        ROUTER.remove(ctx)
    return end


def _run(
    executor: Executor,
    spec: TrialSpec,
    ctx: TrialContext,
    started: Callable[[], None],
    say: Callable[[str], None],
) -> TrialEnd:
    watch = None if executor.devices is None else executor.devices.watch
    before: dict[int, GpuMemory] = {}
    if watch is not None and spec.devices:
        devices = nvidia_indices(spec.devices, os.environ.get("CUDA_VISIBLE_DEVICES"))
        reason, before = watch.before(
            spec.number, devices, say, cancelled=lambda: ctx.stop_requested
        )
        if ctx.stop_requested:
            return Stopped(spec.number, time.time())
        if reason is not None:
            return Failed(spec.number, time.time(), reason)
    started()
    end = run_trial(executor.objective, ctx)
    if watch is not None and before:
        watch.after(spec.number, before, say)
    return end


def _to_driver(line: str) -> None:
    """A line on the driver's stderr (outside any trial, the router leaves it there)."""
    print(line, file=sys.stderr, flush=True)
