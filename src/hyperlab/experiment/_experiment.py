"""``Experiment``: a handle on one experiment, to run it here or in the background, drive it
from a strategy loop (``_loop_api``), stop it, wait for it, and what happens when trials fail,
on Ctrl-C and when the script ends."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, overload

from typing_extensions import Unpack

from hyperlab._steering import budget_changes
from hyperlab._terminal import printable
from hyperlab.config import (
    ExperimentConfig,
    ExperimentOptions,
    ResearchOptions,
    executor_fields,
    load_config,
    validate_options,
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
from hyperlab.experiment._loop_api import StrategyLoop
from hyperlab.experiment._parts import (
    Parts,
    check_options,
    instances,
    new_parts,
    new_record,
    stored_parts,
    warn_if_named_twice,
    warn_if_spent,
    write_folder,
)
from hyperlab.experiment._result import Result
from hyperlab.experiment._resume import StoredTrials
from hyperlab.experiment._serving import Serving, check_serving, serve
from hyperlab.experiment._setup import load_objective, objective_folder, trial_objective
from hyperlab.experiment._strategy import Submissions, TrialHandle
from hyperlab.space import SearchSpace
from hyperlab.store import (
    ExperimentRecord,
    Store,
)
from hyperlab.store.tokens import TOKEN_FILE, ensure_token
from hyperlab.trial import ExperimentStatus, Trial

__all__ = ["Experiment"]

NO_TUNER = "none"
"""The tuner of a strategy loop no tuner was named for: it proposes nothing."""

ENVIRONMENT_WAIT = 10.0
"""Seconds ``save`` waits for the environment capture (its git calls stop after 5)."""


class Experiment(StrategyLoop):
    """A handle on one experiment: create it, start it in the background, wait, stop, or
    drive it from a loop of your own (``submit``, ``wait``, ``as_completed``, ``trials``).

    Takes the same arguments as ``hyperlab.run``. Everything is validated here, before
    anything is written: a bad option raises ``ConfigError`` and leaves the store untouched.
    Without a ``tuner``, ``run``, ``start`` and ``save`` use ``auto`` (which needs a budget),
    while an experiment driven by ``submit`` runs only what is submitted (``tuner=None``
    asks for that anywhere).

    Example:
        >>> exp = hyperlab.Experiment(objective, space, max_trials=100, executor="processes",
        ...                           concurrency=4, storage="sqlite:///runs.db")
        >>> exp.start()           # returns once the experiment is recorded and running
        >>> exp.status            # ExperimentStatus.RUNNING
        >>> result = exp.wait()   # blocks until it ends

        A strategy loop, ended cleanly by the ``with`` block:

        >>> with hyperlab.Experiment(objective, space, concurrency=4) as exp:
        ...     handles = exp.submit([{"x": 1.0}, {"x": 2.0}])
        ...     trials = exp.wait(handles)   # the ended trials, in the order submitted
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
        claim: ExperimentRecord | None = None,
        **options: Unpack[Options],
    ) -> None:
        """Args: as for ``hyperlab.run`` (every option of docs/config.md, "Fields", and
        ``storage``, ``id``, ``progress``, ``callbacks``); ``research`` is set by
        ``hyperlab.Research``; ``claim`` by Optuna's ``Study``: the never-run experiment its
        ``create_study`` recorded, holding the study's name, before the objective was known,
        which this one defines (``Store.define_experiment``: same id and name) instead of
        creating an experiment."""
        chosen_id = claim.id if claim is not None else None if id is None else check_id(id)
        hooks = check_callbacks(callbacks)
        checked, tuner, assessor, constraints = check_options(options, research)
        space = SearchSpace.coerce(space)
        # no tuner named: `auto` for run/start/save, none for a strategy loop; built first
        # with the one the budget allows (`auto` needs one), the other when it is chosen
        self._default_tuner = "tuner" not in options
        if self._default_tuner and checked.max_trials is None and checked.max_duration is None:
            tuner = NO_TUNER
            checked = checked.model_copy(update={"tuner": NO_TUNER})
        self._given = (checked, space, objective, assessor, constraints)
        parts = new_parts(checked, space, objective, tuner, assessor, constraints)
        store = Store.open(storage)
        files = store.files_dir()
        if parts.options.working_dir is None and files is not None:  # beside a SQLite file
            beside = parts.options.model_copy(update={"working_dir": str(files)})
            parts = replace(parts, options=beside)
        if chosen_id is not None and claim is None:
            check_id_is_new(store, chosen_id, storage)
        if parts.options.name is not None and claim is None:
            warn_if_named_twice(store, parts.options.name)
        record = new_record(
            store.new_experiment_id() if chosen_id is None else chosen_id,
            parts,
            space,
            objective,
            instances(tuner, assessor, constraints),
        )
        if claim is not None:
            record = replace(record, unique_name=claim.unique_name)
        default_tuner = self._default_tuner
        self._setup(store, record, parts, None, progress, storage, hooks)
        self._default_tuner = default_tuner
        self._claim = claim
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
        self._default_tuner = False  # a new experiment's __init__ says otherwise
        self._claim = None  # the claim a new experiment defines (set by __init__)
        self._counted = (0, 0.0)  # load_state_dict's
        self._read_at: int | None = None  # a resumed one's change cursor, read before its trials
        self._submissions = Submissions(record.id)  # the strategy loop's side of its driver
        self._failure_raised = False  # a strategy loop was given the run's failure
        self._starting = threading.Lock()  # one start, whichever thread submits first

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
    def resume(
        cls,
        experiment: str,
        *,
        storage: str | os.PathLike | None = None,
        objective: Callable[..., Any] | None = None,
        progress: bool | float | None = None,
        callbacks: Sequence[Callback] | None = None,
        max_trials: int | None = None,
        max_duration: float | str | None = None,
        concurrency: int | None = None,
    ) -> Experiment:
        """A handle that continues a stored experiment (stopped, or whose driver died), not
        running yet: ``run`` it to its end (as ``hyperlab.resume``), ``start`` it, or drive it
        from a strategy loop again, whose ``trials`` gives back the trials it had: those that
        ended, and those interrupted, which run again (``attempt + 1``) and resolve once ended.

        Args: as ``hyperlab.resume``'s.

        Raises:
            ConfigError: a change of the wrong type or out of range, an objective that cannot
                be loaded, or an ambiguous name (nothing is written).
            ExperimentNotFound: no such experiment in the store.
            ExperimentBusy: a driver runs it now (the message names its pid and host).
        """
        store = Store.open(storage)
        record = store.get_experiment(store.resolve(experiment))
        record.check_not_running()
        changes = budget_changes(
            max_trials=max_trials, max_duration=max_duration, concurrency=concurrency
        )
        options = validate_options(**{**record.options.model_dump(), **changes})
        if "max_trials" in changes:
            warn_if_spent(store, record.id, changes["max_trials"])
        if objective is None:
            objective = load_objective(record)
        return cls.attach(store, record, options, objective, progress, storage, callbacks)

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
        read_at = store.change_cursor(record.id)  # before the trials: see Driver's read_at
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
        self._read_at = read_at
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

    def _choose_tuner(self, name: str) -> None:
        """Build a new experiment's parts again with the tuner ``name`` when no tuner was
        named (``auto`` for a run, none for a strategy loop), before it is written.

        Raises:
            ConfigError: ``auto`` without a budget (nothing is written).
        """
        if not self._default_tuner or self._history is not None or self._options.tuner == name:
            return
        checked, space, objective, assessor, constraints = self._given
        kept = {"seed": self._options.seed, "working_dir": self._options.working_dir, "tuner": name}
        parts = new_parts(
            checked.model_copy(update=kept), space, objective, name, assessor, constraints
        )
        self._options, self._tuner = parts.options, parts.tuner
        self._assessor, self._executor = parts.assessor, parts.executor
        self._record = replace(self._record, options=parts.options)

    def _make_driver(
        self, port: int | None = None, host: str = "127.0.0.1", *, strategy: bool = False
    ) -> Driver:
        """The driver; with ``port``, the experiment is served there while it runs (checked
        before anything is written); ``strategy``: for a strategy loop."""
        if self._driver is not None:
            raise ConfigError(f"experiment {self.id} was already started")
        self._choose_tuner(NO_TUNER if strategy else "auto")
        if port is not None:
            check_serving(port, host)
        environment = None
        if self._history is None:
            environment = self._environment
            if environment is not None and environment.done:  # else the driver writes it
                self._record = replace(self._record, environment=environment.result())
                environment = None
            self._create()
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
                counted=self._counted,
                submissions=self._submissions,
                read_at=self._read_at,
            )
            self._driver.submissions.attached = strategy
        except BaseException:
            self._stop_serving()
            raise
        if self._history is not None:
            self._history = []  # replayed: not kept for the whole run
        return self._driver

    def _create(self) -> None:
        """Write the new experiment's record: over its claim when it has one."""
        if self._claim is None:
            self._store.create_experiment(self._record)
        else:
            self._store.define_experiment(self._record, self._claim)

    def _stop_serving(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def save(self) -> str:
        """Record the experiment (status INITIALIZED) without running it; return its id.

        ``hyperlab.resume(id)``, in this process or another, then runs it.
        """
        if self._history is None:
            self._choose_tuner("auto")
            if self._environment is not None:
                environment = self._environment.result(ENVIRONMENT_WAIT)
                self._record = replace(self._record, environment=environment)
            self._create()
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
        return self._start(wait_on_exit, port, host, strategy=False)

    def _start(
        self, wait_on_exit: bool, port: int | None, host: str, *, strategy: bool
    ) -> Experiment:
        driver = self._make_driver(port, host, strategy=strategy)

        def target() -> None:
            try:
                driver.run()
            except BaseException as exc:  # handed to wait()
                self._failure = exc
            finally:
                self._stop_serving()
                read = None if self._failure is not None else driver.stored_trials
                driver.submissions.close(read, self._failure)  # if run() did not get to

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

    @overload
    def wait(self, handles: None = None, timeout: float | None = None) -> Result: ...

    @overload
    def wait(self, handles: float, timeout: None = None) -> Result: ...

    @overload
    def wait(
        self, handles: TrialHandle | Iterable[TrialHandle], timeout: float | None = None
    ) -> list[Trial]: ...

    def wait(
        self,
        handles: TrialHandle | Iterable[TrialHandle] | float | None = None,
        timeout: float | None = None,
    ) -> Result | list[Trial]:
        """Block until the experiment ends (or ``timeout`` seconds pass); return the result.
        With ``handles`` (from ``submit`` or ``trials``): until their trials ended; return
        those trials, in the order of ``handles``.

        A number as the first argument is the ``timeout`` of the first form (as before
        handles could be given).

        Raises:
            TrialError: as ``run`` does, once the experiment ended (the first form).
            Exception: as ``run`` does with ``continue_on_failure=False``: what the failed
                trial raised, once the experiment ended at it; with ``callbacks_raise=True``,
                what the callback raised.
            TimeoutError: with ``handles``, ``timeout`` seconds passed first (naming how many
                trials had not ended).
            ConfigError: a handle of another experiment, or not a handle.
        """
        if handles is not None and not (
            isinstance(handles, int | float) and not isinstance(handles, bool)
        ):
            return self._wait_trials(handles, timeout)  # type: ignore[arg-type]
        if handles is not None:
            timeout = float(handles)
        self._check_run_can_end()
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

    def _check_run_can_end(self) -> None:
        """Refuse to wait for the end of a run only a strategy loop here can end: nothing would
        (no tuner to run out, no budget), so the wait would never return.

        Raises:
            ConfigError: naming how such a run ends.
        """
        driver = self._driver
        if driver is None or not driver.submissions.attached:
            return
        if driver.drain_asked or driver.stop_asked is not None:
            return
        options = driver.options
        if (
            options.max_trials is None
            and options.max_duration is None
            and (driver.exhausted or options.tuner == NO_TUNER)
        ):
            raise ConfigError(
                f"experiment {self.id} is driven by a strategy loop, without a budget: it ends "
                "when the loop does (the end of its with block, drain() or stop()), so wait() "
                "would never return; wait(handles) waits for trials"
            )

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
        """At interpreter exit: wait for a started experiment, or stop it cleanly (a strategy
        loop with nothing left to run or queued ends DONE)."""
        thread, driver = self._thread, self._driver
        if thread is None or driver is None or not thread.is_alive():
            return
        if self._wait_on_exit:
            thread.join()
            return
        idle = not (driver.executor.running or driver.requeue or driver.submissions)
        if driver.submissions.attached and idle:
            driver.request_drain()  # a strategy loop with nothing left to run: it is done
            thread.join()
            return
        driver.request_stop("the script ended")
        thread.join()
        _say(f"experiment {self.id} was stopped as the script ended. {self._resume_hint()}")


def _say(message: str) -> None:
    print(f"hyperlab: {printable(message)}", file=sys.stderr, flush=True)
