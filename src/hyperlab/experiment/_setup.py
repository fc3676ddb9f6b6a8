"""Building an experiment's parts: budget, executor, devices, seeds, objectives, liveness.

Helpers of ``hyperlab.experiment._experiment`` (and of the command line), kept apart so that
module holds only the API.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cloudpickle
import numpy as np

from hyperlab.assessors.base import (
    ASSESSORS,
    NNI_ASSESSOR_ADAPTER,
    Assessor,
    assessor_class,
    create_assessor,
    nni_assessor_class,
)
from hyperlab.config import ExperimentOptions, GpuConfig, import_path
from hyperlab.errors import ConfigError
from hyperlab.executors import CommandTrial, pickling
from hyperlab.executors.base import Executor, create_executor
from hyperlab.executors.devices import DevicePool, MemoryCheck, detect_gpus
from hyperlab.store import ExperimentRecord, command_ref
from hyperlab.trial import Mode
from hyperlab.tuners.base import Tuner

if TYPE_CHECKING:
    from hyperlab.config import ExperimentConfig


def with_budget(options: ExperimentOptions, tuner: Tuner) -> ExperimentOptions:
    """The options with ``max_trials`` capped by a finite tuner; ConfigError without budget."""
    limit = tuner.budget()
    if limit is not None and (options.max_trials is None or options.max_trials > limit):
        return options.model_copy(update={"max_trials": limit})
    if options.max_trials is None and options.max_duration is None and not tuner.runs_out():
        raise ConfigError(
            f"budget: the {options.tuner!r} tuner never runs out of proposals, so give a budget: "
            "max_trials=N and/or max_duration (seconds or '30m', '2h')"
        )
    return options


OBJECTIVE_ARG = "objective"
"""The ``assessor_args`` key naming the one objective a single-objective assessor judges in an
experiment with several (``assessor_args={"objective": "loss"}``); hyperlab's, not passed on."""


def make_assessor(
    options: ExperimentOptions, tuner: Tuner, assessor: str | type[Assessor] | Assessor | None
) -> Assessor | None:
    """The experiment's assessor: the one ``assessor`` names (with ``assessor_args``, and the
    tuner's search space) or is (an instance, used as it is), or the tuner itself when it
    schedules its trials too (``bohb``); None for no early stopping.

    With several objectives, a ``multi_objective`` assessor judges them all (built with every
    metric and mode); another one judges the objective ``assessor_args["objective"]`` names,
    with that metric's mode (an instance: the metric it was built with).

    Raises:
        ConfigError: an unknown name, bad arguments, an instance with ``assessor_args`` or
            another mode than the experiment's, an assessor beside a tuner that schedules
            its own trials, or a single-objective assessor on several objectives with no
            ``objective`` named, or one naming no objective of the experiment.
    """
    if isinstance(tuner, Assessor):
        if assessor is not None:
            raise ConfigError(
                f"assessor: the {options.tuner!r} tuner schedules its own trials (it is an "
                f"advisor, as NNI says); remove assessor={options.assessor!r}"
            )
        tuner.metric = options.first_metric if tuner.metric is None else tuner.metric
        return tuner
    if assessor is None:
        if options.assessor_args:
            raise ConfigError(
                f"assessor_args: given ({sorted(options.assessor_args)}) without an assessor"
            )
        return None
    if isinstance(assessor, Assessor):
        made = _checked_instance(assessor, options, tuner)
    else:
        args = dict(options.assessor_args)
        objective = args.pop(OBJECTIVE_ARG, None)
        metric, mode = _judged(options, _class_of(assessor), objective)
        made = create_assessor(
            assessor,
            mode=mode,
            metric=metric,
            seed=options.seed or 0,
            space=tuner.space,
            args=args,
        )
    if options.concurrency < made.min_concurrency():
        raise ConfigError(
            f"concurrency: the {options.assessor!r} assessor needs at least "
            f"{made.min_concurrency()} trials running at once, got concurrency="
            f"{options.concurrency}"
        )
    return made


def _class_of(assessor: str | type[Assessor]) -> type:
    """The class ``create_assessor`` builds for ``assessor`` (NNI's adapter for an NNI class)."""
    if nni_assessor_class(assessor) is not None:
        return assessor_class(NNI_ASSESSOR_ADAPTER)
    return assessor if isinstance(assessor, type) else assessor_class(assessor)


def _judged(
    options: ExperimentOptions, cls: type, objective: Any
) -> tuple[str | tuple[str | None, ...] | None, Mode | tuple[Mode, ...]]:
    """``(metric, mode)`` an assessor of class ``cls`` is built with: the named ``objective``,
    or every objective for a multi-objective one; the experiment's only one otherwise."""
    if objective is not None:
        if not isinstance(objective, str) or objective not in options.metrics:
            named = [m for m in options.metrics if m is not None]
            raise ConfigError(
                f"assessor_args.{OBJECTIVE_ARG}: names the objective the assessor judges, one "
                f"of the experiment's metrics {named}, got {objective!r}"
            )
        return objective, options.modes[options.metrics.index(objective)]
    if not options.multi_objective:
        return options.first_metric, options.first_mode
    if getattr(cls, "multi_objective", False):
        return options.metrics, options.modes
    names = list(options.metrics)
    how = f"name the objective it judges: assessor_args={{{OBJECTIVE_ARG!r}: {names[0]!r}}}"
    raise ConfigError(_one_objective(options, options.assessor or cls.__name__, how))


