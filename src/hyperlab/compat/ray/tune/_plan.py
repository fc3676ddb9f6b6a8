"""Translating a Ray Tune experiment (trainable, ``param_space``, ``TuneConfig``,
``RunConfig``) into the arguments of a hyperlab ``Experiment``, checking everything first.

Executor: trials run in worker processes (``executor="processes"``), isolated like Ray's
actors (their own globals, crashes and output) but started once and reused, so a trial costs
milliseconds; after ``ray.init(address=...)`` (``hyperlab.compat.ray.init``) they run on that
cluster (``executor="ray"``). Concurrency is what Ray would run at once on this machine: one
trial per ``cpu`` the trial asks for (1 by default) of its CPUs (``ray.init(num_cpus=...)``'s,
else all), capped by ``max_concurrent_trials`` and a ``ConcurrencyLimiter``; population based
training runs its whole population at once.
``hyperlab_options`` (a dict of ``hyperlab.run`` arguments: ``executor``, ``concurrency``,
``storage``, ``seed``, ``id``, ``ray_address``...) take precedence over all this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperlab.compat.ray._core import cpus as declared_cpus
from hyperlab.compat.ray._core import recorded_address
from hyperlab.compat.ray.tune._config import CheckpointConfig, FailureConfig, RunConfig, TuneConfig
from hyperlab.compat.ray.tune._function import function_form
from hyperlab.compat.ray.tune._objective import TrialObjective
from hyperlab.compat.ray.tune._primitives import Domain, SampleFrom
from hyperlab.compat.ray.tune._schedulers import FIFOScheduler, SchedulerPlan, TrialScheduler
from hyperlab.compat.ray.tune._searchers import BasicVariantGenerator, Searcher, SearchPlan
from hyperlab.compat.ray.tune._space import Template, translate
from hyperlab.compat.ray.tune._trainable import PlacementGroupFactory, Resourced, Trainable
from hyperlab.compat.ray.tune.stopper import stop_rule
from hyperlab.config import MAX_TRIALS
from hyperlab.space import Parameter

__all__ = ["HYPERLAB_OPTIONS", "Plan", "make_plan"]

HYPERLAB_OPTIONS = frozenset(
    {
        "callbacks",
        "checkpoint_keep",
        "concurrency",
        "continue_on_failure",
        "echo_output",
        "executor",
        "fail_fast",
        "gpus",
        "id",
        "max_failed_trials",
        "max_log_bytes",
        "max_node_failures",
        "progress",
        "ray_address",
        "resources",
        "seed",
        "storage",
        "trial_timeout",
        "tuner",
        "tuner_args",
        "working_dir",
    }
)
"""The ``hyperlab.run`` arguments ``hyperlab_options`` may set; the others come from Ray's."""

UNLIMITED = MAX_TRIALS
"""Stands for Ray's "no limit" where hyperlab wants a number (checkpoints kept, failures)."""


@dataclass(frozen=True)
class Plan:
    """A Ray Tune experiment in hyperlab's terms.

    Attributes:
        objective: What each trial runs.
        space: The hyperlab search space.
        options: The other keyword arguments of ``hyperlab.Experiment``.
        metric / mode: Ray's (None when the run names none).
        fail_fast: ``FailureConfig.fail_fast``.
    """

    objective: TrialObjective
    space: dict[str, Parameter]
    options: dict[str, Any]
    metric: str | None
    mode: str | None
    fail_fast: bool | str


