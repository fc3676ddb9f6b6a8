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

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import cloudpickle

from hyperlab.config import (
    ExperimentConfig,
    ExperimentOptions,
    GpuConfig,
    load_config,
    validate_options,
)
from hyperlab.errors import ConfigError
from hyperlab.executors.base import Executor
from hyperlab.experiment._driver import Driver
from hyperlab.experiment._progress import wants_progress
from hyperlab.experiment._result import Result
from hyperlab.experiment._setup import (
    load_objective,
    make_executor,
    random_seed,
    reference,
    trial_objective,
    try_pickle,
    with_budget,
)
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, StopExperiment, Store
from hyperlab.trial import ExperimentStatus, Mode, Trial
from hyperlab.tuners.base import Tuner, create_tuner, tuner_name

__all__ = ["Experiment", "load", "resume", "run"]


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
        mode: Mode | Literal["min", "max"] = Mode.MIN,
        tuner: str | type[Tuner] | Tuner = "random",
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
            tuner=tuner_name(tuner),
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
            working_dir=working_dir,
        )
        if options.working_dir is not None:
            options = options.model_copy(
                update={"working_dir": str(Path(options.working_dir).expanduser().resolve())}
            )
        space = SearchSpace.coerce(space)
        seed = random_seed() if options.seed is None else options.seed
        options = options.model_copy(update={"seed": seed})
        tuner_obj = create_tuner(
            tuner, space, mode=options.mode, seed=seed, args=options.tuner_args
        )
        options = with_budget(options, tuner_obj)
        executor_obj = make_executor(options, objective)
        store = Store.open(storage)
        record = ExperimentRecord(
            id=store.new_experiment_id(),
            name=options.name,
            status=ExperimentStatus.INITIALIZED,
            options=options,
            space=space.to_nni(),
            seed=seed,
            objective=executor_obj.objective_bytes or try_pickle(objective),
            objective_ref=reference(objective),
            tuner=try_pickle(tuner) if isinstance(tuner, Tuner) else None,
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
            trial_objective(config),
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
        if record.tuner is not None:  # given as an instance: as it was before its first trial
            tuner = cloudpickle.loads(record.tuner)
        else:
            tuner = create_tuner(
                options.tuner, space, mode=options.mode, seed=record.seed, args=options.tuner_args
            )
        self = cls.__new__(cls)
        self._setup(
            store,
            record,
            with_budget(options, tuner),
            tuner,
            make_executor(options, objective),
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
        return self._store.experiment_folder(self._record)

    def _make_driver(self) -> Driver:
        if self._driver is not None:
            raise ConfigError(f"experiment {self.id} was already started")
        if self._history is None:
            self._store.create_experiment(self._record)
        folder = self.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "experiment.json").write_text(
            json.dumps(
                {
                    "id": self.id,
                    "options": self._options.model_dump(mode="json"),
                    "objective": self._record.objective_ref,
                    "search_space": self._record.space,
                },
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
        self._store.send_control(self.id, StopExperiment())

    def result(self) -> Result:
        """The experiment as stored now (running or not)."""
        return _result(self._store, self.id)


def run(
    objective: Callable[..., Any],
    space: SearchSpace | Mapping[str, Any] | str | os.PathLike,
    *,
    metric: str | None = None,
    mode: Mode | Literal["min", "max"] = Mode.MIN,
    tuner: str | type[Tuner] | Tuner = "random",
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
        tuner: A tuner name (``"random"``, ``"tpe"``, NNI's ``"TPE"``, ``"GridSearch"``...; see
            ``hyperlab.tuners.tuner_names()``), a ``"package.module:Class"`` path, a ``Tuner``
            subclass, or a ``Tuner`` instance built for this ``space`` and ``mode`` (it is
            stored as it is before its first trial, so ``resume`` rebuilds it).
        tuner_args: Keyword arguments for the tuner's constructor (not with an instance).
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
    record.check_not_running()
    stored = record.options.model_dump()
    if max_trials is not None:
        stored["max_trials"] = max_trials
    if max_duration is not None:
        stored["max_duration"] = max_duration
    options = validate_options(**stored)
    if objective is None:
        objective = load_objective(record)
    return Experiment._attach(store, record, options, objective, progress).run()


def load(experiment_id: str, storage: str | os.PathLike | None = None) -> Result:
    """Read an experiment, running or finished, without changing it."""
    return _result(Store.open(storage), experiment_id)


def _result(store: Store, experiment_id: str) -> Result:
    record = store.get_experiment(experiment_id)
    return Result(
        experiment_id=record.id,
        status=record.status,
        mode=record.options.mode,
        metric=record.options.metric,
        error=record.error,
        store=store,
    )
