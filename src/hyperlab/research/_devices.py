"""How a research's devices are split over its workers and their branches, as BatchFlow's
``Research.get_devices`` splits them: fewer devices than experiments at once are shared,
more are handed out several per experiment (wrapping around when they do not divide)."""

from __future__ import annotations

import numbers
import re
from typing import Any

from hyperlab.errors import ConfigError

__all__ = ["device_index", "split_devices"]

Split = tuple[tuple[tuple[int, ...], ...], ...]

_NAME = re.compile(r"(?:cuda|gpu)\s*:\s*(\d+)", re.IGNORECASE)


def split_devices(devices: Any, workers: int, branches: int) -> Split | None:
    """For each worker, for each branch, its device indices.

    Args:
        devices: None (no devices); one device (every branch of every worker has it); a flat
            list, spread over the ``workers * branches`` experiments that run at once as
            BatchFlow does: fewer devices are shared (each repeated for consecutive
            experiments, 2 devices for 2 workers x 2 branches give each worker one), more
            are given several per experiment (the list wrapped around to a multiple of
            ``workers * branches``); or one list per worker of one device or list per branch.
            A device is an index (``1``, ``"1"``) or a name like ``"cuda:1"`` / ``"gpu:1"``.

    Examples (3 workers x 2 branches), as BatchFlow's ``get_devices`` documents them::

        1              -> [[(1,), (1,)], [(1,), (1,)], [(1,), (1,)]]
        [1, 2]         -> [[(1,), (1,)], [(1,), (2,)], [(2,), (2,)]]
        [1, 2, 3, 4, 5] -> [[(1,), (2,)], [(3,), (4,)], [(5,), (1,)]]

    Raises:
        ConfigError: An empty list, a nested list of the wrong shape, or a device that is
            neither an index >= 0 nor a ``"cuda:N"`` name (``"cpu"``: leave devices None).
    """
    if devices is None:
        return None
    total = workers * branches
    if _is_device(devices):
        devices = [devices]
    if not isinstance(devices, (list, tuple)) or not devices:
        raise ConfigError(
            "devices: expected a device (0, '0', 'cuda:0'), a list of them, or one list per "
            f"worker of one entry per branch, got {devices!r}"
        )
    if all(_is_device(d) for d in devices):
        flat = _spread([device_index(d) for d in devices], total)
        per = len(flat) // total
        return tuple(
            tuple(
                tuple(flat[(w * branches + b) * per : (w * branches + b + 1) * per])
                for b in range(branches)
            )
            for w in range(workers)
        )
    if len(devices) != workers or any(
        not isinstance(w, (list, tuple)) or len(w) != branches for w in devices
    ):
        raise ConfigError(
            f"devices: a nested list needs one list per worker ({workers}) of one entry per "
            f"branch ({branches}), got {devices!r}"
        )
    return tuple(
        tuple(
            (device_index(b),) if _is_device(b) else tuple(device_index(d) for d in b)
            for b in worker
        )
        for worker in devices
    )


def _spread(flat: list[int], total: int) -> list[int]:
    """``flat`` made ``total`` long or a multiple of it, BatchFlow's way: each device repeated
    ``total // len`` times in a row and the first ones once more; or, when there are more, the
    first ones appended again up to the next multiple."""
    if total > len(flat):
        repeated = [d for d in flat for _ in range(total // len(flat))]
        return repeated + flat[: total % len(flat)]
    return flat + flat[: -len(flat) % total]


def device_index(device: Any) -> int:
    """The GPU index a device stands for: ``1``, ``"1"``, ``"cuda:1"`` and ``"gpu:1"`` are 1.

    Raises:
        ConfigError: Anything else (a negative index, ``"cpu"``, ``"cuda"`` without an index).
    """
    if isinstance(device, numbers.Integral) and not isinstance(device, bool) and int(device) >= 0:
        return int(device)
    if isinstance(device, str):
        text = device.strip()
        if text.isdigit():
            return int(text)
        match = _NAME.fullmatch(text)
        if match:
            return int(match.group(1))
    raise ConfigError(
        "devices: expected GPU indices (0, '0') or names like 'cuda:0', got "
        f"{device!r}; leave devices=None to run without GPUs"
    )


def _is_device(value: Any) -> bool:
    """A single device (not a list): an int or a string; ``device_index`` checks it."""
    return isinstance(value, (str, numbers.Integral))
