"""GPU placement: which accelerator indices each trial holds.

```python
pool = DevicePool(detect_gpus() or [0, 1], per_trial=1, max_trials_per_gpu=2)
executor = create_executor("command", trial, concurrency=4, devices=pool)
```

An executor given a ``DevicePool`` acquires devices when it starts a trial, hands them to the
trial (``CUDA_VISIBLE_DEVICES`` for command and process trials, ``hyperlab.trial_devices()``
everywhere) and releases them when the trial ends; while no device is free, its
``free_slots`` is 0 and the next trial waits.

With a ``MemoryCheck`` (``gpus.memory_ratio``), the ``processes``, ``threads`` and
``inprocess`` executors also wait, before a trial starts, until its devices have that much of
their memory free, and warn about a trial that did not give memory back (see
``hyperlab.executors._gpu_memory``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Sequence

from hyperlab.errors import ConfigError
from hyperlab.executors._gpu_memory import (
    NVIDIA_SMI_TIMEOUT,
    GpuMemory,
    GpuMemoryError,
    GpuWatch,
    MemoryCheck,
    gpu_memory,
    leaked_memory,
    wait_for_free_memory,
)

__all__ = [
    "DevicePool",
    "GpuMemory",
    "GpuMemoryError",
    "MemoryCheck",
    "detect_gpus",
    "gpu_memory",
    "leaked_memory",
    "wait_for_free_memory",
]


class DevicePool:
    """Hands out device indices to trials, least-loaded first, within a per-device limit.

    Args:
        indices: The device indices trials may use (e.g. ``[0, 1, 2, 3]``), in order of
            preference when loads are equal.
        per_trial: How many devices each trial holds.
        max_trials_per_gpu: How many trials may share one device at once.
        memory_check: How much of its devices' memory must be free before a trial starts
            there, or None not to look.

    Raises:
        ConfigError: An index is not a non-negative integer or appears twice, no index is
            given, ``per_trial`` exceeds the number of devices, or a count is below 1.

    Placement is deterministic: the same sequence of acquires and releases always yields the
    same devices. The pool is not thread-safe; the one executor that owns it calls it from the
    driver's thread.
    """

    def __init__(
        self,
        indices: Sequence[int],
        per_trial: int = 1,
        max_trials_per_gpu: int = 1,
        *,
        memory_check: MemoryCheck | None = None,
    ) -> None:
        self.indices = _check_indices(indices)
        self.per_trial = _check_count("gpus.per_trial", per_trial)
        self.max_trials_per_gpu = _check_count("gpus.max_trials_per_gpu", max_trials_per_gpu)
        if self.per_trial > len(self.indices):
            raise ConfigError(
                f"gpus.per_trial: {per_trial} devices per trial is more than the "
                f"{len(self.indices)} in gpus.indices={list(self.indices)}"
            )
        self.memory_check = memory_check
        self._load = dict.fromkeys(self.indices, 0)

    def __repr__(self) -> str:
        return (
            f"DevicePool({list(self.indices)}, per_trial={self.per_trial}, "
            f"max_trials_per_gpu={self.max_trials_per_gpu}"
            + ("" if self.memory_check is None else f", memory_check={self.memory_check!r}")
            + ")"
        )

    @property
    def watch(self) -> GpuWatch | None:
        """What executors do around each trial for ``memory_check`` (None without one); leaks
        are looked for only when trials do not share devices."""
        if self.memory_check is None:
            return None
        return GpuWatch(self.memory_check, leaks=self.max_trials_per_gpu == 1)

    @property
    def load(self) -> dict[int, int]:
        """How many running trials hold each device."""
        return dict(self._load)

    def acquire(self) -> tuple[int, ...] | None:
        """Take ``per_trial`` devices for one trial; None when not enough are free.

        Returns:
            The least-loaded devices (ties broken by their order in ``indices``), in that order.
        """
        chosen = _pick(self._load, self.per_trial, self.max_trials_per_gpu)
        if chosen is not None:
            for index in chosen:
                self._load[index] += 1
        return chosen

    def release(self, devices: Iterable[int]) -> None:
        """Give back devices returned by ``acquire``.

        Raises:
            ValueError: A device is not in the pool or is not held by any trial.
        """
        devices = tuple(devices)
        for index in devices:
            if self._load.get(index, 0) <= 0:
                raise ValueError(
                    f"cannot release device {index!r}: it is not held "
                    f"(loads {self._load}, releasing {devices})"
                )
        for index in devices:
            self._load[index] -= 1

    def free_trials(self) -> int:
        """How many more trials ``acquire`` would place now, one after another."""
        load = dict(self._load)
        count = 0
        while (chosen := _pick(load, self.per_trial, self.max_trials_per_gpu)) is not None:
            for index in chosen:
                load[index] += 1
            count += 1
        return count


def _pick(load: dict[int, int], per_trial: int, limit: int) -> tuple[int, ...] | None:
    order = {index: position for position, index in enumerate(load)}
    free = sorted((n, order[i], i) for i, n in load.items() if n < limit)
    if len(free) < per_trial:
        return None
    return tuple(i for _, _, i in free[:per_trial])


def _check_indices(indices: Sequence[int]) -> tuple[int, ...]:
    if isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable):
        raise ConfigError(f"gpus.indices: expected a list of device indices, got {indices!r}")
    values = tuple(indices)
    if not values:
        raise ConfigError(
            "gpus.indices: expected at least one device index, got [] (no GPU was detected?)"
        )
    seen: set[int] = set()
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(
                f"gpus.indices: expected non-negative integers, got {value!r} in {list(values)}"
            )
        if value in seen:
            raise ConfigError(f"gpus.indices: device {value} appears twice in {list(values)}")
        seen.add(value)
    return values


def _check_count(field: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{field}: expected an integer >= 1, got {value!r}")
    return value


def detect_gpus() -> list[int]:
    """The indices of this machine's NVIDIA GPUs, from ``nvidia-smi``; [] without any.

    An absent, failing or unparsable ``nvidia-smi`` also gives [].
    """
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    try:
        return [int(line) for line in out.stdout.split() if line.strip()]
    except ValueError:
        return []
