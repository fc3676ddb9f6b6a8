"""What an ``Experiment`` is made of: its keyword options checked, and its tuner, assessor,
executor and record, for a new experiment and for a stored one that is resumed."""

from __future__ import annotations

import difflib
import json
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cloudpickle

from hyperlab.assessors.base import Assessor, assessor_name
from hyperlab.config import (
    ExperimentOptions,
    ResearchOptions,
    executor_fields,
    validate_executor_args,
    validate_options,
)
from hyperlab.errors import ConfigError
from hyperlab.executors.base import Executor
from hyperlab.experiment._keywords import Options
from hyperlab.experiment._objective import ConstraintsFunc
from hyperlab.experiment._setup import (
    check_round_trips,
    make_assessor,
    make_executor,
    objective_folder,
    random_seed,
    reference,
    try_pickle,
    with_budget,
)
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, Store, TrialFilter
from hyperlab.store.tokens import ensure_token
from hyperlab.trial import ExperimentStatus
from hyperlab.tuners.base import Tuner, create_tuner, tuner_name

__all__ = [
    "Parts",
    "check_keywords",
    "check_options",
    "instances",
    "new_parts",
    "new_record",
    "stored_parts",
    "warn_if_named_twice",
    "warn_if_spent",
    "write_folder",
]


@dataclass(frozen=True)
class Parts:
    """The options an experiment runs with (budget capped by a finite tuner, seed drawn) and
    the objects that run it."""

    options: ExperimentOptions
    tuner: Tuner
    assessor: Assessor | None
    executor: Executor
    constraints: ConstraintsFunc | None = None


def check_options(
    options: Mapping[str, Any], research: ResearchOptions | Mapping[str, Any] | None = None
) -> tuple[
    ExperimentOptions,
    str | type[Tuner] | Tuner,
    str | type[Assessor] | Assessor | None,
    ConstraintsFunc | None,
]:
    """The keyword options of ``run`` and ``Experiment`` (``Options``) validated, with the
    tuner and assessor as given (names, classes or instances, which the options name), and
    ``constraints`` when given as a function (the options then hold none).

    ``executor_args`` is checked on its own, so its errors name ``executor_args.<option>``; an
    executor option given as a keyword of its own (the form before ``executor_args``) is
    taken with a ``DeprecationWarning`` saying how to give it now.

    Raises:
        TypeError: a keyword that is no option.
        ConfigError: an invalid option (naming it, the value and what was expected), or an
            executor option given both ways.
    """
    given = check_keywords(options)
    tuner = given.pop("tuner", "auto")
    assessor = given.pop("assessor", None)
    constraints = given.get("constraints")
    if callable(constraints):
        del given["constraints"]
    else:
        constraints = None
    executor = validate_executor_args(given.pop("executor_args", None))
    for name in executor_fields():
        if name not in given:
            continue
        if name in executor:
            raise ConfigError(f"{name}: given both as a keyword and in executor_args; keep one")
        warnings.warn(
            f"{name}=... as a keyword of its own is deprecated: give it in executor_args, "
            f"executor_args={{{name!r}: ...}}",
            DeprecationWarning,
            stacklevel=_caller_level(),
        )
    if given.get("resources") is not None:
        given["resources"] = dict(given["resources"])
    checked = validate_options(
        **given,
        **executor,
        tuner=tuner_name(tuner),
        assessor=None
        if assessor is None
        else assessor_name(type(assessor) if isinstance(assessor, Assessor) else assessor),
        research=research,
    )
    return checked, tuner, assessor, constraints