def _one_objective(options: ExperimentOptions, name: str, how: str) -> str:
    """Why single-objective assessor ``name`` cannot run on the experiment's objectives, and
    ``how`` else to name the one it judges."""
    able = [n for n in ASSESSORS.registered() if _multi_objective(n)]
    names = list(options.metrics)
    return (
        f"assessor: {name!r} judges one objective, and this experiment has {len(names)} "
        f"(metric={names}); use a multi-objective assessor ({', '.join(able)}), or {how}"
    )


def _multi_objective(name: str) -> bool:
    try:
        return bool(ASSESSORS.get(name).multi_objective)
    except ConfigError:
        return False


def _checked_instance(assessor: Assessor, options: ExperimentOptions, tuner: Tuner) -> Assessor:
    """An assessor given as an instance, as ``create_tuner`` takes a tuner instance: built by
    the caller, so no ``assessor_args``, and the experiment's modes; the experiment's metrics
    and space where it was built without. With several objectives, a single-objective instance
    must have been built with one of the experiment's metrics, and its mode."""
    name = type(assessor).__name__
    if options.assessor_args:
        raise ConfigError(
            f"assessor_args: an assessor given as an instance ({name}) takes no "
            f"assessor_args, got {sorted(options.assessor_args)}; pass its arguments to its "
            "constructor"
        )
    modes = options.modes
    if options.multi_objective and len(assessor.modes) == 1:  # judges one named objective
        if assessor.metric not in options.metrics:
            how = f"build it with metric=<one of {list(options.metrics)}> and that metric's mode"
            raise ConfigError(_one_objective(options, name, how))
        modes = (options.modes[options.metrics.index(assessor.metric)],)
    if assessor.modes != modes:
        raise ConfigError(
            f"assessor: the {name} instance has mode={_shown(assessor.modes)}, the experiment "
            f"mode={_shown(modes)}"
        )
    if len(modes) > 1:
        if assessor.metrics not in (options.metrics, (None,) * len(modes)):
            raise ConfigError(
                f"assessor: the {name} instance judges metric={list(assessor.metrics)}, the "
                f"experiment's metric={list(options.metrics)}"
            )
        assessor.metrics = options.metrics
        assessor.metric = assessor.metrics[0]
    else:
        assessor.metric = options.first_metric if assessor.metric is None else assessor.metric
        assessor.metrics = (assessor.metric,)
    assessor.space = tuner.space if assessor.space is None else assessor.space
    return assessor


def _shown(modes: tuple[Mode, ...]) -> str:
    return repr(modes[0].value) if len(modes) == 1 else repr([m.value for m in modes])


def check_round_trips(
    options: ExperimentOptions, assessor: Assessor | None, executor: Executor
) -> None:
    """Refuse an assessor on an executor whose trials cannot wait for its decisions.

    Raises:
        ConfigError: naming both: the assessor's decisions would reach such trials late, after
            reports they were not made on, so the results would depend on speed.
    """
    if assessor is None or executor.round_trips:
        return
    name = options.assessor or options.tuner
    raise ConfigError(
        f"executor: the {name!r} assessor decides on each report, and trials of the "
        f"{executor.name!r} executor cannot wait for its decision (the executor does not answer "
        "requests: Executor.answer), so a stop or pause would act after later reports; run it "
        "on inprocess, threads, processes, command or ray, or implement answer() in "
        f"{type(executor).__name__}"
    )


def make_executor(options: ExperimentOptions, objective: Callable[..., Any]) -> Executor:
    """The executor the options name, for ``objective``.

    Raises:
        ConfigError: Bad options for it, ``gpus.memory_ratio`` with the ``command``
            executor, which does not check GPU memory, or ``ray_address``/``resources``
            without the ``ray`` executor (``dask_address``, ``resources`` without ``dask``).
    """
    gpus = options.gpus
    if gpus is not None and gpus.memory_ratio is not None and options.executor == "command":
        raise ConfigError(
            f"gpus.memory_ratio: the 'command' executor does not check free GPU memory before "
            f"a trial, got memory_ratio={gpus.memory_ratio!r}; remove it, or run a function "
            "trial with executor 'processes', 'threads' or 'inprocess'"
        )
    extra: dict[str, Any] = {}
    if options.executor == "ray":
        extra = {
            "ray_address": options.ray_address,
            "resources": options.resources,
            "max_node_failures": options.max_node_failures,
        }
    elif options.executor == "dask":
        extra = {
            "dask_address": options.dask_address,
            "dask_cluster": options.dask_cluster,
            "resources": options.resources,
            "max_node_failures": options.max_node_failures,
        }
    elif options.executor == "shared":
        extra = {"own_trials": options.own_trials}
    owners = (
        ("ray_address", "ray"),
        ("resources", "ray"),
        ("dask_address", "dask"),
        ("own_trials", "shared"),
    )
    for field, owner in owners:
        if field not in extra and getattr(options, field) is not None:
            raise ConfigError(
                f"{field}: applies to executor={owner!r}, got {getattr(options, field)!r} "
                f"with executor={options.executor!r}"
            )
    return create_executor(
        options.executor,
        objective,
        **extra,
        concurrency=options.concurrency,
        trial_timeout=options.trial_timeout,
        devices=device_pool(gpus),
        max_log_bytes=options.max_log_bytes,
        echo_output=options.echo_output,
    )


