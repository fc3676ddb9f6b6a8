"""TPE's good/bad split with several objectives or constraints (Optuna's MOTPE and c-TPE).

Package-private. With one objective and no constraints the tuner ranks its trials by loss
alone; otherwise :class:`Outcomes` keeps what that ranking needs (each trial's objective
losses and constraint violation) and :func:`choose_good` picks the good trials as Optuna 5's
``TPESampler`` does in ``_split_trials``:

- feasible trials come first, ranked by loss (one objective) or by non-dominated front
  (several); infeasible ones follow, by total violation;
- with several objectives, whole fronts are taken while they fit, and the front that does not
  fit whole is cut by greedy hypervolume subset selection (the subset of its points that
  dominates the most hypervolume, up to a reference point just beyond its worst point);
- ties otherwise go to the older trial.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hyperlab.pareto import hypervolume, non_dominated_ranks
from hyperlab.trial import Mode, Trial, TrialStatus

__all__ = ["Outcomes", "choose_good", "hypervolume_subset"]

_EPS = 1e-12  # Optuna's reference-point coordinate where the worst point has a 0


class Outcomes:
    """Objective losses (with several objectives) and violations (with constraints) by trial.

    Args:
        modes: Each objective's direction.
    """

    def __init__(self, modes: Sequence[Mode]) -> None:
        self.signs = np.array([Mode(m).sign for m in modes], dtype=float)
        self.losses: dict[int, tuple[float, ...]] = {}
        self.violations: dict[int, float] = {}
        self.version = 0  # counts observations, so a split can be reused until the next one

    @property
    def several(self) -> bool:
        """Whether there are several objectives."""
        return len(self.signs) > 1

    @property
    def needed(self) -> bool:
        """Whether the split needs more than the first objective's loss."""
        return self.several or bool(self.violations)

    def add(self, trial: Trial) -> None:
        """Record a finished trial's objectives and constraints (replacing an earlier record)."""
        self.version += 1
        number = trial.number
        self.losses.pop(number, None)
        values = trial.objectives
        if (
            self.several
            and trial.status is TrialStatus.SUCCEEDED
            and values is not None
            and len(values) == len(self.signs)
            and not any(math.isnan(v) for v in values)
        ):
            self.losses[number] = tuple(float(v) for v in np.asarray(values) * self.signs)
        if trial.constraints is not None:
            self.violations[number] = trial.violation
        else:
            self.violations.pop(number, None)

    def points(self, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(losses, usable)`` for these trial numbers: an ``(n, k)`` array (NaN rows for
        trials without every objective) and which rows have every objective."""
        nan = (math.nan,) * len(self.signs)
        rows = [self.losses.get(int(n), nan) for n in numbers]
        out = np.array(rows, dtype=float).reshape(len(rows), len(self.signs))
        return out, ~np.isnan(out).any(axis=1)

    def violation(self, numbers: np.ndarray) -> np.ndarray:
        """Each trial's total constraint violation (0 when feasible or unconstrained)."""
        return np.array([self.violations.get(int(n), 0.0) for n in numbers], dtype=float)


def choose_good(points: np.ndarray, violation: np.ndarray, n_good: int) -> np.ndarray:
    """Which ``n_good`` rows of the ``(n, k)`` losses are good, in row order.

    Args:
        points: Losses (lower is better), one row per succeeded trial, oldest first.
        violation: Each row's total constraint violation (0 when feasible).
        n_good: How many to pick.
    """
    n_good = max(0, min(n_good, len(points)))
    feasible = np.flatnonzero(violation <= 0.0)
    if feasible.size < n_good:  # every feasible row, then the least violating ones
        infeasible = np.flatnonzero(violation > 0.0)
        by_violation = infeasible[np.argsort(violation[infeasible], kind="stable")]
        return np.sort(np.concatenate([feasible, by_violation[: n_good - feasible.size]]))
    return np.sort(feasible[_best(points[feasible], n_good)])


def _best(points: np.ndarray, n_good: int) -> np.ndarray:
    """Positions of the ``n_good`` best rows: by loss (the older of equals first) with one
    objective; by front with several, the last front cut by hypervolume subset selection."""
    if points.shape[1] == 1:
        return np.argsort(points[:, 0], kind="stable")[:n_good]
    if n_good == 0:
        return np.zeros(0, dtype=np.int64)
    # a row dominated by n_good others comes after n_good rows whatever the fronts: skip it
    rows = np.flatnonzero(_dominators(points) < n_good)
    ranks = non_dominated_ranks(points[rows])
    order = np.argsort(ranks, kind="stable")
    cut = ranks[order[n_good - 1]]  # the front that may not fit whole
    whole = rows[order[ranks[order] < cut]]
    tied = rows[order[ranks[order] == cut]]  # in row order
    picked = tied[hypervolume_subset(points[tied], n_good - whole.size)]
    return np.concatenate([whole, picked])


def _dominators(points: np.ndarray, chunk: int = 512) -> np.ndarray:
    """How many rows dominate each row (in blocks of rows, to bound the memory)."""
    count = np.empty(len(points), dtype=np.int64)
    for start in range(0, len(points), chunk):
        block = points[start : start + chunk]
        no_worse = np.ones((len(block), len(points)), dtype=bool)
        better = np.zeros_like(no_worse)
        for column in range(points.shape[1]):  # a few objectives: one pass each
            mine, theirs = block[:, column, None], points[None, :, column]
            no_worse &= theirs <= mine
            better |= theirs < mine
        count[start : start + chunk] = np.count_nonzero(no_worse & better, axis=1)
    return count


def hypervolume_subset(points: np.ndarray, size: int) -> np.ndarray:
    """Positions of ``size`` rows of mutually non-dominated losses chosen greedily for the
    hypervolume they dominate together (a ``1 - 1/e`` approximation of the best subset).

    The reference point is Optuna's: 1.1 times the worst loss in each objective (0.9 times
    a negative one). Distinct points are chosen before duplicates; a point's gain is only
    recomputed when it may be the largest (gains only shrink as the subset grows), so the
    work is a few hypervolume computations per chosen point.
    """
    if size >= len(points):
        return np.arange(len(points))
    worst = points.max(axis=0)
    reference = np.maximum(1.1 * worst, 0.9 * worst)
    reference[reference == 0] = _EPS
    if not np.isfinite(reference).all() or not np.isfinite(points).all():
        return np.arange(size)
    _, first = np.unique(points, axis=0, return_index=True)
    first = np.sort(first)
    if first.size <= size:  # every distinct point, then the oldest duplicates
        rest = np.setdiff1d(np.arange(len(points)), first)[: size - first.size]
        return np.sort(np.concatenate([first, rest]))
    distinct = points[first]
    gain = np.prod(reference - distinct, axis=1)  # each point's hypervolume alone
    fresh_at = np.zeros(first.size, dtype=np.int64)  # the subset size each gain is exact for
    chosen: list[int] = []
    total = 0.0
    while len(chosen) < size:
        i = int(np.argmax(gain))
        if fresh_at[i] == len(chosen):
            chosen.append(i)
            total += gain[i]
            gain[i] = -np.inf
            continue
        together = hypervolume(distinct[[*chosen, i]], reference)
        gain[i], fresh_at[i] = together - total, len(chosen)
    return np.sort(first[chosen])
