"""``Experiment``: a handle on one experiment, to run it here or in the background, stop it,
wait for it, and what happens when trials fail, on Ctrl-C and when the script ends."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from hyperlab._terminal import printable
from hyperlab.config import (
    ExperimentConfig,
    ExperimentOptions,
    ResearchOptions,
    executor_fields,
    load_config,
)
from hyperlab.environment import EnvironmentCapture
from hyperlab.errors import ConfigError, TrialError
from hyperlab.executors import CommandTrial
from hyperlab.executors.base import Executor
from hyperlab.experiment._callbacks import Callback, check_callbacks
from hyperlab.experiment._driver import Driver
from hyperlab.experiment._fatal import failure_to_raise
from hyperlab.experiment._ids import check_id, check_id_is_new
from hyperlab.experiment._keywords import Options
from hyperlab.experiment._parts import (
    Parts,
    check_options,
    instances,
    new_parts,
    new_record,
    stored_parts,
    warn_if_named_twice,
    write_folder,
)
from hyperlab.experiment._requests_api import Requests
from hyperlab.experiment._result import Result
from hyperlab.experiment._resume import StoredTrials
from hyperlab.experiment._serving import Serving, check_serving, serve
from hyperlab.experiment._setup import objective_folder, trial_objective
from hyperlab.space import SearchSpace
from hyperlab.store import (
    ExperimentRecord,
    Store,
)
from hyperlab.store.tokens import TOKEN_FILE, ensure_token
from hyperlab.trial import ExperimentStatus, Trial

__all__ = ["Experiment"]

ENVIRONMENT_WAIT = 10.0
"""Seconds ``save`` waits for the environment capture (its git calls stop after 5)."""


class Experiment(Requests):
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
        storage: str | os.PathLike | None = None,
        id: str | None = None,
        progress: bool | float | None = None,
        callbacks: Sequence[Callback] | None = None,
        research: ResearchOptions | Mapping[str, Any] | None = None,
        **options: Unpack[Options],
    ) -> None:
        """Args: as for ``hyperlab.run`` (every option of docs/config.md, "Fields", and
        ``storage``, ``id``, ``progress``, ``callbacks``); ``research`` is set by
        ``hyperlab.Research``."""
        chosen_id = None if id is None else check_id(id)
        hooks = check_callbacks(callbacks)
        checked, tuner, assessor, constraints = check_options(options, research)
        space = SearchSpace.coerce(space)
        parts = new_parts(checked, space, objective, tuner, assessor, constraints)
        store = Store.open(storage)
        files = store.files_dir()
        if parts.options.working_dir is None and files is not None:  # beside a SQLite file
            beside = parts.options.model_copy(update={"working_dir": str(files)})
            parts = replace(parts, options=beside)
        if chosen_id is not None:
            check_id_is_new(store, chosen_id, storage)
        if parts.options.name is not None:
            warn_if_named_twice(store, parts.options.name)
        record = new_record(
            store.new_experiment_id() if chosen_id is None else chosen_id,
            parts,
            space,
            objective,
            instances(tuner, assessor, constraints),
        )
        self._setup(store, record, parts, None, progress, storage, hooks)
        code_dir = (  # where its git state is read: a command's folder, a research's
            objective.code_dir  # project, else its module's
            if isinstance(objective, CommandTrial)
            else parts.options.research.project_dir
            if parts.options.research is not None
            else objective_folder(objective)
        )
        self._environment: EnvironmentCapture | None = EnvironmentCapture(code_dir)

    def _setup(
        self,
        store: Store,
        record: ExperimentRecord,
        parts: Parts,
        history: Iterable[Trial] | None,
        progress: bool | float | None,
        storage: str | os.PathLike | None,
        callbacks: tuple[Any, ...],
    ) -> None:
        """Shared by new and resumed experiments; ``history`` is None for a new one."""
        self._store_arg = None if storage is None else os.fspath(storage)
        self._wait_on_exit = False
        self._store = store
        self._record = record
        self._options = parts.options
        self._tuner = parts.tuner
        self._assessor = parts.assessor
        self._executor = parts.executor
        self._constraints = parts.constraints
        self._history = history
        self._progress = progress
        self._callbacks = callbacks
        self._environment = None  # a new experiment's capture, being taken (set by __init__)
        self._driver: Driver | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._server: Serving | None = None

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
        return cls.from_options(
            trial_objective(config),
            config.search_space,
            config.options(),
            storage=storage if storage is not None else config.storage,
            progress=progress,
        )

    @classmethod
    def from_options(
        cls,
        objective: Callable[..., Any],
        space: SearchSpace | Mapping[str, Any] | str | os.PathLike,
        options: ExperimentOptions,
        *,
        storage: str | os.PathLike | None = None,
        id: str | None = None,
        progress: bool | float | None = None,
    ) -> Experiment:
        """A new experiment with options already validated (a config file's, or those a layer
        translated from another tool's): as ``Experiment(objective, space, **options)``, with
        the executor's options in ``executor_args``."""
        executor = executor_fields()
        return cls(
            objective,
            space,
            storage=storage,
            id=id,
            progress=progress,
            research=options.research,
            executor_args={name: getattr(options, name) for name in executor},
            **{
                name: getattr(options, name)
                for name in Options.__optional_keys__
                if name in ExperimentOptions.model_fields and name not in executor
            },
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
        parts = stored_parts(record, options, objective)
        self = cls.__new__(cls)
        history: Iterable[Trial] = (  # it replays them: streamed, unless an assessor orders
            StoredTrials(store, record.id)  # them by time (with their reports)
            if parts.assessor is None
            else store.get_trials(record.id, reports=True)
        )
        self._setup(
            store,
            record,
            parts,
            history,
            progress,
            storage,
            check_callbacks(callbacks),
        )
        return self

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
    def server(self) -> Serving | None:
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
        write_folder(folder, self._record, self._options)
        if port is not None:
            self._server = serve(self._store, port, host, self.id, ensure_token(folder))
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
                constraints=self._constraints,
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
        if self._history is not None:
            self._history = []  # replayed: not kept for the whole run
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

    def result(self) -> Result:
        """The experiment as stored now (running or not)."""
        return Result.read(self._store, self.id)

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
