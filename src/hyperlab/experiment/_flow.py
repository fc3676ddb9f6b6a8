"""The trial side of the driver: what happens to each trial of a running experiment.

``TrialFlow`` creates trials (from the tuner, a scheduler's branches, the queue of those to
run again), submits them to the executor, turns the executor's events into trial records,
answers the trials' requests and ends them, telling the tuner, the assessor, the failure rules
and the callbacks. ``Driver`` (``_driver``) is a ``TrialFlow`` that adds the loop around it:
the lease, the group commits, the controls, the end of the run. All of it runs in the thread
that owns the experiment.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from hyperlab.assessors.base import Assessor, Resume, Stop
from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.executors.base import (
    Event,
    Executor,
    Failed,
    Finished,
    Lost,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.experiment._callbacks import CallbackRunner
from hyperlab.experiment._clock import Clock
from hyperlab.experiment._failures import FailureWatch
from hyperlab.experiment._fatal import FatalFailure
from hyperlab.experiment._history import Retuned, retune
from hyperlab.experiment._objective import ConstraintsFunc, ObjectiveRule
from hyperlab.experiment._outage import StoreOutage
from hyperlab.experiment._phases import Phases
from hyperlab.experiment._progress import FrontSize
from hyperlab.experiment._records import TrialRecords
from hyperlab.experiment._requests import DefinedByRun, known_part
from hyperlab.experiment._resume import replay, run_again
from hyperlab.experiment._scheduling import Scheduling, Verdict
from hyperlab.experiment._strategy import Submissions
from hyperlab.reporting.metrics import MetricsError
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import CUSTOM_TRIAL, ExperimentStatus, Report, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

__all__ = ["TrialFlow"]

_NONE = object()
"""A parameter a trial does not have yet (its value may be None)."""


class TrialFlow(ABC):
    """The trials of one experiment, from creation to end; ``Driver`` runs the loop around it.

    Built with the stored ``history`` (on resume), which it takes up (``_resume.replay``): the
    tuner, the assessor and the phases learn it, the ended trials are counted, the interrupted
    ones queued to run again. The loop provides ``elapsed``, ``_housekeeping`` and ``_flush``.

    Args: as ``Driver``'s; ``trials_dir`` is the folder under which each trial gets
    ``<number>/``.
    """

    def __init__(
        self,
        store: Store,
        record: ExperimentRecord,
        options: ExperimentOptions,
        tuner: Tuner,
        executor: Executor,
        *,
        assessor: Assessor | None,
        constraints: ConstraintsFunc | None = None,
        history: Iterable[Trial],
        trials_dir: str,
        clock: Clock,
        callbacks: Sequence[Any],
        submissions: Submissions | None = None,
        counted: tuple[int, float] = (0, 0.0),
    ) -> None:
        self.store = store
        self.record = record
        self.id = record.id
        self.options = options
        self.by_run = DefinedByRun(tuner.space, options.suggested)
        self.counts = {"finished": 0, "failed": 0}
        self.trial_time = 0.0  # the ended trials' durations, summed (budget_time="trials")
        self.counted = counted  # trials and seconds counted before (load_state_dict)
        # a strategy loop's (``_strategy``); not `or`: an empty queue is falsy
        self.submissions = Submissions(record.id) if submissions is None else submissions
        self.ends: list[Trial] = []  # trials ended since the last commit, for their handles
        self.commit_soon = False  # a handle waits on a trial that ended: commit at once
        self.best: float | None = None
        self.front = FrontSize(options.modes) if options.multi_objective else None  # progress
        self.failures = FailureWatch(options, executor.concurrency)
        took = replay(  # on resume: what the earlier drivers left
            history,
            store=store,
            experiment_id=record.id,
            options=options,
            seed=record.seed,
            tuner=tuner,
            by_run=self.by_run,
            on_ended=self._replayed_end,
        )
        self.tuner = took.tuner  # it learnt the history
        self.executor = executor
        self.clock = clock
        self.records = TrialRecords(record.id, record.seed, clock, trials_dir)
        self.scheduling = Scheduling(assessor)
        self.active: dict[int, Trial] = {}
        self.requeue = took.requeue
        self.orphans = took.orphans  # waiting/running when the last driver died
        self.paused = took.paused
        self.reruns = took.reruns  # queued to run again: they keep their first start
        self.stop_reasons: dict[int, Verdict] = {}
        self.reported = took.reported  # active and paused trials that reported something
        self.next_number = took.next_number
        self.imported = took.imported  # results imported into the tuner so far
        self.exhausted = False
        self.tuner_waits = False  # the tuner has nothing now, but may after the next trial ends
        self.outage = StoreOutage(store, record.id, options.store_outage)
        self.retune_waits = False  # a retune that reads the store waits for it to answer
        self.stop_asked: str | None = None  # set by request_stop, from any thread
        self.drain_asked = False  # set by request_drain, from any thread
        self.closing = False
        self.ending: ExperimentStatus | None = None
        self.error: str | None = None
        self.fatal: FatalFailure | None = None  # continue_on_failure=False ended it there
        self.callbacks = CallbackRunner(callbacks, record.id, keep_errors=options.callbacks_raise)
        self.status = record.status
        self.rule = ObjectiveRule.of(
            options, constraints
        )  # a trial's metrics as stored, its objective value
        self.phases = Phases(store, self.id, self.rule, self._may_propose)  # multi-phase trials
        self.asked: dict[int, set[str]] = {}  # the names each running trial asked for
        self.phases.replay(took.phased)
        replayed = list(history) if assessor is not None else []  # it orders them by time
        self.scheduling.replay(replayed, options.budget_signals)

    def _replayed_end(self, trial: Trial) -> None:
        """Count a stored trial that ended for good, as replayed (in number order)."""
        self._count(trial)
        self._add_time(trial)
        self.failures.record(trial)

    # ---- what the loop provides -----------------------------------------------------------

    @abstractmethod
    def elapsed(self) -> float:
        """Experiment time spent so far: earlier drivers' plus this one's (seconds)."""

    @abstractmethod
    def _housekeeping(self) -> None:
        """Do what is due (controls, ``max_duration``, heartbeat, group commit); called on
        every report, so long in-process trials are covered too."""

    @abstractmethod
    def _flush(self) -> bool:
        """Group-commit now; False while the store does not answer."""

    @property
    def max_trials(self) -> int | None:
        """Trials to create at most (changed by a ``SetMaxTrials`` control), with those the
        workers that joined brought (``Executor.brought_trials``)."""
        limit = self.options.max_trials
        if limit is None:
            return None
        brought = self.executor.brought_trials
        return None if brought is None else limit + brought

    @property
    def created(self) -> int:
        """Trials created, as ``max_trials`` counts them (with those ``counted`` before)."""
        return self.next_number + self.counted[0]

    def spent(self) -> float:
        """The time ``max_duration`` counts: experiment time, or with ``budget_time="trials"``
        the ended trials' durations summed (NNI's sequential engine), with ``counted``'s."""
        if self.options.budget_time == "trials":
            return self.trial_time + self.counted[1]
        return self.elapsed() + self.counted[1]

    def _take_number(self) -> int:
        """The next trial number, taken under the lock a strategy's ``submit`` also takes."""
        with self.submissions.lock:
            number = self.next_number
            self.next_number += 1
        return number

    def _take_submitted(self) -> None:
        """Write the trials a strategy submitted since the last turn and queue them to run
        (before any the tuner proposes)."""
        for handle in self.submissions.take():
            trial = self.records.new(handle.number, handle.params, source=CUSTOM_TRIAL)
            self.store.put_trial(trial)
            self.requeue.append(trial)

    def _set_status(self, status: ExperimentStatus, **fields: object) -> None:
        self.status = status
        self.store.update_experiment(self.id, status=status, **fields)

    # ---- submitting -----------------------------------------------------------------------

    def _no_more(self) -> bool:
        if self.requeue or self.submissions:  # queued trials run, a drain's included
            return False
        if not self._nothing_new():
            return False
        with self.submissions.lock:  # a submit numbering a batch now has it run: it was taken
            return not self.submissions and self._nothing_new()

    def _nothing_new(self) -> bool:
        """No new trial may be created: drained, or a budget spent, or the tuner exhausted
        (with no strategy loop to submit more)."""
        if self.drain_asked or (self.max_trials is not None and self.created >= self.max_trials):
            return True
        if self.options.budget_time == "trials" and self._time_spent():
            return True
        return self.exhausted and not self.submissions.attached

    def _time_spent(self) -> bool:
        limit = self.options.max_duration
        return limit is not None and self.spent() >= limit

    def _schedule(self) -> bool:
        """Act on what the assessor asks for now; True if a trial was queued."""
        if self.scheduling.assessor is None:  # nothing asks (every loop turn: the hot path)
            return False
        queued = False
        now = self.clock.time()
        spent = self.max_trials is not None and self.created >= self.max_trials
        signals = len(self.scheduling.signals)
        actions = self.scheduling.actions(
            now, no_more=spent or self.exhausted or self.drain_asked, count=self.next_number
        )
        if len(self.scheduling.signals) != signals:  # recorded, for a resume's replay
            self.options = self.options.model_copy(
                update={"budget_signals": list(self.scheduling.signals)}
            )
            self.store.update_experiment(self.id, options=self.options)
        for action in actions:
            if isinstance(action, Resume):
                paused = self.paused.pop(action.number, None)
                if paused is not None:
                    self.requeue.appendleft(replace(paused, status=TrialStatus.WAITING))
                    queued = True
            elif isinstance(action, Stop):
                paused = self.paused.pop(action.number, None)
                if paused is not None:
                    self._stop_paused(paused, now)
            elif not spent:  # a Branch
                number = self._take_number()
                trial = self.records.new(number, action.params, parent=action.parent)
                self.requeue.append(trial)
                queued = True
                spent = self.max_trials is not None and self.created >= self.max_trials
        return queued

    def _can_submit(self) -> bool:
        return (
            self.ending is None
            and not self.tuner_waits
            and not self._no_more()
            and self.executor.free_slots > 0
            and (
                bool(self.requeue)
                or (not self.exhausted and self.scheduling.admits(self.next_number))
            )
            and (not self.executor.runs_outside or self.outage.due())  # write-ahead
        )

    def _submit_more(self) -> None:
        specs: list[TrialSpec] = []
        trials: list[Trial] = []
        free = self.executor.free_slots
        while free > len(specs) and not self._no_more():
            if not self.requeue and (
                self.exhausted or self.tuner_waits or not self.scheduling.admits(self.next_number)
            ):
                break  # the tuner has nothing (now), or the scheduler holds new trials back
            trial = self.requeue.popleft() if self.requeue else self._new_trial()
            if trial is None:
                break
            self.active[trial.number] = trial
            self.store.put_trial(trial)
            trials.append(trial)
            specs.append(self._spec(trial))
        if not specs:
            if (
                self._no_more()
                and self.executor.running
                and self.status is ExperimentStatus.RUNNING
            ):
                self._set_status(ExperimentStatus.NO_MORE_TRIAL)
            return
        # write-ahead: the row exists before another process runs it; while the store does not
        # answer, the trials wait in the queue
        if self.executor.runs_outside and not self._flush():
            for trial in reversed(trials):
                del self.active[trial.number]
                self.requeue.appendleft(trial)
            return
        for spec in specs:
            self.executor.submit(spec)

    def _new_trial(self) -> Trial | None:
        with self.submissions.lock:  # a strategy's submit takes no number meanwhile
            number = self.next_number
            params = self.tuner.suggest(number)
            if params is not None:
                self.next_number += 1
        if params is None:
            if self.tuner.waits() and self.active:  # it may have more once a trial ends
                self.tuner_waits = True
            else:
                self.exhausted = True
            return None
        return self.records.new(number, params)

    def _spec(self, trial: Trial) -> TrialSpec:
        return self.records.spec(
            trial,
            checkpoint_keep=self.options.checkpoint_keep,
            round_trip=self.scheduling.assessor is not None,  # decisions act at that report
            checkpoint_score=self.options.checkpoint_rule(),
        )

    # ---- events ---------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        trial = self.active.get(event.number)
        if trial is None:
            return
        if type(event) is Finished:  # the common events first, by exact type (the hot path)
            self._finished(trial, event)
            return
        if type(event) is Started:
            self._started(trial, event)
            return
        if isinstance(event, Lost) and trial.number in self.stop_reasons:
            event = Stopped(event.number, event.time)  # it was being stopped anyway
        if isinstance(event, Reported):
            metrics = self._stored_metrics(trial, event)
            if metrics is None:
                return
            report = Report(event.step, metrics, event.time, trial.attempt)
            self.store.add_report(self.id, trial.number, report)
            self.reported.add(trial.number)
            # every report reaches the assessor, as on replay; a stopping trial's are not acted on
            verdict = self.scheduling.reported(trial, report, event.time)
            if verdict is not None and trial.number not in self.stop_reasons:
                self.stop_reasons[trial.number] = verdict
                self.executor.stop(trial.number)
            self.callbacks.reported(trial, report)
            if not self.closing:
                self._housekeeping()
        elif isinstance(event, Started):
            self._started(trial, event)
        elif isinstance(event, Finished):
            self._finished(trial, event)
        elif isinstance(event, Failed):
            self._finish(
                trial, TrialStatus.FAILED, event.time, error=event.error, exception=event.exception
            )
        elif isinstance(event, Lost):
            self._rerun(trial, event)
        elif isinstance(event, Requested):
            self._on_request(trial, event)
        else:
            verdict = self.stop_reasons.pop(trial.number, Verdict(TrialStatus.USER_CANCELED))
            metrics = self._stored_metrics(trial, event)
            if metrics is None:
                return
            value = values = None
            if verdict.status is TrialStatus.EARLY_STOPPED:  # the tuner sees its last value
                value, values, _ = self.rule.outcome(metrics)
            self._finish(
                trial,
                verdict.status,
                event.time,
                value=value,
                values=values,
                metrics=metrics,
                error=verdict.error,
            )

    def _started(self, trial: Trial, event: Started) -> None:
        started = event.time
        if trial.number in self.reruns:
            self.reruns.discard(trial.number)
            started = trial.started_at or started  # a replay starts it when it first did
        trial = self.records.started(trial, started)
        self.active[trial.number] = trial
        self.store.put_trial(trial)
        self.scheduling.started(trial, event.time)
        self.callbacks.trial_started(trial)

    def _finished(self, trial: Trial, event: Finished) -> None:
        metrics = self._stored_metrics(trial, event)
        if metrics is None:
            return
        value, values, error = self.rule.outcome(metrics)
        status = TrialStatus.SUCCEEDED if error is None else TrialStatus.FAILED
        self._finish(
            trial, status, event.time, value=value, values=values, metrics=metrics, error=error
        )

    def _on_request(self, trial: Trial, request: Requested) -> None:
        """Answer a running trial's request (``RequestKind``); every report it sent before
        has been handled, so a verdict is the assessor's on all of them."""
        if request.kind == "verdict":
            self.executor.answer(trial.number, request.index, trial.number in self.stop_reasons)
            return
        if request.kind == "early_stop":  # it stops itself: ended as early stopped, not cancelled
            self.stop_reasons.setdefault(trial.number, Verdict(TrialStatus.EARLY_STOPPED))
            self.executor.answer(trial.number, request.index, None)
            return
        if request.kind == "phase":  # a multi-phase NNI trial: another parameter set, a result
            answer = self.phases.answer(trial, request, self.tuner)
            self.executor.answer(trial.number, request.index, *answer)
            return
        self.asked.setdefault(trial.number, set()).add(request.name)
        if request.kind == "fixed":
            value, error, new = self.by_run.fix(request)
        else:
            value, error, new = self.by_run.answer(trial, request)
        if new:  # a parameter first defined: recorded with its distribution
            self.options = self.options.model_copy(update={"suggested": self.by_run.specs()})
            self.store.update_experiment(self.id, options=self.options)
        if error is None and trial.params.get(request.name, _NONE) is not value:
            trial = replace(trial, params={**trial.params, request.name: value})  # a new value
            self.active[trial.number] = trial
            self.store.put_trial(trial)
        self.executor.answer(trial.number, request.index, value, error)

    def _rerun(self, trial: Trial, event: Lost) -> None:
        """Queue a trial whose run was lost to run first again, with ``attempt + 1`` (as on
        resume: from its last checkpoint, its earlier attempts' reports kept apart)."""
        del self.active[trial.number]
        self.reported.discard(trial.number)
        self.stop_reasons.pop(trial.number, None)
        self.asked.pop(trial.number, None)  # it asks again
        again = run_again(trial, f"attempt {trial.attempt} was lost: {event.reason}")
        self.store.put_trial(again)
        self.tuner.requeued(again)
        self.reruns.add(trial.number)
        self.requeue.appendleft(again)

    def _retune(self) -> None:
        """Rebuild the tuner on the declared space plus the parameters defined by run that
        every trial that ended well has; a tuner that refuses them (a grid) keeps its space,
        and they stay drawn independently. It reads the history back from the store: while
        the store does not answer, it waits for the flush that ends the outage."""
        self.retune_waits = not self.outage.call(self._rebuild_tuner)

    def _rebuild_tuner(self) -> None:
        try:
            self._install(self._retuned(self.by_run.space()))
        except (ConfigError, SearchSpaceError):
            self.by_run.modelled = False

    def _retuned(self, space: SearchSpace) -> Retuned:
        """A new tuner on ``space`` that learnt the history again (``_history.retune``)."""
        return retune(
            self.store,
            self.id,
            self.options,
            self.record.seed,
            space,
            tuner=self.tuner,
            scheduling=self.scheduling,
        )

    def _install(self, retuned: Retuned) -> None:
        self.tuner, self.scheduling = retuned.tuner, retuned.scheduling
        self.exhausted = False

    def _may_propose(self, trial: Trial) -> bool:
        """Whether a new phase may be proposed to multi-phase ``trial`` now: the experiment
        runs on, its ``max_duration`` is not spent, and the trial is not being stopped."""
        if self.closing or self.ending is not None or self.stop_asked is not None:
            return False
        if self.drain_asked or trial.number in self.stop_reasons:
            return False
        limit = self.options.max_duration
        return limit is None or self.elapsed() < limit

    def _stored_metrics(
        self, trial: Trial, event: Reported | Finished | Stopped
    ) -> dict[str, Any] | None:
        """The event's metrics as stored (``ObjectiveRule.normalize``), or None: they cannot
        be, and the trial failed, naming the metric and its type; one still running is told to
        stop, and what it sends from then on is ignored."""
        try:
            return self.rule.normalize(event.metrics) if event.metrics else {}
        except MetricsError as exc:
            done = "reported" if isinstance(event, Reported) else "returned"
            self.stop_reasons.pop(trial.number, None)
            error = f"trial {trial.number} {done} {exc}"
            self._finish(trial, TrialStatus.FAILED, event.time, error=error)
            if isinstance(event, Reported):
                self.executor.stop(trial.number)
            return None

    def _finish(
        self,
        trial: Trial,
        status: TrialStatus,
        when: float,
        *,
        value: float | None = None,
        values: tuple[float, ...] | None = None,
        metrics: dict[str, Any] | None = None,
        error: str | None = None,
        exception: BaseException | None = None,
    ) -> None:
        """Record how ``trial`` ended (or paused) and tell the tuner, the assessor, the
        failure rules and the callbacks; ``exception`` is what a FAILED trial raised. A trial
        with objective values is judged by the constraints (``ObjectiveRule``): one they
        cannot be computed for fails, naming why."""
        params = trial.params
        if self.asked and status is not TrialStatus.PAUSED:  # it keeps them until it ends
            params = self.by_run.used(params, self.asked.pop(trial.number, None))
        trial = self.records.ended(
            trial,
            params,
            status,
            when,
            value=value,
            values=values,
            metrics=metrics or {},
            error=error,
        )
        if trial.value is not None and status is not TrialStatus.PAUSED:
            trial = self._constrained(trial)
            status = trial.status
        del self.active[trial.number]
        reported = trial.number in self.reported
        if status is not TrialStatus.PAUSED:  # it paused on a report: it stays a reporter
            self.reported.discard(trial.number)
        self.store.put_trial(trial)
        self.ends.append(trial)  # its handle resolves once this is committed
        if self.submissions.watching and self.submissions.waits_on(trial.number):
            self.commit_soon = True
        if status is not TrialStatus.PAUSED:
            self.callbacks.trial_ended(trial)
        if status is TrialStatus.SYS_CANCELED:  # interrupted: it runs again on resume
            return
        self.scheduling.ended(trial, when, reported=reported)
        if status is TrialStatus.PAUSED:  # a scheduler resumes it later
            self.paused[trial.number] = trial
            return
        self._count(trial)
        self._add_time(trial)
        if self.by_run.params:  # some parameters were defined by run: not those
            self.tuner.observe(known_part(self.tuner.space, trial))
        else:
            self.tuner.observe(trial)
        self.phases.ended(trial, self.tuner)  # the phases it left without a result
        if self.by_run.ended(trial):  # its tuner now models more or fewer of them
            self._retune()
        self.tuner_waits = False
        failure = self.failures.record(trial)
        if failure is not None and self.ending is None:
            self.error = failure
            if not self.options.continue_on_failure:  # run() raises its exception
                self.fatal = FatalFailure(trial, exception)
            self._end(ExperimentStatus.ERROR, TrialStatus.SYS_CANCELED)

    def _add_time(self, trial: Trial) -> None:
        duration = trial.duration
        if duration is not None:
            self.trial_time += max(0.0, duration)

    def _constrained(self, trial: Trial) -> Trial:
        """``trial`` with its constraint values; a SUCCEEDED one FAILED naming why they cannot
        be had (an early-stopped one keeps none)."""
        found, error = self.rule.constraint_values(trial)
        if error is not None and trial.status is not TrialStatus.SUCCEEDED:
            return trial
        if error is not None:
            return replace(trial, status=TrialStatus.FAILED, value=None, values=None, error=error)
        return trial if found is None else replace(trial, constraints=found)

    def _count(self, trial: Trial) -> None:
        self.counts["finished"] += 1
        if trial.status is TrialStatus.FAILED:
            self.counts["failed"] += 1
        if (
            trial.value is not None
            and trial.feasible
            and self.options.first_mode.better(trial.value, self.best)
        ):
            self.best = trial.value
        if self.front is not None:
            self.front.add(trial)

    # ---- ending ---------------------------------------------------------------------------

    def _end(self, status: ExperimentStatus, reason: TrialStatus) -> None:
        """Stop submitting; ask every running trial to stop, recorded with ``reason``."""
        self.ending = status
        for number in list(self.active):
            self.stop_reasons[number] = Verdict(reason)
            self.executor.stop(number)

    def _stop_paused(self, paused: Trial, now: float) -> None:
        """A paused trial ends EARLY_STOPPED, with its last value."""
        self.active[paused.number] = paused
        value = self.rule.value(paused.metrics)[0] if paused.metrics else None
        self._finish(paused, TrialStatus.EARLY_STOPPED, now, value=value, metrics=paused.metrics)