def make_plan(
    trainable: Any,
    param_space: Mapping[str, Any] | None,
    tune_config: TuneConfig | None,
    run_config: RunConfig | None,
    hyperlab_options: Mapping[str, Any] | None,
) -> Plan:
    """The plan of a run; every error is raised here, before anything runs.

    Raises:
        NotImplementedError: Something with no hyperlab equivalent, named.
        ValueError / TypeError: Bad arguments, named with their values.
    """
    tune_config = _checked(tune_config, TuneConfig, "tune_config")
    run_config = _checked(run_config, RunConfig, "run_config")
    function, resources = _trainable(trainable)
    scheduler = _checked(tune_config.scheduler, TrialScheduler, "scheduler", FIFOScheduler())
    searcher = _checked(tune_config.search_alg, Searcher, "search_alg", BasicVariantGenerator())
    metric, mode = _objective(tune_config, scheduler, searcher)
    scheduled, search = scheduler.plan(), searcher.plan()
    population = scheduled.mutations != {}
    if param_space is not None and not isinstance(param_space, Mapping):
        raise TypeError(f"param_space: expected a dict, got {type(param_space).__name__}")
    completed, constants = _with_mutations(param_space or {}, scheduled.mutations)
    template = translate(completed)
    starts = _starts(template, constants)
    extra = _hyperlab_options(hyperlab_options, template)
    samples = None if tune_config.num_samples == -1 else tune_config.num_samples
    budget = tune_config.budget_seconds()
    if samples is None and budget is None:
        raise ValueError("TuneConfig(num_samples=-1) runs trials without end: give time_budget_s")
    options: dict[str, Any] = {
        "metric": metric or "training_iteration",
        "mode": mode or "max",
        "max_duration": budget,
        "seed": search.seed,
        "name": run_config.name,
        "working_dir": _folder(run_config),
        "progress": False if run_config.verbose == 0 else None,
        "echo_output": not run_config.log_to_file,
        **_search(search, searcher, template, samples, starts if population else None),
        **_assessor(scheduled, samples),
        **_failures(run_config.failure_config or FailureConfig()),
    }
    checkpoints = run_config.checkpoint_config or CheckpointConfig()
    options["checkpoint_keep"] = checkpoints.num_to_keep or UNLIMITED
    if checkpoints.checkpoint_score_attribute is not None:
        options["checkpoint_score"] = checkpoints.checkpoint_score_attribute
        options["checkpoint_score_mode"] = checkpoints.checkpoint_score_order
    address = recorded_address()  # ray.init(address=...): trials go to that cluster
    options["executor"] = extra.get("executor", "processes" if address is None else "ray")
    if address is not None and options["executor"] == "ray":
        options["ray_address"] = address
    held, cpu = _resources(resources, options["executor"])
    options.update(held)
    options["concurrency"] = _concurrency(
        options["executor"],
        cpu,
        [tune_config.max_concurrent_trials, search.max_concurrent],
        population=samples if population else None,
        total=None if samples is None else samples * template.grid_size(),
    )
    options.update(extra)
    objective = TrialObjective(
        function,
        template,
        stop=stop_rule(run_config.stop, scheduled.stop_at),
        experiment_name=run_config.name,
        reuse=tune_config.reuse_actors,
        chdir=options["executor"] in ("processes", "ray")
        and os.environ.get("RAY_CHDIR_TO_TRIAL_DIR", "1") != "0",
        **_checkpointing(function, checkpoints, scheduled),
    )
    failure = run_config.failure_config or FailureConfig()
    return Plan(objective, template.space(), options, metric, mode, failure.fail_fast)


def _checked(value: Any, kind: type, name: str, default: Any = None) -> Any:
    if value is None:
        return kind() if default is None else default
    if not isinstance(value, kind):
        raise TypeError(
            f"{name}: expected a hyperlab.compat.ray.tune {kind.__name__}, got "
            f"{type(value).__module__}.{type(value).__name__}"
        )
    return value


def _hyperlab_options(given: Mapping[str, Any] | None, template: Template) -> dict[str, Any]:
    extra = dict(given or {})
    unknown = sorted(set(extra) - HYPERLAB_OPTIONS)
    if unknown:
        raise ValueError(
            f"hyperlab_options: {unknown} cannot be set here (Ray's own arguments set the "
            f"metric, budget, scheduler and name); it takes {sorted(HYPERLAB_OPTIONS)}"
        )
    if "tuner" in extra and template.grid():
        raise ValueError(
            f"hyperlab_options: a tuner cannot run grid_search ({template.grid()}); remove "
            "'tuner' or the grid_search"
        )
    return extra


def _trainable(trainable: Any) -> tuple[Any, Any]:
    """The function or Trainable class, and the resources it asks for (or None)."""
    resources = None
    if isinstance(trainable, Resourced):
        trainable, resources = trainable.trainable, trainable.resources
    if isinstance(trainable, str):
        raise NotImplementedError(
            f"trainable {trainable!r}: trainables registered by name have no hyperlab "
            "equivalent; pass the function or the Trainable class"
        )
    if isinstance(trainable, type):
        if not issubclass(trainable, Trainable):
            raise TypeError(
                f"trainable: a class must subclass hyperlab.compat.ray.tune.Trainable, got "
                f"{trainable!r}"
            )
        if "default_resource_request" in dir(trainable):
            raise NotImplementedError(
                f"{trainable.__name__}.default_resource_request has no hyperlab equivalent "
                "(every trial holds the same resources); use tune.with_resources"
            )
    elif hasattr(trainable, "as_trainable"):
        raise NotImplementedError(
            "Ray Train trainers (TorchTrainer...) have no hyperlab equivalent; tune a "
            "function that trains"
        )
    elif not callable(trainable):
        raise TypeError(f"trainable: expected a function or a Trainable class, got {trainable!r}")
    else:
        function_form(trainable)  # a signature Ray would not call is refused now
    return trainable, resources


