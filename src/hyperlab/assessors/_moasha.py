"""Multi-objective asynchronous successive halving (MO-ASHA; Schmucker et al., 2021, Syne Tune's
``MOASHA``): ASHA whose rungs rank trials by non-dominated sorting instead of by one value.
"""

from __future__ import annotations

import numpy as np

from hyperlab.assessors._asha import ASHA, Losses
from hyperlab.pareto import crowding_distance, non_dominated_ranks

__all__ = ["MOASHA"]


class MOASHA(ASHA):
    """ASHA for several objectives: at each rung the trials go on in the order of their
    non-dominated front, and within a front the most isolated first.

    The experiment's objectives (``metric=["loss", "latency"], mode=["min", "min"]``) are
    judged together at every rung, each report giving one loss vector. Where ASHA keeps the
    best ``count`` values recorded at a rung, MO-ASHA keeps the best ``count`` trials by
    ``(front, -crowding distance)``: the front is the rung's non-dominated sorting (0 for the
    vectors no other one dominates, 1 for those only front 0 dominates, ...), and the crowding
    distance (NSGA-II's, computed within the front) prefers the extremes (``inf``) and the
    trials in sparse regions of the front, so the rung keeps a spread of trade-offs. Trials
    tied with the last one kept also go on, as in ASHA: so do identical vectors, and the two
    extremes of a front (both ``inf``). The ranking depends only on the set of vectors at the
    rung, never on the order they came in, so a replay promotes the same trials.

    Everything else is ASHA's: rungs, the ``stop`` and ``promotion`` variants, sticky
    promotions, closing rungs once no more trials come (see ``ASHA``). Paused trials of one
    rung are resumed in the lexicographic order of their loss vectors. With a single objective
    MO-ASHA decides exactly as ASHA. Constraints play no part: feasibility is known only from
    a trial's final result.

    Args:
        min_resource: The first rung's resource (``> 0``).
        max_resource: The resource at which trials end (``> min_resource``); None (the
            ``stop`` variant only) for no end.
        reduction_factor: ``eta``: one in ``reduction_factor`` trials goes on at each rung.
        variant: ``"stop"`` to stop the trials that do not go on, ``"promotion"`` to pause
            every trial at each rung and resume the best.
        resource_attr: The reported metric that counts the resource; None for ``step + 1``.
        **kwargs: ``mode``, ``metric`` (one per objective), ``seed``, ``space``: the
            experiment's, passed by the framework.

    Raises:
        ConfigError: as ``ASHA``.

    Example:
        >>> hyperlab.run(train, space, metric=["loss", "latency_ms"], mode=["min", "min"],
        ...              assessor="moasha", assessor_args={"max_resource": 27})
    """

    multi_objective = True

    def _best(self, k: int, count: int) -> set[int]:
        entries = self._rungs[k]
        key = _ranking({losses for losses, _ in entries})
        cutoff = sorted(key[losses] for losses, _ in entries)[count - 1]
        return {number for losses, number in entries if key[losses] <= cutoff}


def _ranking(vectors: set[Losses]) -> dict[Losses, tuple[int, float]]:
    """Each distinct loss vector's ``(front, -crowding distance)``: lower goes on first."""
    unique = sorted(vectors)
    points = np.asarray(unique, dtype=float)
    fronts = non_dominated_ranks(points)
    crowding = np.zeros(len(unique))
    for front in np.unique(fronts):
        members = np.flatnonzero(fronts == front)
        crowding[members] = crowding_distance(points[members])
    crowding = np.nan_to_num(crowding, nan=0.0, posinf=np.inf)  # spans of inf give nan
    return {
        vector: (int(front), -float(distance))
        for vector, front, distance in zip(unique, fronts, crowding, strict=True)
    }
