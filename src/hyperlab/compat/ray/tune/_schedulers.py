"""Ray Tune's trial schedulers, translated into hyperlab assessors.

| Ray | hyperlab |
| --- | --- |
| ``FIFOScheduler`` | no assessor |
| ``ASHAScheduler`` / ``AsyncHyperBandScheduler`` | ``asha`` (stop variant) |
| ``HyperBandScheduler`` | ``hyperband`` |
| ``MedianStoppingRule`` | ``median`` |
| ``PopulationBasedTraining`` | ``pbt``, perturbing only ``hyperparam_mutations`` |

``time_attr="training_iteration"`` is hyperlab's default resource (``step + 1``); any other
``time_attr`` is the assessor's ``resource_attr``. Ray stops trials at ``max_t``
(``stop_last_trials``): so does the trial here. An argument with no hyperlab equivalent is
accepted at Ray's default value only; any other value raises ``NotImplementedError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hyperlab.compat.ray.tune._primitives import Domain
from hyperlab.compat.ray.tune._refuse import check_mode, refuse

__all__ = [
    "ASHAScheduler",
    "AsyncHyperBandScheduler",
    "FIFOScheduler",
    "HyperBandScheduler",
    "MedianStoppingRule",
    "PopulationBasedTraining",
    "SchedulerPlan",
    "TrialScheduler",
]


@dataclass(frozen=True)
class SchedulerPlan:
    """A scheduler in hyperlab's terms.

    Attributes:
        assessor: The assessor's name or class, or None for none.
        args: Its ``assessor_args``.
        stop_at: ``(time_attr, max_t)`` at which trials end (Ray's ``stop_last_trials``).
        checkpoints: It pauses or branches trials, which then continue from checkpoints.
        mutations: PBT's ``hyperparam_mutations`` (name -> Domain), else empty.
    """

    assessor: str | type | None = None
    args: dict[str, Any] = field(default_factory=dict)
    stop_at: tuple[str, float] | None = None
    checkpoints: bool = False
    mutations: dict[str, Domain] = field(default_factory=dict)


class TrialScheduler:
    """The base of the schedulers: ``metric`` and ``mode`` they judge by (or the Tuner's)."""

    def __init__(self, metric: str | None = None, mode: str | None = None) -> None:
        self.metric = metric
        self.mode = check_mode(type(self).__name__, mode)

    def plan(self) -> SchedulerPlan:
        """The scheduler in hyperlab's terms."""
        raise NotImplementedError(
            f"{type(self).__name__}: custom schedulers have no hyperlab equivalent; write a "
            "hyperlab.assessors.Assessor and run it with hyperlab.run(assessor=...)"
        )


class FIFOScheduler(TrialScheduler):
    """Runs every trial to its end: no assessor."""

    def plan(self) -> SchedulerPlan:
        return SchedulerPlan()


def _resource(time_attr: str) -> dict[str, Any]:
    return {} if time_attr == "training_iteration" else {"resource_attr": time_attr}


class AsyncHyperBandScheduler(TrialScheduler):
    """Asynchronous successive halving: hyperlab's ``asha`` (stop variant), with
    ``min_resource=grace_period``, ``max_resource=max_t``, and ``reduction_factor`` (an
    integer here). ``brackets`` must be 1."""

    def __init__(
        self,
        time_attr: str = "training_iteration",
        metric: str | None = None,
        mode: str | None = None,
        max_t: float = 100,
        grace_period: float = 1,
        reduction_factor: float = 4,
        brackets: int = 1,
        stop_last_trials: bool = True,
    ) -> None:
        super().__init__(metric, mode)
        name = type(self).__name__
        refuse(name, "brackets", brackets, 1, "hyperlab's ASHA has one bracket")
        if reduction_factor != int(reduction_factor):
            raise NotImplementedError(
                f"{name}(reduction_factor={reduction_factor!r}): hyperlab's ASHA needs an "
                "integer reduction_factor"
            )
        self.time_attr = time_attr
        self.max_t = max_t
        self.grace_period = grace_period
        self.reduction_factor = int(reduction_factor)
        self.stop_last_trials = stop_last_trials

    def plan(self) -> SchedulerPlan:
        return SchedulerPlan(
            "asha",
            {
                "min_resource": self.grace_period,
                "max_resource": self.max_t,
                "reduction_factor": self.reduction_factor,
                **_resource(self.time_attr),
            },
            stop_at=(self.time_attr, self.max_t) if self.stop_last_trials else None,
        )


ASHAScheduler = AsyncHyperBandScheduler


class HyperBandScheduler(TrialScheduler):
    """Synchronous Hyperband: hyperlab's ``hyperband`` with ``max_resource=max_t``,
    ``reduction_factor`` and ``min_resource = max(1, int(max_t / eta**s))`` for Ray's most
    aggressive bracket ``s = round(log(max_t) / log(eta))``. Trials pause at rungs and resume
    from their checkpoints."""

    def __init__(
        self,
        time_attr: str = "training_iteration",
        metric: str | None = None,
        mode: str | None = None,
        max_t: float = 81,
        reduction_factor: float = 3,
        stop_last_trials: bool = True,
    ) -> None:
        super().__init__(metric, mode)
        if not _number(max_t) or max_t < 1:
            raise ValueError(f"HyperBandScheduler: max_t must be a number >= 1, got {max_t!r}")
        if not _number(reduction_factor) or reduction_factor <= 1:
            raise ValueError(
                f"HyperBandScheduler: reduction_factor must be a number > 1, got "
                f"{reduction_factor!r}"
            )
        self.time_attr = time_attr
        self.max_t = max_t
        self.reduction_factor = reduction_factor
        self.stop_last_trials = stop_last_trials

    def plan(self) -> SchedulerPlan:
        eta = self.reduction_factor
        brackets = round(math.log(self.max_t) / math.log(eta)) if self.max_t > 1 else 0
        return SchedulerPlan(
            "hyperband",
            {
                "min_resource": max(1, int(self.max_t / eta**brackets)),
                "max_resource": self.max_t,
                "reduction_factor": eta,
                **_resource(self.time_attr),
            },
            stop_at=(self.time_attr, self.max_t) if self.stop_last_trials else None,
            checkpoints=True,
        )


class MedianStoppingRule(TrialScheduler):
    """Stops a trial whose best result is worse than the median: hyperlab's ``median`` with
    ``start_step = ceil(grace_period)``. hyperlab compares against the running averages of
    the trials that completed (Ray's: of all trials with ``min_samples_required`` results);
    ``min_samples_required`` (other than 3), ``min_time_slice`` and ``hard_stop=False`` are
    refused."""

    def __init__(
        self,
        time_attr: str = "time_total_s",
        metric: str | None = None,
        mode: str | None = None,
        grace_period: float = 60.0,
        min_samples_required: int = 3,
        min_time_slice: int = 0,
        hard_stop: bool = True,
    ) -> None:
        super().__init__(metric, mode)
        name = type(self).__name__
        refuse(name, "min_time_slice", min_time_slice, 0, "remove it")
        refuse(name, "hard_stop", hard_stop, True, "trials below the median are stopped")
        refuse(
            name,
            "min_samples_required",
            min_samples_required,
            3,
            "hyperlab's median compares against the trials that completed",
        )
        self.time_attr = time_attr
        self.grace_period = grace_period

    def plan(self) -> SchedulerPlan:
        args = {"start_step": math.ceil(self.grace_period), **_resource(self.time_attr)}
        return SchedulerPlan("median", args)


class PopulationBasedTraining(TrialScheduler):
    """Population based training: hyperlab's ``pbt`` over the whole population
    (``num_samples`` trials, run at once), perturbing only ``hyperparam_mutations``.

    hyperlab does not change a bad trial in place: it stops it (EARLY_STOPPED) and starts a
    new trial from the chosen good trial's checkpoint with perturbed parameters, recording
    that trial as its ``parent``; so results hold the stopped trials too. A mutation is a
    list of values (a choice: perturbing moves to a neighbouring value) or a search
    primitive. A parameter of the mutations that ``param_space`` gives a constant starts
    there in every trial, as in Ray, and is then perturbed and resampled within the
    mutation; one that ``param_space`` leaves out is drawn from the mutation; one that it
    gives a primitive must be the same primitive. Perturbed numbers are clipped to their
    bounds."""

    def __init__(
        self,
        time_attr: str = "time_total_s",
        metric: str | None = None,
        mode: str | None = None,
        perturbation_interval: float = 60.0,
        burn_in_period: float = 0.0,
        hyperparam_mutations: Mapping[str, Any] | None = None,
        quantile_fraction: float = 0.25,
        resample_probability: float = 0.25,
        perturbation_factors: tuple[float, float] = (1.2, 0.8),
        custom_explore_fn: Any = None,
        log_config: bool = True,
        require_attrs: bool = True,
        synch: bool = False,
    ) -> None:
        super().__init__(metric, mode)
        name = type(self).__name__
        refuse(name, "burn_in_period", burn_in_period, 0.0, "remove it")
        refuse(name, "perturbation_factors", tuple(perturbation_factors), (1.2, 0.8), "remove it")
        refuse(name, "custom_explore_fn", custom_explore_fn, None, "use hyperparam_mutations")
        refuse(name, "synch", synch, False, "hyperlab's PBT is asynchronous")
        refuse(name, "require_attrs", require_attrs, True, "report time_attr and the metric")
        if not hyperparam_mutations:
            raise ValueError(f"{name} needs hyperparam_mutations: which parameters to perturb")
        self.mutations = {k: _mutation(k, v) for k, v in hyperparam_mutations.items()}
        self.time_attr = time_attr
        self.perturbation_interval = perturbation_interval
        self.quantile_fraction = quantile_fraction
        self.resample_probability = resample_probability

    def plan(self) -> SchedulerPlan:
        from hyperlab.compat.ray.tune._pbt import MutationsPBT  # needs pydantic: when used

        args = {
            "mutable": list(self.mutations),
            "perturbation_interval": self.perturbation_interval,
            "quantile_fraction": self.quantile_fraction,
            "resample_probability": self.resample_probability,
            **_resource(self.time_attr),
        }
        return SchedulerPlan(MutationsPBT, args, checkpoints=True, mutations=self.mutations)


def _mutation(name: str, value: Any) -> Domain:
    if isinstance(value, Domain):
        return value
    if isinstance(value, (list, tuple)):
        return Domain("choice", (tuple(value),))
    raise NotImplementedError(
        f"PopulationBasedTraining(hyperparam_mutations={{{name!r}: {value!r}}}): only lists "
        "and search primitives (tune.uniform...) are mapped; a function or a nested dict "
        "has no hyperlab equivalent"
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
