"""TPE: the tree-structured Parzen estimator (Bergstra et al. 2011), multivariate by default.

After a few quasi-random startup trials, every proposal splits the succeeded trials into the
best ``gamma`` fraction (at most ``max_good`` of them) and the rest, fits a Parzen density to
each (``l`` for the good, ``g`` for the others, see :mod:`hyperlab.tuners._tpe._parzen`), draws
``n_ei_candidates`` points from ``l`` and proposes the one maximising ``l(x) / g(x)``.

Conditional parameters (the sub-parameters of nested choice options) form groups: each group
has its own pair of densities, fitted only on the trials where it was active, and a candidate's
score sums the groups active in it. With ``multivariate=True`` a group's coordinates share one
kernel per draw (a mixture of product kernels), so correlations between parameters are modelled;
a candidate keeps the same observation's kernel in its nested groups when that observation had
them active.

Trials proposed and not yet observed (running ones, with concurrency > 1) and early-stopped
trials join the "bad" density (a constant liar), so concurrent proposals spread out. In a finite
space (only choices, randint and bounded q-types) a point already proposed is never proposed
again while unseen points remain.

With several objectives (MOTPE) or constraints (c-TPE) the good trials are chosen as Optuna 5's
``TPESampler`` chooses them (see :mod:`hyperlab.tuners._tpe._split`): feasible ones first, by
loss or by non-dominated front with a hypervolume tie-break, then infeasible ones by violation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial
from hyperlab.tuners._history import FAILED, OK, History, UnitSpace, latin_hypercube
from hyperlab.tuners._tpe._split import Outcomes, choose_good
from hyperlab.tuners.base import Tuner

if TYPE_CHECKING:
    from hyperlab.tuners._tpe._parzen import Parzen

__all__ = ["LOW_DIMENSIONS", "TPETuner"]

LOW_DIMENSIONS = 6
"""Up to this many unit-cube dimensions, TPE's defaults exploit more than Optuna's."""

_DESIGN_KEY = (2**32 - 1, 1)  # the startup design's stream; per-trial streams use (number,)


class TPETuner(Tuner):
    """The tree-structured Parzen estimator over every parameter type.

    The defaults of ``gamma``, ``max_good`` and ``bandwidth`` depend on the number of
    dimensions ``d`` (unit-cube coordinates): up to ``LOW_DIMENSIONS`` they exploit more than
    Optuna's TPE (a larger good fraction, kernels sharper by 0.8); beyond, where kernels fitted
    by the neighbour rule are already narrow for the distances between points, they are
    Optuna's (0.1 capped at 25, factor 1). Chosen on the 90 problems of
    ``benchmarks/quality.py`` with seeds the benchmark's report does not use (docs/tuners.md).
    With several objectives the defaults are Optuna 5's for multi-objective TPE: ``gamma``
    0.1 without a cap, kernels of factor 1, independent coordinates, and every good trial's
    kernel weighing the same.

    It takes several objectives (``mode`` one direction per objective, values from
    ``Trial.objectives``) and constraints (``Trial.constraints``): see the module docstring.

    Args:
        n_startup_trials: Start-up proposals: the model is used once this many trials have
            succeeded or are still running (at least one succeeded), so that with concurrency
            the start-up phase is not longer than when trials run one at a time; until then
            proposals are points of the prior (``startup``).
        n_ei_candidates: Points drawn from the good density per proposal; more is greedier.
        gamma: Fraction of the succeeded trials that count as good, ``ceil(gamma * n)`` ...
            (default 0.15 for ``d <= LOW_DIMENSIONS``, else 0.1; 0.1 with several objectives)
        max_good: ... but at most this many (default 40, else 25; no cap with several
            objectives).
        prior_weight: Weight of the prior kernel in both densities (an observation's kernel
            weighs at most 1; older ones less, as in Optuna).
        multivariate: Share one kernel across a group's coordinates (models correlations);
            False draws and scores each coordinate independently (classic TPE). Default:
            True with one objective, False with several (as Optuna 5).
        bandwidth: Factor on every kernel bandwidth (below 1: sharper, greedier; default 0.8,
            else 1; 1 with several objectives).
        constant_liar: Count proposals not yet observed as bad trials, so concurrent
            proposals spread out.
        max_kernels: Kernels per density at most, bounding the cost of long runs: beyond it
            the newest half of the trials is kept and the older ones are thinned evenly, the
            kept ones weighing for those left out.
        startup: ``"lhs"``: the first ``n_startup_trials`` trials (by number) are the points of
            one Latin hypercube, evenly spread in every coordinate, and later startup trials
            (after failures, say) are prior draws; ``"random"``: all are prior draws.
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
        n_ei_candidates: int = 24,
        gamma: float | None = None,
        max_good: int | None = None,
        prior_weight: float = 1.0,
        multivariate: bool | None = None,
        bandwidth: float | None = None,
        constant_liar: bool = True,
        max_kernels: int = 300,
        startup: Literal["lhs", "random"] = "lhs",
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.unit = UnitSpace(space)
        several = len(self.modes) > 1
        low = self.unit.d <= LOW_DIMENSIONS and not several
        gamma = gamma if gamma is not None else (0.15 if low else 0.1)
        bandwidth = bandwidth if bandwidth is not None else (0.8 if low else 1.0)
        multivariate = multivariate if multivariate is not None else not several
        _check("n_startup_trials", n_startup_trials, 0)
        _check("n_ei_candidates", n_ei_candidates, 1)
        if max_good is not None or not several:
            max_good = max_good if max_good is not None else (40 if low else 25)
            _check("max_good", max_good, 1)
        _check("max_kernels", max_kernels, 1)
        if startup not in ("lhs", "random"):
            raise ConfigError(
                f"tuner_args: tpe needs startup to be 'lhs' or 'random', got {startup!r}"
            )
        if not 0 < gamma <= 1:
            raise ConfigError(f"tuner_args: tpe needs 0 < gamma <= 1, got gamma={gamma!r}")
        if prior_weight < 0 or bandwidth <= 0:
            raise ConfigError(
                "tuner_args: tpe needs prior_weight >= 0 and bandwidth > 0, got "
                f"prior_weight={prior_weight!r}, bandwidth={bandwidth!r}"
            )
        self.n_startup_trials = int(n_startup_trials)
        self.n_ei_candidates = int(n_ei_candidates)
        self.gamma = float(gamma)
        self.max_good = int(max_good) if max_good is not None else None
        self.prior_weight = float(prior_weight)
        self.multivariate = bool(multivariate)
        self.bandwidth = float(bandwidth)
        self.constant_liar = bool(constant_liar)
        self.max_kernels = int(max_kernels)
        self.startup = startup
        self.history = History(self.unit, self.mode)
        self.outcomes = Outcomes(self.modes)
        self._good: tuple[int, np.ndarray, np.ndarray] | None = None  # see _good_rows
        self._groups = _groups(self.unit, self.multivariate)

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)
        self.outcomes.add(trial)

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        n_ok, n_pending = self.history.n_ok, len(self.history.pending)
        if n_ok == 0 or n_ok + n_pending < self.n_startup_trials or self.unit.d == 0:
            x = self._startup(number, rng)
        else:
            x = self._model(rng)
        self.history.propose(number, x)
        return self.unit.decode(x)

    # ------------------------------------------------------------ proposals

    def _startup(self, number: int, rng: np.random.Generator) -> np.ndarray:
        if self.unit.d == 0:
            return np.zeros(0)
        if self.startup == "lhs" and number < self.n_startup_trials:
            design = latin_hypercube(self.rng(*_DESIGN_KEY), self.n_startup_trials, self.unit.d)
            X = self.unit.mask_inactive(self.unit.snap(design[number : number + 1]))
        else:
            X = self.unit.uniform(rng, 1)
        if self.history.is_seen(X)[0]:
            return self.history.unseen(rng, X[0])
        return X[0]

    def _model(self, rng: np.random.Generator) -> np.ndarray:
        good, bad = self._split()
        C = self.n_ei_candidates
        Y = np.full((C, self.unit.d), np.nan)
        score = np.zeros(C)
        carried: np.ndarray | None = None  # the good row whose kernel each candidate drew
        for group in self._groups:
            rows = np.arange(C) if group.parent < 0 else group.active_rows(self.unit, Y)
            if rows.size == 0:
                continue
            l_rows, l_density = group.density(self, *good, uniform=self.outcomes.several)
            _, g_density = group.density(self, *bad)
            kernels = l_density.pick(rng, rows.size)
            if self.multivariate:
                if carried is None:
                    carried = np.full(C, -1)
                    carried[rows] = np.append(l_rows, -1)[kernels]
                else:
                    position = np.full(len(good[1]) + 1, -1)
                    position[l_rows] = np.arange(l_rows.size)
                    inherited = position[carried[rows]]
                    kernels = np.where(inherited >= 0, inherited, kernels)
            Y[np.ix_(rows, np.asarray(group.cols))] = sub = l_density.sample(rng, kernels)
            score[rows] += l_density.log_pdf(sub) - g_density.log_pdf(sub)
        seen = self.history.is_seen(Y)
        if seen.all():
            return self.history.unseen(rng, Y[int(np.argmax(score))])
        score[seen] = -np.inf
        return Y[int(np.argmax(score))]

    def _split(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """The good and the bad observations, each as ``(X, rows)`` sorted by trial number.

        ``X`` holds every candidate point (the history's rows, then pending proposals) and
        ``rows`` picks a density's observations from it; nothing of size ``n x d`` is copied,
        so a proposal costs ``O(n)`` only in cheap one-dimensional steps.
        """
        X, loss, number, state = self.history.arrays()
        ok = state == OK
        usable = state != FAILED
        if self.outcomes.needed:
            good, complete = self._good_rows(loss, number, ok)
            usable &= complete | ~ok  # a success without every objective counts as failed
        else:
            n_good = self._n_good(int(np.count_nonzero(ok)))
            good = _smallest(np.where(ok, loss, np.inf), n_good)
        usable[good] = False
        bad = np.flatnonzero(usable)
        if self.constant_liar and self.history.pending:
            pending = np.array(list(self.history.pending.values()))
            pending_numbers = np.fromiter(self.history.pending, np.int64, len(pending))
            all_X = np.vstack([X, pending])
            rows = np.concatenate([bad, len(X) + np.arange(len(pending))])
            order = np.argsort(np.concatenate([number[bad], pending_numbers]), kind="stable")
            return (X, good), (all_X, rows[order])
        return (X, good), (X, bad)

    def _good_rows(
        self, loss: np.ndarray, number: np.ndarray, ok: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The good rows with several objectives or constraints, and which rows have every
        objective; kept until the next observation (proposals in between reuse them)."""
        if self._good is None or self._good[0] != self.outcomes.version:
            if self.outcomes.several:
                points, complete = self.outcomes.points(number)
            else:
                points, complete = loss[:, None], np.ones(len(loss), dtype=bool)
            rows = np.flatnonzero(ok & complete)
            violation = self.outcomes.violation(number[rows])
            picked = choose_good(points[rows], violation, self._n_good(rows.size))
            self._good = (self.outcomes.version, rows[picked], complete)
        return self._good[1], self._good[2]

    def _n_good(self, n_ok: int) -> int:
        n_good = math.ceil(self.gamma * n_ok)
        return n_good if self.max_good is None else min(n_good, self.max_good)


def _smallest(key: np.ndarray, k: int) -> np.ndarray:
    """Rows of the ``k`` smallest keys (ties to the lower row), in row order."""
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k >= len(key):
        return np.arange(len(key))
    kth = np.partition(key, k - 1)[k - 1]
    below = np.flatnonzero(key < kth)
    tied = np.flatnonzero(key == kth)[: k - below.size]
    return np.sort(np.concatenate([below, tied]))


class _Group:
    """Coordinates modelled together: a top-level set, or one nested option's sub-parameters."""

    def __init__(self, cols: list[int], parent: int, option: int) -> None:
        self.cols = cols
        self.parent = parent
        self.option = option

    def active_rows(self, unit: UnitSpace, Y: np.ndarray) -> np.ndarray:
        u = Y[:, self.parent]
        k = unit.coords[self.parent].size
        ok = ~np.isnan(u)
        picked = np.minimum((np.nan_to_num(u) * k).astype(np.int64), k - 1)
        return np.flatnonzero(ok & (picked == self.option))

    def density(
        self, tpe: TPETuner, X: np.ndarray, rows: np.ndarray, *, uniform: bool = False
    ) -> tuple[np.ndarray, Parzen]:
        """The positions (in ``rows``) of the observations where this group is active, and
        their Parzen density; ``rows`` of ``X`` are the observations, oldest first. Kernels
        weigh less with age (Optuna's ramp) unless ``uniform``."""
        # the densities need scipy.special, 0.2 s to import: loaded with the first model-based
        # proposal, so that the start-up proposals need NumPy only
        from hyperlab.tuners._tpe._parzen import Parzen, default_weights

        active = np.flatnonzero(~np.isnan(X[rows, self.cols[0]])) if rows.size else rows
        weights = np.ones(active.size) if uniform else default_weights(active.size)
        if active.size > tpe.max_kernels:
            keep, scale = _thin(active.size, tpe.max_kernels)
            active, weights = active[keep], weights[keep] * scale
        density = Parzen(
            tpe.unit,
            self.cols,
            X[np.ix_(rows[active], np.asarray(self.cols))],
            weights,
            prior_weight=tpe.prior_weight,
            bandwidth=tpe.bandwidth,
        )
        return active, density


def _thin(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` of ``n`` kernels (oldest first): the newest half, and evenly spaced older ones
    whose weights are scaled up to stand for those left out; returns (indices, scales)."""
    new = m // 2
    n_old = n - new
    old = np.unique(np.linspace(0, n_old - 1, m - new).round().astype(np.int64))
    keep = np.concatenate([old, np.arange(n_old, n)])
    scale = np.concatenate([np.full(old.size, n_old / old.size), np.ones(new)])
    return keep, scale


def _groups(unit: UnitSpace, multivariate: bool) -> list[_Group]:
    """Groups in column order (a choice comes before the groups it activates)."""
    if not multivariate:
        return [_Group([c.index], c.parent, c.option) for c in unit.coords]
    by_condition: dict[tuple[int, int], list[int]] = {}
    for c in unit.coords:
        by_condition.setdefault((c.parent, c.option if c.parent >= 0 else 0), []).append(c.index)
    groups = [_Group(cols, parent, option) for (parent, option), cols in by_condition.items()]
    return sorted(groups, key=lambda g: g.cols[0])


def _check(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"tuner_args: tpe needs {name} to be an integer >= {low}, got {value!r}")