def trial_objective(config: ExperimentConfig) -> Any:
    """What the config's trial runs: a ``CommandTrial`` or the imported function."""
    trial = config.trial
    if trial.command is not None:
        return CommandTrial(trial.command, code_dir=trial.code_dir, env=dict(config.env))
    if config.env:
        raise ConfigError(
            "env: extra environment variables apply to command trials; a function trial "
            "can set os.environ itself"
        )
    function = trial.function or ""  # the config model checked it is given
    if trial.code_dir not in sys.path:
        sys.path.insert(0, trial.code_dir)
    try:
        return import_path("trial.function", function)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (looked in code_dir {trial.code_dir!r} first)") from None


def device_pool(gpus: GpuConfig | None) -> DevicePool | None:
    """The ``DevicePool`` for the ``gpus`` option, with its memory check; ``"auto"`` asks
    ``nvidia-smi``."""
    if gpus is None:
        return None
    indices = gpus.indices
    if indices == "auto":
        indices = detect_gpus()
        if not indices:
            raise ConfigError(
                "gpus.indices: 'auto' found no GPU (nvidia-smi is missing or lists none); "
                "give the indices explicitly or remove `gpus`"
            )
    check = None  # without memory_ratio, trials start without looking at the memory
    if gpus.memory_ratio is not None:  # GpuConfig checked the ranges
        check = MemoryCheck(gpus.memory_ratio, gpus.n_gpu_checks, gpus.gpu_check_delay)
    return DevicePool(
        indices,
        per_trial=gpus.per_trial,
        max_trials_per_gpu=gpus.max_trials_per_gpu,
        memory_check=check,
    )


def random_seed() -> int:
    """A fresh seed from the operating system's entropy, as an experiment without ``seed`` gets:
    a non-negative integer below 2**63, so every store can hold it."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def reference(objective: Callable[..., Any]) -> str | None:
    if isinstance(objective, CommandTrial):
        return command_ref(objective.command, str(objective.code_dir or "."))
    module = getattr(objective, "__module__", None)
    qualname = getattr(objective, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else None


def objective_folder(objective: Callable[..., Any]) -> str | None:
    """The ``sys.path`` folder the objective's module was imported from, so that ``resume`` in
    another process (``hyperlab resume ID`` from any directory) can import it again; None for
    objectives defined in ``__main__`` (pickled by value) or without a module file."""
    module_name = getattr(objective, "__module__", None)
    module = sys.modules.get(module_name or "")
    path = getattr(module, "__file__", None)
    if not module_name or module_name == "__main__" or path is None:
        return None
    depth = module_name.count(".") + (Path(path).stem == "__init__")
    return str(Path(path).resolve().parents[depth])


def try_pickle(objective: object) -> bytes | None:
    try:
        return pickling.dumps(objective)
    except Exception:  # resume will then need the objective passed in
        return None


def load_objective(record: ExperimentRecord) -> Callable[..., Any]:
    """The objective ``record``'s experiment was created with, unpickled from the store.

    The folder its module was imported from is appended to ``sys.path`` first, so that an
    objective pickled by reference loads in another process too.

    Raises:
        ConfigError: the objective could not be stored, or cannot be loaded here; the message
            says to pass it to ``hyperlab.resume`` instead.
    """
    ref = record.objective_ref
    if record.objective is None:
        raise ConfigError(
            f"objective: experiment {record.id}'s objective ({ref}) could not be stored; "
            "pass it: hyperlab.resume(id, objective=fn)"
        )
    folder = record.objective_path
    if folder and folder not in sys.path and Path(folder).is_dir():
        sys.path.append(folder)  # where its module was imported from when it was created
    try:
        return cloudpickle.loads(record.objective)
    except Exception as exc:
        raise ConfigError(
            f"objective: experiment {record.id}'s stored objective ({ref}) cannot be loaded here "
            f"({type(exc).__name__}: {exc}); pass it: hyperlab.resume(id, objective=fn)"
        ) from None
