"""Gaussian-process regression and expected improvement on unit-cube points.

Package-private, used by :mod:`hyperlab.tuners._gp`. The kernel is a Matern-5/2 with one length
scale per coordinate (ARD); a categorical coordinate enters its distance as 0 (same option) or 1
(different option), so options have no order. Hyperparameters (log length scales, log signal and
noise variance) maximise the log marginal likelihood plus weak log-normal priors, with L-BFGS-B
on analytic gradients (:func:`fit_hyperparameters`). Targets are standardised; the noise
variance is at least ``min_noise`` (1e-6) of theirs.

A :class:`GaussianProcess` takes fitted hyperparameters and factorises its kernel matrix once;
predictions for many points are then a few matrix products (:meth:`GaussianProcess.predict`),
and the log expected improvement of a batch of points comes with its gradient
(:meth:`GaussianProcess.log_ei_and_grad`), so that several starting points are refined in one
L-BFGS-B run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.linalg import cho_solve, lapack, solve_triangular
from scipy.optimize import minimize
from scipy.special import erfcx, ndtr

__all__ = ["GaussianProcess", "fit_hyperparameters", "log_expected_improvement", "prior_mode"]

_SQRT5 = math.sqrt(5.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_JITTER = 1e-8
_MIN_VAR = 1e-12


def _sq_dists(A: np.ndarray, B: np.ndarray, cat: np.ndarray) -> np.ndarray:
    """Per-coordinate squared differences, shape ``(d, len(A), len(B))`` (0/1 for categorical)."""
    D = A.T[:, :, None] - B.T[:, None, :]
    D2 = D * D
    if cat.any():
        D2[cat] = (D[cat] != 0).astype(float)
    return D2


def _matern(r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Matern-5/2 of squared distance ``r2`` (unit variance), and its derivative in ``r2``."""
    r = np.sqrt(np.maximum(r2, 0.0))
    e = np.exp(-_SQRT5 * r)
    k = (1.0 + _SQRT5 * r + 5.0 / 3.0 * r2) * e
    dk = -5.0 / 6.0 * (1.0 + _SQRT5 * r) * e
    return k, dk


# ---------------------------------------------------------------- hyperparameters


