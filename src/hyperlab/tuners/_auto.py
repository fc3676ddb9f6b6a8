"""auto: the default tuner, which picks an algorithm by the search space, the objectives and the
trials so far.

With one objective and no constraints (chosen on the problems of ``benchmarks/quality.py``, see
docs/tuners.md):

- A space of up to ``GP_DIMENSIONS`` unit-cube dimensions (nested ones included) is searched
  with ``gp`` for its first ``gp_trials`` trials, where a Gaussian process makes the most of
  few trials (its kernel treats options as categories; inactive sub-parameters take a neutral
  value).
- Then a numeric space (floats, integers, q-types) goes on with ``cmaes`` (``after_gp``), which
  converges precisely where the GP found the best region (it reads the GP's trials as
  generations of injected points), and a space with a choice with ``tpe``, which models options
  and conditional sub-spaces directly; both stay cheap however long the run (a GP's cost grows
  as ``n^3``).
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
observed trial had constraints (with one objective), and ``n``, so proposals remain a function
of the seed, the trial number and the observed trials (replay after a crash gives the same
ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial
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
        mode_arg = self.modes if len(self.modes) > 1 else self.mode
        self._tuners: dict[str, Tuner] = {}
        if self.gp_trials:
            self._tuners["gp"] = create_tuner("gp", space, mode=mode_arg, seed=self.seed)
        self._tuners[self.after] = create_tuner(self.after, space, mode=mode_arg, seed=self.seed)
        # the trials observed, replayed to a tpe built when constraints replace cmaes
        self._observed: dict[int, Trial] = {}

    def choice(self, number: int) -> str:
        """The name of the tuner that proposes trial ``number``."""
        return "gp" if number < self.gp_trials else self.after

    def suggest(self, number: int) -> dict[str, Any] | None:
        return self._tuners[self.choice(number)].suggest(number)

    def observe(self, trial: Trial) -> None:
        if trial.constraints is not None and self.after == "cmaes":
            self._honour_constraints()
        if self.after == "cmaes":
            self._observed[trial.number] = trial
        for tuner in self._tuners.values():
            tuner.observe(trial)

    def _honour_constraints(self) -> None:
        """Replace ``cmaes`` by a ``tpe`` that has seen every trial so far."""
        del self._tuners["cmaes"]
        self.after = "tpe"
        tpe = create_tuner("tpe", self.space, mode=self.mode, seed=self.seed)
        for number in sorted(self._observed):
            tpe.observe(self._observed[number])
        self._observed.clear()
        self._tuners["tpe"] = tpe
