"""Optuna's ``Study`` on a hyperlab experiment.

A study is a hyperlab experiment named after it, in hyperlab's store (``storage`` is an
Optuna-style database URL, ``sqlite:///...`` or ``postgresql://...``; by default hyperlab's
own store, so the study is listed by ``hyperlab ls`` and shown on the dashboard). Its metric
is ``value``, or ``values_0``, ``values_1``... with several objectives (``directions``), each
with its mode; a trial's constraints (``trial.set_constraint``, a sampler's
``constraints_func``) are kept with its result and are the experiment's constraints. Its
search space starts empty (a grid's excepted) and grows as the objective
suggests parameters. ``create_study`` records a named study's experiment at once, holding its
name (the experiment's ``unique_name``), so that processes creating one study at once all get
the same one; its first ``optimize`` (in any process) defines it with the objective. Each
``optimize`` call runs the experiment (the first defines it, or creates an unnamed study's,
later ones continue it) for ``n_trials`` more trials or ``timeout`` more seconds: the objective
runs in this thread (``n_jobs=1``) or on ``n_jobs`` threads, as in Optuna. ``create_study`` and
``load_study``, which find a study in its storage and make its ``Study``, are in ``_studies``.
"""

from __future__ import annotations

import contextlib
import copy
import enum
import os
import threading
from collections import deque
from collections.abc import Callable, Container, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hyperlab.compat.optuna._asktell import AskTell, check_told
from hyperlab.compat.optuna._frames import pareto_front, trials_frame
from hyperlab.compat.optuna._hooks import OptimizeHooks, TrialView, WorkerHooks
from hyperlab.compat.optuna._joining import Joining
from hyperlab.compat.optuna._objective import Objective, metric_names, stored_constraints
from hyperlab.compat.optuna.pruners import BasePruner
from hyperlab.compat.optuna.samplers import BaseSampler
from hyperlab.compat.optuna.trial import FrozenTrial, Trial, TrialState
from hyperlab.config import MAX_TRIALS, validate_options
from hyperlab.errors import ConfigError, ExperimentBusy, TrialError
from hyperlab.experiment import Callback, Experiment
from hyperlab.pool import Worker
from hyperlab.store import Store
from hyperlab.trial import Trial as Record
from hyperlab.tuners import tuner_class

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Study", "StudyDirection"]

UNBOUNDED = MAX_TRIALS
"""``max_trials`` for an ``optimize`` without ``n_trials``: until ``timeout`` or ``stop()``."""


class StudyDirection(enum.IntEnum):
    """Optuna's optimization directions."""

    NOT_SET = 0
    MINIMIZE = 1
    MAXIMIZE = 2


