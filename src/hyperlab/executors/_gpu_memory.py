"""Free GPU memory before a trial starts, and whether it came back after (BatchFlow's
``memory_ratio``, ``n_gpu_checks`` and ``gpu_check_delay``).

```python
check = MemoryCheck(memory_ratio=0.9, n_gpu_checks=3, gpu_check_delay=5)
reason = wait_for_free_memory((1,), check, say=lambda line: print(line, file=sys.stderr))
if reason is not None:
    ...  # the trial fails with `reason`
before = gpu_memory((1,))
...  # run the trial
leak = leaked_memory(before, check)  # None, or "GPU 1: 1.5 GiB less free than ..."
```

Figures come from ``nvidia-smi --query-gpu=index,memory.free,memory.total``; indices are
``nvidia-smi``'s (see ``nvidia_indices`` for a process whose ``CUDA_VISIBLE_DEVICES`` renumbers
them). Every function here blocks: call them where the trial is about to run (its worker
process or thread), never in the driver's loop.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from hyperlab.errors import ConfigError

__all__ = [
    "GpuMemory",
    "GpuMemoryError",
    "MemoryCheck",
    "gpu_memory",
    "leaked_memory",
    "nvidia_indices",
    "wait_for_free_memory",
]

NVIDIA_SMI_TIMEOUT = 10.0
"""Seconds one ``nvidia-smi`` query may take before it counts as failed."""
QUERY = ("--query-gpu=index,memory.free,memory.total", "--format=csv,noheader,nounits")
SLICE = 0.1
"""Seconds between two looks at ``cancelled`` while a check waits for the next one."""


class GpuMemoryError(OSError):
    """``nvidia-smi`` is missing, failed, or printed what could not be read."""


@dataclass(frozen=True, slots=True)
class GpuMemory:
    """One GPU's memory as ``nvidia-smi`` reports it, in MiB."""

    index: int
    free: int
    total: int


@dataclass(frozen=True, slots=True)
class MemoryCheck:
    """How much of its GPUs' memory must be free before a trial starts, and how long to wait.

    Args:
        memory_ratio: The fraction of each device's total memory that must be free, in (0, 1].
        n_gpu_checks: How many times to look (at least 1) before the trial fails.
        gpu_check_delay: Seconds between two looks (>= 0).
        leak_tolerance: MiB a device may have less free after a trial than before it without
            a warning (allocators, drivers and other users move a little).
        leak_settle: Seconds the memory gets to come back after a trial before it is reported
            as leaked (looked at every quarter of a second meanwhile).

    Raises:
        ConfigError: A value is out of range, naming the field and the value.
    """

    memory_ratio: float
    n_gpu_checks: int = 3
    gpu_check_delay: float = 5.0
    leak_tolerance: int = 256
    leak_settle: float = 2.0

    def __post_init__(self) -> None:
        ratio = self.memory_ratio
        if not _is_number(ratio) or not 0 < ratio <= 1:
            raise ConfigError(f"memory_ratio: expected a number in (0, 1], got {ratio!r}")
        checks = self.n_gpu_checks
        if isinstance(checks, bool) or not isinstance(checks, int) or checks < 1:
            raise ConfigError(f"n_gpu_checks: expected an integer >= 1, got {checks!r}")
        for name in ("gpu_check_delay", "leak_tolerance", "leak_settle"):
            value = getattr(self, name)
            if not _is_number(value) or not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name}: expected a number >= 0, got {value!r}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def nvidia_indices(devices: Iterable[int], visible: str | None) -> tuple[int, ...]:
    """``nvidia-smi``'s indices of ``devices`` numbered as a process with ``visible`` as its
    ``CUDA_VISIBLE_DEVICES`` sees them (thread trials: the driver's own variable).

    Device ``i`` is the ``i``-th entry of ``visible``; without the variable, or when it holds
    something other than integers (GPU UUIDs), the indices are taken as they are.
    """
    devices = tuple(devices)
    if not visible:
        return devices
    try:
        entries = [int(entry) for entry in visible.split(",")]
    except ValueError:
        return devices
    return tuple(entries[i] if 0 <= i < len(entries) else i for i in devices)


