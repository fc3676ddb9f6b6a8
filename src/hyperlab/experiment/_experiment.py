"""``Experiment``: a handle on one experiment, to run it here or in the background, stop it,
wait for it, and what happens when trials fail, on Ctrl-C and when the script ends."""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import cloudpickle

from hyperlab._steering import imported_results, steer
from hyperlab._terminal import printable
from hyperlab.assessors.base import Assessor, assessor_name
from hyperlab.config import (
    DEFAULT_MAX_LOG_BYTES,
    DEFAULT_STORE_OUTAGE,
    ExperimentConfig,
    ExperimentOptions,
    GpuConfig,
    ResearchOptions,
    load_config,
    validate_options,
)
from hyperlab.environment import EnvironmentCapture
from hyperlab.errors import ConfigError, TrialError
from hyperlab.executors import CommandTrial
from hyperlab.executors.base import Executor
from hyperlab.experiment._callbacks import Callback, check_callbacks
from hyperlab.experiment._driver import Driver, budget_left
from hyperlab.experiment._fatal import failure_to_raise
from hyperlab.experiment._ids import check_id, check_id_is_new
from hyperlab.experiment._result import Result
from hyperlab.experiment._setup import (
    check_round_trips,
    make_assessor,
    make_executor,
    objective_folder,
    random_seed,
    reference,
    trial_objective,
    try_pickle,
    with_budget,
)
from hyperlab.server import BackgroundServer, check_serving, serve_in_background
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    Control,
    ControlRequest,
    ExperimentRecord,
    ImportData,
    ImportedResult,
    StopExperiment,
    Store,
    UpdateSearchSpace,
)
from hyperlab.store.tokens import TOKEN_FILE, ensure_token
from hyperlab.trial import ExperimentStatus, Mode, Trial
from hyperlab.tuners.base import Tuner, create_tuner, tuner_name

__all__ = ["Experiment"]

