"""hyperlab's population based training restricted to Ray's ``hyperparam_mutations``."""

from __future__ import annotations

from typing import Any

from hyperlab.assessors import PopulationBasedTraining
from hyperlab.space import SearchSpace

__all__ = ["MutationsPBT"]


class MutationsPBT(PopulationBasedTraining):
    """hyperlab's population based training, perturbing only the parameters in ``mutable``
    (Ray's ``hyperparam_mutations``); the others are inherited unchanged.

    Args:
        mutable: The names of the parameters explore may change.
        population_size, perturbation_interval, quantile_fraction, resample_probability,
            resource_attr: As for ``hyperlab.assessors.PopulationBasedTraining``.
    """

    def __init__(
        self,
        *,
        mutable: list[str],
        population_size: int = 10,
        perturbation_interval: float = 5,
        quantile_fraction: float = 0.25,
        resample_probability: float = 0.25,
        resource_attr: str | None = None,
        space: SearchSpace | None = None,
        **kwargs: Any,
    ) -> None:
        if space is not None:
            space = SearchSpace({name: space[name] for name in mutable})
        super().__init__(
            population_size=population_size,
            perturbation_interval=perturbation_interval,
            quantile_fraction=quantile_fraction,
            resample_probability=resample_probability,
            resource_attr=resource_attr,
            space=space,
            **kwargs,
        )