def _objective(
    tune_config: TuneConfig, scheduler: TrialScheduler, searcher: Searcher
) -> tuple[str | None, str | None]:
    """The metric and mode, from whichever of the three sets them (they must agree)."""
    sources = [
        ("TuneConfig", tune_config.metric, tune_config.mode),
        (type(scheduler).__name__, scheduler.metric, scheduler.mode),
        (type(searcher).__name__, searcher.metric, searcher.mode),
    ]
    chosen: dict[str, tuple[str, Any]] = {}
    for owner, *values in sources:
        for field, value in zip(("metric", "mode"), values, strict=True):
            if value is None:
                continue
            before = chosen.setdefault(field, (owner, value))
            if before[1] != value:
                raise ValueError(
                    f"{field}: {before[0]} says {before[1]!r} and {owner} says {value!r}; "
                    "give it once"
                )
    metric = chosen.get("metric", (None, None))[1]
    mode = chosen.get("mode", (None, None))[1]
    if (metric is None) != (mode is None):
        raise ValueError(f"metric and mode: give both or neither, got {metric=!r}, {mode=!r}")
    for owner, needs in (
        (type(scheduler).__name__, not isinstance(scheduler, FIFOScheduler)),
        (type(searcher).__name__, searcher.plan().tuner is not None),
    ):
        if needs and metric is None:
            raise ValueError(f"{owner} needs a metric and a mode (in it or in TuneConfig)")
    return metric, mode


def _with_mutations(
    param_space: Mapping[str, Any], mutations: dict[str, Domain]
) -> tuple[dict, dict[str, Any]]:
    """``param_space`` with PBT's mutations as the distributions of the parameters they name,
    and the constants ``param_space`` gave those (Ray's usual pattern: trials start from the
    constant, and PBT perturbs and resamples within the mutation's distribution)."""
    space, constants = dict(param_space), {}
    for name, domain in mutations.items():
        given = space.setdefault(name, domain)
        if not isinstance(given, (Domain, Mapping)) and not _primitive(given):
            constants[name], space[name] = given, domain
            continue
        same = isinstance(given, Domain) and given.kind == domain.kind and given.args == domain.args
        if not same:
            raise NotImplementedError(
                f"PopulationBasedTraining: {name!r} is {given!r} in param_space and "
                f"{domain!r} in hyperparam_mutations; hyperlab draws and perturbs a "
                "parameter within one distribution: give the same one in both, a constant "
                "to start from, or leave it out of param_space"
            )
    return space, constants


def _primitive(value: Any) -> bool:
    return isinstance(value, SampleFrom) or (
        isinstance(value, list) and any(isinstance(v, (Domain, SampleFrom)) for v in value)
    )


def _starts(template: Template, constants: dict[str, Any]) -> dict[str, Any]:
    """The stored values of PBT's constants, each checked against its mutation."""
    starts = {}
    for name, value in constants.items():
        try:
            starts[name] = template.stored(name, value)
        except ValueError as exc:
            raise ValueError(
                f"PopulationBasedTraining: {name!r} starts at {value!r} in param_space, which "
                f"its hyperparam_mutations cannot take ({exc}); start within the mutation"
            ) from None
    return starts


def _search(
    search: SearchPlan,
    searcher: Searcher,
    template: Template,
    samples: int | None,
    starts: dict[str, Any] | None,
) -> dict[str, Any]:
    """The tuner; ``starts`` (PBT's constants, stored) is None without PBT."""
    pbt = starts is not None
    if search.tuner is None:
        from hyperlab.compat.ray.tune._variants import VariantTuner  # needs pydantic: when used

        grid, args = template.grid(), dict[str, Any](samples=samples)
        args.update({"grid": grid} if grid else {}, **({"branches": True} if pbt else {}))
        args.update({"starts": starts} if starts else {})
        return {"tuner": VariantTuner, "tuner_args": args}
    name = type(searcher).__name__
    if template.grid():
        raise NotImplementedError(
            f"grid_search ({template.grid()}) with {name}: only the default search "
            "(BasicVariantGenerator) runs grids; use tune.choice"
        )
    if pbt:
        raise NotImplementedError(
            f"PopulationBasedTraining with {name}: hyperlab's PBT takes its population from "
            "the default search; remove search_alg"
        )
    return {"tuner": search.tuner, "tuner_args": search.args, "max_trials": samples}


