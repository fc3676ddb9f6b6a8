"""Which of a Dask worker's GPUs a trial gets, for the ``dask`` executor.

Dask counts resources (a worker declared ``GPU=4``, a trial asked for ``GPU=1``: four such
trials run on it at once) but names no device. The trials on one worker get distinct devices
here: those of the worker's ``CUDA_VISIBLE_DEVICES`` (its batch job's), or ``0 .. GPU - 1``
when it is unset, the least loaded first, and a trial sees only its own (the local executor
sets its ``CUDA_VISIBLE_DEVICES``). A fraction (``GPU=0.5``) shares one device.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence

__all__ = ["WORKER_GPUS", "GpuLoads", "visible_gpus"]


class GpuLoads:
    """The GPUs of one worker process and how much of each its running trials hold."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loads: dict[int, float] = {}

    def hold(self, amount: float, devices: Sequence[int]) -> tuple[int, ...]:
        """Devices of ``devices`` for a trial asking for ``amount`` GPUs (``ceil(amount)`` of
        them, or one shared for a fraction), the least loaded first; release them with
        ``release(held, amount)``."""
        if amount <= 0 or not devices:
            return ()
        count = min(len(devices), max(1, math.ceil(amount)))
        share = amount / count
        with self._lock:
            order = sorted(devices, key=lambda d: (self._loads.get(d, 0.0), devices.index(d)))
            held = tuple(sorted(order[:count]))
            for device in held:
                self._loads[device] = self._loads.get(device, 0.0) + share
        return held

    def release(self, held: Sequence[int], amount: float) -> None:
        """Give back what ``hold`` gave for ``amount``."""
        if not held:
            return
        share = amount / len(held)
        with self._lock:
            for device in held:
                self._loads[device] = max(0.0, self._loads.get(device, 0.0) - share)


WORKER_GPUS = GpuLoads()
"""This worker process's GPUs (one per process: a worker's threads share them)."""


def visible_gpus(declared: float) -> tuple[int, ...]:
    """The devices of this worker: its ``CUDA_VISIBLE_DEVICES`` when that lists indices,
    ``0 .. ceil(declared) - 1`` when it is unset; none when it lists something else (UUIDs:
    the trials then see what the worker sees)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return tuple(range(math.ceil(declared)))
    names = [name.strip() for name in listed.split(",") if name.strip()]
    if not all(name.isdigit() for name in names):
        return ()
    return tuple(int(name) for name in names)
