"""Resume: how a driver takes up an experiment an earlier driver left (stopped, crashed, killed).

``replay`` reads the stored history once, as the driver is built (a stream, ``StoredTrials``,
so that no more than a batch of trials is in memory at a time: a million trials would take
gigabytes): a fresh tuner learns it
(``_history.feed_history``), the trials that ended are counted, the paused ones stay paused,
and the interrupted ones (waiting, running, or SYS_CANCELED by a stop or a crash) are queued
to run again with ``attempt + 1``. Those waiting or running may still run, their driver dead:
once the new driver holds the lease, ``adopt_orphans`` offers them to its executor to adopt,
and ``still_queued`` keeps those it did not take.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.executors.base import Executor, TrialSpec
from hyperlab.experiment._history import ended, feed_history, fresh_tuner, imported_trials
from hyperlab.experiment._requests import DefinedByRun
from hyperlab.store import Store
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners.base import Tuner

__all__ = [
    "Adopted",
    "Replayed",
    "StoredTrials",
    "adopt_orphans",
    "replay",
    "run_again",
    "still_queued",
]

BATCH = 1000
"""Trials ``StoredTrials`` reads at a time."""


@dataclass(frozen=True)
class StoredTrials:
    """An experiment's stored trials in number order, read from ``store`` a batch at a time
    (``Store.iter_trials``) each time they are iterated: the history a resume replays,
    without holding every trial at once.

    Attributes:
        store: The store that holds them.
        experiment_id: Their experiment.
        reports: Read each trial's reports too.
    """

    store: Store
    experiment_id: str
    reports: bool = False

    def __iter__(self) -> Iterator[Trial]:
        for batch in self.store.iter_trials(self.experiment_id, reports=self.reports, batch=BATCH):
            yield from batch


@dataclass
class Replayed:
    """What a driver takes up from the stored history.

    Attributes:
        tuner: The tuner that learnt it: the one given, or one rebuilt on the parameters
            defined by run that the ended trials have.
        imported: How many imported results it learnt.
        next_number: The number the next trial created takes.
        phased: The trials with phases (``Trial.phases``), in number order.
        paused: The trials a scheduler paused, by number: they stay paused.
        reported: The paused trials that reported something.
        orphans: The trials the last driver left waiting or running (without their reports),
            for ``adopt_orphans``.
        reruns: The numbers of the trials queued to run again (they keep their first start).
        requeue: Those trials, WAITING with ``attempt + 1``, in number order.
    """

    tuner: Tuner
    imported: int = 0
    next_number: int = 0
    phased: list[Trial] = field(default_factory=list)
    paused: dict[int, Trial] = field(default_factory=dict)
    reported: set[int] = field(default_factory=set)
    orphans: dict[int, Trial] = field(default_factory=dict)
    reruns: set[int] = field(default_factory=set)
    requeue: deque[Trial] = field(default_factory=deque)


def replay(
    history: Iterable[Trial],
    *,
    store: Store,
    experiment_id: str,
    options: ExperimentOptions,
    seed: int,
    tuner: Tuner,
    by_run: DefinedByRun,
    on_ended: Callable[[Trial], None],
) -> Replayed:
    """Take up ``history`` (the stored trials, in number order) with a fresh ``tuner``.

    ``by_run`` learns which parameters defined by run the ended trials have; when its tuner
    would model some, a new tuner of the experiment is built on them (a tuner that refuses
    them, a grid, keeps its space, and they stay drawn independently). The tuner then learns
    the imported results, the ended trials and their phases that fit its space; the
    interrupted trials are ``requeued`` to it. ``on_ended`` is given each trial that ended for
    good, in number order (to count, and for the failure rules).

    ``history`` is iterated once, or twice when trials defined parameters by run (the first
    pass finds which of them the tuner models); no trial is kept but those that stay paused,
    run again, or have phases.
    """
    counted = bool(by_run.params)  # else the tuner's space is the declared one, whatever ended
    if counted:
        for trial in history:  # which parameters defined by run the tuner models
            if trial.status.is_finished():
                by_run.ended(trial)
    space = by_run.space()
    if space is not tuner.space:
        try:
            tuner = fresh_tuner(options, seed, space)
        except (ConfigError, SearchSpaceError):  # a grid: they stay drawn independently
            by_run.modelled = False
            space = tuner.space
    imported = imported_trials(store, experiment_id, options)
    took = Replayed(tuner, imported=len(imported))

    def take(trial: Trial) -> None:
        if not counted and trial.status.is_finished():
            by_run.ended(trial)
        took.next_number = max(took.next_number, trial.number + 1)
        if trial.phases:
            took.phased.append(trial)
        if trial.status is TrialStatus.PAUSED:
            took.paused[trial.number] = trial  # stays paused: a scheduler resumes it
            if trial.reports:
                took.reported.add(trial.number)
        elif ended(trial.status):
            on_ended(trial)
        else:
            if not trial.status.is_finished():
                took.orphans[trial.number] = replace(trial, reports=())
            took.reruns.add(trial.number)
            took.requeue.append(run_again(trial))

    feed_history(tuner, space, imported, history, requeue=True, each=take)
    return took


def run_again(trial: Trial, error: str | None = None) -> Trial:
    """``trial`` queued to run again (WAITING, ``attempt + 1``), from its last checkpoint and
    with its earlier attempts' reports kept apart; ``error`` says why it runs again."""
    return replace(
        trial,
        status=TrialStatus.WAITING,
        attempt=trial.attempt + 1,
        finished_at=None,  # started_at kept: the assessor still counts it, a replay too
        error=error,
    )


@dataclass(frozen=True)
class Adopted:
    """A trial the executor adopted: it stays RUNNING with its attempt.

    Attributes:
        trial: The trial as it is now (RUNNING).
        reports: How many reports of this run the store holds: its reports go on from there.
        started: When it started, if it started only as the last driver died (it was
            WAITING, and is stored as RUNNING now); None if it was running already.
    """

    trial: Trial
    reports: int
    started: float | None


def adopt_orphans(
    orphans: dict[int, Trial],
    *,
    store: Store,
    experiment_id: str,
    executor: Executor,
    spec: Callable[[Trial], TrialSpec],
) -> Iterator[Adopted]:
    """Offer ``executor`` each of the trials the last driver left (``Replayed.orphans``, as
    ``spec`` submits them), and yield those it adopts, one by one as it adopts them.

    Call it once the driver holds the lease (so two resumes never both adopt a trial) and
    before it submits anything.
    """
    for number, trial in orphans.items():
        stored = 0
        if trial.status is TrialStatus.RUNNING:  # a waiting one has no report of this run
            since = trial.started_at if trial.started_at is not None else float("-inf")
            stored = sum(
                r.attempt == trial.attempt and r.time >= since
                for r in store.get_trial(experiment_id, number).reports
            )
        started = executor.adopt(spec(trial), reports=stored)
        if started is None:
            continue
        if trial.status is TrialStatus.RUNNING:
            yield Adopted(trial, stored, None)
            continue
        trial = replace(trial, status=TrialStatus.RUNNING, started_at=started)  # it started
        store.put_trial(trial)  # as the old driver died
        yield Adopted(trial, stored, started)


def still_queued(requeue: deque[Trial], adopted: set[int], store: Store) -> deque[Trial]:
    """The queued trials that were not ``adopted``, each stored as queued now (not as the last
    driver left them)."""
    if adopted:
        requeue = deque(t for t in requeue if t.number not in adopted)
    for trial in requeue:
        store.put_trial(trial)
    return requeue
