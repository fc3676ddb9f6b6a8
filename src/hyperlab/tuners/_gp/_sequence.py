"""A randomly shifted Kronecker sequence: evenly spread start-up points, cheap to import.

Package-private, used by :mod:`hyperlab.tuners._gp` for its start-up trials. Point ``i`` of the
``d``-dimensional sequence is ``frac(shift + (i + 1) * alpha)`` with ``alpha_j = phi_d^-j`` and
``phi_d`` the positive root of ``x^(d+1) = x + 1`` (Roberts' R_d sequence, a low-discrepancy
sequence in any dimension); a random ``shift`` (a Cranley-Patterson rotation) makes it a
randomised quasi-Monte-Carlo sequence. Any point is computed directly from its index, so no state
is kept, and only numpy is needed (``scipy.stats.qmc`` costs about half a second to import).
"""

from __future__ import annotations

import numpy as np

__all__ = ["kronecker_point", "kronecker_points"]


def _phi(d: int) -> float:
    """The positive root of ``x^(d+1) = x + 1`` (the golden ratio for ``d = 1``)."""
    x = 2.0
    for _ in range(60):  # fixed-point iteration x <- (1 + x)^(1 / (d + 1)); contracts fast
        x = (1.0 + x) ** (1.0 / (d + 1))
    return x


def kronecker_point(index: int, shift: np.ndarray) -> np.ndarray:
    """Point ``index`` (>= 0) of the R_d sequence rotated by ``shift``, in ``[0, 1)^d``.

    Args:
        index: Position in the sequence.
        shift: The random rotation, shape ``(d,)``, values in ``[0, 1)``.
    """
    return kronecker_points(np.array([index]), shift)[0]


def kronecker_points(indices: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Points ``indices`` (>= 0) of the R_d sequence rotated by ``shift``, shape
    ``(len(indices), d)``."""
    d = len(shift)
    alpha = _phi(d) ** -np.arange(1, d + 1, dtype=float)
    steps = (np.asarray(indices, dtype=float) + 1.0)[:, None] * alpha
    return np.mod(shift + np.mod(steps, 1.0), 1.0)
