"""Gaussian-process Bayesian optimisation with expected improvement (NNI's ``GPTuner``), or
with a confidence bound (``acquisition="ucb"``: Ray's ``BayesOptSearch`` default).

After ``n_startup_trials`` quasi-random points (a randomly shifted Kronecker sequence, see
:mod:`hyperlab.tuners._gp._sequence`), each proposal models the succeeded trials in the
unit-cube encoding with a GP (Matern-5/2, one length scale per coordinate, see
:mod:`hyperlab.tuners._gp._gaussian_process`) and proposes the point of highest expected
improvement: the best of ``n_candidates`` random points and perturbations of the best trials,
the most promising ``n_refine`` of them refined together with L-BFGS-B. Choices enter the kernel
as categories (same option or not), randint and q-types as numbers rounded after optimisation,
and sub-parameters of nested options not picked take a neutral value.

Proposed trials not yet observed count as observed at the mean value so far (a constant liar),
so concurrent proposals spread out; in a finite space no point is proposed twice while unseen
points remain. The GP's cost grows as ``n^3``: at most ``max_points`` trials (the best half and
the most recent rest) are modelled.

Fitting the hyperparameters (maximising the marginal likelihood) costs far more than using them,
and they change slowly as trials accumulate, so they are fitted to the first ``g`` succeeded
trials (in number order) for ``g`` on a fixed grid: every count up to ``_REFIT_EVERY_UNTIL``, then
counts growing by ``_REFIT_GROWTH``; the fit is kept until the grid's next count is reached, or
redone if a trial finishing late changed those first ``g``. A proposal thus depends only on the
seed, the trial number and the trials observed, as a replay after a crash requires.

Several objectives (``mode`` a sequence) get one GP each, and the acquisition is the log of the
expected hypervolume improvement over the feasible trials' front (see
:mod:`hyperlab.tuners._gp._acquisition`), estimated on quasi-random normal samples drawn from the
trial number's random stream; candidates perturb the front's points. Constraints
(``Trial.constraints``, each met when ``<= 0``) get one GP each, and the acquisition adds the log
probability that all are met (Optuna's ``GPSampler``'s rule); before any trial is feasible, that
probability alone is maximised. A trial whose objectives or constraints are not all finite
numbers is left out of those models. With one objective and no constraints, nothing of this
runs and proposals are those of the single-objective tuner.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners._gp._sequence import kronecker_point, kronecker_points
from hyperlab.tuners._history import History, UnitSpace, single_threaded_blas
from hyperlab.tuners.base import Tuner

if TYPE_CHECKING:
    from hyperlab.tuners._gp._acquisition import Acquisition

__all__ = ["GPTuner"]

_STARTUP_KEY = (2**32 - 1, 2)
_REFIT_EVERY_UNTIL = 100
"""Up to this many succeeded trials, the hyperparameters are fitted for every proposal."""
_REFIT_GROWTH = 1.1
"""Beyond, they are refitted when the succeeded trials have grown by this factor."""
_FIT_MAXITER = 50
_REFINE_MAXITER = 100
_EHVI_SAMPLES = 128
"""Normal samples per objective estimating the expected hypervolume improvement (BoTorch's)."""


def refit_count(n: int) -> int:
    """The largest count of the refit grid that is at most ``n`` (>= 1)."""
    if n <= _REFIT_EVERY_UNTIL:
        return n
    g, k = _REFIT_EVERY_UNTIL, 1
    while (following := math.floor(_REFIT_EVERY_UNTIL * _REFIT_GROWTH**k + 1e-9)) <= n:
        g, k = following, k + 1
    return g


class GPTuner(Tuner):
    """GP-based Bayesian optimisation; the most sample-efficient tuner for small budgets.

    Args:
        n_startup_trials: Quasi-random trials before the GP is used.
        n_candidates: Points scored per proposal before local refinement.
        n_refine: Best candidates refined with L-BFGS-B.
        max_points: Trials modelled at most (the GP costs ``O(n^3)``).
        max_dims: Unit-cube dimensions accepted at most (the model degrades beyond ~20).
        acquisition: ``"ei"``: the point of highest expected improvement over the best trial
            by more than ``xi``; ``"ucb"``: the point of best confidence bound, ``mean -
            kappa * std`` of the loss (``bayes_opt``'s ``ucb``; the scale of the objective
            does not change which point that is).
        kappa: The weight of the uncertainty in ``ucb`` (>= 0; ``bayes_opt``'s default).
        xi: In ``ei``, the improvement to exceed, in the objective's units (>= 0).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        n_startup_trials: int = 10,
        n_candidates: int = 1000,
        n_refine: int = 5,
        max_points: int = 300,
        max_dims: int = 40,
        acquisition: str = "ei",
        kappa: float = 2.576,
        xi: float = 0.0,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        if acquisition not in ("ei", "ucb"):
            raise ConfigError(
                f"tuner_args: gp needs acquisition to be 'ei' or 'ucb', got {acquisition!r}"
            )
        for name, value in (("kappa", kappa), ("xi", xi)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"tuner_args: gp needs {name} to be a number, got {value!r}")
            if not 0 <= value < math.inf:
                raise ConfigError(
                    f"tuner_args: gp needs {name} to be a finite number >= 0, got {value!r}"
                )
        self.acquisition = acquisition
        self.kappa = float(kappa)
        self.xi = float(xi)
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
        self._shift = self.rng(*_STARTUP_KEY).random(self.unit.d)
        # the last hyperparameter fit: (the digest of the trials it was fitted to, its result)
        self._fit: tuple[bytes, np.ndarray] | None = None

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
        X = kronecker_point(number, self._shift)[None, :]
        return self.unit.mask_inactive(self.unit.snap(X))[0]

    # ------------------------------------------------------------ the model

    def _features(self, X: np.ndarray) -> np.ndarray:
        """GP inputs: NaN (inactive) -> 0.5; categorical coordinates -> option index."""
        Z = np.where(np.isnan(X), 0.5, X)
        for j in self.unit.cat:
            k = self.unit.coords[j].size
            Z[:, j] = np.minimum(np.floor(Z[:, j] * k), k - 1)
        return Z

    def _hyperparameters(self, X: np.ndarray, loss: np.ndarray, number: np.ndarray) -> np.ndarray:
        """Hyperparameters fitted to the first ``refit_count(n)`` of the succeeded trials
        ``(X, loss, number)`` (sorted by number), reused while those trials stay the same."""
        g = refit_count(len(loss))
        X, loss, number = X[:g], loss[:g], number[:g]
        digest = hashlib.blake2b(number.tobytes() + loss.tobytes() + X.tobytes()).digest()
        if self._fit is not None and self._fit[0] == digest:
            return self._fit[1]
        from hyperlab.tuners._gp._gaussian_process import fit_hyperparameters, prior_mode

        keep = self._subset(loss)
        start = prior_mode(self.unit.d)
        alt = start.copy()
        alt[: self.unit.d] -= 1.0  # shorter length scales: a wigglier function
        theta = fit_hyperparameters(
            self._features(X[keep]), loss[keep], self._cat, [start, alt], maxiter=_FIT_MAXITER
        )
        self._fit = (digest, theta)
        return theta

    def _model(self, rng: np.random.Generator) -> np.ndarray:
        # the model needs SciPy (about 0.2 s to import): loaded with the first model-based
        # proposal, so that a run's start-up proposals need NumPy only
        from hyperlab.tuners._gp._gaussian_process import GaussianProcess

        X, loss, number = self.history.succeeded()
        theta = self._hyperparameters(X, loss, number)
        keep = self._subset(loss)
        X, loss = X[keep], loss[keep]
        pending = list(self.history.pending.values())
        liars = self._features(np.array(pending)) if pending else None
        gp = GaussianProcess(self._features(X), loss, self._cat, theta, liars=liars)
        C = self._candidates(rng, X, loss)
        best = gp.best - self.xi / gp.scale  # xi in the objective's units; gp's standardised
        scores = self._acquisition(gp, C, best)
        scores[self.history.is_seen(C)] = -np.inf
        order = np.argsort(-scores, kind="stable")[: max(self.n_refine, 1)]
        best_x, best_score = C[order[0]], scores[order[0]]
        starts = C[[i for i in order[: self.n_refine] if np.isfinite(scores[i])]]
        if len(starts):
            R = self._refine(gp, starts, best)
            refined = self._acquisition(gp, R, best)
            refined[self.history.is_seen(R)] = -np.inf
            i = int(np.argmax(refined))
            if refined[i] > best_score:
                best_x = R[i]
        return best_x

    def _acquisition(self, gp: GaussianProcess, X: np.ndarray, best: float) -> np.ndarray:
        """The acquisition at the rows of ``X`` (higher is better): log EI below ``best``, or
        the confidence bound."""
        from hyperlab.tuners._gp._gaussian_process import log_expected_improvement

        mu, sigma = gp.predict(self._features(X))
        if self.acquisition == "ucb":
            return self.kappa * sigma - mu
        return log_expected_improvement(mu, sigma, best)

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

    def _refine(self, gp: GaussianProcess, X0: np.ndarray, best: float) -> np.ndarray:
        """The rows of ``X0`` moved to local maxima of the acquisition along their active
        non-categorical coordinates, all in one L-BFGS-B run (the sum of their acquisitions is
        separable); snapped onto the space."""
        Z0 = self._features(X0)
        free = ~self._cat[None, :] & ~np.isnan(X0)
        if not free.any():  # only choices are active (options without numbers)
            return X0.copy()

        from scipy.optimize import minimize

        def objective(v: np.ndarray) -> tuple[float, np.ndarray]:
            Z = Z0.copy()
            Z[free] = v
            if self.acquisition == "ucb":
                value, grad = gp.lcb_and_grad(Z, self.kappa)
            else:
                value, grad = gp.log_ei_and_grad(Z, best)
            return -float(value.sum()), -grad[free]

        res = minimize(
            objective,
            Z0[free],
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * int(free.sum()),
            options={"maxiter": _REFINE_MAXITER},
        )
        X = X0.copy()
        X[free] = res.x
        return self.unit.mask_inactive(self.unit.snap(X))