ENVIRONMENT_WAIT = 10.0
"""Seconds ``save`` waits for the environment capture (its git calls stop after 5)."""


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
        tuner: str | type[Tuner] | Tuner = "auto",
        tuner_args: dict[str, Any] | None = None,
        assessor: str | type[Assessor] | None = None,
        assessor_args: dict[str, Any] | None = None,
        max_trials: int | None = None,
        max_duration: float | str | None = None,
        concurrency: int = 1,
        executor: str = "inprocess",
        trial_timeout: float | str | None = None,
        max_failed_trials: int | None = None,
        continue_on_failure: bool = True,
        fail_fast: bool | int = True,
        storage: str | os.PathLike | None = None,
        seed: int | None = None,
        name: str | None = None,
        id: str | None = None,
        gpus: GpuConfig | Mapping[str, Any] | None = None,
        working_dir: str | os.PathLike | None = None,
        checkpoint_keep: int = 1,
        max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
        echo_output: bool = False,
        ray_address: str | None = None,
        resources: Mapping[str, float | int | str] | None = None,
        max_node_failures: int = 3,
        store_outage: float | str = DEFAULT_STORE_OUTAGE,
        progress: bool | float | None = None,
        callbacks: Sequence[Callback] | None = None,
        research: ResearchOptions | Mapping[str, Any] | None = None,
    ) -> None:
        chosen_id = None if id is None else check_id(id)
        hooks = check_callbacks(callbacks)
        options = validate_options(
            name=name,
            metric=metric,
            mode=mode,
            tuner=tuner_name(tuner),
            tuner_args=tuner_args,
            assessor=None if assessor is None else assessor_name(assessor),
            assessor_args=assessor_args,
            checkpoint_keep=checkpoint_keep,
            max_trials=max_trials,
            max_duration=max_duration,
            concurrency=concurrency,
            executor=executor,
            trial_timeout=trial_timeout,
            max_failed_trials=max_failed_trials,
            continue_on_failure=continue_on_failure,
            fail_fast=fail_fast,
            seed=seed,
            gpus=gpus,
            working_dir=working_dir,
            max_log_bytes=max_log_bytes,
            echo_output=echo_output,
            research=research,
            ray_address=ray_address,
            resources=None if resources is None else dict(resources),
            max_node_failures=max_node_failures,
            store_outage=store_outage,
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
        assessor_obj = make_assessor(options, tuner_obj, assessor)
        options = with_budget(options, tuner_obj)
        executor_obj = make_executor(options, objective)
        check_round_trips(options, assessor_obj, executor_obj)
        store = Store.open(storage)
        if chosen_id is not None:
            check_id_is_new(store, chosen_id, storage)
        if options.name is not None:
            _warn_if_named_twice(store, options.name)
        record = ExperimentRecord(
            id=store.new_experiment_id() if chosen_id is None else chosen_id,
            name=options.name,
            status=ExperimentStatus.INITIALIZED,
            options=options,
            space=space.to_nni(),
            seed=seed,
            objective=executor_obj.objective_bytes or try_pickle(objective),
            objective_ref=reference(objective),
            objective_path=objective_folder(objective),
            tuner=try_pickle(tuner) if isinstance(tuner, Tuner) else None,
            created_at=time.time(),
        )
        self._setup(
            store,
            record,
            options,
            tuner_obj,
            assessor_obj,
            executor_obj,
            None,
            progress,
            storage,
            hooks,
        )
        code_dir = (  # where its git state is read: a command's folder, a research's
            objective.code_dir  # project, else its module's
            if isinstance(objective, CommandTrial)
            else options.research.project_dir
            if options.research is not None
            else objective_folder(objective)
        )
        self._environment: EnvironmentCapture | None = EnvironmentCapture(code_dir)

    def _setup(
        self,
        store: Store,
        record: ExperimentRecord,
        options: ExperimentOptions,
        tuner: Tuner,
        assessor: Assessor | None,
        executor: Executor,
        history: list[Trial] | None,
        progress: bool | float | None,
        storage: str | os.PathLike | None,
        callbacks: tuple[Any, ...],
    ) -> None:
        """Shared by new and resumed experiments; ``history`` is None for a new one."""
        self._store_arg = None if storage is None else os.fspath(storage)
        self._wait_on_exit = False
        self._store = store
        self._record = record
        self._options = options
        self._tuner = tuner
        self._assessor = assessor
        self._executor = executor
        self._history = history
        self._progress = progress
        self._callbacks = callbacks
        self._environment = None  # a new experiment's capture, being taken (set by __init__)
        self._driver: Driver | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._server: BackgroundServer | None = None

    @classmethod
    def from_config(
        cls,
        config: ExperimentConfig | str | os.PathLike,
        *,
        storage: str | os.PathLike | None = None,
        progress: bool | float | None = None,
    ) -> Experiment:
        """An experiment from a config file (hyperlab's or NNI's) or a loaded ``ExperimentConfig``.

        ``storage`` overrides the file's ``storage``. A ``trial.function`` is imported with
        ``trial.code_dir`` first on ``sys.path``; a ``trial.command`` runs via ``CommandTrial``.
        """
        if not isinstance(config, ExperimentConfig):
            config = load_config(config)
        options = config.options()
        return cls(
            trial_objective(config),
            config.search_space,
            **{
                k: v
                for k, v in options.model_dump().items()
                if k not in ("gpus", "suggested", "budget_signals")
            },
            gpus=options.gpus,
            storage=storage if storage is not None else config.storage,
            progress=progress,
        )

    @classmethod
    def attach(
        cls,
        store: Store,
        record: ExperimentRecord,
        options: ExperimentOptions,
        objective: Callable[..., Any],
        progress: bool | float | None,
        storage: str | os.PathLike | None,
        callbacks: Sequence[Callback] | None = None,
    ) -> Experiment:
        """A handle that continues a stored experiment, as ``resume`` builds it.

        For layers that resolved the pieces themselves (Optuna's ``Study`` reloads a study with
        its own options); most callers want ``hyperlab.resume``. The stored trials are replayed
        to the new tuner and assessor when it starts.

        Args:
            store: The store that holds ``record``.
            record: The stored experiment to continue.
            options: Its options, as they apply to this run.
            objective: The objective its trials run.
            progress: As ``Experiment``'s ``progress``.
            storage: The ``storage`` argument as the caller gave it, for hints in messages.
            callbacks: As ``Experiment``'s ``callbacks``.
        """
        space = SearchSpace.from_nni(record.space)
        if record.tuner is not None:  # given as an instance: as it was before its first trial
            tuner = cloudpickle.loads(record.tuner)
        else:
            tuner = create_tuner(
                options.tuner, space, mode=options.mode, seed=record.seed, args=options.tuner_args
            )
        assessor = make_assessor(options, tuner, options.assessor)
        executor = make_executor(options, objective)
        check_round_trips(options, assessor, executor)
        self = cls.__new__(cls)
        self._setup(
            store,
            record,
            with_budget(options, tuner),
            tuner,
            assessor,
            executor,
            store.get_trials(record.id, reports=assessor is not None),  # it replays them
            progress,
            storage,
            check_callbacks(callbacks),
        )
        return self

    @property
    def id(self) -> str:
        """The experiment's id: the one chosen with ``id=``, else 8 random lowercase letters
        and digits."""
        return self._record.id

    @property
    def status(self) -> ExperimentStatus:
        """The current status: the driver's own while it runs here, else the store's."""
        if self._driver is not None:
            return self._driver.status
        return self._store.get_experiment(self.id).status

    @property
    def running(self) -> bool:
        """True while the run ``start()`` began in the background goes on."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def store(self) -> Store:
        """The store this experiment is recorded in."""
        return self._store

    @property
    def executor(self) -> Executor:
        """The executor that runs this experiment's trials.

        Its ``concurrency`` may be set while the experiment runs: the driver submits up to that
        many trials at once from then on (Optuna's ask-and-tell opens a slot per asked trial).
        Unlike a ``SetConcurrency`` request, that change is not recorded in the store.
        """
        return self._executor

    @property
    def folder(self) -> Path:
        """The experiment's folder: driver log, config, and ``trials/<number>/``."""
        return self._store.experiment_folder(self._record)

    @property
    def server(self) -> BackgroundServer | None:
        """The REST API and dashboard server of a run started with ``port=``, while it runs."""
        return self._server

    def _make_driver(self, port: int | None = None, host: str = "127.0.0.1") -> Driver:
        """The driver; with ``port``, the experiment is served there while it runs (checked
        before anything is written)."""
        if self._driver is not None:
            raise ConfigError(f"experiment {self.id} was already started")
        if port is not None:
            check_serving(port, host)
        environment = None
        if self._history is None:
            environment = self._environment
            if environment is not None and environment.done:  # else the driver writes it
                self._record = replace(self._record, environment=environment.result())
                environment = None
            self._store.create_experiment(self._record)
        folder = self.folder
        folder.mkdir(parents=True, exist_ok=True)
        ensure_token(folder)  # what writes through the REST API need
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
        if port is not None:
            self._server = serve_in_background(
                self._store, port, host=host, experiment_id=self.id, token=ensure_token(folder)
            )
            _say(
                f"experiment {self.id}: dashboard at "
                f"{self._server.printed_link(self.id, folder / TOKEN_FILE)}"
            )
        try:
            self._driver = Driver(
                self._store,
                self._record,
                self._options,
                self._tuner,
                self._executor,
                assessor=self._assessor,
                history=self._history or [],
                experiment_dir=folder,
                progress=self._progress,
                server_url=None if self._server is None else self._server.url,
                callbacks=self._callbacks,
                environment=environment,
            )
        except BaseException:
            self._stop_serving()
            raise
        return self._driver

    def _stop_serving(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def save(self) -> str:
        """Record the experiment (status INITIALIZED) without running it; return its id.

        ``hyperlab.resume(id)``, in this process or another, then runs it.
        """
        if self._history is None:
            if self._environment is not None:
                environment = self._environment.result(ENVIRONMENT_WAIT)
                self._record = replace(self._record, environment=environment)
            self._store.create_experiment(self._record)
            self._history = []
        ensure_token(self.folder)
        return self.id

    def run(self, *, port: int | None = None, host: str = "127.0.0.1") -> Result:
        """Run in this thread until the experiment ends; return its result.

        Args:
            port: Serve the REST API (and the dashboard) of the experiment on this port while
                it runs (0 picks a free one); the link printed carries the experiment's token,
                which writes (stop, steering) need.
            host: The address to serve on: loopback by default; beyond it, every request
                needs the token.

        Raises:
            ConfigError: ``port`` cannot be served (in use, say), before anything is written.
            TrialError: no trial succeeded (some failed), or failures ended the experiment in
                ERROR; ``exc.result`` holds the result, the message the first failure.
            Exception: with ``continue_on_failure=False``, what the failed trial raised, once
                the experiment is recorded in ERROR (see ``hyperlab.run``).
            KeyboardInterrupt: on Ctrl-C, once the experiment is stopped and recorded (its
                running trials are SYS_CANCELED and run again on ``resume``).
        """
        driver = self._make_driver(port, host)
        try:
            driver.run()
        except KeyboardInterrupt:
            _say(f"experiment {self.id} stopped (Ctrl-C). {self._resume_hint()}")
            raise KeyboardInterrupt(f"experiment {self.id} stopped") from None
        finally:
            self._stop_serving()
        return self._checked(driver)

    def start(
        self, *, wait_on_exit: bool = False, port: int | None = None, host: str = "127.0.0.1"
    ) -> Experiment:
        """Start in a background thread; return once the experiment is recorded and running.

        Args:
            wait_on_exit: When the script ends while the experiment still runs, wait for it
                to end (True), or stop it cleanly (False, the default: its running trials are
                SYS_CANCELED and run again on ``resume``, and a line says how to resume).
            port: Serve the REST API and the dashboard on this port while it runs (see
                ``run``).
            host: The address to serve on (see ``run``).
        """
        driver = self._make_driver(port, host)

        def target() -> None:
            try:
                driver.run()
            except BaseException as exc:  # handed to wait()
                self._failure = exc
            finally:
                self._stop_serving()

        self._thread = threading.Thread(target=target, name=f"hyperlab-{self.id}", daemon=True)
        self._thread.start()
        while not driver.started.wait(0.05):
            if not self._thread.is_alive():
                break
        if self._failure is not None:
            raise self._failure
        self._wait_on_exit = wait_on_exit
        atexit.register(self._at_exit)
        return self

    def wait(self, timeout: float | None = None) -> Result:
        """Block until the experiment ends (or ``timeout`` seconds pass); return the result.

        Raises:
            TrialError: as ``run`` does, once the experiment ended.
            Exception: as ``run`` does with ``continue_on_failure=False``: what the failed
                trial raised.
        """
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return self.result()
            atexit.unregister(self._at_exit)
        if self._failure is not None:
            raise self._failure
        if self._driver is not None:
            return self._checked(self._driver)
        return self.result()

    def stop(self) -> None:
        """Ask the driver to stop: the experiment ends STOPPED, its running trials are
        SYS_CANCELED (they run again on ``resume``).

        Works from any thread; the request goes through the store like ``hyperlab stop ID``.
        Stopping an experiment that was not started, or has ended, does nothing (as NNI's).
        """
        if self._history is None and self._driver is None:  # not saved nor started
            return
        record = self._store.get_experiment(self.id)
        if record.status.is_finished() and not record.driver_alive():
            return  # a request now would wait for the next driver, which drops it
        self._store.send_control(self.id, StopExperiment())

    def drain(self) -> None:
        """Start no more trials: the experiment ends DONE once its running trials ended (as
        Optuna's ``study.stop()``), where ``stop`` cancels them.

        Works at once from any thread of the process running it (a callback included).

        Raises:
            ConfigError: the experiment does not run in this process (``stop`` reaches one
                running elsewhere).
        """
        driver = self._driver
        if driver is None or driver.status.is_finished():
            now = "it was not run here" if driver is None else f"it ended {driver.status}"
            raise ConfigError(
                f"experiment {self.id}: drain() needs it running in this process "
                f"(run() or start()); {now}"
            )
        driver.request_drain()

    # ---- steering a running experiment (NNI's dispatcher semantics) ----------------------------

    def update_search_space(
        self, space: SearchSpace | Mapping[str, Any] | str | os.PathLike
    ) -> None:
        """Propose from ``space`` from now on. The tuner is rebuilt on it and learns again from
        the finished trials (and imported results) that fit it; every trial keeps the
        parameters it ran with. Waits until the driver applied it.

        Raises:
            SearchSpaceError: the space is invalid (naming the parameter).
            ConfigError: the experiment is not running, or its tuner cannot take the space.
        """
        nni = SearchSpace.coerce(space).to_nni()
        self._steer(UpdateSearchSpace(space=nni))

    def add_trial(self, params: Mapping[str, Any]) -> int:
        """Run a trial with ``params`` next (NNI's customized trial); it counts in
        ``max_trials``. Returns its number once the driver queued it.

        Raises:
            SearchSpaceError: a parameter is missing, unknown or outside the space (naming
                it and the bound).
            ConfigError: the experiment is not running, or its trial budget is spent.
        """
        control = self._steer(AddTrial(params=dict(params)))
        assert control.outcome is not None and control.outcome.trial is not None
        return control.outcome.trial

    def import_data(self, results: Iterable[Mapping[str, Any] | ImportedResult]) -> int:
        """Feed results obtained elsewhere to the tuner as if their trials had run (NNI's
        import data); they are kept as imported results, not trials, and do not count in
        ``max_trials``. Returns how many were imported.

        Args:
            results: ``{"params": {...}, "value": v}`` (``"metrics"`` optional), or NNI's
                export format ``{"parameter": {...}, "value": v or {"default": v, ...}}``.

        Raises:
            SearchSpaceError: a result's parameters are outside the space (naming it).
            ConfigError: a result has no finite value, or the experiment is not running.
        """
        checked = imported_results(results)
        self._steer(ImportData(results=checked))
        return len(checked)

    def _steer(self, request: ControlRequest) -> Control:
        if self._history is None and self._driver is None:  # not saved nor started
            raise ConfigError(
                f"experiment {self.id} is not running (not started yet); only a running "
                "experiment can be steered: start it with start() first"
            )
        return steer(self._store, self.id, request)

    def result(self) -> Result:
        """The experiment as stored now (running or not)."""
        return Result.read(self._store, self.id)

    def budget_available(self) -> bool:
        """Whether the experiment may still create trials (NNI's ``budget_available``).

        - Before ``run``/``start``: True if its budget has room: fewer trials created than
          ``max_trials`` (on a resumed experiment, counting those it already has; a finite
          tuner such as a grid caps ``max_trials`` at its size) and less experiment time
          spent than ``max_duration``.
        - While it runs (callable from any thread, a callback included): True until it
          created ``max_trials`` trials, spent ``max_duration``, exhausted its tuner, or was
          asked to stop or ended; trials already created may still be running then.
        - Once the run ended (DONE, STOPPED or ERROR): False. A stopped experiment with
          budget left goes on with ``hyperlab.resume``.
        """
        driver = self._driver
        if driver is not None:
            return driver.budget_available()
        created = max((t.number + 1 for t in self._history or ()), default=0)
        return budget_left(self._options, created, self._record.elapsed)

    def _checked(self, driver: Driver) -> Result:
        """The result; the failed trial's exception when it ended the experiment
        (``continue_on_failure=False``); TrialError when trials failed and none succeeded (or
        failures ended the experiment)."""
        result = self.result()
        if driver.fatal is not None:
            raise failure_to_raise(driver.fatal, result)
        watch = driver.failures
        if not watch.failed or (watch.succeeded and driver.status is not ExperimentStatus.ERROR):
            return result
        if driver.status is ExperimentStatus.ERROR and driver.error:
            message = f"experiment {self.id} ended in ERROR: {driver.error}"
        else:
            first = result.failed_trials[0]
            message = (
                f"experiment {self.id}: none of its trials succeeded ({watch.failed} failed); "
                f"trial {first.number} failed with:\n{(first.error or '').strip()}"
            )
        raise TrialError(message, result=result)

    def _resume_hint(self) -> str:
        where = "" if self._store_arg is None else f", storage={self._store_arg!r}"
        flag = "" if self._store_arg is None else f" --storage {self._store.masked_url}"
        return (
            f"Its interrupted trials run again when you continue it: "
            f"hyperlab.resume({self.id!r}{where}), or `hyperlab{flag} resume {self.id}`"
        )

    def _at_exit(self) -> None:
        """At interpreter exit: wait for a started experiment, or stop it cleanly."""
        thread, driver = self._thread, self._driver
        if thread is None or driver is None or not thread.is_alive():
            return
        if not self._wait_on_exit:
            driver.request_stop("the script ended")
        thread.join()
        if not self._wait_on_exit:
            _say(f"experiment {self.id} was stopped as the script ended. {self._resume_hint()}")


def _say(message: str) -> None:
    print(f"hyperlab: {printable(message)}", file=sys.stderr, flush=True)


def _warn_if_named_twice(store: Store, name: str) -> None:
    ids = [e.id for e in store.list_experiments() if e.name == name]
    if ids:
        warnings.warn(
            f"an experiment named {name!r} already exists in {store.url} ({', '.join(ids)}); "
            "commands given this name will ask which id you mean",
            UserWarning,
            stacklevel=3,
        )
