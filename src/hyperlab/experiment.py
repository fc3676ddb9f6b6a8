"""The Python API: ``run``, ``Experiment``, ``resume`` and ``load``.

```python
import hyperlab
from hyperlab import space as hs

def objective(params):
    return (params["x"] - 2) ** 2 + params["y"]

result = hyperlab.run(objective, {"x": hs.uniform(-5, 5), "y": hs.choice(0, 1)}, max_trials=50)
print(result.best_params, result.best_value)
```
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import socket
import string
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import cloudpickle
import numpy as np

from hyperlab._driver import HEARTBEAT_INTERVAL, Driver
from hyperlab._paths import experiment_dir
from hyperlab.config import (
    ExperimentConfig,
    ExperimentOptions,
    GpuConfig,
    load_config,
    validate_options,
)
from hyperlab.errors import ConfigError, ExperimentNotFound
from hyperlab.executors import CommandTrial
from hyperlab.executors.base import Executor, create_executor
from hyperlab.executors.devices import DevicePool, detect_gpus
from hyperlab.progress import wants_progress
from hyperlab.result import Result
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Trial
from hyperlab.tuners.base import Tuner, create_tuner

__all__ = ["Experiment", "load", "resume", "run"]

_ID_ALPHABET = string.ascii_lowercase + string.digits


class Experiment:
    """A handle on one experiment: create it, start it in the background, wait, stop.

    Takes the same arguments as ``hyperlab.run``. Everything is validated here, before
    anything is written: a bad option raises ``ConfigError`` and leaves the store untouched.

    Example:
        >>> exp = hyperlab.Experiment(objective, space, max_trials=100, executor="processes",
        ...                           concurrency=4, storage="sqlite:///runs.db")
        >>> exp.start()           # returns once the experiment is recorded and running
        >>> exp.status            # ExperimentStatus.RUNNING
        >>> result = exp.wait()   # blocks until it ends
    """

    def __init__(
        self,
        objective: Callable[..., Any],
        space: SearchSpace | Mapping[str, Any] | str | os.PathLike,
        *,
        metric: str | None = None,
        mode: Literal["min", "max"] = "min",
        tuner: str = "random",
        tuner_args: dict[str, Any] | None = None,
        max_trials: int | None = None,
        max_duration: float | str | None = None,
        concurrency: int = 1,
        executor: str = "inprocess",
        trial_timeout: float | str | None = None,
        max_failed_trials: int | None = None,
        continue_on_failure: bool = True,
        storage: str | os.PathLike | None = None,
        seed: int | None = None,
        name: str | None = None,
        gpus: GpuConfig | Mapping[str, Any] | None = None,
        working_dir: str | os.PathLike | None = None,
        progress: bool | None = None,
    ) -> None:
        options = validate_options(
            name=name,
            metric=metric,
            mode=mode,
            tuner=tuner,
            tuner_args=tuner_args,
            max_trials=max_trials,
            max_duration=max_duration,
            concurrency=concurrency,
            executor=executor,
            trial_timeout=trial_timeout,
            max_failed_trials=max_failed_trials,
            continue_on_failure=continue_on_failure,
            seed=seed,
            gpus=gpus,
            working_dir=None if working_dir is None else str(Path(working_dir).resolve()),
        )
        space = SearchSpace.coerce(space)
        if options.seed is None:
            options = options.model_copy(update={"seed": _random_seed()})
        tuner_obj = create_tuner(
            options.tuner, space, mode=options.mode, seed=options.seed, args=options.tuner_args
        )
        options = _with_budget(options, tuner_obj)
        executor_obj = _executor(options, objective)
        store = Store.open(storage)
        record = ExperimentRecord(
            id=_new_id(store),
            name=options.name,
            status=ExperimentStatus.INITIALIZED,
            config={**options.model_dump(), "objective_ref": _reference(objective)},
            space=space.to_nni(),
            seed=options.seed,
            objective=getattr(executor_obj, "_blob", None) or _try_pickle(objective),
            created_at=time.time(),
        )
        self._setup(store, record, options, tuner_obj, executor_obj, None, progress)

    def _setup(
        self,
        store: Store,
        record: ExperimentRecord,
        options: ExperimentOptions,
        tuner: Tuner,
        executor: Executor,
        history: list[Trial] | None,
        progress: bool | None,
    ) -> None:
        """Shared by new and resumed experiments; ``history`` is None for a new one."""
        self._store = store
        self._record = record
        self._options = options
        self._tuner = tuner
        self._executor = executor
        self._history = history
        self._progress = progress
        self._driver: Driver | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    @classmethod
    def from_config(
        cls,
        config: ExperimentConfig | str | os.PathLike,
        *,
        storage: str | os.PathLike | None = None,
        progress: bool | None = None,
    ) -> Experiment:
        """An experiment from a config file (hyperlab's or NNI's) or a loaded ``ExperimentConfig``.

        ``storage`` overrides the file's ``storage``. A ``trial.function`` is imported with
        ``trial.code_dir`` first on ``sys.path``; a ``trial.command`` runs via ``CommandTrial``.
        """
        if not isinstance(config, ExperimentConfig):
            config = load_config(config)
        if config.assessor is not None:
            raise ConfigError(
                f"assessor: no assessor is available in this version of hyperlab yet "
                f"(got {config.assessor.name!r}); remove `assessor` to run without early stopping"
            )
        options = config.options()
        return cls(
            _trial_objective(config),
            config.search_space,
            **{k: v for k, v in options.model_dump().items() if k != "gpus"},
            gpus=options.gpus,
            storage=storage if storage is not None else config.storage,
            progress=progress,
        )

    @classmethod
    def _attach(
        cls,
        store: Store,
        record: ExperimentRecord,
        options: ExperimentOptions,
        objective: Callable[..., Any],
        progress: bool | None,
    ) -> Experiment:
        """A handle that continues a stored experiment (see ``resume``)."""
        space = SearchSpace.from_nni(record.space)
        tuner = create_tuner(
            options.tuner, space, mode=options.mode, seed=record.seed, args=options.tuner_args
        )
        self = cls.__new__(cls)
        self._setup(
            store,
            record,
            _with_budget(options, tuner),
            tuner,
            _executor(options, objective),
            store.get_trials(record.id, reports=False),
            progress,
        )
        return self

    @property
    def id(self) -> str:
        """The experiment's id (8 lowercase letters and digits)."""
        return self._record.id

    @property
    def status(self) -> ExperimentStatus:
        """The current status: the driver's own while it runs here, else the store's."""
        if self._driver is not None:
            return self._driver.status
        return self._store.get_experiment(self.id).status

    @property
    def store(self) -> Store:
        """The store this experiment is recorded in."""
        return self._store

    @property
    def folder(self) -> Path:
        """The experiment's folder: driver log, config, and ``trials/<number>/``."""
        return experiment_folder(self._record, memory=self._store.url == "sqlite://")

    def _make_driver(self) -> Driver:
        if self._driver is not None:
            raise ConfigError(f"experiment {self.id} was already started")
        if self._history is None:
            self._store.create_experiment(self._record)
        folder = self.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "experiment.json").write_text(
            json.dumps(
                {"id": self.id, "config": self._record.config, "search_space": self._record.space},
                indent=2,
                default=str,
            )
        )
        self._driver = Driver(
            self._store,
            self._record,
            self._options,
            self._tuner,
            self._executor,
            history=self._history or [],
            experiment_dir=folder,
            progress=wants_progress(self._progress),
        )
        return self._driver

    def save(self) -> str:
        """Record the experiment (status INITIALIZED) without running it; return its id.

        ``hyperlab.resume(id)``, in this process or another, then runs it.
        """
        if self._history is None:
            self._store.create_experiment(self._record)
            self._history = []
        return self.id

    def run(self) -> Result:
        """Run in this thread until the experiment ends; return its result."""
        self._make_driver().run()
        return self.result()

    def start(self) -> Experiment:
        """Start in a background thread; return once the experiment is recorded and running."""
        driver = self._make_driver()

        def target() -> None:
            try:
                driver.run()
            except BaseException as exc:  # handed to wait()
                self._failure = exc

        self._thread = threading.Thread(target=target, name=f"hyperlab-{self.id}", daemon=True)
        self._thread.start()
        while not driver.started.wait(0.05):
            if not self._thread.is_alive():
                break
        if self._failure is not None:
            raise self._failure
        return self

    def wait(self, timeout: float | None = None) -> Result:
        """Block until the experiment ends (or ``timeout`` seconds pass); return the result."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self._failure is not None:
            raise self._failure
        return self.result()

    def stop(self) -> None:
        """Ask the driver to stop: running trials end USER_CANCELED, the experiment STOPPED.

        Works from any thread; the request goes through the store like ``hyperlab stop ID``.
        """
        self._store.send_control(self.id, "stop")

    def result(self) -> Result:
        """The experiment as stored now (running or not)."""
        return _result(self._store, self.id)


def run(
    objective: Callable[..., Any],
    space: SearchSpace | Mapping[str, Any] | str | os.PathLike,
    *,
    metric: str | None = None,
    mode: Literal["min", "max"] = "min",
    tuner: str = "random",
    tuner_args: dict[str, Any] | None = None,
    max_trials: int | None = None,
    max_duration: float | str | None = None,
    concurrency: int = 1,
    executor: str = "inprocess",
    trial_timeout: float | str | None = None,
    max_failed_trials: int | None = None,
    continue_on_failure: bool = True,
    storage: str | os.PathLike | None = None,
    seed: int | None = None,
    name: str | None = None,
    gpus: GpuConfig | Mapping[str, Any] | None = None,
    working_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
    resume: str | None = None,
) -> Result:
    """Run an experiment to its end and return its ``Result``.

    Args:
        objective: ``f(params) -> float | dict``, a generator yielding intermediate results,
            ``f(params, reporter)`` (Ray Tune style), or any function calling
            ``hyperlab.report``.
        space: A ``SearchSpace``, a dict of parameters (builders or NNI specs), or a path to
            an NNI search-space JSON file.
        metric: Which reported metric is the objective; defaults to ``default`` or the only one.
        mode: ``"min"`` or ``"max"``.
        tuner: Tuner name (``"random"``, ``"grid"``, NNI's ``"Random"``, ``"GridSearch"``...).
        tuner_args: Keyword arguments for the tuner.
        max_trials: Trials to create at most. A budget (this, ``max_duration`` or a finite
            grid) is required.
        max_duration: Seconds, or ``"90s"``, ``"30m"``, ``"2h"``; running trials are
            cancelled (SYS_CANCELED) when it is reached.
        concurrency: Trials at once.
        executor: ``"inprocess"``, ``"threads"`` or ``"processes"``.
        trial_timeout: A trial running longer is FAILED.
        max_failed_trials: Consecutive failures that end the experiment in ERROR (default 10).
        continue_on_failure: False ends the experiment at the first failed trial.
        storage: ``None`` for ``$HYPERLAB_HOME/hyperlab.db``, ``":memory:"``, a
            ``sqlite:///`` URL or a ``postgresql://`` URL.
        seed: The experiment seed; every random stream derives from it.
        name: A name to show in listings.
        gpus: Place trials on accelerators: ``{"indices": [0, 1] | "auto", "per_trial": 1,
            "max_trials_per_gpu": 1}``; each trial sees its devices in ``CUDA_VISIBLE_DEVICES``
            (command and process trials) and ``hyperlab.trial_devices()``.
        working_dir: Folder for the experiment's files (default: the hyperlab home).
        progress: Live progress bar; default: when standard error is a terminal.
        resume: Continue this experiment id instead of creating one (its stored options
            are kept; ``max_trials`` and ``max_duration`` given here replace its budget).
    """
    if resume is not None:
        return _continue(
            resume,
            storage=storage,
            objective=objective,
            progress=progress,
            max_trials=max_trials,
            max_duration=max_duration,
        )
    return Experiment(
        objective,
        space,
        metric=metric,
        mode=mode,
        tuner=tuner,
        tuner_args=tuner_args,
        max_trials=max_trials,
        max_duration=max_duration,
        concurrency=concurrency,
        executor=executor,
        trial_timeout=trial_timeout,
        max_failed_trials=max_failed_trials,
        continue_on_failure=continue_on_failure,
        storage=storage,
        seed=seed,
        name=name,
        gpus=gpus,
        working_dir=working_dir,
        progress=progress,
    ).run()


def resume(
    experiment_id: str,
    *,
    storage: str | os.PathLike | None = None,
    objective: Callable[..., Any] | None = None,
    progress: bool | None = None,
    max_trials: int | None = None,
    max_duration: float | str | None = None,
) -> Result:
    """Continue a stopped or crashed experiment from the store alone, and run it to its end.

    Finished trials are replayed into a fresh tuner in number order; trials that were waiting
    or running when the old driver died run again with their params and ``attempt + 1``.

    Args:
        experiment_id: The experiment to continue.
        storage: The store that holds it.
        objective: The objective; by default the one pickled in the store.
        progress: Live progress bar (default: on a terminal).
        max_trials / max_duration: A new budget, replacing the stored one.

    Raises:
        ExperimentNotFound: No such experiment in the store.
        ConfigError: Its driver is still alive, or its objective cannot be loaded.
    """
    return _continue(
        experiment_id,
        storage=storage,
        objective=objective,
        progress=progress,
        max_trials=max_trials,
        max_duration=max_duration,
    )


def _continue(
    experiment_id: str,
    *,
    storage: str | os.PathLike | None,
    objective: Callable[..., Any] | None,
    progress: bool | None,
    max_trials: int | None,
    max_duration: float | str | None,
) -> Result:
    store = Store.open(storage)
    record = store.get_experiment(experiment_id)
    check_not_running(record)
    stored = {k: v for k, v in record.config.items() if k in ExperimentOptions.model_fields}
    if max_trials is not None:
        stored["max_trials"] = max_trials
    if max_duration is not None:
        stored["max_duration"] = max_duration
    options = validate_options(**stored)
    if objective is None:
        objective = _load_objective(record)
    return Experiment._attach(store, record, options, objective, progress).run()


def load(experiment_id: str, storage: str | os.PathLike | None = None) -> Result:
    """Read an experiment, running or finished, without changing it."""
    return _result(Store.open(storage), experiment_id)


def _result(store: Store, experiment_id: str) -> Result:
    record = store.get_experiment(experiment_id)
    return Result(
        experiment_id=record.id,
        status=record.status,
        mode=record.config.get("mode", "min"),
        metric=record.config.get("metric"),
        trials=store.get_trials(experiment_id),
        error=record.error,
    )


def _with_budget(options: ExperimentOptions, tuner: Tuner) -> ExperimentOptions:
    """The options with ``max_trials`` capped by a finite tuner; ConfigError without budget."""
    limit = tuner.budget()
    if limit is not None and (options.max_trials is None or options.max_trials > limit):
        return options.model_copy(update={"max_trials": limit})
    if options.max_trials is None and options.max_duration is None:
        raise ConfigError(
            f"budget: the {options.tuner!r} tuner never runs out of proposals, so give a budget: "
            "max_trials=N and/or max_duration (seconds or '30m', '2h')"
        )
    return options


def _executor(options: ExperimentOptions, objective: Callable[..., Any]) -> Executor:
    return create_executor(
        options.executor,
        objective,
        concurrency=options.concurrency,
        trial_timeout=options.trial_timeout,
        devices=_device_pool(options.gpus),
    )


def experiment_folder(record: ExperimentRecord, *, memory: bool = False) -> Path:
    """Where an experiment keeps its files: ``working_dir/<id>`` or the home's folder."""
    working_dir = record.config.get("working_dir")
    if working_dir:
        return Path(working_dir) / record.id
    return experiment_dir(record.id, memory=memory)


def _trial_objective(config: ExperimentConfig) -> Any:
    """What the config's trial runs: a ``CommandTrial`` or the imported function."""
    trial = config.trial
    if trial.command is not None:
        return CommandTrial(trial.command, code_dir=trial.code_dir, env=dict(config.env))
    if config.env:
        raise ConfigError(
            "env: extra environment variables apply to command trials; a function trial "
            "can set os.environ itself"
        )
    module_name, _, attr = trial.function.partition(":")
    if trial.code_dir not in sys.path:
        sys.path.insert(0, trial.code_dir)
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"trial.function: cannot import {trial.function!r} from {trial.code_dir!r}: {exc}"
        ) from None
    return target


