"""Pareto dominance for several objectives: the front, non-dominated sorting, crowding and the
hypervolume, shared by ``Result``, the tuners, the assessors, the server and the CLI.

Every function here works on *losses*: objective values turned so that lower is better in
each column (``losses`` does it from values and modes). Constraints follow Optuna's rule: a
feasible trial dominates an infeasible one, and of two infeasible trials the one with the
smaller total violation does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.trial import Mode, Trial, TrialStatus

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "crowding_distance",
    "dominates",
    "hypervolume",
    "losses",
    "non_dominated_ranks",
    "pareto_front",
    "pareto_mask",
]


def losses(trials: Sequence[Trial], modes: Sequence[Mode]) -> NDArray[np.float64]:
    """An ``(n, k)`` array of the trials' objective values as losses (lower is better).

    Raises:
        ValueError: a trial has no values, or not ``len(modes)`` of them.
    """
    signs = np.array([Mode(m).sign for m in modes], dtype=float)
    rows = []
    for trial in trials:
        values = trial.objectives
        if values is None or len(values) != len(signs):
            raise ValueError(
                f"trial {trial.number} has objective values {values!r}, expected {len(signs)}"
            )
        rows.append(values)
    if not rows:
        return np.empty((0, len(signs)))
    return np.asarray(rows, dtype=float) * signs


def dominates(a: ArrayLike, b: ArrayLike) -> bool:
    """True when loss vector ``a`` is no worse than ``b`` everywhere and better somewhere."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all(a <= b) and np.any(a < b))


def pareto_mask(points: ArrayLike) -> NDArray[np.bool_]:
    """Which rows of the ``(n, k)`` loss array no other row dominates (duplicates all kept)."""
    pts = np.asarray(points, dtype=float)
    if len(pts) == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(_moocore().is_nondominated(_ordinal(pts), keep_weakly=True), dtype=bool)


def non_dominated_ranks(points: ArrayLike, violations: ArrayLike | None = None) -> NDArray[np.int_]:
    """The front each row of the ``(n, k)`` loss array belongs to: 0 for the non-dominated,
    1 for those only the first front dominates, and so on (NSGA-II's non-dominated sorting,
    by ``moocore``).

    With ``violations`` (each row's total constraint violation, 0 when feasible) the feasible
    rows are sorted first, and the infeasible ones after them by their violation alone.
    """
    pts = np.asarray(points, dtype=float)
    n = len(pts)
    ranks = np.zeros(n, dtype=int)
    if n == 0:
        return ranks
    viol = np.zeros(n) if violations is None else np.asarray(violations, dtype=float)
    feasible = viol <= 0.0
    ranks[feasible] = _ranks(pts[feasible])
    if not feasible.all():
        top = int(ranks[feasible].max()) + 1 if feasible.any() else 0
        _, by_violation = np.unique(viol[~feasible], return_inverse=True)
        ranks[~feasible] = top + by_violation
    return ranks


def _ranks(pts: NDArray[np.float64]) -> NDArray[np.int_]:
    if len(pts) == 0:
        return np.zeros(0, dtype=int)
    return np.asarray(_moocore().pareto_rank(_ordinal(pts)), dtype=int)


def _ordinal(pts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column replaced by its values' order (0, 1, 2...; NaN last): dominance depends on
    nothing else, and moocore gets small finite numbers (infinities crash it)."""
    pts = pts.reshape(len(pts), -1)
    out = np.empty(pts.shape, dtype=float)
    for column in range(pts.shape[1]):
        _, out[:, column] = np.unique(pts[:, column], return_inverse=True)
    return out


def _moocore() -> Any:
    import moocore  # type: ignore[import-untyped]  # lazily: compiled, and seldom needed

    return moocore


def crowding_distance(points: ArrayLike) -> NDArray[np.float64]:
    """NSGA-II's crowding distance of each row of one front (the extremes get ``inf``)."""
    pts = np.asarray(points, dtype=float)
    n, k = pts.shape if pts.ndim == 2 else (len(pts), 0)
    distance = np.zeros(n)
    if n <= 2:
        return np.full(n, np.inf)
    for column in range(k):
        order = np.argsort(pts[:, column], kind="stable")
        values = pts[order, column]
        span = values[-1] - values[0]
        distance[order[0]] = distance[order[-1]] = np.inf
        if span > 0:
            distance[order[1:-1]] += (values[2:] - values[:-2]) / span
    return distance


def pareto_front(trials: Sequence[Trial], modes: Sequence[Mode]) -> list[Trial]:
    """The feasible SUCCEEDED trials that no other such trial dominates, in number order."""
    done = [
        t
        for t in trials
        if t.status is TrialStatus.SUCCEEDED and t.objectives is not None and t.feasible
    ]
    if not done:
        return []
    keep = pareto_mask(losses(done, modes))
    return sorted((t for t, kept in zip(done, keep, strict=True) if kept), key=lambda t: t.number)


def hypervolume(
    points: ArrayLike, reference_point: Sequence[float], modes: Sequence[Mode] | None = None
) -> float:
    """The hypervolume the ``(n, k)`` objective values dominate up to ``reference_point``
    (computed by ``moocore``); points not better than the reference everywhere add nothing.

    Args:
        points: Objective values as the trials report them, one row per point.
        reference_point: One value per objective, in the same units and directions.
        modes: Each objective's direction; None means all ``min``.

    Raises:
        ConfigError: ``reference_point`` has not one finite value per objective.
    """
    pts = np.asarray(points, dtype=float)
    ref = np.asarray(reference_point, dtype=float)
    k = pts.shape[1] if pts.ndim == 2 else len(modes or ref)
    if ref.ndim != 1 or len(ref) != k or not np.all(np.isfinite(ref)):
        raise ConfigError(
            f"reference_point: {list(map(float, ref.ravel()))} has {ref.size} value(s); expected "
            f"{k} finite numbers, one per objective"
        )
    signs = np.array([Mode(m).sign for m in (modes or [Mode.MIN] * k)], dtype=float)
    if len(signs) != k:
        raise ConfigError(f"modes: {len(signs)} given for {k} objectives")
    if pts.size == 0:
        return 0.0
    pts, ref = pts * signs, ref * signs
    pts = pts[np.all(pts < ref, axis=1)]  # NaN rows too: they compare false
    if len(pts) == 0:
        return 0.0
    if np.isinf(pts).any():  # a loss of -inf in some objective dominates an unbounded volume
        return math.inf
    if k == 1:
        return float(ref[0] - pts[:, 0].min())
    volume = float(_moocore().hypervolume(pts, ref=ref))
    # finite points whose volume overflows (losses near -1e308) come back as inf - inf
    return math.inf if math.isnan(volume) else volume
