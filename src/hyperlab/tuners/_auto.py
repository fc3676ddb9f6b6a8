"""auto: the default tuner, which picks an algorithm by the search space, the objectives and the
trials so far.

With one objective and no constraints (chosen on the problems of ``benchmarks/quality.py``, see
docs/tuners.md):

- A space of up to ``GP_DIMENSIONS`` unit-cube dimensions (nested ones included) is searched
  with ``gp`` for its first ``gp_trials`` trials, where a Gaussian process makes the most of
  few trials (its kernel treats options as categories; inactive sub-parameters take a neutral
  value).
- Then a numeric space (floats, integers, q-types) goes on with ``cmaes`` (``after_gp``), which
  converges precisely where the GP found the best region: its first generation is drawn around
  the best trial so far, with a step size the spread (root mean square per unit-cube
  coordinate) of the best ``popsize`` trials around it, and a covariance of their shape half
  shrunk towards a sphere. (It used to read the GP's trials as generations of injected points
  from trial 0, which left it a step size 10-30x too large: on BBOB f01 in 5 dimensions, the
  median regret went from 8e-4 at trial 100 to 5.7e-4 at 200; now from 4.4e-5, with the GP's
  lower noise floor, to 3.1e-6, tuning seeds 100-104.) A space with a choice goes on with
  ``tpe``, which models options and conditional sub-spaces directly; both stay cheap however
  long the run (a GP's cost grows as ``n^3``).
- With ``stall_window`` set, ``cmaes`` takes over earlier, at the first trial number where the
  GP has stalled (the best loss of the trials numbered below it improved over the last
  ``stall_window`` numbers by at most ``stall_tol`` times the gap between their median and the
  best). Off by default: with a window of ``10 + 2 d`` and ``stall_tol`` 1e-3 it lost on the
  2-dimensional BBOB problems of the tuning half, where the GP keeps improving slowly (median
  regret at 200 trials, tuning seeds 100-104: f08 0.031 vs 0.0016, f10 1.9 vs 0.98, f11 0.84
  vs 0.30), and won only on f01 in 5 dimensions (1.1e-6 vs 3.1e-6).
- A larger space, where a GP's model degrades, starts with that successor.

Once a trial carries constraints, the successor is ``tpe`` wherever it would be ``cmaes``
(which does not honour constraints); ``gp`` models them (see ``hyperlab.tuners._gp``).

With several objectives (``mode`` a sequence), chosen on the tuning seeds (0 and 1,
``--tuning``) of ``benchmarks/multiobjective.py``, never on the seeds it reports (1000 and up):

- Up to ``MO_GP_OBJECTIVES`` objectives, in a space of up to ``MO_GP_DIMENSIONS`` dimensions:
  ``gp`` (expected hypervolume improvement, times the probability of feasibility under
  constraints) for the first ``mo_gp_trials`` trials. Median hypervolumes at 100 / 200
  trials: WFG4 (2 objectives, 10 variables) gp 0.284 / 0.322, tpe 0.252 / 0.296, Optuna's TPE
  0.258 / 0.282, NSGA-II (either library) 0.21 / 0.25; DTLZ2 (3 objectives, 12 variables) gp
  0.111 / 0.588, tpe 0.200 / 0.437, Optuna's TPE 0.196 / 0.423, Optuna's NSGA-II 0.009 /
  0.061; on seed 0, ZDT1 gp 120.2 / 120.6, tpe 96.7 / 106.7, Optuna's TPE 97.5 / 97.8, and
  ZDT3 gp 81.7 / 83.1, tpe 67.7 / 76.3, Optuna's TPE 67.6 / 71.3; C2-DTLZ2 (3 objectives,
  0.5% of the space feasible) gp 0.154 / 0.349, where tpe reached 0.162 at 120 trials on
  seed 0 (gp 0.40 there). TPE was ahead of gp at 100 trials on DTLZ2 only.
- After ``mo_gp_trials``, and from the start for more objectives or dimensions, ``tpe``
  (multi-objective TPE): it handles any space, any number of objectives and constraints, at a
  cost that stays low where a GP's proposals (one GP per objective and constraint, about 1 s
  each at 200 trials) grow as ``n^3``.

Every sub-tuner observes every trial, so the one that takes over learns from all the trials
before it. Which one proposes trial ``n`` depends only on the space, the objectives, whether an
observed trial had constraints (with one objective), ``n`` and, with ``stall_window``, the set
of observed trials with their numbers; ``cmaes``'s start follows from the trials numbered below
the switch, whatever order they finished in. So proposals remain a function of the seed, the
trial number and the observed trials (replay after a crash gives the same ones).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners._cmaes import CMAESTuner
from hyperlab.tuners._history import UnitSpace
from hyperlab.tuners.base import Tuner, create_tuner

__all__ = ["GP_DIMENSIONS", "MO_GP_DIMENSIONS", "MO_GP_OBJECTIVES", "AutoTuner"]

GP_DIMENSIONS = 20
"""With one objective, spaces of up to this many unit-cube dimensions start with ``gp``."""

MO_GP_DIMENSIONS = 40
"""With several objectives, spaces of up to this many dimensions may start with ``gp`` (its
``max_dims``)."""

MO_GP_OBJECTIVES = 3
"""Objectives ``gp`` takes at most in ``auto``: the boxes of its hypervolume improvement grow
about as ``n^(k/2)`` with ``n`` front points and ``k`` objectives."""

_MIN_SIGMA = 1e-4
_MAX_SIGMA = 0.2
"""cmaes's first step size after gp, in the unit cube, lies within these."""


