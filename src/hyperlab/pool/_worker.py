"""A worker: joins a running experiment through its store and runs the trials its driver offers.

It registers in the experiment's pool and heartbeats; claims as many offered trials as its
local executor (``processes``, ``threads`` or ``command``) has free slots; writes what they do
to the store; hands them the driver's answers and stop requests. It leaves once the
experiment no longer runs and its own trials ended, or when told to (``stop``).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cloudpickle
from pydantic import ValidationError

from hyperlab._version import __version__
from hyperlab.config import GpuConfig
from hyperlab.errors import ConfigError, HyperlabError, StoreError
from hyperlab.executors import CommandTrial
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Executor,
    Failed,
    Stopped,
    create_executor,
)
from hyperlab.experiment import device_pool
from hyperlab.pool._codec import event_row, spec_from_json
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus

__all__ = [
    "DEFAULT_TTL",
    "LOCAL_EXECUTORS",
    "POOLED_EXECUTORS",
    "Unloadable",
    "Worker",
    "WorkerRefused",
    "worker",
]

LOCAL_EXECUTORS = ("processes", "threads", "command")
"""The executors a worker may run its trials with."""
DEFAULT_TTL = 15.0
"""Seconds without a heartbeat after which a worker's trials run again elsewhere."""
MIN_TTL = 1.0
BEATS_PER_TTL = 6
"""Heartbeats a worker sends per ``ttl``: a few may be late without losing its trials."""
LOOP_INTERVAL = 0.1
"""Seconds a loop turn waits for its local executor's events."""
POOLED_EXECUTORS = ("pool", "shared")
"""The executors of experiments that workers join."""
RUNS = (ExperimentStatus.RUNNING, ExperimentStatus.NO_MORE_TRIAL)
"""The statuses of an experiment whose driver runs trials."""


class WorkerRefused(HyperlabError):
    """The worker cannot join: no such experiment, one that does not run, a store it must not
    share, another hyperlab version. The command exits 2.

    Attributes:
        not_running: True when the only reason is that the experiment does not run now (it
            may soon: a driver is starting it, or one may continue it).
    """

    def __init__(self, message: str, *, not_running: bool = False) -> None:
        super().__init__(message)
        self.not_running = not_running