class Study:
    """An Optuna study, run as a hyperlab experiment (use ``create_study``/``load_study``)."""

    def __init__(
        self,
        study_name: str | None,
        storage: str | None,
        directions: Sequence[StudyDirection],
        sampler: BaseSampler,
        pruner: BasePruner,
        experiment_id: str | None = None,
    ) -> None:
        self.study_name = study_name
        self._storage = storage
        self._directions = list(directions)
        self.sampler = sampler
        self.pruner = pruner
        self._id = experiment_id
        self._enqueued: deque[dict[str, Any]] = deque()
        self._experiment: Experiment | None = None
        self.grid_names = frozenset(sampler.space())
        self._session: AskTell | None = None
        self._reader: Store | None = None  # opened by the first read, for every later one
        self._view: TrialView | None = None  # the trials, while optimize or a session runs
        # the last optimize's view and the store's change cursor when it ended: it serves the
        # reads after it (best_params, trials) while the cursor has not moved
        self._kept: tuple[TrialView, int] | None = None
        self._lock = threading.Lock()
        self._session_lock = threading.Lock()
        self._worker: Worker | None = None  # while optimize runs as another process's worker
        self._stop_asked = False  # by stop(), during this process's optimize

    def __getstate__(self) -> dict[str, Any]:
        """The study without what only this process has (its running experiment, locks)."""
        state = dict(self.__dict__)
        for name in (
            "_lock",
            "_session_lock",
            "_experiment",
            "_session",
            "_reader",
            "_view",
            "_kept",
            "_worker",
        ):
            state.pop(name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._experiment, self._session, self._reader, self._view = None, None, None, None
        self._kept, self._worker = None, None
        self._lock, self._session_lock = threading.Lock(), threading.Lock()

    # ---- what it is ------------------------------------------------------------------------

    @property
    def direction(self) -> StudyDirection:
        """Its direction.

        Raises:
            RuntimeError: in a multi-objective study (read ``directions``), as Optuna.
        """
        if self._multi_objective():
            raise RuntimeError(
                "A single direction cannot be retrieved from a multi-objective study. Consider "
                "using Study.directions to retrieve a list containing all directions."
            )
        return self._directions[0]

    @property
    def directions(self) -> list[StudyDirection]:
        """Its directions, one per objective."""
        return list(self._directions)

    def _multi_objective(self) -> bool:
        return len(self._directions) > 1

    @property
    def experiment_id(self) -> str | None:
        """The id of the hyperlab experiment: a named study's from ``create_study`` on, an
        unnamed one's from its first trial (None before)."""
        return self._id

    @property
    def user_attrs(self) -> dict[str, Any]:
        return {}

    def set_user_attr(self, key: str, value: Any) -> None:
        raise NotImplementedError(
            "Study.set_user_attr: hyperlab keeps attributes per trial only; use "
            "trial.set_user_attr, or name the experiment (study_name)"
        )

    # ---- running ---------------------------------------------------------------------------

    def optimize(
        self,
        func: Callable[[Trial], Any],
        n_trials: int | None = None,
        timeout: float | None = None,
        n_jobs: int = 1,
        catch: Iterable[type[Exception]] | type[Exception] = (),
        callbacks: Iterable[Callable[[Study, FrozenTrial], None]] | None = None,
        gc_after_trial: bool = False,
        show_progress_bar: bool = False,
    ) -> None:
        """Run ``n_trials`` more trials (or until ``timeout`` seconds, or ``stop()``) of
        ``func``; trials already running when the time is up finish, as in Optuna.

        Raises:
            Exception: What the objective raised when it is not in ``catch`` (once the
                running trials ended).
        """
        if n_trials is not None and (
            isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 0
        ):
            raise ValueError(f"n_trials: expected a non-negative int or None, got {n_trials!r}")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0
        ):
            raise ValueError(f"timeout: expected seconds >= 0 or None, got {timeout!r}")
        if n_trials == 0:
            return
        caught = tuple(catch) if isinstance(catch, Iterable) else (catch,)
        jobs = os.cpu_count() or 1 if n_jobs == -1 else n_jobs
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"n_jobs: expected a positive int or -1, got {n_jobs!r}")
        self._end_session()
        objective = Objective(self, func, caught)
        self._stop_asked = False
        timer = None
        if timeout is not None:
            timer = threading.Timer(float(timeout), self.stop)
            timer.daemon = True
            timer.start()
        joining = Joining(self)
        left = n_trials
        try:
            while not self._stop_asked:
                left = self._drive_or_join(
                    objective,
                    left,
                    jobs,
                    list(callbacks or ()),
                    gc_after_trial,
                    show_progress_bar,
                    joining,
                )
                if left == 0:
                    break
        finally:
            if timer is not None:
                timer.cancel()
        if objective.fatal is not None:
            raise objective.fatal

    def _drive_or_join(
        self,
        objective: Objective,
        n_trials: int | None,
        jobs: int,
        callbacks: list[Callable[[Study, FrozenTrial], None]],
        gc_after_trial: bool,
        show_progress_bar: bool,
        joining: Joining,
    ) -> int | None:
        """Run ``n_trials`` (None: until stopped) driving the study, or, on a shared store
        where another process drives it, as its worker (``_joining``); how many are left to
        run (0 once driven)."""
        shared = self._storage is not None and not self._store().in_memory
        after = WorkerHooks(self, objective, callbacks, gc_after_trial)
        holds = bool(callbacks) or gc_after_trial  # else only a log line: no need to wait
        if shared and self._id is not None:
            try:  # before its trials are read: a driver that runs now may still add some
                self._store().get_experiment(self._id).check_not_running()
            except ExperimentBusy as busy:
                return joining.join(objective, n_trials, jobs, after, busy, holds=holds)
        stored = self.get_trials(deepcopy=False)
        self._kept = None
        view = TrialView(stored, self._maximize(), objective.trials.get)
        hooks = [OptimizeHooks(self, objective, view, callbacks, gc_after_trial, shared)]
        executor = "shared" if shared else "inprocess" if jobs == 1 else "threads"
        try:
            experiment = self._start(
                objective,
                n_trials,
                jobs,
                executor,
                hooks,
                show_progress_bar,
                created=_created(stored),
            )
            self._experiment = experiment
            self._view = view
            try:
                experiment.run()
            finally:
                self._experiment = self._view = None
        except TrialError:
            pass  # every trial failed: Optuna's optimize returns, the trials say FAIL
        except ExperimentBusy as busy:
            if not shared:
                raise
            return joining.join(objective, n_trials, jobs, after, busy, holds=holds)
        self._keep(view)
        return 0

    def _keep(self, view: TrialView) -> None:
        """Keep the ended ``optimize``'s view for the reads after it, with the change cursor
        of its experiment as stored now (the driver wrote every trial before it returned)."""
        if self._id is not None and not view.running:
            self._kept = (view, self._store().change_cursor(self._id))

    def _kept_view(self) -> TrialView | None:
        """The last ``optimize``'s view while the study's trials are still what it saw (no
        status changed since, in this process or another): one query instead of a read of
        every trial."""
        kept = self._kept
        if kept is None or self._id is None:
            return None
        view, cursor = kept
        if self._store().change_cursor(self._id) != cursor:
            self._kept = None
            return None
        return view

    def _maximize(self) -> bool | None:
        """Whether the study maximizes; None with several objectives (no best trial)."""
        if self._multi_objective():
            return None
        return self._directions[0] is StudyDirection.MAXIMIZE

    def next_enqueued(self) -> dict[str, Any] | None:
        """The parameters of the next enqueued trial (taken), or None."""
        with self._lock:
            return self._enqueued.popleft() if self._enqueued else None

    def _start(
        self,
        objective: Callable[[dict[str, Any]], Any],
        n_trials: int | None,
        jobs: int,
        executor: str,
        hooks: Sequence[Callback],
        progress: bool,
        *,
        created: int,
    ) -> Experiment:
        """The experiment to run: made on the first call (defining the one ``create_study``
        recorded, holding the study's name, as long as none ran it), continued on the next
        ones and on a stored experiment of another origin; ``created`` is the number its next
        trial gets (as its trials were just read)."""
        record = None if self._id is None else self._store().get_experiment(self._id)
        if record is None or (record.unique_name and record.started_at is None):
            experiment = Experiment(
                objective,
                self.sampler.space(),
                constraints=self._constraints(),
                **self._definition(),
                max_trials=UNBOUNDED if n_trials is None else n_trials,
                concurrency=jobs,
                executor=executor,
                executor_args=_executor_args(executor, n_trials),
                storage=self._storage,
                seed=self.sampler.seed,
                progress=progress,
                callbacks=hooks,
                claim=record,
            )
            self._id = experiment.id
            with self._lock:  # reads go to its store (the very database, for ":memory:")
                self._reader = experiment.store
            return experiment
        store = self._store()
        grid = self.sampler.space()
        if grid and grid != record.space:
            raise ConfigError(
                f"study {self.study_name!r}: GridSampler({grid}) is not the grid the study "
                f"was created with ({record.space}); create a new study for another grid"
            )
        record.check_not_running()  # another process drives it: this one joins (_joining)
        stored = record.options.model_dump()
        stored.update(
            self._algorithms(),  # Optuna stores neither: a loaded study runs with those given
            max_trials=UNBOUNDED if n_trials is None else created + n_trials,
            concurrency=jobs,
            executor=executor,
            **_executor_args(executor, n_trials),
        )
        options = validate_options(**stored)
        return Experiment.attach(store, record, options, objective, progress, self._storage, hooks)

    def _definition(self) -> dict[str, Any]:
        """The options its experiment is created (or recorded by ``create_study``) with, but
        the budget, the executor and the seed: its name, metrics, modes, sampler, pruner."""
        return {
            "name": self.study_name,
            "metric": metric_names(len(self._directions)),
            "mode": tuple(
                "max" if d is StudyDirection.MAXIMIZE else "min" for d in self._directions
            ),
            **self._algorithms(),
            "fail_fast": False,
        }

    def _algorithms(self) -> dict[str, Any]:
        """The experiment's tuner and assessor options: this Study's sampler and pruner (none
        with several objectives, whose trials cannot report, as in Optuna)."""
        assessor, args = (None, {}) if self._multi_objective() else self.pruner.assessor()
        if assessor is not None and assessor.endswith(":HyperbandRule"):
            # trials go to the brackets Optuna would put them in, by the study's name
            args = {**args, "study_name": self.study_name}
        return {
            "tuner": self.sampler.tuner,
            "tuner_args": self.sampler.tuner_args,
            "assessor": assessor,
            "assessor_args": args if assessor is not None else {},
        }

    def _constraints(self) -> Callable[[Record], list[float]] | None:
        """The experiment's constraints function (the constraints each trial stored), when
        its sampler takes constraints: its tuner does, or it has a ``constraints_func``
        (hyperlab refuses a tuner that does not take them, naming it)."""
        takes = getattr(tuner_class(self.sampler.tuner), "constraints", False)
        if takes or self.sampler.constraints_func is not None:
            return stored_constraints
        return None

    def stop(self) -> None:
        """Start no more trials; ``optimize`` returns once the running ones ended.

        Outside ``optimize`` (where Optuna raises), it ends the ask-and-tell session: its
        background experiment stops (trials asked and not told run again when the study goes
        on); the next ``ask`` starts another."""
        if self._session is not None:
            self._end_session()
            return
        self._stop_asked = True
        worker = self._worker
        if worker is not None:  # this process runs another's trials: it takes no more
            worker.finish()
        if self._experiment is not None:
            with contextlib.suppress(ConfigError):  # it does not run (any more): nothing to stop
                self._experiment.drain()

    def enqueue_trial(
        self,
        params: dict[str, Any],
        user_attrs: dict[str, Any] | None = None,
        skip_if_exists: bool = False,
    ) -> None:
        """Run a trial with ``params`` next: its ``suggest_*`` of those names return them
        (the others are proposed as usual). Kept by this ``Study`` object until it runs."""
        if user_attrs:
            raise NotImplementedError(
                "enqueue_trial(user_attrs=...): set them with trial.set_user_attr in the objective"
            )
        if skip_if_exists:
            for trial in self.trials:
                if all(trial.params.get(k) == v for k, v in params.items()):
                    return
            if any(queued == params for queued in self._enqueued):
                return
        self._enqueued.append(dict(params))

    # ---- reading ---------------------------------------------------------------------------

    @property
    def trials(self) -> list[FrozenTrial]:
        return self.get_trials()

    def get_trials(
        self, deepcopy: bool = True, states: Container[TrialState] | None = None
    ) -> list[FrozenTrial]:
        """The study's trials, in number order (those in ``states`` only, if given): while
        ``optimize`` runs, every trial that ended and those running, from memory (see
        ``_hooks``); else as stored."""
        view = self._view if self._view is not None else self._kept_view()
        if view is not None:
            return view.trials(states, deepcopy)
        if self._id is None:
            return []
        store = self._store()
        specs = self._specs(store)
        frozen = [FrozenTrial.from_record(t, specs) for t in _trials(store, self._id)]
        return [t for t in frozen if states is None or t.state in states]

    def _trial(self, number: int) -> FrozenTrial:
        """Trial ``number`` as stored (or as the running session's view has it)."""
        view = self._view
        if view is not None:
            return copy.deepcopy(next(t for t in view.trials(deepcopy=False) if t.number == number))
        assert self._id is not None
        store = self._store()
        return FrozenTrial.from_record(store.get_trial(self._id, number), self._specs(store))

    def _specs(self, store: Store) -> dict[str, Any]:
        """The distribution of every parameter the study's trials have (declared or
        suggested)."""
        assert self._id is not None
        record = store.get_experiment(self._id)
        return {**record.space, **record.options.suggested}

    def _store(self) -> Store:
        """The store, for reads: opened once."""
        with self._lock:
            if self._reader is None:
                self._reader = Store.open(self._storage)
            return self._reader

    @property
    def best_trial(self) -> FrozenTrial:
        """The feasible COMPLETE trial with the best value (the first among equals).

        Raises:
            RuntimeError: in a multi-objective study (read ``best_trials``), as Optuna.
            ValueError: no trial completed, or none of them is feasible.
        """
        return copy.deepcopy(self._best())

    def _best(self) -> FrozenTrial:
        """``best_trial``, not copied: while ``optimize`` runs, the one its view keeps."""
        if self._multi_objective():
            raise RuntimeError(
                "A single best trial cannot be retrieved from a multi-objective study. Consider "
                "using Study.best_trials to retrieve a list containing the best trials."
            )
        view = self._view if self._view is not None else self._kept_view()
        best = None if view is None else view.best
        if best is not None:
            return best
        complete = self.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not complete:
            raise ValueError("No trials are completed yet.")
        feasible = [t for t in complete if t.feasible and t.value is not None]
        if not feasible:
            raise ValueError("No feasible trials are completed yet.")
        pick = max if self._directions[0] is StudyDirection.MAXIMIZE else min
        return pick(feasible, key=lambda t: t.value or 0.0)

    @property
    def best_value(self) -> float:
        """The best trial's value (see ``best_trial``)."""
        value = self._best().value
        assert value is not None
        return value

    @property
    def best_params(self) -> dict[str, Any]:
        return self.best_trial.params

    @property
    def best_trials(self) -> list[FrozenTrial]:
        """The COMPLETE trials no other dominates (the Pareto front; those with the best value
        for one objective), in number order; feasible ones only once any trial has
        constraints, as Optuna's."""
        trials = self.get_trials(deepcopy=False)
        constrained = any(t.constraints for t in trials)
        complete = [
            t for t in trials if t.state is TrialState.COMPLETE and (t.feasible or not constrained)
        ]
        return [copy.deepcopy(t) for t in pareto_front(complete, self._directions)]

    def trials_dataframe(
        self,
        attrs: Sequence[str] = (
            "number",
            "value",
            "datetime_start",
            "datetime_complete",
            "duration",
            "params",
            "user_attrs",
            "system_attrs",
            "state",
        ),
        multi_index: bool = False,
    ) -> pd.DataFrame:
        """The trials as a pandas DataFrame, with Optuna's columns (``params_x``...; with
        several objectives ``values_0``, ``values_1``... in place of ``value``): the columns
        of each attribute in ``attrs`` order, those of a dict attribute sorted by key."""
        return trials_frame(self.get_trials(deepcopy=False), self._directions, attrs, multi_index)

    # ---- ask and tell ----------------------------------------------------------------------

    def ask(self, fixed_distributions: dict[str, Any] | None = None) -> Trial:
        """A new trial, to evaluate and ``tell``. The first ``ask`` starts the study's
        experiment in the background (until ``optimize`` or the end of the script)."""
        if fixed_distributions:
            raise NotImplementedError(
                "Study.ask(fixed_distributions=...): call trial.suggest_* on the trial ask() "
                "returns instead"
            )
        with self._session_lock:  # threads may ask at once: one session
            if self._session is None:
                stored = self.get_trials(deepcopy=False)
                session = AskTell(self, stored, self._maximize())
                experiment = self._start(
                    session, None, 1, "threads", [session], False, created=_created(stored)
                )
                session.experiment = experiment
                experiment.executor.concurrency = 0  # a slot per asked trial
                self._experiment = experiment
                self._session = session
                self._view = session.view  # the trials, from memory while the session runs
                experiment.start()
            session = self._session
        return session.ask()

    def tell(
        self,
        trial: Trial | int,
        values: float | Sequence[float] | None = None,
        state: TrialState | None = None,
        skip_if_finished: bool = False,
    ) -> FrozenTrial:
        """End an asked trial, as Optuna's ``tell`` (see ``check_told``): COMPLETE with
        ``values`` (one per objective), or ``state`` PRUNED or FAIL. Returns it as stored.

        Raises:
            ValueError: as ``check_told``; no asked trial of that number.
        """
        if self._session is None:
            raise ValueError("tell(): no trial was asked")
        if isinstance(trial, bool) or not isinstance(trial, (int, Trial)):
            raise TypeError(f"tell(trial): expected an asked Trial or its number, got {trial!r}")
        state, told = check_told(values, state, len(self._directions))
        number = trial if isinstance(trial, int) else trial.number
        try:
            return self._session.tell(trial, state, told)
        except ValueError:
            if skip_if_finished and number in (t.number for t in self.trials):
                return self._trial(number)
            raise

    def _end_session(self) -> None:
        """Stop the ask-and-tell session, if any (trials asked and never told are cancelled
        and run again when the study goes on)."""
        session, self._session = self._session, None
        if session is not None and session.experiment is not None:
            session.experiment.stop()
            with contextlib.suppress(TrialError):
                session.experiment.wait()
            self._experiment = None
        if session is not None:
            self._view = None

    def add_trial(self, trial: FrozenTrial) -> None:
        raise NotImplementedError(
            "Study.add_trial: import finished trials with `hyperlab import-optuna` or "
            "hyperlab.Experiment.import_data"
        )

    def add_trials(self, trials: Iterable[FrozenTrial]) -> None:
        raise NotImplementedError(
            "Study.add_trials: import finished trials with `hyperlab import-optuna` or "
            "hyperlab.Experiment.import_data"
        )


def _executor_args(executor: str, n_trials: int | None) -> dict[str, Any]:
    """The ``shared`` executor runs ``n_trials`` in this process, as the workers that join
    bring theirs (the others take no ``own_trials``, whatever an earlier run stored)."""
    return {"own_trials": n_trials if executor == "shared" else None}


def _created(trials: Iterable[FrozenTrial]) -> int:
    """How many trials a study created, from its trials: the next one's number."""
    return max((t.number + 1 for t in trials), default=0)


def _trials(store: Store, experiment: str) -> list[Record]:
    return sorted(store.get_trials(experiment, reports=True), key=lambda t: t.number)
