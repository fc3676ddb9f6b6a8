"""Optuna's ``NSGAIISampler`` and ``NSGAIIISampler``: hyperlab's ``nsga2`` and ``nsga3``
tuners, with Optuna's arguments and defaults.

Generation ``g`` is the block of ``population_size`` consecutive trial numbers from
``g * population_size``, and its parents survive from the previous parents and the previous
generation's completed trials, as in Optuna (which forms generations as trials complete):
the same algorithm, generations counted by number so that a resumed study proposes what it
would have. ``constraints_func`` (deprecated in Optuna 5) or ``trial.set_constraint`` give
the constraints: feasible trials rank first, infeasible ones by their total violation.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna.samplers import BaseSampler, ConstraintsFunc, _refuse
from hyperlab.compat.optuna.samplers.nsgaii import BaseCrossover, UniformCrossover

__all__ = ["NSGAIIISampler", "NSGAIISampler"]

_STRATEGY = "hyperlab's NSGA tuners select and breed as Optuna's defaults; leave it unset"


def _nsga_args(
    sampler: str,
    population_size: int,
    mutation: Any,
    mutation_prob: float | None,
    crossover: BaseCrossover | None,
    crossover_prob: float,
    swapping_prob: float,
    strategies: dict[str, Any],
) -> dict[str, Any]:
    """The NSGA tuner's arguments of the sampler's, checked as Optuna checks them."""
    if population_size < 2:
        raise ValueError("`population_size` must be greater than or equal to 2.")
    _refuse(sampler, "mutation", mutation, None, "mutation draws a parameter anew (mutation_prob)")
    for name, value in strategies.items():
        _refuse(sampler, name, value, None, _STRATEGY)
    if crossover is None:
        crossover = UniformCrossover(swapping_prob)
    if not isinstance(crossover, BaseCrossover):
        raise ValueError(
            f"'{crossover}' is not a valid crossover. For valid crossovers see "
            "https://optuna.readthedocs.io/en/stable/reference/samplers.html."
        )
    args = {
        "population_size": population_size,
        "mutation_prob": mutation_prob,
        "crossover_prob": crossover_prob,
        "swapping_prob": swapping_prob,
        **crossover.tuner_args(),
    }
    if args["swapping_prob"] != swapping_prob:
        raise NotImplementedError(
            f"{sampler}(swapping_prob={swapping_prob!r}, crossover=UniformCrossover("
            f"{args['swapping_prob']!r})): hyperlab's NSGA tuners take one swapping_prob; "
            "give the same to both"
        )
    return args


class NSGAIISampler(BaseSampler):
    """NSGA-II: hyperlab's ``nsga2`` tuner (see the module)."""

    tuner = "nsga2"

    def __init__(
        self,
        *,
        population_size: int = 50,
        mutation: Any = None,
        mutation_prob: float | None = None,
        crossover: BaseCrossover | None = None,
        crossover_prob: float = 0.9,
        swapping_prob: float = 0.5,
        seed: int | None = None,
        constraints_func: ConstraintsFunc | None = None,
        elite_population_selection_strategy: Any = None,
        child_generation_strategy: Any = None,
        after_trial_strategy: Any = None,
    ) -> None:
        super().__init__(seed)
        self._take_constraints(constraints_func)
        self.tuner_args = _nsga_args(
            "NSGAIISampler",
            population_size,
            mutation,
            mutation_prob,
            crossover,
            crossover_prob,
            swapping_prob,
            {
                "elite_population_selection_strategy": elite_population_selection_strategy,
                "child_generation_strategy": child_generation_strategy,
                "after_trial_strategy": after_trial_strategy,
            },
        )


class NSGAIIISampler(BaseSampler):
    """NSGA-III: hyperlab's ``nsga3`` tuner (see the module); its reference points are
    ``reference_points`` (one row per point, a coordinate per objective), or Das and
    Dennis's points with ``dividing_parameter`` divisions."""

    tuner = "nsga3"

    def __init__(
        self,
        *,
        population_size: int = 50,
        mutation: Any = None,
        mutation_prob: float | None = None,
        crossover: BaseCrossover | None = None,
        crossover_prob: float = 0.9,
        swapping_prob: float = 0.5,
        seed: int | None = None,
        constraints_func: ConstraintsFunc | None = None,
        reference_points: Any = None,
        dividing_parameter: int = 3,
        elite_population_selection_strategy: Any = None,
        child_generation_strategy: Any = None,
        after_trial_strategy: Any = None,
    ) -> None:
        super().__init__(seed)
        self._take_constraints(constraints_func)
        self.tuner_args = _nsga_args(
            "NSGAIIISampler",
            population_size,
            mutation,
            mutation_prob,
            crossover,
            crossover_prob,
            swapping_prob,
            {
                "elite_population_selection_strategy": elite_population_selection_strategy,
                "child_generation_strategy": child_generation_strategy,
                "after_trial_strategy": after_trial_strategy,
            },
        )
        self.tuner_args["dividing_parameter"] = dividing_parameter
        if reference_points is not None:
            self.tuner_args["reference_points"] = [
                [float(x) for x in point] for point in reference_points
            ]
