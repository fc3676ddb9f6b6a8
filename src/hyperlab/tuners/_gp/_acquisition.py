"""Acquisition functions of the ``gp`` tuner, on GP inputs (see ``GPTuner._features``).

Package-private. Each acquisition is called on a batch of points for its values (higher is
better) and, through ``with_grad``, for its gradient too, which L-BFGS-B follows to refine the
best candidates. With one objective: log expected improvement (:class:`LogEI`) or the
confidence bound (:class:`UCB`). With several: the log of the expected hypervolume improvement
(:class:`LogEHVI`), estimated on fixed quasi-random normal samples of every objective's
posterior, so that it is a smooth deterministic function of the point (as in Optuna's
``GPSampler`` and BoTorch's ``qLogEHVI``, Daulton et al. 2020). Constraints add the log
probability that each constraint is met (:class:`LogFeasibility`, Gardner et al. 2014, as
Optuna's ``GPSampler``), the constraints' GPs taken as independent; before any feasible trial,
that probability alone is maximised.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from scipy.special import log_ndtr

from hyperlab.pareto import pareto_mask
from hyperlab.tuners._gp._boxes import non_dominated_boxes
from hyperlab.tuners._gp._gaussian_process import GaussianProcess, log_expected_improvement

__all__ = ["UCB", "Acquisition", "LogEHVI", "LogEI", "LogFeasibility", "Sum"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_EPS = 1e-12
"""A box's side in the hypervolume improvement is at least this, so its log stays finite."""
_CHUNK = 2_000_000
"""Array elements per batch in ``LogEHVI`` (points x samples x boxes x objectives)."""