class AutoTuner(Tuner):
    """GP-BO for the first trials, then CMA-ES (numeric spaces) or TPE (spaces with choices,
    constraints or several objectives).

    Args:
        gp_trials: With one objective, trials proposed by ``gp`` before its successor takes
            over; 0 starts with the successor.
        after_gp: The successor in a numeric space with one objective and no constraints:
            ``"cmaes"`` or ``"tpe"`` (otherwise it is always ``tpe``).
        mo_gp_trials: With several objectives, trials proposed by ``gp`` before ``tpe`` takes
            over; 0 starts with ``tpe``.
        stall_window: With one objective, ``cmaes`` after ``gp``, and this set: the trial
            numbers over which a stalled GP hands over to ``cmaes`` before ``gp_trials`` (see
            the module's docstring); None (default) waits for ``gp_trials``.
        stall_tol: The improvement over ``stall_window``, as a fraction of the gap between the
            median loss and the best, at most which the GP counts as stalled.
        learn_shape: ``cmaes``'s first covariance follows the spread of the best trials (half
            shrunk towards a sphere) rather than being a sphere.
    """

    multi_objective = True
    constraints = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        seed: int | None = None,
        gp_trials: int = 100,
        after_gp: Literal["cmaes", "tpe"] = "cmaes",
        mo_gp_trials: int = 250,
        stall_window: int | None = None,
        stall_tol: float = 1e-3,
        learn_shape: bool = True,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        for name, value in (("gp_trials", gp_trials), ("mo_gp_trials", mo_gp_trials)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(
                    f"tuner_args: auto needs {name} to be an integer >= 0, got {value!r}"
                )
        if after_gp not in ("cmaes", "tpe"):
            raise ConfigError(
                f"tuner_args: auto needs after_gp to be 'cmaes' or 'tpe', got {after_gp!r}"
            )
        unit = UnitSpace(space)
        numeric = unit.d > 0 and all(c.kind != "cat" for c in unit.coords)
        if len(self.modes) > 1:
            fits = 0 < unit.d <= MO_GP_DIMENSIONS and len(self.modes) <= MO_GP_OBJECTIVES
            self.gp_trials = mo_gp_trials if fits else 0
            self.after = "tpe"
        else:
            self.gp_trials = gp_trials if 0 < unit.d <= GP_DIMENSIONS else 0
            self.after = after_gp if numeric else "tpe"
        if stall_window is not None and (
            isinstance(stall_window, bool) or not isinstance(stall_window, int) or stall_window < 1
        ):
            raise ConfigError(
                f"tuner_args: auto needs stall_window to be an integer >= 1, got {stall_window!r}"
            )
        if (
            isinstance(stall_tol, bool)
            or not isinstance(stall_tol, (int, float))
            or not (0 <= stall_tol < math.inf)
        ):
            raise ConfigError(
                f"tuner_args: auto needs stall_tol to be a finite number >= 0, got {stall_tol!r}"
            )
        self.unit = unit
        self.stall_window = stall_window
        self.stall_tol = float(stall_tol)
        self.learn_shape = bool(learn_shape)
        mode_arg = self.modes if len(self.modes) > 1 else self.mode
        self._tuners: dict[str, Tuner] = {}
        if self.gp_trials:
            self._tuners["gp"] = create_tuner("gp", space, mode=mode_arg, seed=self.seed)
        if self.after != "cmaes" or not self.gp_trials:
            self._tuners[self.after] = create_tuner(
                self.after, space, mode=mode_arg, seed=self.seed
            )
        # the trials observed: replayed to the cmaes built at the switch, or to a tpe built
        # when constraints replace cmaes
        self._observed: dict[int, Trial] = {}
        self._switch: int | None = None  # the switch to cmaes, once computed (None: stale)
        self._cmaes_key: tuple[int, int] | None = None  # (switch, its incumbent's number)

    def choice(self, number: int) -> str:
        """The name of the tuner that proposes trial ``number``."""
        start = self.switch()
        if number < start:
            return "gp"
        return self.after

    def switch(self) -> int:
        """The number of the first trial of the successor, given the trials observed so far.

        ``gp_trials``, or, when ``cmaes`` follows ``gp``, the first number ``n`` at which gp
        has stalled: among the trials numbered below ``n``, the best loss improved over the
        last ``stall_window`` numbers by at most ``stall_tol`` times the gap between their
        median loss and the best.
        """
        if self._switch is None:
            if self.after == "cmaes" and "gp" in self._tuners and self.stall_window:
                self._switch = self._stall(self.stall_window)
            if self._switch is None:
                self._switch = self.gp_trials
        return self._switch

    def _stall(self, window: int) -> int | None:
        import numpy as np

        losses = sorted(
            (t.number, self.mode.sign * float(t.value))
            for t in self._observed.values()
            if t.status is TrialStatus.SUCCEEDED
            and t.value is not None
            and math.isfinite(float(t.value))
        )
        if not losses:
            return None
        numbers = np.array([n for n, _ in losses])
        values = np.array([v for _, v in losses])
        best = np.minimum.accumulate(values)
        for n in range(2 * window, self.gp_trials):
            count = int(np.searchsorted(numbers, n))  # the trials numbered below n
            before = int(np.searchsorted(numbers, n - window))
            if count < window or before == 0:
                continue
            gap = float(np.median(values[:count])) - best[count - 1]
            if best[before - 1] - best[count - 1] <= self.stall_tol * gap:
                return n
        return None

    def suggest(self, number: int) -> dict[str, Any] | None:
        name = self.choice(number)
        if name == "cmaes":
            self._cmaes()
        return self._tuners[name].suggest(number)

    def _cmaes(self) -> None:
        """Build cmaes if needed: its first generation starts at the switch, with its mean at
        the best trial numbered below it, and its step size the spread of the best trials."""
        import numpy as np

        start = self.switch()
        ranked = sorted(
            (self.mode.sign * float(t.value), t.number)
            for t in self._observed.values()
            if t.number < start
            and t.status is TrialStatus.SUCCEEDED
            and t.value is not None
            and math.isfinite(float(t.value))
        )
        key = (start, ranked[0][1] if ranked else -1)
        if key == self._cmaes_key and "cmaes" in self._tuners:
            return
        args: dict[str, Any] = {"first_trial": start}
        cov = None
        if ranked:
            d = self.unit.d
            popsize = 4 + int(3 * math.log(max(d, 1)))
            points = [self.unit.encode(self._observed[n].params) for _, n in ranked[:popsize]]
            found = np.array([x for x in points if x is not None])
            if len(found):
                sigma = float(np.sqrt(np.mean((found - found[0]) ** 2)))
                args["sigma0"] = min(max(sigma, _MIN_SIGMA), _MAX_SIGMA)
                args["x0"] = self._observed[ranked[0][1]].params
            if self.learn_shape and len(found) > 1:
                # the shape of the best trials' spread, shrunk towards a sphere
                dev = found - found[0]
                S = dev.T @ dev / len(found)
                cov = 0.5 * S / max(float(np.trace(S)) / d, 1e-300) + 0.5 * np.eye(d)
        cmaes = CMAESTuner(self.space, mode=self.mode, seed=self.seed, **args)
        if cov is not None:
            cmaes.warm_start(cov)
        for number in sorted(self._observed):
            cmaes.observe(self._observed[number])
        self._tuners["cmaes"] = cmaes
        self._cmaes_key = key

    def observe(self, trial: Trial) -> None:
        if trial.constraints is not None and self.after == "cmaes":
            self._honour_constraints()
        if self.after == "cmaes":
            self._observed[trial.number] = trial
            if self._switch is None or trial.number < self._switch:
                self._switch = None  # may move; cmaes is rebuilt if its start changes
                self._cmaes_key = None
        for tuner in self._tuners.values():
            tuner.observe(trial)

    def _honour_constraints(self) -> None:
        """Replace ``cmaes`` by a ``tpe`` that has seen every trial so far."""
        self._tuners.pop("cmaes", None)
        self.after = "tpe"
        self._switch = None
        tpe = create_tuner("tpe", self.space, mode=self.mode, seed=self.seed)
        for number in sorted(self._observed):
            tpe.observe(self._observed[number])
        self._observed.clear()
        self._tuners["tpe"] = tpe
