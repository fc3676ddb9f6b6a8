"""Parzen estimators over unit-cube coordinates: the two densities of TPE.

Package-private. A :class:`Parzen` is a weighted mixture of product kernels, one kernel per
observation plus a broad prior kernel. Each kernel is, per coordinate:

- continuous: a normal truncated to [0, 1], centred on the observation;
- discrete (randint, q-types): the mass that normal puts on the value's cell, so the density
  of a value is the probability of drawing it;
- categorical: the observed option with weight 1 plus ``prior_weight / n_kernels`` spread over
  every option.

Bandwidths follow Optuna's rule (the larger gap to the neighbouring observations in each
coordinate, clipped to ``[1 / min(100, n_kernels), 1]``) times ``bandwidth``. Log-densities of
all candidates under all kernels are computed with a few matrix products.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from hyperlab.tuners._history import UnitSpace

__all__ = ["Parzen", "log_gauss_mass"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x <= 0``, accurately."""
    with np.errstate(divide="ignore"):
        return np.where(x > -0.6931, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_gauss_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(Phi(b) - Phi(a))`` for ``a <= b``, accurate in both tails."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    # fast path: the difference of CDFs on the side of 0 where they are not close to 1
    upper = a > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        mass = _cdf_difference(upper, a, b)
        out = np.log(mass)
    bad = ~(mass > 1e-10)  # lost digits (or underflow): redo those in log space
    if bad.any():
        out[bad] = _log_gauss_mass_tails(a[bad], b[bad])
    return out


def _cdf_difference(upper: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``Phi(-a) - Phi(-b)`` where ``upper``, else ``Phi(b) - Phi(a)``: the same values as
    ``np.where(upper, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))``, with half the calls of
    ``ndtr`` (each side's arguments picked first, then one ``ndtr`` per bound)."""
    return ndtr(np.where(upper, -a, b)) - ndtr(np.where(upper, -b, a))


def _log_gauss_mass_tails(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape)
    left = b <= 0
    right = a > 0
    mid = ~(left | right)
    with np.errstate(divide="ignore", invalid="ignore"):
        la, lb = log_ndtr(a[left]), log_ndtr(b[left])
        out[left] = lb + _log1mexp(la - lb)
        la, lb = log_ndtr(-b[right]), log_ndtr(-a[right])
        out[right] = lb + _log1mexp(la - lb)
        out[mid] = np.log1p(-ndtr(a[mid]) - ndtr(-b[mid]))
    return out


def default_weights(n: int) -> np.ndarray:
    """Optuna's kernel weights: 1 for the 25 newest, a ramp from ``1/n`` for older ones."""
    if n < 25:
        return np.ones(n)
    return np.concatenate([np.linspace(1.0 / n, 1.0, num=n - 25), np.ones(25)])


class Parzen:
    """A mixture of product kernels over some unit-cube coordinates.

    Args:
        unit: The space's unit-cube view.
        cols: The columns this density covers.
        X: Observations, shape ``(n, len(cols))``, no NaN.
        weights: One non-negative weight per observation.
        prior_weight: Weight of the prior kernel (uniform over the cube).
        bandwidth: Factor on every bandwidth.
        magic_clip: Clip bandwidths below at ``1 / min(100, n + 1)`` (else at ``1e-3``).
    """

    def __init__(
        self,
        unit: UnitSpace,
        cols: list[int],
        X: np.ndarray,
        weights: np.ndarray,
        *,
        prior_weight: float = 1.0,
        bandwidth: float = 1.0,
        magic_clip: bool = True,
    ) -> None:
        n = len(X)
        kinds = [unit.coords[j].kind for j in cols]
        self.unit = unit
        self.cols = cols
        self.num = [i for i, k in enumerate(kinds) if k != "cat"]  # positions within cols
        self.cont = [i for i, k in enumerate(kinds) if k == "cont"]
        self.disc = [i for i, k in enumerate(kinds) if k == "disc"]
        self.cat = [i for i, k in enumerate(kinds) if k == "cat"]
        w = np.append(np.asarray(weights, float), prior_weight if n else 1.0)
        self.weights = w / w.sum()
        self.log_w = np.log(np.maximum(self.weights, 1e-300))
        # numeric coordinates: centres and bandwidths, the prior kernel last
        mus = X[:, self.num]
        sig = _bandwidths(mus, magic_clip) * bandwidth if n else np.ones((0, len(self.num)))
        self.mu = np.vstack([mus, np.full((1, len(self.num)), 0.5)])
        self.sigma = np.vstack([np.minimum(sig, 1.0), np.ones((1, len(self.num)))])
        self.log_z = log_gauss_mass(-self.mu / self.sigma, (1 - self.mu) / self.sigma)
        # categorical coordinates: one probability row per kernel
        self.tables: list[np.ndarray] = []
        self.log_tables: list[np.ndarray] = []  # their logarithms, for log_pdf
        for i in self.cat:
            k = unit.coords[cols[i]].size
            table = np.full((n + 1, k), prior_weight / (n + 1))
            if n:
                idx = np.minimum((X[:, i] * k).astype(np.int64), k - 1)
                table[np.arange(n), idx] += 1.0
            table[n] = 1.0
            self.tables.append(table / table.sum(axis=1, keepdims=True))
            self.log_tables.append(np.log(self.tables[-1]))

    @property
    def n_kernels(self) -> int:
        """Observations plus the prior kernel."""
        return len(self.weights)

    # ------------------------------------------------------------ sampling

    def pick(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` kernel indices drawn by weight."""
        return rng.choice(len(self.weights), size=size, p=self.weights)

    def sample(self, rng: np.random.Generator, kernels: np.ndarray) -> np.ndarray:
        """One draw from each of ``kernels``; shape ``(len(kernels), len(cols))``, snapped."""
        size = len(kernels)
        out = np.empty((size, len(self.cols)))
        if self.num:
            mu, sigma = self.mu[kernels], self.sigma[kernels]
            lo, hi = ndtr(-mu / sigma), ndtr((1 - mu) / sigma)
            p = lo + rng.random(mu.shape) * (hi - lo)
            out[:, self.num] = np.clip(mu + sigma * ndtri(np.clip(p, 1e-300, 1.0)), 0.0, 1.0)
        for i, table in zip(self.cat, self.tables, strict=True):
            cum = np.cumsum(table[kernels], axis=1)
            cum[:, -1] = 1.0
            idx = (cum < rng.random(size)[:, None]).sum(axis=1)
            out[:, i] = (idx + 0.5) / table.shape[1]
        for i in self.disc:
            j = self.cols[i]
            out[:, i] = self.unit.snap_column(j, out[:, i])
        return out

    # ------------------------------------------------------------ density

    def log_pdf(self, Y: np.ndarray) -> np.ndarray:
        """Log-density of each row of ``Y`` (shape ``(m, len(cols))``, snapped)."""
        m = len(Y)
        acc = np.broadcast_to(self.log_w, (m, len(self.log_w))).copy()
        if self.cont:
            c = self.num_positions(self.cont)
            mu, sigma = self.mu[:, c], self.sigma[:, c]
            inv = 1.0 / (sigma * sigma)
            y = Y[:, self.cont]
            sq = (y * y) @ inv.T - 2.0 * y @ (mu * inv).T + (mu * mu * inv).sum(axis=1)
            const = np.log(sigma).sum(axis=1) + self.log_z[:, c].sum(axis=1)
            acc += -0.5 * np.maximum(sq, 0.0) - const - len(self.cont) * _LOG_SQRT_2PI
        for i in self.disc:
            j = self.num.index(i)
            mu, sigma = self.mu[:, j], self.sigma[:, j]
            values, inverse = np.unique(Y[:, i], return_inverse=True)
            a, b = self.unit.cells(self.cols[i], values)
            # plain CDF differences: a kernel's mass only matters when it is not negligible
            # next to the prior kernel's, which never is (so no tail-accurate path here)
            lo, hi = (a[:, None] - mu) / sigma, (b[:, None] - mu) / sigma
            upper = lo > 0
            mass = _cdf_difference(upper, lo, hi)
            log_mass = np.log(np.maximum(mass, 1e-300))
            acc += (log_mass - self.log_z[:, j])[inverse.ravel()]
        for i, log_table in zip(self.cat, self.log_tables, strict=True):
            k = log_table.shape[1]
            idx = np.minimum((Y[:, i] * k).astype(np.int64), k - 1)
            acc += log_table[:, idx].T
        top = acc.max(axis=1)
        return top + np.log(np.exp(acc - top[:, None]).sum(axis=1))

    def num_positions(self, positions: list[int]) -> list[int]:
        """Columns of ``mu``/``sigma`` for positions (within ``cols``) of numeric coordinates."""
        return [self.num.index(i) for i in positions]


def _bandwidths(mus: np.ndarray, magic_clip: bool) -> np.ndarray:
    """Per observation and coordinate: the larger gap to its neighbours (ends: inner gap)."""
    n, m = mus.shape
    if m == 0:
        return np.ones((n, 0))
    order = np.argsort(mus, axis=0)
    columns = np.arange(m)
    s = mus[order, columns]  # np.take_along_axis(mus, order, axis=0), without its overhead
    padded = np.vstack([np.zeros((1, m)), s, np.ones((1, m))])
    gaps = np.maximum(padded[1:-1] - padded[:-2], padded[2:] - padded[1:-1])
    if n >= 2:  # Optuna's consider_endpoints=False: the outermost use their inner gap
        gaps[0] = padded[2] - padded[1]
        gaps[-1] = padded[-2] - padded[-3]
    low = 1.0 / min(100.0, n + 2.0) if magic_clip else 1e-3
    out = np.empty_like(gaps)
    out[order, columns] = np.clip(gaps, low, 1.0)  # np.put_along_axis(out, order, ..., axis=0)
    return out