def gpu_memory(devices: Iterable[int] | None = None) -> dict[int, GpuMemory]:
    """The memory of ``devices`` (every GPU when None), by ``nvidia-smi`` index.

    Raises:
        GpuMemoryError: ``nvidia-smi`` is missing, fails, times out, prints something else
            than numbers, or does not list one of ``devices``.
    """
    exe = shutil.which("nvidia-smi")
    if exe is None:
        raise GpuMemoryError("nvidia-smi is not on PATH")
    try:
        out = subprocess.run(
            [exe, *QUERY],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GpuMemoryError(f"nvidia-smi did not answer within {NVIDIA_SMI_TIMEOUT:g}s") from None
    except OSError as exc:
        raise GpuMemoryError(f"nvidia-smi could not run: {exc}") from None
    if out.returncode != 0:
        said = (out.stderr or out.stdout).strip().splitlines()
        raise GpuMemoryError(
            f"nvidia-smi exited with code {out.returncode}" + (f": {said[-1]}" if said else "")
        )
    found: dict[int, GpuMemory] = {}
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        try:
            index, free, total = (int(float(part)) for part in line.split(","))
        except ValueError:
            raise GpuMemoryError(
                f"nvidia-smi printed {line.strip()!r}, expected 'index, free MiB, total MiB'"
            ) from None
        found[index] = GpuMemory(index, free, total)
    if devices is None:
        return found
    wanted = tuple(devices)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise GpuMemoryError(
            f"nvidia-smi does not list GPU {', '.join(map(str, missing))} "
            f"(it lists {', '.join(map(str, sorted(found))) or 'none'})"
        )
    return {i: found[i] for i in wanted}


def wait_for_free_memory(
    devices: Iterable[int],
    check: MemoryCheck,
    say: Callable[[str], None],
    *,
    cancelled: Callable[[], bool] | None = None,
) -> str | None:
    """Wait until each of ``devices`` has ``check.memory_ratio`` of its memory free.

    Looks up to ``check.n_gpu_checks`` times, ``check.gpu_check_delay`` seconds apart. Before
    each wait it calls ``say`` with the reason, e.g. ``"GPU 1: 1.2 GiB free of 8.0 GiB
    needed (check 1 of 3, next in 5s)"``, so a waiting trial is never silent. A failed
    ``nvidia-smi`` query counts as a check that found too little.

    Args:
        devices: ``nvidia-smi`` indices (see ``nvidia_indices``).
        check: The ratio and how often and how long to look.
        say: Takes one line without a newline (the caller says which trial waits, and where).
        cancelled: Looked at every ``SLICE`` seconds while waiting; when it returns True the
            wait ends at once with the current reason (the caller knows why).

    Returns:
        None as soon as the memory is free; otherwise the reason, a sentence that can be a
        trial's error.
    """
    devices = tuple(devices)
    if not devices:
        return None
    for attempt in range(1, check.n_gpu_checks + 1):
        short = _shortfall(devices, check.memory_ratio)
        if short is None:
            return None
        if attempt == check.n_gpu_checks or (cancelled is not None and cancelled()):
            break
        say(
            f"{short} (check {attempt} of {check.n_gpu_checks}, next in {check.gpu_check_delay:g}s)"
        )
        if _sleep(check.gpu_check_delay, cancelled):
            break
    return (
        f"its GPUs did not have memory_ratio={check.memory_ratio:g} of their memory free after "
        f"{attempt} check{'s' if attempt > 1 else ''} {check.gpu_check_delay:g}s apart: {short}"
    )


def _shortfall(devices: tuple[int, ...], ratio: float) -> str | None:
    """What is short on ``devices`` (``"GPU 1: 1.2 GiB free of 8.0 GiB needed"``), or None."""
    try:
        memory = gpu_memory(devices)
    except GpuMemoryError as exc:
        return f"cannot read their free memory: {exc}"
    short = [
        f"GPU {m.index}: {_gib(m.free)} free of {_gib(ratio * m.total)} needed"
        for m in memory.values()
        if m.free < ratio * m.total
    ]
    return "; ".join(short) or None


def _sleep(seconds: float, cancelled: Callable[[], bool] | None) -> bool:
    """Sleep ``seconds``, or less when ``cancelled`` turns True; whether it did."""
    if cancelled is None:
        time.sleep(seconds)
        return False
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if cancelled():
            return True
        time.sleep(min(SLICE, left))
    return cancelled()


def leaked_memory(before: Mapping[int, GpuMemory], check: MemoryCheck) -> str | None:
    """Whether the memory free before a trial came back after it, within the tolerance.

    Looks at once, then every quarter of a second for ``check.leak_settle`` seconds while
    some device is still short by more than ``check.leak_tolerance`` MiB.

    Args:
        before: ``gpu_memory(devices)`` taken just before the trial started.
        check: Its tolerance and settle time.

    Returns:
        None when the memory came back (or cannot be read now); otherwise what is missing,
        e.g. ``"GPU 1: 1.5 GiB less free than before the trial (6.5 GiB then, 5.0 GiB now)"``.
    """
    if not before:
        return None
    end = time.monotonic() + check.leak_settle
    while True:
        try:
            now = gpu_memory(before)
        except GpuMemoryError:
            return None
        missing = [
            f"GPU {i}: {_gib(m.free - now[i].free)} less free than before the trial "
            f"({_gib(m.free)} then, {_gib(now[i].free)} now)"
            for i, m in before.items()
            if m.free - now[i].free > check.leak_tolerance
        ]
        left = end - time.monotonic()
        if not missing or left <= 0:
            return "; ".join(missing) or None
        time.sleep(min(0.25, left))


def _gib(mib: float) -> str:
    return f"{mib / 1024:.1f} GiB"


@dataclass(frozen=True, slots=True)
class GpuWatch:
    """What a local executor does around each trial on GPUs: wait for their memory before it
    starts, and look for memory it did not give back after it ends.

    Args:
        check: The memory check (``gpus.memory_ratio`` and friends).
        leaks: Whether to look for leaks: only when no other trial shares the devices
            (``max_trials_per_gpu == 1``), whose use would look like this one's.
    """

    check: MemoryCheck
    leaks: bool = True

    def before(
        self,
        number: int,
        devices: tuple[int, ...],
        say: Callable[[str], None],
        cancelled: Callable[[], bool],
    ) -> tuple[str | None, dict[int, GpuMemory]]:
        """Wait for the memory of trial ``number``'s ``devices`` (``nvidia-smi`` indices).

        ``say`` gets each waiting line, ``"hyperlab: trial 3 waits for its GPUs: ..."``.

        Returns:
            The failure reason (None when the trial may start), and the memory just before
            it starts when leaks are looked for ({} otherwise).
        """

        def waiting(line: str) -> None:
            say(f"hyperlab: trial {number} waits for its GPUs: {line}")

        reason = wait_for_free_memory(devices, self.check, waiting, cancelled=cancelled)
        if reason is not None or not self.leaks or not devices:
            return reason, {}
        try:
            return None, gpu_memory(devices)
        except GpuMemoryError:  # it answered a moment ago: no baseline, no leak check
            return None, {}

    def after(
        self, number: int, before: Mapping[int, GpuMemory], *say: Callable[[str], None]
    ) -> None:
        """Warn through each of ``say`` (the driver's stderr, the trial's ``stderr.log``) if
        trial ``number`` left memory in use on its devices (see ``leaked_memory``)."""
        leak = leaked_memory(before, self.check)
        if leak is not None:
            line = f"hyperlab: warning: trial {number} did not give back its GPU memory: {leak}"
            for tell in say:
                tell(line)