class Acquisition(Protocol):
    """What the tuner maximises over GP inputs ``Z`` of shape ``(m, d)``."""

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        """Values at the rows of ``Z``, shape ``(m,)``."""

    def with_grad(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Values and gradients, shapes ``(m,)`` and ``(m, d)``."""


class LogEI:
    """Log expected improvement below ``best`` (standardised) of a minimised GP."""

    def __init__(self, gp: GaussianProcess, best: float) -> None:
        self.gp, self.best = gp, best

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        mu, sigma = self.gp.predict(Z)
        return log_expected_improvement(mu, sigma, self.best)

    def with_grad(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.gp.log_ei_and_grad(Z, self.best)


class UCB:
    """The confidence bound ``kappa * sigma - mu`` of a minimised GP."""

    def __init__(self, gp: GaussianProcess, kappa: float) -> None:
        self.gp, self.kappa = gp, kappa

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        mu, sigma = self.gp.predict(Z)
        return self.kappa * sigma - mu

    def with_grad(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.gp.lcb_and_grad(Z, self.kappa)


class LogFeasibility:
    """The log probability that every constraint GP is at most its threshold.

    Args:
        gps: One GP per constraint (standardised internally).
        thresholds: Each GP's feasibility bound in its standardised units.
    """

    def __init__(self, gps: Sequence[GaussianProcess], thresholds: Sequence[float]) -> None:
        self.gps, self.thresholds = list(gps), list(thresholds)

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        total = np.zeros(len(Z))
        for gp, t in zip(self.gps, self.thresholds, strict=True):
            mu, sigma = gp.predict(Z)
            total += log_ndtr((t - mu) / sigma)
        return total

    def with_grad(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total, grad = np.zeros(len(Z)), np.zeros(Z.shape)
        for gp, t in zip(self.gps, self.thresholds, strict=True):
            mu, sigma, dmu, dsigma = gp.predict_and_grad(Z)
            u = (t - mu) / sigma
            log_cdf = log_ndtr(u)
            total += log_cdf
            ratio = np.exp(-0.5 * u * u - _LOG_SQRT_2PI - log_cdf)  # phi(u) / Phi(u)
            grad -= (ratio / sigma)[:, None] * (dmu + u[:, None] * dsigma)
        return total, grad


class LogEHVI:
    """Log expected hypervolume improvement over a front, for minimised objectives.

    Args:
        gps: One GP per objective.
        front: The observed losses to improve on, standardised as each GP's targets, shape
            ``(n, k)`` (only its non-dominated rows matter).
        samples: Standard normal samples, shape ``(s, k)``, fixed for the whole proposal.

    The reference point is Optuna's with two objectives, 10% beyond the worst of ``front`` in
    each, and with more, 10% of the front's extent beyond its worst point (its nadir). On
    ``benchmarks/multiobjective.py``'s tuning seeds, Optuna's rule made the GP probe the box's
    corners on DTLZ2 (3 objectives, 12 variables: hypervolume 0.17-0.22 at 200 trials, 0.54
    with the nadir's), while the nadir's lost on two objectives (ZDT3: 74.1 against 83.1).
    """

    def __init__(
        self, gps: Sequence[GaussianProcess], front: np.ndarray, samples: np.ndarray
    ) -> None:
        self.gps, self.samples = list(gps), samples
        if front.shape[1] > 2:
            best = front[pareto_mask(front)]
            low, high = best.min(axis=0), best.max(axis=0)
            ref = high + 0.1 * np.maximum(high - low, 0.1)
        else:
            worst = front.max(axis=0)
            ref = np.nextafter(np.maximum(1.1 * worst, 0.9 * worst), np.inf)
        self.lower, self.upper = non_dominated_boxes(front, ref)
        self.width = np.maximum(self.upper - self.lower, _EPS)  # inf where lower is -inf

    def subsampled(self, count: int) -> LogEHVI:
        """The same acquisition estimated on the first ``count`` samples only: cheaper, to rank
        many candidates."""
        cheap = copy.copy(self)
        cheap.samples = self.samples[:count]
        return cheap

    def _moments(
        self, Z: np.ndarray, grad: bool
    ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
        mus, sigmas, dmus, dsigmas = [], [], [], []
        for gp in self.gps:
            if grad:
                mu, sigma, dmu, dsigma = gp.predict_and_grad(Z)
                dmus.append(dmu)
                dsigmas.append(dsigma)
            else:
                mu, sigma = gp.predict(Z)
            mus.append(mu)
            sigmas.append(sigma)
        return np.stack(mus, axis=1), np.stack(sigmas, axis=1), dmus, dsigmas

    def _log_terms(self, mu: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each sample's log improvement per box, shape ``(m, s, b)``, and the clipped box
        sides, shape ``(m, s, b, k)``."""
        Y = mu[:, None, :] + sigma[:, None, :] * self.samples[None, :, :]  # (m, s, k)
        side = np.clip(self.upper - Y[:, :, None, :], _EPS, self.width)
        return np.log(side).sum(axis=-1), side

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        mu, sigma, _, _ = self._moments(Z, grad=False)
        size = max(1, _CHUNK // max(1, self.samples.size * len(self.lower)))
        out = np.empty(len(Z))
        for a in range(0, len(Z), size):
            terms = self._log_terms(mu[a : a + size], sigma[a : a + size])[0]
            out[a : a + size] = _logsumexp(terms.reshape(len(terms), -1))
        return out - math.log(len(self.samples))

    def with_grad(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, sigma, dmus, dsigmas = self._moments(Z, grad=True)
        terms, side = self._log_terms(mu, sigma)
        flat = terms.reshape(len(terms), -1)
        value = _logsumexp(flat)
        weight = np.exp(flat - value[:, None]).reshape(terms.shape)  # softmax over (s, b)
        # d log(side) / dY is -1 / side where the side is not clipped
        free = (side > _EPS) & (side < self.width)
        dY = -(weight[..., None] * np.where(free, 1.0 / side, 0.0)).sum(axis=2)  # (m, s, k)
        grad = np.zeros(Z.shape)
        for j in range(len(self.gps)):
            grad += dY[:, :, j].sum(axis=1)[:, None] * dmus[j]
            grad += (dY[:, :, j] @ self.samples[:, j])[:, None] * dsigmas[j]
        return value - math.log(len(self.samples)), grad


class Sum:
    """The sum of acquisitions (an objective's log acquisition and the log feasibility)."""

    def __init__(self, *parts: Acquisition) -> None:
        self.parts = parts

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        return np.sum([part(Z) for part in self.parts], axis=0)

    def with_grad(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, grads = zip(*(part.with_grad(Z) for part in self.parts), strict=True)
        return np.sum(values, axis=0), np.sum(grads, axis=0)


def _logsumexp(a: np.ndarray) -> np.ndarray:
    top = a.max(axis=1)
    return top + np.log(np.exp(a - top[:, None]).sum(axis=1))
