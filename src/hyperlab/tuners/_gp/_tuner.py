"""Gaussian-process Bayesian optimisation with expected improvement (NNI's ``GPTuner``).

After ``n_startup_trials`` scrambled-Sobol points, each proposal fits a GP (Matern-5/2, one
length scale per coordinate, see :mod:`hyperlab.tuners._gp._gaussian_process`) to the succeeded
trials in the unit-cube encoding and proposes the point of highest expected improvement: the
best of ``n_candidates`` random points and perturbations of the best trials, refined with
L-BFGS-B from the most promising few. Choices enter the kernel as categories (same option or
not), randint and q-types as numbers rounded after optimisation, and sub-parameters of nested
options not picked take a neutral value.

Proposed trials not yet observed count as observed at the best value so far (a constant liar),
so concurrent proposals spread out; in a finite space no point is proposed twice while unseen
points remain. The GP's cost grows as ``n^3``: at most ``max_points`` trials (the best half and
the most recent rest) are modelled.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial
from hyperlab.tuners._gp._gaussian_process import GaussianProcess, log_expected_improvement
from hyperlab.tuners._history import History, UnitSpace, single_threaded_blas
from hyperlab.tuners.base import Tuner

__all__ = ["GPTuner"]

_SOBOL_KEY = (2**32 - 1, 2)


class GPTuner(Tuner):
    """GP-based Bayesian optimisation; the most sample-efficient tuner for small budgets.

    Args:
        n_startup_trials: Quasi-random trials before the GP is used.
        n_candidates: Points scored per proposal before local refinement.
        n_refine: Best candidates refined with L-BFGS-B.
        max_points: Trials modelled at most (the GP costs ``O(n^3)``).
        max_dims: Unit-cube dimensions accepted at most (the model degrades beyond ~20).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        n_startup_trials: int = 10,
        n_candidates: int = 2000,
        n_refine: int = 3,
        max_points: int = 300,
        max_dims: int = 40,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        for name, value, low in (
            ("n_startup_trials", n_startup_trials, 1),
            ("n_candidates", n_candidates, 1),
            ("n_refine", n_refine, 0),
            ("max_points", max_points, 10),
            ("max_dims", max_dims, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(
                    f"tuner_args: gp needs {name} to be an integer >= {low}, got {value!r}"
                )
        self.unit = UnitSpace(space)
        if self.unit.d > max_dims:
            raise SearchSpaceError(
                f"{self.unit.coords[max_dims].path}: the gp tuner models at most max_dims="
                f"{max_dims} unit-cube dimensions (nested parameters included), got "
                f"{self.unit.d}; use tpe, or raise max_dims"
            )
        self.n_startup_trials = n_startup_trials
        self.n_candidates = n_candidates
        self.n_refine = n_refine
        self.max_points = max_points
        self.history = History(self.unit, mode)
        self._cat = np.array([c.kind == "cat" for c in self.unit.coords], dtype=bool)

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        if self.history.n_ok < self.n_startup_trials or self.unit.d == 0:
            x = self._startup(number)
        else:
            with single_threaded_blas():
                x = self._model(rng)
        if self.history.is_seen(x[None, :])[0]:
            x = self.history.unseen(rng, x)
        self.history.propose(number, x)
        return self.unit.decode(x)

    def _startup(self, number: int) -> np.ndarray:
        if self.unit.d == 0:
            return np.zeros(0)
        sobol = qmc.Sobol(self.unit.d, scramble=True, seed=self.rng(*_SOBOL_KEY))
        if number:
            sobol.fast_forward(number)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X = sobol.random(1)
        return self.unit.mask_inactive(self.unit.snap(X))[0]

    # ------------------------------------------------------------ the model

    def _features(self, X: np.ndarray) -> np.ndarray:
        """GP inputs: NaN (inactive) -> 0.5; categorical coordinates -> option index."""
        Z = np.where(np.isnan(X), 0.5, X)
        for j in self.unit.cat:
            k = self.unit.coords[j].size
            Z[:, j] = np.minimum(np.floor(Z[:, j] * k), k - 1)
        return Z

    def _model(self, rng: np.random.Generator) -> np.ndarray:
        X, loss, _ = self.history.succeeded()
        keep = self._subset(loss)
        X, loss = X[keep], loss[keep]
        gp = GaussianProcess(self._features(X), loss, self._cat).fit()
        best = float(gp.y.min())
        if self.history.pending:  # constant liar: pending points at the best value
            P = np.array(list(self.history.pending.values()))
            Z = np.vstack([gp.X, self._features(P)])
            gp.condition(Z, np.append(gp.y, np.full(len(P), best)), standardised=True)
        C = self._candidates(rng, X, loss)
        scores = log_expected_improvement(*gp.predict(self._features(C)), best)
        seen = self.history.is_seen(C)
        scores[seen] = -np.inf
        order = np.argsort(-scores)[: self.n_refine]
        best_x, best_score = C[order[0]], scores[order[0]]
        for i in order:
            if not np.isfinite(scores[i]):
                break
            active = ~self._cat & ~np.isnan(C[i])  # the candidate's free coordinates
            if not active.any():  # only choices are active (an option without numbers)
                continue
            x = self._refine(gp, C[i], active, best)
            s = log_expected_improvement(*gp.predict(self._features(x[None, :])), best)[0]
            if s > best_score and not self.history.is_seen(x[None, :])[0]:
                best_x, best_score = x, s
        return best_x

    def _subset(self, loss: np.ndarray) -> np.ndarray:
        """Rows to model: all, or the best half of ``max_points`` and the most recent rest."""
        n = len(loss)
        if n <= self.max_points:
            return np.arange(n)
        best = np.argsort(loss, kind="stable")[: self.max_points // 2]
        rest = np.setdiff1d(np.arange(n), best)[-(self.max_points - best.size) :]
        return np.sort(np.concatenate([best, rest]))

    def _candidates(self, rng: np.random.Generator, X: np.ndarray, loss: np.ndarray) -> np.ndarray:
        n_local = self.n_candidates // 2
        top = X[np.argsort(loss, kind="stable")[:10]]
        base = top[rng.integers(0, len(top), n_local)]
        scale = rng.choice([0.01, 0.05, 0.2], size=(n_local, 1))
        local = base + scale * rng.standard_normal(base.shape)
        flip = rng.random(base.shape) < 0.1  # categorical: sometimes switch option
        noise = rng.random(base.shape)
        local[:, self._cat] = np.where(flip, noise, base)[:, self._cat]
        local = np.where(np.isnan(local), noise, np.clip(local, 0.0, 1.0))
        glob = rng.random((self.n_candidates - n_local, self.unit.d))
        C = np.vstack([local, glob])
        return self.unit.mask_inactive(self.unit.snap(C))

    def _refine(
        self, gp: GaussianProcess, x0: np.ndarray, active: np.ndarray, best: float
    ) -> np.ndarray:
        """``x0`` moved by L-BFGS-B along its ``active`` coordinates (at least one: the active
        non-categorical ones) to a local maximum of the expected improvement."""
        z0 = self._features(x0[None, :])[0]

        def objective(v: np.ndarray) -> tuple[float, np.ndarray]:
            z = z0.copy()
            z[active] = v
            value, grad = gp.log_ei_and_grad(z, best)
            return -value, -grad[active]

        res = minimize(
            objective,
            z0[active],
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * int(active.sum()),
            options={"maxiter": 50},
        )
        x = x0.copy()
        x[active] = res.x
        return self.unit.mask_inactive(self.unit.snap(x[None, :]))[0]
