"""Optuna's ``optuna.samplers.nsgaii``: the crossovers an ``NSGAIISampler`` or
``NSGAIIISampler`` takes. hyperlab's NSGA tuners cross over uniformly (``UniformCrossover``)
or by simulated binary crossover (``SBXCrossover``, with Optuna's default ``eta``); Optuna's
other crossovers and mutations are refused, naming these."""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__ = ["BaseCrossover", "SBXCrossover", "UniformCrossover"]


class BaseCrossover:
    """A crossover of an NSGA sampler: the ``crossover`` tuner argument it stands for."""

    n_parents = 2
    kind = "uniform"

    def tuner_args(self) -> dict[str, Any]:
        """The NSGA tuner's arguments for this crossover."""
        return {"crossover": self.kind}


class UniformCrossover(BaseCrossover):
    """Each parameter from either parent, from the second with ``swapping_prob``."""

    def __init__(self, swapping_prob: float = 0.5) -> None:
        if not 0.0 <= swapping_prob <= 1.0:
            raise ValueError("`swapping_prob` must be a float value within the range [0.0, 1.0].")
        self._swapping_prob = swapping_prob

    def tuner_args(self) -> dict[str, Any]:
        return {"crossover": "uniform", "swapping_prob": self._swapping_prob}


class SBXCrossover(BaseCrossover):
    """Simulated binary crossover of numeric parameters (uniform on categorical ones), with
    Optuna's default distribution index (2 for one objective, 20 for several)."""

    kind = "sbx"

    def __init__(self, eta: float | None = None, uniform_crossover_prob: float = 0.5) -> None:
        if eta is not None or uniform_crossover_prob != 0.5:
            raise NotImplementedError(
                "SBXCrossover(eta=..., uniform_crossover_prob=...): hyperlab's SBX uses "
                "Optuna's defaults; leave them unset"
            )


def __getattr__(name: str) -> Any:
    refuse(
        "optuna.samplers.nsgaii",
        name,
        "hyperlab's NSGA tuners take UniformCrossover or SBXCrossover, and mutate by "
        "drawing a parameter anew (mutation_prob)",
    )