def check_keywords(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as a dict, once each is known to be an option.

    Raises:
        TypeError: a keyword that is none, as Python's for an unexpected keyword argument.
    """
    unknown = sorted(set(options) - Options.__optional_keys__)
    if unknown:
        raise TypeError(f"got an unexpected keyword argument {unknown[0]!r}{_hint(unknown[0])}")
    return dict(options)


# What users of Ray Tune, Optuna and NNI type, and hyperlab's name for it.
_PEER_NAMES = {
    "num_samples": "max_trials",  # Ray Tune
    "n_trials": "max_trials",  # Optuna
    "max_trial_number": "max_trials",  # NNI
    "timeout": "max_duration",  # Optuna
    "time_budget_s": "max_duration",  # Ray Tune
    "max_experiment_duration": "max_duration",  # NNI
    "trial_concurrency": "concurrency",  # NNI
    "n_jobs": "concurrency",  # Optuna
    "max_concurrent_trials": "concurrency",  # Ray Tune
    "sampler": "tuner",  # Optuna
    "search_alg": "tuner",  # Ray Tune
    "pruner": "assessor",  # Optuna
    "scheduler": "assessor",  # Ray Tune
    "direction": "mode",  # Optuna
    "directions": "mode",  # Optuna
    "optimize_mode": "mode",  # NNI
}


def _hint(keyword: str) -> str:
    """``"; did you mean ...?"`` for a peer's name or a misspelling of an option, else ``""``."""
    if keyword in _PEER_NAMES:
        return f"; hyperlab calls it {_PEER_NAMES[keyword]!r}"
    close = difflib.get_close_matches(keyword, sorted(Options.__optional_keys__), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _caller_level() -> int:
    """The ``stacklevel`` of a warning about the call into ``hyperlab.experiment``."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        "hyperlab.experiment"
    ):
        level, frame = level + 1, frame.f_back
    return level


def new_parts(
    options: ExperimentOptions,
    space: SearchSpace,
    objective: Callable[..., Any],
    tuner: str | type[Tuner] | Tuner,
    assessor: str | type[Assessor] | Assessor | None,
    constraints: ConstraintsFunc | None = None,
) -> Parts:
    """The parts of a new experiment, each checked against the others; ``constraints`` is
    a constraints function given in Python.

    Raises:
        ConfigError: a tuner, assessor or executor that cannot be built from the options, an
            assessor the executor cannot wait for, or no budget.
    """
    if options.working_dir is not None:
        folder = Path(options.working_dir).expanduser().resolve()
        options = options.model_copy(update={"working_dir": str(folder)})
    seed = random_seed() if options.seed is None else options.seed
    options = options.model_copy(update={"seed": seed})
    tuner_obj = create_tuner(
        tuner,
        space,
        mode=options.modes,
        seed=seed,
        args=options.tuner_args,
        constrained=options.constraints is not None or constraints is not None,
    )
    assessor_obj = make_assessor(options, tuner_obj, assessor)
    options = with_budget(options, tuner_obj)
    executor = make_executor(options, objective)
    check_round_trips(options, assessor_obj, executor)
    return Parts(options, tuner_obj, assessor_obj, executor, constraints)


def stored_parts(
    record: ExperimentRecord, options: ExperimentOptions, objective: Callable[..., Any]
) -> Parts:
    """The parts of a stored experiment, with ``options`` (its own, perhaps changed): its
    tuner and assessor as they were given (instances as they were before the first trial),
    fresh."""
    tuner, assessor, constraints = stored_instances(record)
    if tuner is None:
        space = SearchSpace.from_nni(record.space)
        tuner = create_tuner(
            options.tuner,
            space,
            mode=options.modes,
            seed=record.seed,
            args=options.tuner_args,
            constrained=options.constraints is not None or constraints is not None,
        )
    assessor_obj = make_assessor(options, tuner, assessor or options.assessor)
    executor = make_executor(options, objective)
    check_round_trips(options, assessor_obj, executor)
    return Parts(with_budget(options, tuner), tuner, assessor_obj, executor, constraints)


def new_record(
    experiment_id: str,
    parts: Parts,
    space: SearchSpace,
    objective: Callable[..., Any],
    given: bytes | None,
) -> ExperimentRecord:
    """The record of a new experiment, status INITIALIZED; ``given`` is what ``instances``
    made of the tuner and assessor."""
    return ExperimentRecord(
        id=experiment_id,
        name=parts.options.name,
        status=ExperimentStatus.INITIALIZED,
        options=parts.options,
        space=space.to_nni(),
        seed=parts.options.seed or 0,
        objective=parts.executor.objective_bytes or try_pickle(objective),
        objective_ref=reference(objective),
        objective_path=objective_folder(objective),
        tuner=given,
        created_at=time.time(),
    )


def instances(
    tuner: object, assessor: object, constraints: ConstraintsFunc | None = None
) -> bytes | None:
    """What the record's ``tuner`` keeps of a tuner and an assessor given as instances and of
    a constraints function, so that ``resume`` rebuilds them as they were: the pickled tuner
    (as before assessors could be instances), or ``{"tuner": tuner or None, "assessor":
    assessor or None, "constraints": constraints}`` with an assessor instance or a constraints
    function; None when there is none of them (or one cannot be pickled).

    Raises:
        ConfigError: the constraints function cannot be pickled (a resumed experiment would
            lose it).
    """
    if isinstance(assessor, Assessor) or constraints is not None:
        kept = {
            "tuner": tuner if isinstance(tuner, Tuner) else None,
            "assessor": assessor if isinstance(assessor, Assessor) else None,
            "constraints": constraints,
        }
        blob = try_pickle(kept)
        if blob is None and constraints is not None and try_pickle(constraints) is None:
            raise ConfigError(
                f"constraints: the function {constraints!r} cannot be pickled (cloudpickle), "
                "so a resumed experiment could not judge its trials; define it at module level "
                "or give the constraints as strings ('latency_ms <= 50')"
            )
        return blob
    return try_pickle(tuner) if isinstance(tuner, Tuner) else None


def stored_instances(
    record: ExperimentRecord,
) -> tuple[Tuner | None, Assessor | None, ConstraintsFunc | None]:
    """The tuner, assessor and constraints function ``instances`` stored for ``record``,
    fresh; None for each that was not given as one."""
    if record.tuner is None:
        return None, None, None
    stored = cloudpickle.loads(record.tuner)
    if isinstance(stored, dict):
        return stored.get("tuner"), stored.get("assessor"), stored.get("constraints")
    return stored, None, None


def warn_if_spent(store: Store, experiment_id: str, max_trials: int) -> None:
    """Warn when ``max_trials`` leaves no room for a new trial (which NNI's manager accepts)."""
    created = store.count_trials(experiment_id, TrialFilter())  # a count: not every trial read
    if created >= max_trials:
        warnings.warn(
            f"max_trials={max_trials}: experiment {experiment_id} already has {created} trials, "
            "so it creates no new one; those that were interrupted run again, then it ends "
            "DONE (as NNI does with a lower maxTrialNumber)",
            UserWarning,
            stacklevel=_caller_level(),
        )


def warn_if_named_twice(store: Store, name: str) -> None:
    """Warn (``UserWarning``) when another experiment in ``store`` has this name."""
    ids = store.ids_named(name)
    if ids:
        warnings.warn(
            f"an experiment named {name!r} already exists in {store.url} ({', '.join(ids)}); "
            "commands given this name will ask which id you mean",
            UserWarning,
            stacklevel=3,
        )


def write_folder(folder: Path, record: ExperimentRecord, options: ExperimentOptions) -> None:
    """Make the experiment's folder, with its token (what writes through the REST API need)
    and ``experiment.json``: its id, options, objective and search space, for people."""
    folder.mkdir(parents=True, exist_ok=True)
    ensure_token(folder)
    summary = {
        "id": record.id,
        "options": options.model_dump(mode="json"),
        "objective": record.objective_ref,
        "search_space": record.space,
    }
    (folder / "experiment.json").write_text(json.dumps(summary, indent=2, default=str))
