"""Gaussian-process regression and expected improvement on unit-cube points.

Package-private, used by :mod:`hyperlab.tuners._gp`. The kernel is a Matern-5/2 with one length
scale per coordinate (ARD); a categorical coordinate enters its distance as 0 (same option) or 1
(different option), so options have no order. Hyperparameters (length scales, signal and noise
variance) maximise the log marginal likelihood plus weak log-normal priors, with L-BFGS-B on
analytic gradients. Targets are standardised.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve, lapack, solve_triangular
from scipy.optimize import minimize
from scipy.special import erfcx, ndtr

__all__ = ["GaussianProcess", "log_expected_improvement"]

_SQRT5 = math.sqrt(5.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_JITTER = 1e-8


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


class GaussianProcess:
    """A fitted GP: ``fit`` the hyperparameters, then ``condition`` and ``predict``.

    Args:
        X: Training inputs, shape ``(n, d)`` (categorical coordinates as option indices).
        y: Targets, shape ``(n,)``; standardised internally.
        cat: Which coordinates are categorical, shape ``(d,)``.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, cat: np.ndarray) -> None:
        self.cat = np.asarray(cat, dtype=bool)
        self.d = X.shape[1]
        self.mean = float(np.mean(y))
        self.scale = float(np.std(y)) or 1.0
        self.X_fit = X
        self.y_fit = (y - self.mean) / self.scale
        # priors: log length scale ~ N(log(0.5) + log(d) / 2, 1), log signal ~ N(0, 1),
        # log noise ~ N(log 1e-4, 2)
        self._prior_mu = np.concatenate(
            [np.full(self.d, math.log(0.5) + 0.5 * math.log(max(self.d, 1))), [0.0, math.log(1e-4)]]
        )
        self._prior_sd = np.concatenate([np.ones(self.d), [1.0, 2.0]])
        self.theta = self._prior_mu.copy()
        self.theta[-1] = math.log(1e-3)
        self._bounds = [(math.log(0.01), math.log(30.0))] * self.d + [
            (math.log(0.05), math.log(20.0)),
            (math.log(1e-6), math.log(1.0)),
        ]

    # ------------------------------------------------------------ hyperparameters

    def fit(self, maxiter: int = 50) -> GaussianProcess:
        """Maximise the penalised marginal likelihood from the prior's mode; return self."""
        D2 = _sq_dists(self.X_fit, self.X_fit, self.cat)
        starts = [self.theta.copy()]
        alt = self.theta.copy()
        alt[: self.d] -= 1.0
        starts.append(alt)
        best: tuple[float, np.ndarray] | None = None
        for start in starts:
            try:
                res = minimize(
                    self._neg_log_posterior,
                    start,
                    args=(D2,),
                    jac=True,
                    method="L-BFGS-B",
                    bounds=self._bounds,
                    options={"maxiter": maxiter},
                )
            except np.linalg.LinAlgError:  # pragma: no cover - jitter keeps K positive
                continue
            if np.isfinite(res.fun) and (best is None or res.fun < best[0]):
                best = (float(res.fun), res.x)
        if best is not None:
            self.theta = best[1]
        return self.condition(self.X_fit, self.y_fit, standardised=True)

    def _neg_log_posterior(self, theta: np.ndarray, D2: np.ndarray) -> tuple[float, np.ndarray]:
        n = len(self.y_fit)
        inv_l2 = np.exp(-2.0 * theta[: self.d])
        s2, noise = math.exp(theta[-2]), math.exp(theta[-1])
        r2 = np.tensordot(inv_l2, D2, axes=1)
        k, dk = _matern(r2)
        K = s2 * k
        K[np.diag_indices(n)] += noise + _JITTER
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            return 1e10, np.zeros_like(theta)
        alpha = cho_solve((L, True), self.y_fit)
        nll = 0.5 * self.y_fit @ alpha + np.log(np.diag(L)).sum() + n * _LOG_SQRT_2PI
        K_inv, info = lapack.dpotri(L, lower=1)
        if info:
            return 1e10, np.zeros_like(theta)
        K_inv = np.tril(K_inv) + np.tril(K_inv, -1).T  # dpotri fills the lower triangle only
        W = np.outer(alpha, alpha) - K_inv
        grad = np.empty_like(theta)
        M = W * (s2 * dk)
        # d r2 / d log l_i = -2 D2_i / l_i^2 ; dNLL = -0.5 * sum(W * dK)
        grad[: self.d] = np.tensordot(D2, M, axes=([1, 2], [0, 1])) * inv_l2
        grad[-2] = -0.5 * np.sum(W * (s2 * k))
        grad[-1] = -0.5 * noise * np.trace(W)
        z = (theta - self._prior_mu) / self._prior_sd
        nll += 0.5 * float(z @ z)
        grad += z / self._prior_sd
        return float(nll), grad

    # ------------------------------------------------------------ posterior

    def condition(
        self, X: np.ndarray, y: np.ndarray, *, standardised: bool = False
    ) -> GaussianProcess:
        """Use ``(X, y)`` as the data for predictions (fitted hyperparameters kept)."""
        self.X = X
        self.y = y if standardised else (y - self.mean) / self.scale
        self._inv_l2 = np.exp(-2.0 * self.theta[: self.d])
        self._s2 = math.exp(self.theta[-2])
        noise = math.exp(self.theta[-1])
        K = self._s2 * _matern(np.tensordot(self._inv_l2, _sq_dists(X, X, self.cat), axes=1))[0]
        K[np.diag_indices(len(X))] += noise + _JITTER
        self._L = np.linalg.cholesky(K)
        self._alpha = cho_solve((self._L, True), self.y)
        return self

    def predict(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Standardised posterior mean and standard deviation of the latent function at ``Z``."""
        k, _, _ = self._cross(Z)
        mu = k @ self._alpha
        V = solve_triangular(self._L, k.T, lower=True)
        var = np.maximum(self._s2 - (V * V).sum(axis=0), 1e-12)
        return mu, np.sqrt(var)

    def _cross(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        D2 = _sq_dists(Z, self.X, self.cat)
        k, dk = _matern(np.tensordot(self._inv_l2, D2, axes=1))
        return self._s2 * k, self._s2 * dk, D2

    def log_ei_and_grad(self, z: np.ndarray, best: float) -> tuple[float, np.ndarray]:
        """Log expected improvement below ``best`` at one point, and its gradient.

        The gradient is zero in categorical coordinates.
        """
        Z = z[None, :]
        k, dk, _ = self._cross(Z)
        k, dk = k[0], dk[0]
        mu = float(k @ self._alpha)
        v = cho_solve((self._L, True), k)
        var = max(self._s2 - float(k @ v), 1e-12)
        sigma = math.sqrt(var)
        # dk/dz_j = dk/dr2 * 2 (z_j - X_aj) / l_j^2  (continuous coordinates only)
        diff = (z[None, :] - self.X) * self._inv_l2[None, :]
        J = 2.0 * dk[:, None] * diff
        J[:, self.cat] = 0.0
        dmu = J.T @ self._alpha
        dsigma = -(J.T @ v) / sigma
        u = (best - mu) / sigma
        log_ei, dlog_du = _log_h(np.array([u]))
        du = -(dmu + u * dsigma) / sigma
        grad = dsigma / sigma + dlog_du[0] * du
        return float(log_ei[0] + math.log(sigma)), grad


def _log_h(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(phi(u) + u * Phi(u))`` and its derivative ``Phi(u) / h(u)``, stable for u << 0."""
    log_phi = -0.5 * u * u - _LOG_SQRT_2PI
    t = np.maximum(-u, 0.0)
    mills = erfcx(t / math.sqrt(2.0)) * math.sqrt(math.pi / 2.0)  # Phi(-t) / phi(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = log_phi + np.log(np.maximum(1.0 - t * mills, 1e-300))
        neg_d = mills / np.maximum(1.0 - t * mills, 1e-300)
        pos = np.log(np.exp(log_phi) + u * ndtr(u))
        pos_d = ndtr(u) / np.exp(pos)
    return np.where(u < 0, neg, pos), np.where(u < 0, neg_d, pos_d)


def log_expected_improvement(mu: np.ndarray, sigma: np.ndarray, best: float) -> np.ndarray:
    """Log EI of a minimisation below ``best`` for Gaussian predictions ``(mu, sigma)``."""
    return _log_h((best - mu) / sigma)[0] + np.log(sigma)
