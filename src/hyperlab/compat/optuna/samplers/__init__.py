"""Optuna's samplers (``optuna.samplers``), each naming the hyperlab tuner that runs.

Each keeps Optuna's arguments and defaults; an argument with no hyperlab equivalent raises
``NotImplementedError`` naming it, unless it is left at its default. ``seed`` becomes the
experiment's seed, which derives every random stream of hyperlab's (the tuner's included).
Parameters defined as the objective runs are drawn independently until every finished trial
has them, then modelled by the tuner, as Optuna's samplers do with their intersection search
space.

A study with several objectives (``directions=``) runs its sampler's tuner with one mode per
objective: ``NSGAIISampler``, ``NSGAIIISampler``, ``TPESampler``, ``GPSampler``,
``RandomSampler`` and ``GridSampler`` take them; hyperlab refuses ``CmaEsSampler``'s ``cmaes``
(one objective), naming it, before any trial runs.

``constraints_func`` (``TPESampler``, ``GPSampler``, ``NSGAIISampler``, ``NSGAIIISampler``)
judges each trial that completes, as Optuna's: its values are kept with the trial (as Optuna
keeps them, in the ``constraints`` system attribute) and are the experiment's constraints.
As in Optuna 5 it is deprecated (a ``FutureWarning``): ``trial.set_constraint`` does the same
from the objective, for any sampler whose tuner takes constraints.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "BaseSampler",
    "CmaEsSampler",
    "GPSampler",
    "GridSampler",
    "NSGAIIISampler",
    "NSGAIISampler",
    "RandomSampler",
    "TPESampler",
    "nsgaii",
]

ConstraintsFunc = Callable[[Any], Sequence[float]]
"""Optuna's ``constraints_func(frozen_trial) -> constraint values`` (met when ``<= 0``)."""


class BaseSampler:
    """A sampler: the hyperlab tuner it stands for (``tuner``), its arguments and seed, and
    the ``constraints_func`` that judges each completed trial (None for most)."""

    tuner: str = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.tuner_args: dict[str, Any] = {}
        self.constraints_func: ConstraintsFunc | None = None

    def _take_constraints(self, constraints_func: ConstraintsFunc | None) -> None:
        """Keep ``constraints_func``, with Optuna 5's ``FutureWarning`` when one is given."""
        if constraints_func is not None:
            warnings.warn(
                "`constraints_func` has been deprecated in v5.0.0. This feature will be "
                "removed in v7.0.0. Use `optuna.trial.Trial.set_constraint` instead.",
                FutureWarning,
                stacklevel=3,
            )
        self.constraints_func = constraints_func

    def space(self) -> dict[str, Any]:
        """Parameters declared before any trial runs (a grid's); none for most samplers."""
        return {}


def _refuse(sampler: str, argument: str, value: Any, default: Any, instead: str) -> None:
    if value is not default and value != default:
        raise NotImplementedError(
            f"{sampler}({argument}={value!r}): hyperlab has no equivalent; {instead}"
        )


class RandomSampler(BaseSampler):
    """Independent draws from each distribution: hyperlab's ``random`` tuner."""

    tuner = "random"


class TPESampler(BaseSampler):
    """The tree-structured Parzen estimator: hyperlab's ``tpe`` tuner, multivariate with a
    constant liar as Optuna 5's defaults are; its first ``n_startup_trials`` are random."""

    tuner = "tpe"

    def __init__(
        self,
        *,
        consider_prior: bool | None = None,
        prior_weight: float | None = None,
        consider_magic_clip: bool | None = None,
        consider_endpoints: bool | None = None,
        n_startup_trials: int = 10,
        n_ei_candidates: int = 24,
        gamma: Any = None,
        weights: Any = None,
        seed: int | None = None,
        multivariate: bool | None = None,
        group: bool = False,
        warn_independent_sampling: bool | None = None,
        constant_liar: bool = True,
        constraints_func: Any = None,
    ) -> None:
        super().__init__(seed)
        name = "TPESampler"
        _refuse(name, "consider_prior", consider_prior, None, "hyperlab's TPE uses a prior")
        _refuse(name, "consider_magic_clip", consider_magic_clip, None, "leave it unset")
        _refuse(name, "consider_endpoints", consider_endpoints, None, "leave it unset")
        _refuse(name, "gamma", gamma, None, "hyperlab's tpe takes a fraction: tuner_args gamma")
        _refuse(name, "weights", weights, None, "leave it unset")
        _refuse(name, "group", group, False, "conditional parameters are modelled per branch")
        self._take_constraints(constraints_func)
        self.tuner_args = {
            "n_startup_trials": n_startup_trials,
            "n_ei_candidates": n_ei_candidates,
            "multivariate": multivariate is not False,
            "constant_liar": constant_liar,
            "startup": "random",
        }
        if prior_weight is not None:
            self.tuner_args["prior_weight"] = prior_weight