def _assessor(scheduled: SchedulerPlan, samples: int | None) -> dict[str, Any]:
    if scheduled.assessor is None:
        return {}
    args = dict(scheduled.args)
    if scheduled.mutations:  # population based training: the population is num_samples
        if samples is None:
            raise ValueError("PopulationBasedTraining needs num_samples >= 1: its population")
        args["population_size"] = samples
    return {"assessor": scheduled.assessor, "assessor_args": args}


def _failures(failure: FailureConfig) -> dict[str, Any]:
    """Ray runs every trial whatever others did, unless ``fail_fast``."""
    if failure.fail_fast:
        return {"continue_on_failure": False, "fail_fast": False}
    return {"fail_fast": False, "max_failed_trials": UNLIMITED}


def _folder(run_config: RunConfig) -> str | None:
    if run_config.storage_path is None:
        return None
    folder = Path(run_config.storage_path).expanduser()
    return os.fspath(folder / run_config.name if run_config.name else folder)


def _resources(resources: Any, executor: str) -> tuple[dict[str, Any], float]:
    """The options that hold ``resources`` with ``executor`` (the ray executor's own
    ``resources``, or ``gpus`` elsewhere), and the CPUs a trial takes."""
    if resources is None:
        return {}, 1.0
    if isinstance(resources, PlacementGroupFactory):
        if executor != "ray":
            raise NotImplementedError(
                "tune.PlacementGroupFactory needs the ray executor: pass "
                "hyperlab_options={'executor': 'ray'}, or give a dict of resources"
            )
        if len(resources.bundles) != 1:
            raise NotImplementedError(
                f"PlacementGroupFactory({resources.bundles!r}): several bundles have no "
                "hyperlab equivalent; every trial holds one set of resources"
            )
        resources = resources.bundles[0]
    wanted: dict[str, Any] = {}
    for key, value in resources.items():
        if key == "custom_resources":
            wanted.update(value)
        else:
            wanted[key.lower() if key in ("CPU", "GPU") else key] = value
    cpu = float(wanted.get("cpu", 1))
    if executor == "ray":
        return {"resources": wanted}, cpu
    others = sorted(set(wanted) - {"cpu", "gpu"})
    if others:
        raise NotImplementedError(
            f"resources {others}: hold memory and custom resources with the ray executor "
            "(hyperlab_options={'executor': 'ray'}); other executors place CPUs and GPUs"
        )
    return _gpus(float(wanted.get("gpu", 0))), cpu


def _gpus(gpu: float) -> dict[str, Any]:
    if gpu <= 0:
        return {}
    if gpu < 1:
        return {"gpus": {"indices": "auto", "per_trial": 1, "max_trials_per_gpu": int(1 // gpu)}}
    if gpu != int(gpu):
        raise NotImplementedError(f"resources gpu={gpu!r}: above 1, give a whole number")
    return {"gpus": {"indices": "auto", "per_trial": int(gpu)}}


def _concurrency(
    executor: str,
    cpu: float,
    limits: list[int | None],
    *,
    population: int | None,
    total: int | None,
) -> int:
    """Trials at once (see the module docstring); ``total`` trials at most, if known."""
    caps = [n for n in limits if n]
    if population is not None:
        if any(n < population for n in caps):
            raise ValueError(
                f"PopulationBasedTraining runs its population (num_samples={population}) at "
                f"once in hyperlab; max_concurrent_trials={min(caps)} is too low"
            )
        return population
    cpus = declared_cpus() or os.cpu_count() or 1  # ray.init(num_cpus=...) or the machine's
    if executor == "ray":  # an upper bound: the cluster runs what its resources hold
        return min(caps, default=total or cpus)
    return min([max(1, int(cpus // cpu)) if cpu > 0 else cpus, *caps])


def _checkpointing(
    function: Any, checkpoints: CheckpointConfig, scheduled: SchedulerPlan
) -> dict[str, Any]:
    """When a Trainable saves checkpoints; a function reports its own."""
    frequency, at_end = checkpoints.checkpoint_frequency, bool(checkpoints.checkpoint_at_end)
    if not isinstance(function, type):
        if frequency or at_end:
            raise ValueError(
                "CheckpointConfig(checkpoint_frequency, checkpoint_at_end) apply to Trainable "
                "classes; a function trainable reports its checkpoints with "
                "tune.report(metrics, checkpoint=...)"
            )
        return {}
    return {
        "checkpoint_frequency": 1 if scheduled.checkpoints else frequency,
        "checkpoint_at_end": at_end,
    }
