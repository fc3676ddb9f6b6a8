"""How a research's devices are split over its workers and their branches (BatchFlow's
``get_devices``, with a clear error where BatchFlow silently shares devices)."""

from __future__ import annotations

import numbers
from typing import Any

from hyperlab.errors import ConfigError

__all__ = ["split_devices"]

Split = tuple[tuple[tuple[int, ...], ...], ...]


def split_devices(devices: Any, workers: int, branches: int) -> Split | None:
    """For each worker, for each branch, its device indices.

    Args:
        devices: None (no devices); an index (every branch of every worker shares it); a flat
            list whose length is a multiple of ``workers * branches`` (each branch gets
            ``len // (workers * branches)`` consecutive ones: worker 0's branches first); or
            one list per worker of one index or list per branch.

    Raises:
        ConfigError: Fewer devices than ``workers * branches`` need, a count that does not
            split evenly, a nested list of the wrong shape, or an index that is not an int >= 0.
    """
    if devices is None:
        return None
    total = workers * branches
    if _index(devices):
        one = (_check(devices),)
        return tuple(tuple(one for _ in range(branches)) for _ in range(workers))
    if not isinstance(devices, (list, tuple)) or not devices:
        raise ConfigError(
            "devices: expected an index, a list of indices, or one list per worker, got "
            f"{devices!r}"
        )
    if all(_index(d) for d in devices):
        flat = [_check(d) for d in devices]
        if len(flat) < total or len(flat) % total:
            raise ConfigError(
                f"devices: {len(flat)} devices {flat} for workers x branches = {workers} x "
                f"{branches} = {total} experiments at once; give at least {total}, a multiple "
                f"of {total}"
            )
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
        tuple((_check(b),) if _index(b) else tuple(_check(d) for d in b) for b in worker)
        for worker in devices
    )


def _index(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().isdigit()
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check(value: Any) -> int:
    if not _index(value) or int(value) < 0:
        raise ConfigError(f"devices: expected device indices (ints >= 0), got {value!r}")
    return int(value)