class CmaEsSampler(BaseSampler):
    """CMA-ES: hyperlab's ``cmaes`` tuner (IPOP restarts with ``restart_strategy="ipop"``)."""

    tuner = "cmaes"

    def __init__(
        self,
        *,
        x0: dict[str, Any] | None = None,
        sigma0: float | None = None,
        n_startup_trials: int = 1,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        seed: int | None = None,
        consider_pruned_trials: bool = False,
        restart_strategy: str | None = None,
        popsize: int | None = None,
        inc_popsize: int = -1,
        use_separable_cma: bool = False,
        with_margin: bool = False,
        lr_adapt: bool = False,
        source_trials: Sequence[Any] | None = None,
    ) -> None:
        super().__init__(seed)
        name = "CmaEsSampler"
        _refuse(name, "independent_sampler", independent_sampler, None, "leave it unset")
        _refuse(name, "consider_pruned_trials", consider_pruned_trials, False, "leave it")
        _refuse(name, "inc_popsize", inc_popsize, -1, "hyperlab's IPOP doubles the population")
        _refuse(name, "use_separable_cma", use_separable_cma, False, "leave it unset")
        _refuse(name, "with_margin", with_margin, False, "leave it unset")
        _refuse(name, "lr_adapt", lr_adapt, False, "leave it unset")
        _refuse(name, "source_trials", source_trials, None, "use hyperlab import-optuna")
        _refuse(
            name,
            "x0",
            x0,
            None,
            "the objective defines its parameters as it runs: CMA-ES starts at their centre",
        )
        if restart_strategy not in (None, "ipop"):
            raise NotImplementedError(
                f"CmaEsSampler(restart_strategy={restart_strategy!r}): hyperlab restarts "
                "with IPOP only; use 'ipop' or None"
            )
        # Optuna's sigma0 defaults to a sixth of the smallest range, on its [0, 1] scale
        _refuse(name, "n_startup_trials", n_startup_trials, 1, "the first trial is drawn at random")
        self.tuner_args = {
            "sigma0": 1 / 6 if sigma0 is None else sigma0,
            "restarts": restart_strategy == "ipop",
        }
        if popsize is not None:
            self.tuner_args["popsize"] = popsize


class GPSampler(BaseSampler):
    """Gaussian-process Bayesian optimization: hyperlab's ``gp`` tuner."""

    tuner = "gp"

    def __init__(
        self,
        *,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        n_startup_trials: int = 10,
        deterministic_objective: bool = False,
        constraints_func: Any = None,
        warn_independent_sampling: bool = True,
    ) -> None:
        super().__init__(seed)
        name = "GPSampler"
        _refuse(name, "independent_sampler", independent_sampler, None, "leave it unset")
        _refuse(name, "deterministic_objective", deterministic_objective, False, "leave it")
        self._take_constraints(constraints_func)
        self.tuner_args = {"n_startup_trials": n_startup_trials}


class GridSampler(BaseSampler):
    """Every combination of ``search_space``'s values: hyperlab's ``grid`` tuner, over a
    declared space of choices. The objective's ``suggest_*`` for a grid parameter returns the
    grid's value, whatever range it gives; the grid is walked in order (Optuna shuffles it
    with ``seed``), and the study ends once it is covered."""

    tuner = "grid"

    def __init__(self, search_space: Mapping[str, Sequence[Any]], seed: int | None = None) -> None:
        super().__init__(seed)
        if not isinstance(search_space, Mapping):
            raise TypeError(
                f"GridSampler: search_space must map each name to its values, got {search_space!r}"
            )
        for name, values in search_space.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
                raise ValueError(
                    f"GridSampler: search_space[{name!r}] must be a sequence of values, got "
                    f"{values!r}"
                )
            if len(values) == 0:
                raise ValueError(f"GridSampler: search_space[{name!r}] has no value")
        self.search_space = {name: list(values) for name, values in search_space.items()}

    def space(self) -> dict[str, Any]:
        return {
            name: {"_type": "choice", "_value": values}
            for name, values in self.search_space.items()
        }


from hyperlab.compat.optuna.samplers import nsgaii  # noqa: E402  (after BaseSampler)
from hyperlab.compat.optuna.samplers._nsga import (  # noqa: E402  (they subclass BaseSampler)
    NSGAIIISampler,
    NSGAIISampler,
)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"optuna.samplers.{name}: hyperlab maps TPESampler, RandomSampler, CmaEsSampler, "
        "GPSampler, GridSampler, NSGAIISampler and NSGAIIISampler; use one of them (or "
        "hyperlab's own tuners: hyperlab.tuners.tuner_names())"
    )