def _device_pool(gpus: GpuConfig | None) -> DevicePool | None:
    """The ``DevicePool`` for the ``gpus`` option; ``"auto"`` asks ``nvidia-smi``."""
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
    return DevicePool(indices, per_trial=gpus.per_trial, max_trials_per_gpu=gpus.max_trials_per_gpu)


def _new_id(store: Store) -> str:
    while True:
        candidate = "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))
        try:
            store.get_experiment(candidate)
        except ExperimentNotFound:
            return candidate


def _random_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def _reference(objective: Callable[..., Any]) -> str | None:
    if isinstance(objective, CommandTrial):
        return f"command: {objective.command} (in {objective.code_dir or '.'})"
    module = getattr(objective, "__module__", None)
    qualname = getattr(objective, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else None


def _try_pickle(objective: Callable[..., Any]) -> bytes | None:
    try:
        return cloudpickle.dumps(objective)
    except Exception:  # resume will then need the objective passed in
        return None


def _load_objective(record: ExperimentRecord) -> Callable[..., Any]:
    ref = record.config.get("objective_ref")
    if record.objective is None:
        raise ConfigError(
            f"objective: experiment {record.id}'s objective ({ref}) could not be stored; "
            "pass it: hyperlab.resume(id, objective=fn)"
        )
    try:
        return cloudpickle.loads(record.objective)
    except Exception as exc:
        raise ConfigError(
            f"objective: experiment {record.id}'s stored objective ({ref}) cannot be loaded here "
            f"({type(exc).__name__}: {exc}); pass it: hyperlab.resume(id, objective=fn)"
        ) from None


def check_not_running(record: ExperimentRecord) -> None:
    """ConfigError if the experiment's driver is still alive somewhere."""
    if record.status.is_finished() or record.driver_pid is None:
        return
    if record.driver_host == socket.gethostname():
        if record.driver_pid == os.getpid():
            return
        try:
            os.kill(record.driver_pid, 0)
        except ProcessLookupError:
            return
        except PermissionError:  # alive, but another user's
            pass
        raise ConfigError(
            f"experiment {record.id} is still running (driver pid {record.driver_pid}); "
            f"stop it first: hyperlab stop {record.id}"
        )
    beat = record.heartbeat_at or 0.0
    if time.time() - beat < 3 * HEARTBEAT_INTERVAL:
        raise ConfigError(
            f"experiment {record.id} is still running on {record.driver_host} "
            f"(pid {record.driver_pid}); stop it first: hyperlab stop {record.id}"
        )
