"""auto: the default tuner, which picks an algorithm by the search space and the trials so far.

The rule (chosen on the problems of ``benchmarks/quality.py``, see docs/tuners.md):

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

Every sub-tuner observes every trial, so the one that takes over learns from all the trials
before it. Which one proposes trial ``n`` depends only on the space and ``n``, so proposals
remain a function of the seed, the trial number and the observed trials (replay after a crash
gives the same ones).
"""

from __future__ import annotations

from typing import Any, Literal

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial
from hyperlab.tuners._history import UnitSpace
from hyperlab.tuners.base import Tuner, create_tuner

__all__ = ["GP_DIMENSIONS", "AutoTuner"]

GP_DIMENSIONS = 20
"""Spaces of up to this many unit-cube dimensions start with ``gp``."""


class AutoTuner(Tuner):
    """GP-BO for the first trials, then CMA-ES (numeric spaces) or TPE (spaces with choices).

    Args:
        gp_trials: Trials proposed by ``gp`` before its successor takes over; 0 starts with
            the successor.
        after_gp: The successor in a numeric space: ``"cmaes"`` or ``"tpe"`` (a space with a
            choice always goes on with ``tpe``).
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        gp_trials: int = 100,
        after_gp: Literal["cmaes", "tpe"] = "cmaes",
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        if isinstance(gp_trials, bool) or not isinstance(gp_trials, int) or gp_trials < 0:
            raise ConfigError(
                f"tuner_args: auto needs gp_trials to be an integer >= 0, got {gp_trials!r}"
            )
        unit = UnitSpace(space)
        numeric = unit.d > 0 and all(c.kind != "cat" for c in unit.coords)
        self.gp_trials = gp_trials if 0 < unit.d <= GP_DIMENSIONS else 0
        if after_gp not in ("cmaes", "tpe"):
            raise ConfigError(
                f"tuner_args: auto needs after_gp to be 'cmaes' or 'tpe', got {after_gp!r}"
            )
        self.after = after_gp if numeric else "tpe"
        self._tuners: dict[str, Tuner] = {}
        if self.gp_trials:
            self._tuners["gp"] = create_tuner("gp", space, mode=self.mode, seed=self.seed)
        self._tuners[self.after] = create_tuner(self.after, space, mode=self.mode, seed=self.seed)

    def choice(self, number: int) -> str:
        """The name of the tuner that proposes trial ``number``."""
        return "gp" if number < self.gp_trials else self.after

    def suggest(self, number: int) -> dict[str, Any] | None:
        return self._tuners[self.choice(number)].suggest(number)

    def observe(self, trial: Trial) -> None:
        for tuner in self._tuners.values():
            tuner.observe(trial)