def _prior(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Means and standard deviations of the log-normal priors: log length scale ~
    N(log(0.5) + log(d) / 2, 1), log signal variance ~ N(0, 1), log noise ~ N(log 1e-4, 2)."""
    mu = np.concatenate(
        [np.full(d, math.log(0.5) + 0.5 * math.log(max(d, 1))), [0.0, math.log(1e-4)]]
    )
    sd = np.concatenate([np.ones(d), [1.0, 2.0]])
    return mu, sd


def prior_mode(d: int) -> np.ndarray:
    """The default hyperparameters: the priors' modes, with noise variance 1e-3."""
    theta = _prior(d)[0]
    theta[-1] = math.log(1e-3)
    return theta


def _bounds(d: int, min_noise: float) -> list[tuple[float, float]]:
    return [(math.log(0.01), math.log(30.0))] * d + [
        (math.log(0.05), math.log(20.0)),
        (math.log(min_noise), math.log(1.0)),
    ]


def _standardise(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    mean = float(np.mean(y))
    scale = float(np.std(y)) or 1.0
    return (y - mean) / scale, mean, scale


def fit_hyperparameters(
    X: np.ndarray,
    y: np.ndarray,
    cat: np.ndarray,
    starts: Sequence[np.ndarray],
    *,
    maxiter: int = 50,
    min_noise: float = 1e-6,
) -> np.ndarray:
    """Hyperparameters maximising the penalised marginal likelihood of ``(X, y)``.

    Args:
        X: Inputs, shape ``(n, d)`` (categorical coordinates as option indices).
        y: Targets, shape ``(n,)``; standardised here.
        cat: Which coordinates are categorical, shape ``(d,)``.
        starts: Starting points of L-BFGS-B (one run each; the best result wins).
        maxiter: L-BFGS-B iterations per start at most.
        min_noise: The noise variance's lower bound, a fraction of the targets' variance.

    Returns:
        ``log`` length scales (``d``), signal variance and noise variance; ``starts[0]`` if no
        run gives a finite value.
    """
    cat = np.asarray(cat, dtype=bool)
    d = X.shape[1]
    ys = _standardise(y)[0]
    D2 = _sq_dists(X, X, cat)
    prior_mu, prior_sd = _prior(d)
    bounds = _bounds(d, min_noise)
    lo, hi = np.array(bounds).T
    best: tuple[float, np.ndarray] | None = None
    for start in starts:
        res = minimize(
            _neg_log_posterior,
            np.clip(start, lo, hi),
            args=(D2, ys, prior_mu, prior_sd),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": maxiter},
        )
        if np.isfinite(res.fun) and (best is None or res.fun < best[0]):
            best = (float(res.fun), np.asarray(res.x, dtype=float))
    return best[1] if best is not None else np.array(starts[0], dtype=float)


def _neg_log_posterior(
    theta: np.ndarray, D2: np.ndarray, y: np.ndarray, prior_mu: np.ndarray, prior_sd: np.ndarray
) -> tuple[float, np.ndarray]:
    n, d = len(y), len(theta) - 2
    inv_l2 = np.exp(-2.0 * theta[:d])
    s2, noise = math.exp(theta[-2]), math.exp(theta[-1])
    k, dk = _matern(np.tensordot(inv_l2, D2, axes=1))
    K = s2 * k
    K.flat[:: n + 1] += noise + _JITTER
    L, info = lapack.dpotrf(K, lower=1, clean=1, overwrite_a=1)
    if info:
        return 1e10, np.zeros_like(theta)
    alpha = cho_solve((L, True), y)
    nll = 0.5 * y @ alpha + np.log(np.diag(L)).sum() + n * _LOG_SQRT_2PI
    K_inv, info = lapack.dpotri(L, lower=1, overwrite_c=1)
    if info:  # pragma: no cover - a factorisation that succeeded inverts
        return 1e10, np.zeros_like(theta)
    K_inv = np.tril(K_inv)
    K_inv += np.tril(K_inv, -1).T  # dpotri fills the lower triangle only
    W = np.outer(alpha, alpha)
    W -= K_inv
    grad = np.empty_like(theta)
    # dNLL = -0.5 * sum(W * dK); d r2 / d log l_i = -2 D2_i / l_i^2
    grad[:d] = np.tensordot(D2, W * dk, axes=([1, 2], [0, 1])) * (s2 * inv_l2)
    grad[-2] = -0.5 * s2 * np.vdot(W, k)
    grad[-1] = -0.5 * noise * np.trace(W)
    z = (theta - prior_mu) / prior_sd
    nll += 0.5 * float(z @ z)
    grad += z / prior_sd
    return float(nll), grad


# ---------------------------------------------------------------- posterior


class GaussianProcess:
    """A GP with given hyperparameters, conditioned on ``(X, y)``.

    Args:
        X: Training inputs, shape ``(n, d)`` (categorical coordinates as option indices).
        y: Targets, shape ``(n,)``; standardised internally.
        cat: Which coordinates are categorical, shape ``(d,)``.
        theta: Hyperparameters (see :func:`fit_hyperparameters`); the priors' modes if None.
        liars: Points not observed yet, shape ``(p, d)``, conditioned on as if observed at the
            mean target (a constant liar): near them the variance drops and the mean rises to
            average, so concurrent proposals spread out (lying at the best value instead made
            the expected improvement peak right beside each pending point).

    Attributes:
        best: The lowest standardised target of ``y``.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        cat: np.ndarray,
        theta: np.ndarray | None = None,
        *,
        liars: np.ndarray | None = None,
    ) -> None:
        self.cat = np.asarray(cat, dtype=bool)
        self.d = X.shape[1]
        self.theta = prior_mode(self.d) if theta is None else np.asarray(theta, dtype=float)
        y_std, self.mean, self.scale = _standardise(y)
        self.best = float(y_std.min())
        self._inv_l2 = np.exp(-2.0 * self.theta[: self.d])
        self._s2 = math.exp(self.theta[-2])
        self._noise = math.exp(self.theta[-1])
        if liars is not None and len(liars):
            X = np.vstack([X, liars])
            y_std = np.append(y_std, np.zeros(len(liars)))  # at the mean: a constant liar
        self.condition(X, y_std, standardised=True)

    def condition(
        self, X: np.ndarray, y: np.ndarray, *, standardised: bool = False
    ) -> GaussianProcess:
        """Use ``(X, y)`` as the data for predictions (hyperparameters and scaling kept)."""
        self.X = X
        self.y = y if standardised else (y - self.mean) / self.scale
        n = len(X)
        # continuous coordinates scaled by the length scales and centred: squared distances to
        # many points are then one matrix product
        cont = ~self.cat
        self._w = np.sqrt(self._inv_l2[cont])
        self._center = X[:, cont].mean(axis=0) if n else np.zeros(int(cont.sum()))
        self._Xs = (X[:, cont] - self._center) * self._w
        self._Xs_sq = (self._Xs * self._Xs).sum(axis=1)
        K = self._s2 * _matern(self._r2(X))[0]
        K.flat[:: n + 1] = self._s2 + self._noise + _JITTER
        self._L = np.linalg.cholesky(K)
        self._alpha = cho_solve((self._L, True), self.y)
        return self

    def _r2(self, Z: np.ndarray) -> np.ndarray:
        """Scaled squared distances from the rows of ``Z`` to the training inputs."""
        Zs = (Z[:, ~self.cat] - self._center) * self._w
        r2 = (Zs * Zs).sum(axis=1)[:, None] + self._Xs_sq[None, :] - 2.0 * (Zs @ self._Xs.T)
        for j in np.flatnonzero(self.cat):
            r2 += self._inv_l2[j] * (Z[:, j, None] != self.X[None, :, j])
        return np.maximum(r2, 0.0)

    def predict(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Standardised posterior mean and standard deviation of the latent function at ``Z``."""
        k = self._s2 * _matern(self._r2(Z))[0]
        mu = k @ self._alpha
        V = solve_triangular(self._L, k.T, lower=True, check_finite=False)
        var = np.maximum(self._s2 - np.einsum("ij,ij->j", V, V), _MIN_VAR)
        return mu, np.sqrt(var)

    def log_ei_and_grad(self, Z: np.ndarray, best: float) -> tuple[np.ndarray, np.ndarray]:
        """Log expected improvement below ``best`` at the rows of ``Z``, and its gradient.

        Returns arrays of shapes ``(m,)`` and ``(m, d)``; the gradient is zero in categorical
        coordinates.
        """
        mu, sigma, dmu, dsigma = self.predict_and_grad(Z)
        u = (best - mu) / sigma
        log_h, dlog_h = _log_h(u)
        du = -(dmu + u[:, None] * dsigma) / sigma[:, None]
        grad = dsigma / sigma[:, None] + dlog_h[:, None] * du
        return log_h + np.log(sigma), grad

    def lcb_and_grad(self, Z: np.ndarray, kappa: float) -> tuple[np.ndarray, np.ndarray]:
        """The confidence bound ``kappa * sigma - mu`` at the rows of ``Z`` (to maximise: the
        upper confidence bound of a maximisation, in standardised units), and its gradient;
        shapes as for ``log_ei_and_grad``."""
        mu, sigma, dmu, dsigma = self.predict_and_grad(Z)
        return kappa * sigma - mu, kappa * dsigma - dmu

    def predict_and_grad(
        self, Z: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``predict``'s mean and standard deviation at the rows of ``Z``, with their
        gradients (zero in categorical coordinates)."""
        diff = Z[:, None, :] - self.X[None, :, :]  # (m, n, d)
        D2 = diff * diff
        if self.cat.any():
            D2[:, :, self.cat] = diff[:, :, self.cat] != 0
        k, dk = _matern(D2 @ self._inv_l2)
        k *= self._s2
        dk *= self._s2
        mu = k @ self._alpha
        v = cho_solve((self._L, True), k.T, check_finite=False).T  # K^-1 k, shape (m, n)
        var = self._s2 - np.einsum("ij,ij->i", k, v)
        small = var < _MIN_VAR
        sigma = np.sqrt(np.maximum(var, _MIN_VAR))
        # dk/dz_j = dk/dr2 * 2 (z_j - X_j) / l_j^2  (continuous coordinates only)
        scale = 2.0 * self._inv_l2 * ~self.cat
        dmu = np.einsum("in,ind->id", dk * self._alpha, diff) * scale
        dvar = -2.0 * np.einsum("in,ind->id", dk * v, diff) * scale
        dvar[small] = 0.0
        dsigma = dvar / (2.0 * sigma[:, None])
        return mu, sigma, dmu, dsigma


def _log_h(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(phi(u) + u * Phi(u))`` and its derivative ``Phi(u) / h(u)``, stable for u << 0."""
    log_phi = -0.5 * u * u - _LOG_SQRT_2PI
    t = np.maximum(-u, 0.0)
    mills = erfcx(t / math.sqrt(2.0)) * math.sqrt(math.pi / 2.0)  # Phi(-t) / phi(t)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        neg = log_phi + np.log(np.maximum(1.0 - t * mills, 1e-300))
        neg_d = mills / np.maximum(1.0 - t * mills, 1e-300)
        pos = np.log(np.exp(log_phi) + u * ndtr(u))
        pos_d = ndtr(u) / np.exp(pos)
    return np.where(u < 0, neg, pos), np.where(u < 0, neg_d, pos_d)


def log_expected_improvement(mu: np.ndarray, sigma: np.ndarray, best: float) -> np.ndarray:
    """Log EI of a minimisation below ``best`` for Gaussian predictions ``(mu, sigma)``."""
    return _log_h((best - mu) / sigma)[0] + np.log(sigma)
