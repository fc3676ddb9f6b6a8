"""Boxes that partition the region no point of a Pareto front dominates, for the hypervolume
improvement of new points.

Package-private, used by the multi-objective acquisition of :mod:`hyperlab.tuners._gp`. All
points are losses (lower is better). The local upper bounds of a front (Lacour, Klamroth and
Fonseca, "A box decomposition algorithm to compute the hypervolume indicator", 2017, Algorithm 2)
are the corners of the region the front does not dominate; that region is the set of points
that dominate a local upper bound, which is the region the *negated* bounds dominate, so the same
algorithm run on the negated bounds (with the reference at infinity) and Lacour's Eq. (2) cut it
into disjoint boxes. The count grows about linearly with the front for 2 and 3 objectives.

A new point ``y`` then improves the hypervolume by the sum over boxes ``[lo, hi]`` of
``prod_k clip(hi_k - max(y_k, lo_k), 0)`` (:func:`hypervolume_improvement`).
"""

from __future__ import annotations

import numpy as np

from hyperlab.pareto import pareto_mask

__all__ = ["hypervolume_improvement", "non_dominated_boxes"]


def _local_upper_bounds(front: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The local upper bounds of ``front`` (mutually non-dominated rows sorted by the first
    column) below ``ref``, and each bound's defining points.

    Returns:
        ``U`` of shape ``(m, k)`` and ``Z`` of shape ``(m, k, k)``, where ``Z[i, j]`` is the
        point that fixes ``U[i, j]`` (a dummy point, ``ref_j`` in column ``j`` and ``-inf``
        elsewhere, for a coordinate still at the reference).
    """
    k = front.shape[1]
    U = ref[None, :].copy()
    Z = np.full((1, k, k), -np.inf)
    Z[0, np.arange(k), np.arange(k)] = ref
    # Z[i, j, j'] for j' != j and j' != 0 bounds where a new point may split bound i along j'
    # (the first coordinate always may: the points come sorted by it)
    skip = np.eye(k, dtype=bool)
    skip[:, 0] = True
    for z in front:
        inside = np.all(z < U, axis=1)
        if not inside.any():
            continue
        Zin = Z[inside]
        split = z >= np.max(np.where(skip, -np.inf, Zin), axis=1)  # (a, k): bound, coordinate
        rows, cols = np.nonzero(split)
        new_U = U[inside][rows]
        new_U[np.arange(len(rows)), cols] = z[cols]
        new_Z = Zin[rows]
        new_Z[np.arange(len(rows)), cols] = z
        U = np.vstack([U[~inside], new_U])
        Z = np.vstack([Z[~inside], new_Z])
    return U, Z


def _dominated_boxes(
    U: np.ndarray, Z: np.ndarray, ref: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lacour's Eq. (2): disjoint boxes ``(lower, upper)`` that make up the region between a
    front and ``ref``, from the front's local upper bounds ``U`` and defining points ``Z``."""
    k = U.shape[1]
    lower = np.empty_like(U)
    upper = np.empty_like(U)
    lower[:, 0] = Z[:, 0, 0]
    upper[:, 0] = ref[0]
    if k > 1:
        running = np.maximum.accumulate(Z, axis=1)  # running[i, j] = max of Z[i, :j + 1]
        idx = np.arange(k - 1)
        lower[:, 1:] = running[:, idx, idx + 1]
        upper[:, 1:] = U[:, 1:]
    keep = np.all(upper > lower, axis=1)
    return lower[keep], upper[keep]


def non_dominated_boxes(points: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint boxes whose union is the part of ``{y <= ref}`` that no row of ``points``
    weakly dominates (lower bounds may be ``-inf``).

    Args:
        points: Losses, shape ``(n, k)`` with ``k >= 2``; rows not below ``ref`` everywhere
            are ignored.
        ref: The reference point, shape ``(k,)``.

    Returns:
        Lower and upper corners, each of shape ``(m, k)``.
    """
    ref = np.asarray(ref, dtype=float)
    pts = np.asarray(points, dtype=float)
    pts = pts[np.all(pts < ref, axis=1)]
    if len(pts) == 0:
        return np.full((1, len(ref)), -np.inf), ref[None, :].copy()
    front = np.unique(pts[pareto_mask(pts)], axis=0)  # unique rows come sorted by column 0
    U = _local_upper_bounds(front, ref)[0]
    negated = np.unique(-U, axis=0)
    negated = negated[pareto_mask(negated)]
    infinity = np.full(len(ref), np.inf)
    L, Z = _local_upper_bounds(negated, infinity)
    lower, upper = _dominated_boxes(L, Z, infinity)
    return -upper, -lower


def hypervolume_improvement(Y: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """How much each row of ``Y`` (losses, shape ``(..., k)``) adds to the hypervolume of the
    front whose non-dominated boxes are ``(lower, upper)``; shape ``Y.shape[:-1]``."""
    side = upper - np.maximum(Y[..., None, :], lower)  # (..., m, k)
    return np.prod(np.maximum(side, 0.0), axis=-1).sum(axis=-1)
