"""``_cdf_difference`` gives, bit for bit, the values of the two-sided expression it replaces,
so that the same seed still makes the same proposals."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from hyperlab.tuners._tpe._parzen import _cdf_difference


def test_same_bits_as_both_sides_computed() -> None:
    rng = np.random.default_rng(7)
    a = np.concatenate(
        [rng.normal(0, 3, 5000), [0.0, -0.0, 40.0, -40.0, np.inf, -np.inf, np.nan, 1e-300]]
    )
    b = a + np.abs(rng.normal(0, 2, a.size))
    b[-8:] = [0.5, 0.0, 41.0, -39.0, np.inf, np.inf, 1.0, np.nan]
    upper = a > 0
    with np.errstate(invalid="ignore"):
        expected = np.where(upper, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))
        got = _cdf_difference(upper, a, b)
    assert got.tobytes() == expected.tobytes()
    grid_a, grid_b = a.reshape(-1, 8)[:, :4], b.reshape(-1, 8)[:, :4]  # two dimensions too
    with np.errstate(invalid="ignore"):
        two = _cdf_difference(grid_a > 0, grid_a, grid_b)
        plain = np.where(grid_a > 0, ndtr(-grid_a) - ndtr(-grid_b), ndtr(grid_b) - ndtr(grid_a))
    assert two.tobytes() == plain.tobytes()
