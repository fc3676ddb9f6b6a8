"""Series for plots, computed with NumPy: curves thinned to a number of points that keeps their
shape, the best value so far, and even thinning of sampled rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hyperlab.trial import Mode

__all__ = ["best_so_far", "downsample", "evenly"]


def downsample(steps: np.ndarray, values: np.ndarray, points: int) -> np.ndarray:
    """The indexes of at most ``points`` points of a curve that keep its shape: the first, the
    last, and the lowest and highest point of each of ``(points - 2) // 2`` buckets of equal
    length in between (min-max decimation), in step order.

    Args:
        steps: The curve's steps, in order.
        values: Its values (no NaN).
        points: At least 2.
    """
    n = len(values)
    if n <= points:
        return np.arange(n)
    buckets = (points - 2) // 2
    if buckets < 1:
        return np.array([0, n - 1][:points])
    inner = np.arange(1, n - 1)
    bucket = (inner - 1) * buckets // (n - 2)
    # per bucket, order by value: the first of each bucket is its minimum, the last its maximum
    order = inner[np.lexsort((values[inner], bucket))]
    ordered_buckets = bucket[order - 1]
    starts = np.flatnonzero(np.r_[True, ordered_buckets[1:] != ordered_buckets[:-1]])
    ends = np.r_[starts[1:] - 1, len(order) - 1]
    return np.unique(np.concatenate(([0, n - 1], order[starts], order[ends])))


def evenly(count: int, points: int) -> np.ndarray:
    """At most ``points`` indexes of ``range(count)``, spread evenly, first and last included."""
    if count <= points:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, points).round().astype(np.int64))


def best_so_far(
    xs: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    numbers: Sequence[int] | np.ndarray,
    mode: Mode,
    points: int,
) -> tuple[list[dict[str, Any]], bool]:
    """The points where the best value so far improved, in ``x`` order.

    Args:
        xs: Each trial's x (its number, or when it finished).
        values: Each trial's value.
        numbers: Each trial's number.
        mode: Which way values are better.
        points: At most this many points are returned (evenly chosen among the improvements,
            the first and the last kept).

    Returns:
        ``[{"x", "value", "number"}...]`` and whether improvements were left out.
    """
    if not len(values):
        return [], False
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    n = np.asarray(numbers, dtype=np.int64)
    order = np.lexsort((n, x))
    x, y, n = x[order], y[order], n[order]
    loss = mode.sign * y
    best = np.minimum.accumulate(loss)
    improved = np.flatnonzero(np.r_[True, best[1:] < best[:-1]])
    chosen = improved[evenly(len(improved), points)]
    series = [
        {"x": float(x[i]), "value": float(y[i]), "number": int(n[i])} for i in chosen.tolist()
    ]
    return series, len(chosen) < len(improved)
