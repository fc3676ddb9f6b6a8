"""No tuner: the experiment runs only the trials given to it."""

from __future__ import annotations

from typing import Any

from hyperlab.tuners.base import Tuner

__all__ = ["NoTuner"]


class NoTuner(Tuner):
    """Proposes nothing: every trial comes from a strategy loop (``Experiment.submit``), from
    ``add_trial``, or from a scheduler's branches.

    An experiment driven by ``submit`` gets it when no ``tuner`` is named (``tuner=None`` asks
    for it anywhere); it needs no budget, since its trials end when the strategy stops.
    """

    multi_objective = True  # it learns nothing
    constraints = True

    def suggest(self, number: int) -> dict[str, Any] | None:
        return None

    def runs_out(self) -> bool:
        return True