class Unloadable:
    """The objective of a worker that could not load the stored one: each trial it runs fails
    with the reason (the module it could not import), and the worker goes on."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __call__(self, params: dict[str, Any]) -> None:
        raise ConfigError(self.reason)


class Worker:
    """One worker of experiment ``experiment_id``.

    Args:
        experiment_id: The running experiment to join (its id or name).
        storage: Its store: a PostgreSQL URL, or a SQLite file when the driver runs on this
            machine (SQLite's locking does not hold over networked file systems).
        concurrency: How many trials at once.
        executor: How it runs them: ``processes`` (the default for functions), ``threads``
            or ``command`` (the only one for command trials, and their default).
        gpus: The GPUs of this machine to place trials on (as ``run``'s ``gpus``), or None.
        stop_grace: Seconds a stopped trial gets before it is killed.
        ttl: Seconds without a heartbeat after which the driver runs this worker's trials
            again elsewhere (it beats ``BEATS_PER_TTL`` times as often).
        max_trials: How many trials it runs at most (first runs: a re-run of a lost worker's
            trial is not counted), then leaves; None for no bound. With ``executor="shared"``
            (``hyperlab.compat.optuna``'s studies on a shared store) the worker brings them to
            the experiment's budget, as each process's ``n_trials`` counts in Optuna.
        objective: The function to run the trials with, in place of the one stored with the
            experiment (which needs not load here): a process running the same script.
        after_trial: Called with the number of each trial that ran here, once the driver
            recorded its end (the store has it); it returns False while the store does not
            have it yet (it is called again on the next turn, for ``ttl`` seconds at most).
        after_trial_holds: Whether the trial's slot stays taken until ``after_trial``
            returned True, as Optuna's callbacks run in the process of the trial before its
            next one (a callback may stop the process); else the next trial starts at once.

    Raises:
        WorkerRefused: see the class; ConfigError for bad options.
    """

    def __init__(
        self,
        experiment_id: str,
        *,
        storage: str | None = None,
        concurrency: int = 1,
        executor: str | None = None,
        gpus: Any = None,
        stop_grace: float = 5.0,
        ttl: float = DEFAULT_TTL,
        max_trials: int | None = None,
        objective: Any = None,
        after_trial: Callable[[int], bool] | None = None,
        after_trial_holds: bool = True,
    ) -> None:
        if max_trials is not None and (
            isinstance(max_trials, bool) or not isinstance(max_trials, int) or max_trials < 1
        ):
            raise ConfigError(f"max_trials: expected an integer >= 1 or None, got {max_trials!r}")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigError(f"concurrency: expected an integer >= 1, got {concurrency!r}")
        if executor is not None and executor not in LOCAL_EXECUTORS:
            raise ConfigError(
                f"executor: a worker runs trials with one of {', '.join(LOCAL_EXECUTORS)}, "
                f"got {executor!r}"
            )
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl >= MIN_TTL:
            raise ConfigError(f"ttl: expected seconds >= {MIN_TTL:g}, got {ttl!r}")
        self.ttl = float(ttl)
        self.heartbeat = self.ttl / BEATS_PER_TTL
        self.id = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._stopping = threading.Event()
        try:
            self.store = Store.open(storage, migrate=False)
        except StoreError as exc:
            raise WorkerRefused(f"storage: {exc}") from None
        try:
            self.record = self._join(experiment_id)
            if objective is None:
                objective = _load_objective(self.record, self.id)
            self.executor = self._local_executor(
                objective, executor, concurrency, device_pool(_gpu_config(gpus)), stop_grace
            )
        except BaseException:
            self.store.close()
            raise
        self.concurrency = concurrency
        self.max_trials = max_trials
        self.ran = 0  # trials claimed so far
        self.taken = 0  # first runs claimed so far (what max_trials bounds)
        self._runs: dict[int, int] = {}  # number -> attempt, for trials running here
        self._outbox: list[dict[str, Any]] = []
        self._answers_seen = 0
        self._asked: set[int] = set()  # trials the driver asked to stop (or ended itself)
        self._leaving = False
        self._finishing = threading.Event()
        self.after_trial = after_trial
        self.after_trial_holds = after_trial_holds
        self._settling: dict[int, float] = {}  # ended here -> until when after_trial waits

    def _join(self, experiment: str) -> ExperimentRecord:
        store = self.store
        try:
            record = store.get_experiment(store.resolve(experiment))
        except HyperlabError as exc:
            raise WorkerRefused(f"experiment: {exc}") from None
        if record.status not in RUNS:
            raise WorkerRefused(
                f"experiment {record.id}: workers join a running experiment (RUNNING or "
                f"NO_MORE_TRIAL), its status is {record.status.name}",
                not_running=True,
            )
        if record.options.executor not in POOLED_EXECUTORS:
            raise WorkerRefused(
                f"experiment {record.id}: runs its trials with executor="
                f"{record.options.executor!r}; workers join experiments run with executor='pool'"
            )
        here = socket.gethostname()
        if not store.url.startswith("postgresql") and record.driver_host != here:
            raise WorkerRefused(
                f"storage: {store.masked_url} is a SQLite file, whose locking does not hold "
                f"over networked file systems, and the driver runs on {record.driver_host}, "
                f"not here ({here}); workers on other machines need a PostgreSQL store"
            )
        return record

    def _local_executor(
        self, objective: Any, name: str | None, concurrency: int, devices: Any, stop_grace: float
    ) -> Executor:
        is_command = isinstance(objective, CommandTrial)
        if name is None:
            name = "command" if is_command else "processes"
        if is_command != (name == "command"):
            raise ConfigError(
                f"executor: experiment {self.record.id} runs "
                f"{'command' if is_command else 'function'} trials, which the {name!r} "
                f"executor cannot run; use {'command' if is_command else 'processes or threads'}"
            )
        return create_executor(
            name,
            objective,
            concurrency=concurrency,
            stop_grace=stop_grace,
            devices=devices,
            max_log_bytes=self.record.options.max_log_bytes,
            echo_output=self.record.options.echo_output,
        )

    def stop(self) -> None:
        """Leave (from another thread): stop the trials running here and return from ``run``;
        the driver runs them again elsewhere, as it would a dead worker's, but at once."""
        self._stopping.set()

    def finish(self) -> None:
        """Take no more trials (from another thread): ``run`` returns once those running here
        ended, as Optuna's ``study.stop()`` ends one process's ``optimize``."""
        self._finishing.set()

    def run(self) -> int:
        """Work until the experiment no longer runs and this worker's trials ended, or
        ``stop`` is called; how many trials it took."""
        store, experiment = self.store, self.record.id
        store.register_pool_worker(
            self.id,
            experiment,
            host=socket.gethostname(),
            pid=os.getpid(),
            concurrency=self.concurrency,
            version=__version__,
            ttl=self.ttl,
            max_trials=self.max_trials,
        )
        self.executor.open(self._outbox_event)
        next_beat = 0.0
        running = True
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                if now >= next_beat:
                    next_beat = now + self.heartbeat
                    running = store.beat_pool_worker(self.id, experiment) in RUNS
                if self._finishing.is_set() and not self.done:
                    self.max_trials = self.taken  # what it brings to a shared experiment
                    store.cap_pool_worker(self.id, self.taken)
                if self._runs:
                    self._obey(store.pool_held(self.id))
                    self._pass_answers()
                elif (not running or self.done) and not self._settling:
                    break
                if running:
                    self._claim()
                self.executor.poll(LOOP_INTERVAL)
                self._send()
                self._settle()
        finally:
            self._leaving = True
            try:
                self.executor.close()
                self._send()
                store.leave_pool(self.id)
            finally:
                store.close()
        return self.ran

    @property
    def done(self) -> bool:
        """Whether it took the ``max_trials`` it takes."""
        return self.max_trials is not None and self.taken >= self.max_trials

    def _settle(self) -> None:
        """Call ``after_trial`` for the trials that ended here, once the driver recorded them."""
        if not self._settling:
            return
        assert self.after_trial is not None
        now = time.monotonic()
        for number, until in list(self._settling.items()):
            if self.after_trial(number) or now > until:
                del self._settling[number]

    def _claim(self) -> None:
        free = self.executor.free_slots
        if self.after_trial_holds:
            free -= len(self._settling)
        if free <= 0 or self.done:
            return
        left = None if self.max_trials is None else self.max_trials - self.taken
        claimed = self.store.claim_pool_trials(self.record.id, self.id, free, first_runs=left)
        for number, attempt, data in claimed:
            self._runs[number] = attempt
            self.ran += 1
            self.taken += attempt == 1
            try:
                spec = spec_from_json(data)
            except TypeError as exc:  # a driver of another hyperlab version
                error = f"worker {self.id} (hyperlab {__version__}) cannot read the trial: {exc}"
                self._outbox_event(Failed(number, time.time(), error))
                continue
            self.executor.submit(spec)

    def _obey(self, held: dict[int, tuple[int, bool]]) -> None:
        """Stop the trials the driver asks to stop, or ended itself (their rows are gone)."""
        for number, attempt in list(self._runs.items()):
            mine = held.get(number)
            if mine is None or mine[0] != attempt or mine[1]:
                self._asked.add(number)
                self.executor.stop(number)

    def _pass_answers(self) -> None:
        answers = self.store.pool_answers(self.record.id, self._answers_seen)
        for answer in answers:
            self._answers_seen = answer.id
            if self._runs.get(answer.number) == answer.attempt:
                self.executor.answer(answer.number, answer.request, answer.value, answer.error)

    def _outbox_event(self, event: Event) -> None:
        attempt = self._runs.get(event.number)
        if attempt is None:
            return
        if isinstance(event, END_EVENTS):
            del self._runs[event.number]
            asked = event.number in self._asked
            self._asked.discard(event.number)
            if self._leaving and isinstance(event, Stopped) and not asked:
                return  # stopped because this worker leaves: the driver runs it again (Lost)
            if self.after_trial is not None and not self._leaving:
                self._settling[event.number] = time.monotonic() + self.ttl
        self._outbox.append(event_row(event, attempt))

    def _send(self) -> None:
        if self._outbox:
            rows, self._outbox = self._outbox, []
            self.store.add_pool_events(self.record.id, rows)


def _load_objective(record: ExperimentRecord, worker_id: str) -> Any:
    """The experiment's stored objective, or an ``Unloadable`` saying why it cannot be loaded
    here (its module cannot be imported on this machine, say)."""
    if record.objective is None:
        return Unloadable(
            f"experiment {record.id}'s objective ({record.objective_ref}) could not be stored, "
            "so workers cannot run it"
        )
    folder = record.objective_path
    if folder and folder not in sys.path and Path(folder).is_dir():
        sys.path.append(folder)  # the driver's code folder, when this machine shares it
    try:
        return cloudpickle.loads(record.objective)
    except Exception as exc:
        return Unloadable(
            f"worker {worker_id} cannot load experiment {record.id}'s objective "
            f"({record.objective_ref}): {type(exc).__name__}: {exc}; install its module where "
            "the worker runs, or start the worker in the driver's code folder"
        )


def _gpu_config(gpus: Any) -> GpuConfig | None:
    """``gpus`` as a ``GpuConfig`` (given as one, as its mapping, or None).

    Raises:
        ConfigError: naming what is wrong in it.
    """
    if gpus is None or isinstance(gpus, GpuConfig):
        return gpus
    try:
        return GpuConfig.model_validate(gpus)
    except ValidationError as exc:
        errors = "; ".join(str(error["msg"]) for error in exc.errors())
        raise ConfigError(f"gpus: {errors}, got {gpus!r}") from None


def worker(
    experiment_id: str,
    *,
    storage: str | None = None,
    concurrency: int = 1,
    executor: str | None = None,
    gpus: Any = None,
    stop_grace: float = 5.0,
    ttl: float = DEFAULT_TTL,
    max_trials: int | None = None,
) -> int:
    """Join running experiment ``experiment_id`` as a worker and run its trials until it ends.

    The experiment runs with ``executor="pool"``; its driver stays the one that decides
    (tuner, assessor, budget, controls). See ``Worker`` for the arguments.

    Returns:
        How many trials this worker took.

    Example::

        hyperlab.worker("k3v9q2xa", storage="postgresql://db/hyperlab", concurrency=4)
    """
    return Worker(
        experiment_id,
        storage=storage,
        concurrency=concurrency,
        executor=executor,
        gpus=gpus,
        stop_grace=stop_grace,
        ttl=ttl,
        max_trials=max_trials,
    ).run()
