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
    from hyperlab.tuners._gp._gaussian_process import GaussianProcess

__all__ = ["GPTuner"]

_STARTUP_KEY = (2**32 - 1, 2)
_REFIT_EVERY_UNTIL = 100
"""Up to this many succeeded trials, the hyperparameters are fitted for every proposal."""
_REFIT_GROWTH = 1.1
"""Beyond, they are refitted when the succeeded trials have grown by this factor."""
_FIT_MAXITER = 50
_MIN_NOISE = 1e-9
"""With one objective and no constraints, the noise variance's lower bound, a fraction of the
losses' variance. With 1e-6, the GP could not resolve a smooth minimum below about 1e-3 of the
values' spread: on BBOB f01 in 5 dimensions it stalled at a median regret of 6e-4 from trial 50
on, and reaches 4.4e-5 at 100 trials with 1e-9 (tuning seeds 100-104 of
``benchmarks/quality.py``)."""
_MIN_NOISE_OUTCOMES = 1e-6
"""The same with several objectives or constraints (chosen with it; 1e-9 let proposals stray
outside a constraint's boundary more often)."""
_REFINE_MAXITER = 100
_EHVI_SAMPLES = 128
"""Normal samples per objective estimating the expected hypervolume improvement (BoTorch's)."""
_SCREEN_SAMPLES = 32
"""The first samples only, to rank the candidates (the best ``n_refine`` are scored on all)."""


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
            by more than ``xi`` (of the hypervolume, with several objectives); ``"ucb"``: the
            point of best confidence bound, ``mean - kappa * std`` of the loss (``bayes_opt``'s
            ``ucb``; the scale of the objective does not change which point that is), for one
            objective only.
        kappa: The weight of the uncertainty in ``ucb`` (>= 0; ``bayes_opt``'s default).
        xi: In ``ei`` with one objective, the improvement to exceed, in the objective's units
            (>= 0).
    """

    multi_objective = True
    constraints = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
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
        if acquisition == "ucb" and len(self.modes) > 1:
            raise ConfigError(
                f"tuner_args: gp's acquisition 'ucb' takes one objective, got {len(self.modes)} "
                "(metric is a list); use acquisition='ei' (expected hypervolume improvement)"
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
        self.history = History(self.unit, self.mode)
        self._cat = np.array([c.kind == "cat" for c in self.unit.coords], dtype=bool)
        self._shift = self.rng(*_STARTUP_KEY).random(self.unit.d)
        self._signs = np.array([m.sign for m in self.modes], dtype=float)
        # each trial's losses and constraint values (None where not all finite, or absent),
        # modelled with several objectives or once a trial has constraints
        self._outcomes: dict[int, tuple[np.ndarray | None, np.ndarray | None]] = {}
        self._constrained = False
        # the last hyperparameter fit of each modelled output (objectives, then constraints):
        # (the digest of the trials it was fitted to, its result)
        self._fits: dict[int, tuple[bytes, np.ndarray]] = {}

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)
        if trial.constraints is not None:
            self._constrained = True
        self._outcomes[trial.number] = (self._losses(trial), _finite(trial.constraints))

    def _losses(self, trial: Trial) -> np.ndarray | None:
        values = trial.objectives
        if trial.status is not TrialStatus.SUCCEEDED or values is None:
            return None
        if len(values) != len(self.modes):
            return None
        found = _finite(values)
        return None if found is None else found * self._signs

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        x: np.ndarray | None = None
        if self.history.n_ok >= self.n_startup_trials and self.unit.d > 0:
            with single_threaded_blas():
                x = self._model(rng)
        if x is None:  # start-up, or no trial has every objective and constraint finite yet
            x = self._startup(number)
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

    def _hyperparameters(
        self, slot: int, X: np.ndarray, y: np.ndarray, number: np.ndarray
    ) -> np.ndarray:
        """Hyperparameters of output ``slot`` (objectives, then constraints) fitted to the
        first ``refit_count(n)`` of the trials ``(X, y, number)`` (sorted by number), reused
        while those trials stay the same."""
        g = refit_count(len(y))
        X, y, number = X[:g], y[:g], number[:g]
        # the noise's lower bound, which depends on the constraints, is part of the key
        single = len(self.modes) == 1 and not self._constrained
        digest = hashlib.blake2b(
            bytes([single]) + number.tobytes() + y.tobytes() + X.tobytes()
        ).digest()
        fit = self._fits.get(slot)
        if fit is not None and fit[0] == digest:
            return fit[1]
        from hyperlab.tuners._gp._gaussian_process import fit_hyperparameters, prior_mode

        keep = self._subset(y)
        start = prior_mode(self.unit.d)
        alt = start.copy()
        alt[: self.unit.d] -= 1.0  # shorter length scales: a wigglier function
        theta = fit_hyperparameters(
            self._features(X[keep]),
            y[keep],
            self._cat,
            [start, alt],
            maxiter=_FIT_MAXITER,
            min_noise=_MIN_NOISE if single else _MIN_NOISE_OUTCOMES,
        )
        self._fits[slot] = (digest, theta)
        return theta

    def _model(self, rng: np.random.Generator) -> np.ndarray | None:
        # the model needs SciPy (about 0.2 s to import): loaded with the first model-based
        # proposal, so that a run's start-up proposals need NumPy only
        from hyperlab.tuners._gp._gaussian_process import GaussianProcess

        X, loss, number = self.history.succeeded()
        if len(self.modes) > 1 or self._constrained:
            return self._model_outcomes(rng, X, number)
        theta = self._hyperparameters(0, X, loss, number)
        keep = self._subset(loss)
        X, loss = X[keep], loss[keep]
        gp = GaussianProcess(self._features(X), loss, self._cat, theta, liars=self._liars())
        C = self._candidates(rng, X[np.argsort(loss, kind="stable")[:10]])
        return self._maximise(self._single(gp, gp.best), C)

    def _model_outcomes(
        self, rng: np.random.Generator, X: np.ndarray, number: np.ndarray
    ) -> np.ndarray | None:
        """The proposal with several objectives or with constraints; None when no trial has
        every objective and constraint finite."""
        from hyperlab.pareto import non_dominated_ranks
        from hyperlab.tuners._gp._acquisition import LogEHVI, LogFeasibility, Sum
        from hyperlab.tuners._gp._gaussian_process import GaussianProcess

        rows, Y, C = self._outcome_rows(number)
        if not len(rows):
            return None
        X, number = X[rows], number[rows]
        targets = [*Y.T, *C.T]
        thetas = [self._hyperparameters(i, X, y, number) for i, y in enumerate(targets)]
        violation = np.maximum(C, 0.0).sum(axis=1)
        ranks = non_dominated_ranks(Y, violation).astype(float)
        keep = self._subset(ranks)
        X, Y, ranks, violation = X[keep], Y[keep], ranks[keep], violation[keep]
        F, liars = self._features(X), self._liars()
        gps = [
            GaussianProcess(F, y[keep], self._cat, t, liars=liars)
            for y, t in zip(targets, thetas, strict=True)
        ]
        objectives, limits = gps[: Y.shape[1]], gps[Y.shape[1] :]
        # candidates around the front (or the 10 best rows, when it is smaller)
        front = np.flatnonzero(ranks == 0)
        top = front if len(front) > 10 else np.argsort(ranks, kind="stable")[:10]
        candidates = self._candidates(rng, X[top])
        parts: list[Acquisition] = []
        cheap: list[Acquisition] = []  # the same, cheaper, to rank the candidates
        feasible = violation <= 0.0
        if feasible.any() and len(objectives) == 1:
            gp = objectives[0]
            parts.append(self._single(gp, (float(Y[feasible, 0].min()) - gp.mean) / gp.scale))
        elif feasible.any():
            mean = np.array([gp.mean for gp in objectives])
            scale = np.array([gp.scale for gp in objectives])
            samples = _normal_samples(rng, _EHVI_SAMPLES, len(objectives))
            ehvi = LogEHVI(objectives, (Y[feasible] - mean) / scale, samples)
            parts.append(ehvi)
            cheap = [ehvi.subsampled(_SCREEN_SAMPLES)]
        if limits:
            thresholds = [-gp.mean / gp.scale for gp in limits]  # each constraint's 0
            parts.append(LogFeasibility(limits, thresholds))
            cheap.append(parts[-1])
        acquisition = parts[0] if len(parts) == 1 else Sum(*parts)
        screen = (
            (cheap[0] if len(cheap) == 1 else Sum(*cheap)) if len(cheap) == len(parts) else None
        )
        return self._maximise(acquisition, candidates, screen)

    def _outcome_rows(self, number: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of the succeeded trials ``number``, the rows with every objective (and, once a trial
        has constraints, every constraint, as many as the first such row's) finite; their
        losses ``(n, k)`` and constraint values ``(n, c)`` (``c = 0`` without constraints)."""
        rows: list[int] = []
        losses: list[np.ndarray] = []
        limits: list[np.ndarray] = []
        width: int | None = None if self._constrained else 0
        for row, n in enumerate(number.tolist()):
            y, c = self._outcomes.get(n, (None, None))
            if y is None:
                continue
            if width is None and c is not None:
                width = len(c)
            if width:
                if c is None or len(c) != width:
                    continue
                limits.append(c)
            rows.append(row)
            losses.append(y)
        k = len(self.modes)
        Y = np.array(losses, dtype=float).reshape(len(rows), k)
        C = np.array(limits, dtype=float).reshape(len(rows), width or 0)
        return np.array(rows, dtype=np.int64), Y, C

    def _liars(self) -> np.ndarray | None:
        pending = list(self.history.pending.values())
        return self._features(np.array(pending)) if pending else None

    def _single(self, gp: GaussianProcess, best: float) -> Acquisition:
        """The single-objective acquisition: log EI below ``best`` (standardised) by ``xi``, or
        the confidence bound."""
        from hyperlab.tuners._gp._acquisition import UCB, LogEI

        if self.acquisition == "ucb":
            return UCB(gp, self.kappa)
        return LogEI(gp, best - self.xi / gp.scale)  # xi in the objective's units

    def _maximise(
        self, acquisition: Acquisition, C: np.ndarray, screen: Acquisition | None = None
    ) -> np.ndarray:
        """The candidate of ``C`` (or a refinement of the best ones) of highest acquisition
        that was not proposed before; ``screen``, a cheaper estimate, ranks the candidates
        first, and only the best are scored exactly."""
        F = self._features(C)
        scores = (screen or acquisition)(F)
        scores[self.history.is_seen(C)] = -np.inf
        order = np.argsort(-scores, kind="stable")[: max(self.n_refine, 1)]
        if screen is not None:
            exact = np.where(np.isfinite(scores[order]), acquisition(F[order]), -np.inf)
            scores[order] = exact
            order = order[np.argsort(-exact, kind="stable")]
        best_x, best_score = C[order[0]], scores[order[0]]
        starts = C[[i for i in order[: self.n_refine] if np.isfinite(scores[i])]]
        if len(starts):
            R = self._refine(acquisition, starts)
            refined = acquisition(self._features(R))
            refined[self.history.is_seen(R)] = -np.inf
            i = int(np.argmax(refined))
            if refined[i] > best_score:
                best_x = R[i]
        return best_x

    def _subset(self, loss: np.ndarray) -> np.ndarray:
        """Rows to model: all, or the best half of ``max_points`` and the most recent rest."""
        n = len(loss)
        if n <= self.max_points:
            return np.arange(n)
        best = np.argsort(loss, kind="stable")[: self.max_points // 2]
        rest = np.setdiff1d(np.arange(n), best)[-(self.max_points - best.size) :]
        return np.sort(np.concatenate([best, rest]))

    def _candidates(self, rng: np.random.Generator, top: np.ndarray) -> np.ndarray:
        """Random points, and perturbations of the rows of ``top`` (the best trials)."""
        n_local = self.n_candidates // 2
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

    def _refine(self, acquisition: Acquisition, X0: np.ndarray) -> np.ndarray:
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
            value, grad = acquisition.with_grad(Z)
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


def _finite(values: Sequence[float] | None) -> np.ndarray | None:
    """``values`` as an array, or None when absent or not all finite numbers."""
    if values is None:
        return None
    try:
        found = np.array(values, dtype=float)
    except (TypeError, ValueError):
        return None
    return found if found.ndim == 1 and np.all(np.isfinite(found)) else None


def _normal_samples(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """``n`` quasi-random standard normal points of ``k`` dimensions (a randomly shifted
    Kronecker sequence through the normal quantile)."""
    from scipy.special import ndtri

    u = kronecker_points(np.arange(n), rng.random(k))
    return np.asarray(ndtri(np.clip(u, 1e-9, 1.0 - 1e-9)))
