"""The driver: the loop that owns one running experiment.

It asks the tuner, writes each trial to the store before it runs, submits it to the executor,
turns the executor's events into trial records, enforces the budget and obeys control
requests read from the store. It is the only code that calls the tuner and writes the
experiment's rows, always from one thread.
"""

from __future__ import annotations

import math
import threading
import traceback
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hyperlab._interrupts import interrupts_deferred
from hyperlab.assessors.base import Assessor, Resume, Stop
from hyperlab.config import ExperimentOptions
from hyperlab.environment import EnvironmentCapture
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
from hyperlab.experiment._clock import SYSTEM_CLOCK, Clock
from hyperlab.experiment._controls import Change, Situation, decide
from hyperlab.experiment._failures import FailureWatch
from hyperlab.experiment._fatal import FatalFailure
from hyperlab.experiment._history import Retuned, imported_trial, retune
from hyperlab.experiment._keeper import LeaseKeeper
from hyperlab.experiment._objective import ObjectiveRule
from hyperlab.experiment._outage import StoreOutage
from hyperlab.experiment._phases import Phases
from hyperlab.experiment._progress import make_progress
from hyperlab.experiment._records import TrialRecords
from hyperlab.experiment._requests import DefinedByRun, known_part
from hyperlab.experiment._resume import adopt_orphans, replay, run_again, still_queued
from hyperlab.experiment._scheduling import Scheduling, Verdict
from hyperlab.reporting.metrics import MetricsError
from hyperlab.space import SearchSpace
from hyperlab.store import HEARTBEAT_INTERVAL, ExperimentRecord, LeaseLost, Store, StoreUnavailable
from hyperlab.trial import CUSTOM_TRIAL, ExperimentStatus, Report, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

FLUSH_INTERVAL = 0.1  # seconds between group commits
CONTROL_INTERVAL = 0.1  # seconds between reads of the control table
POLL_TIMEOUT = 0.05
ENVIRONMENT_WAIT = 10.0  # seconds a run's end waits for its environment capture


def budget_left(options: ExperimentOptions, created: int, elapsed: float) -> bool:
    """True while ``options`` let an experiment create another trial: it created fewer than
    ``max_trials`` and spent less than ``max_duration`` seconds of experiment time."""
    max_trials, max_duration = options.max_trials, options.max_duration
    return (max_trials is None or created < max_trials) and (
        max_duration is None or elapsed < max_duration
    )


class Driver:
    """Runs one experiment to its end. Build it, then call ``run`` from the thread that owns it.

    Args:
        store: Where every row goes; the driver is its only writer for this experiment.
        record: The experiment's stored record (already created).
        options: Validated options (budget, metric, concurrency...).
        tuner: A fresh tuner; ``history`` is replayed into it first.
        executor: Runs the trials.
        history: Trials already in the store (on resume), in number order.
        experiment_dir: Folder under which each trial gets ``trials/<number>/``.
        progress: False, True or None (a bar on a terminal, plain lines otherwise), or the
            seconds between plain lines (see ``make_progress``).
        clock: Where time comes from: stamps, the ``max_duration`` budget, heartbeats,
            flush and control intervals; a ``hyperlab.testing.FakeClock`` in simulated time.
        server_url: Where the experiment is served while this driver runs it (recorded for
            readers), or None.
        callbacks: Objects whose ``on_trial_start``, ``on_report`` and ``on_trial_end`` this
            driver calls (checked by ``check_callbacks``; see ``hyperlab.Callback``).
        environment: The environment capture of a new experiment still under way: the driver
            writes it to the store once it is done (at the latest as the run ends).
    """

    def __init__(
        self,
        store: Store,
        record: ExperimentRecord,
        options: ExperimentOptions,
        tuner: Tuner,
        executor: Executor,
        *,
        assessor: Assessor | None = None,
        history: list[Trial] | None = None,
        experiment_dir: Path,
        progress: bool | float | None = False,
        clock: Clock = SYSTEM_CLOCK,
        server_url: str | None = None,
        callbacks: Sequence[Any] = (),
        environment: EnvironmentCapture | None = None,
    ) -> None:
        self.store = store
        self.record = record
        self.id = record.id
        self.options = options
        self.by_run = DefinedByRun(tuner.space, options.suggested)
        history = history or []
        took = replay(  # on resume: what the earlier drivers left
            history,
            store=store,
            experiment_id=record.id,
            options=options,
            seed=record.seed,
            tuner=tuner,
            by_run=self.by_run,
        )
        self.tuner = took.tuner  # it learnt the history
        self.executor = executor
        self.clock = clock
        self.records = TrialRecords(record.id, record.seed, clock, str(experiment_dir / "trials"))
        self.server_url = server_url
        self.started = threading.Event()
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
        self.counts = {"finished": 0, "failed": 0}
        self.best: float | None = None
        self.failures = FailureWatch(options, executor.concurrency)
        self.exhausted = False
        self.tuner_waits = False  # the tuner has nothing now, but may after the next trial ends
        self.keeper: LeaseKeeper | None = None
        self.outage = StoreOutage(store, record.id, options.store_outage)
        self.retune_waits = False  # a retune that reads the store waits for it to answer
        self.stop_asked: str | None = None  # set by request_stop, from any thread
        self.drain_asked = False  # set by request_drain, from any thread
        self.closing = False
        self.ending: ExperimentStatus | None = None
        self.error: str | None = None
        self.fatal: FatalFailure | None = None  # continue_on_failure=False ended it there
        self.callbacks = CallbackRunner(callbacks, record.id)
        self.environment = environment
        self._t0: float | None = None  # when this driver's run began (monotonic)
        self._elapsed0 = record.elapsed  # experiment time of earlier drivers
        self.status = record.status
        self.progress = make_progress(progress, self.id, options.max_trials)
        self.rule = ObjectiveRule.of(options)  # a trial's metrics as stored, its objective value
        self.phases = Phases(store, self.id, self.rule, self._may_propose)  # multi-phase trials
        self.asked: dict[int, set[str]] = {}  # the names each running trial asked for
        for trial in took.ended:
            self._count(trial)
            self.failures.record(trial)
        self.phases.replay(history)
        self.scheduling.replay(history, options.budget_signals)

    def _adopt_orphans(self) -> None:
        """Let the executor adopt the trials the last driver left running (``_resume``); an
        adopted one runs on, its reports from the last one stored; the others run again."""
        adopted: set[int] = set()
        orphans = adopt_orphans(
            self.orphans,
            store=self.store,
            experiment_id=self.id,
            executor=self.executor,
            spec=self._spec,
        )
        for found in orphans:
            trial = found.trial
            adopted.add(trial.number)
            if found.started is not None:
                self.scheduling.started(trial, found.started)
            self.active[trial.number] = trial
            if found.reports:
                self.reported.add(trial.number)
            self.callbacks.trial_started(trial)
        self.orphans.clear()
        self.requeue = still_queued(self.requeue, adopted, self.store)

    # ---- the loop -------------------------------------------------------------------------

    @property
    def max_trials(self) -> int | None:
        """Trials to create at most (changed by a ``SetMaxTrials`` control)."""
        return self.options.max_trials

    def elapsed(self) -> float:
        """Experiment time spent so far: earlier drivers' plus this one's (seconds)."""
        if self._t0 is None:  # not running yet
            return self._elapsed0
        return self._elapsed0 + (self.clock.monotonic() - self._t0)

    def budget_available(self) -> bool:
        """True while this driver may still create trials (NNI's ``budget_available``): it has
        not ended nor been asked to stop, the tuner is not exhausted, and neither
        ``max_trials`` nor ``max_duration`` is spent. Safe to call from any thread."""
        if self.closing or self.ending is not None or self.stop_asked is not None:
            return False
        return (
            not self.drain_asked
            and not self.exhausted
            and budget_left(self.options, self.next_number, self.elapsed())
        )

    def request_stop(self, why: str) -> None:
        """Ask the loop to stop the experiment (STOPPED) at its next turn; any thread."""
        self.stop_asked = why

    def request_drain(self) -> None:
        """Create no more trials: the experiment ends (DONE) once the running ones ended
        (Optuna's ``study.stop()`` and ``timeout``); any thread."""
        self.drain_asked = True

    def run(self) -> ExperimentStatus:
        """Run until the budget is spent, a stop is requested, or too many trials fail.

        Raises:
            ExperimentBusy: another driver runs the experiment (nothing was started).
            LeaseLost: another driver took the experiment over while this one ran (after
                this one failed to renew its lease in time); this one wrote nothing more.
            StoreUnavailable: the store did not answer for ``store_outage`` seconds (see
                ``_outage``); the message says how to continue the experiment.
            KeyboardInterrupt: on Ctrl-C, once the experiment is STOPPED and recorded; the
                interrupt waits for the end of a store write or a message read that it
                would cut in two (``hyperlab._interrupts``).
        """
        with interrupts_deferred():
            return self._run()

    def _run(self) -> ExperimentStatus:
        # every group commit records the experiment time spent (max_duration's count)
        lease = self.store.acquire_lease(self.id, owner=uuid.uuid4().hex, elapsed=self.elapsed)
        self._elapsed0 = lease.elapsed
        self._t0 = self._last_flush = self._last_control = self._last_beat = self.clock.monotonic()
        self.keeper = LeaseKeeper(self.store, lease, self.elapsed, record_every=FLUSH_INTERVAL)
        fields: dict[str, object] = {  # a resume may change the budget
            "options": self.options,
            "server_url": self.server_url,
        }
        if lease.started_at is None:
            fields["started_at"] = self.clock.time()
        self._set_status(ExperimentStatus.RUNNING, finished_at=None, error=None, **fields)
        try:
            self.store.flush()
            self.executor.open(self._on_event)
            self._adopt_orphans()  # holding the lease: no other driver adopts them
        except BaseException:
            self.store.release_lease(lease, elapsed=self.elapsed())
            raise
        self.keeper.start()
        self.started.set()
        try:
            while True:
                self._housekeeping()
                if self.ending is None:
                    self._schedule()
                    self._submit_more()
                if not self.executor.running and (self.ending is not None or self._no_more()):
                    break
                self.executor.poll(0 if self._can_submit() else POLL_TIMEOUT)
                if self.progress is not None:
                    self.progress.update(self)
            final = self.ending or ExperimentStatus.DONE
        except KeyboardInterrupt:
            self.ending, final = ExperimentStatus.STOPPED, ExperimentStatus.STOPPED
            self._shutdown(TrialStatus.SYS_CANCELED)
            raise
        except (LeaseLost, StoreUnavailable):  # nothing more can be written
            self._abandon()
            raise
        except BaseException:
            self.ending, final = ExperimentStatus.ERROR, ExperimentStatus.ERROR
            self.error = traceback.format_exc()
            self._shutdown(TrialStatus.SYS_CANCELED)
            raise
        else:
            self._shutdown(TrialStatus.SYS_CANCELED)
        finally:
            if self.progress is not None:
                self.progress.close(self)
        return final

    def _housekeeping(self) -> None:
        """Obey controls, enforce max_duration, beat, group-commit: each when it is due.

        Called by the loop and on every report, so long in-process trials are covered too.
        """
        tick = self.clock.monotonic()
        riding = self.outage.active  # the store does not answer: only flushes try it
        if not riding and tick - self._last_control >= CONTROL_INTERVAL:
            self._last_control = tick
            self.outage.call(self._apply_controls)  # one it could not apply stays pending
        if self.stop_asked is not None and self.ending is None:
            self._end(ExperimentStatus.STOPPED, TrialStatus.SYS_CANCELED)
        max_duration = self.options.max_duration
        if max_duration is not None and self.ending is None and self.elapsed() >= max_duration:
            self._end(ExperimentStatus.DONE, TrialStatus.SYS_CANCELED)
        assert self.keeper is not None
        if not riding and tick - self._last_beat >= HEARTBEAT_INTERVAL:
            self._last_beat = tick
            self.outage.call(self.keeper.beat)
        if self.keeper.lost:
            raise LeaseLost(
                f"experiment {self.id}: this driver could not renew its lease in time and "
                "another driver took the experiment over; this one stops without writing more"
            )
        if self.environment is not None and self.environment.done:
            self._write_environment()
        if tick - self._last_flush >= FLUSH_INTERVAL:  # with nothing pending too: the time spent
            self._last_flush = tick
            self._flush()

    def _flush(self) -> bool:
        """Group-commit now; False while the store does not answer (the rows wait in memory,
        see ``_outage``). The flush that ends an outage has the lease renewed at once."""
        riding = self.outage.active
        if not self.outage.flush():
            return False
        assert self.keeper is not None
        self.keeper.recorded()
        if riding:
            self._last_beat = -math.inf  # it may have expired meanwhile
            if self.retune_waits:
                self._retune()
        return True

    def _write_environment(self, timeout: float | None = None) -> None:
        """Store the environment capture's result (waiting up to ``timeout`` seconds)."""
        assert self.environment is not None
        found = self.environment.result(timeout)
        if found is not None:
            self.store.update_experiment(self.id, environment=found)
            self.environment = None

    def _shutdown(self, reason: TrialStatus) -> None:
        """Stop what still runs, record it, write the final status and give the lease up."""
        self.closing = True
        for number in self.active:
            self.stop_reasons.setdefault(number, Verdict(reason))
        assert self.keeper is not None
        try:
            try:
                self.executor.close()
            finally:
                now = self.clock.time()
                for trial in list(self.active.values()):  # e.g. an in-process trial hit by ^C
                    verdict = self.stop_reasons.pop(trial.number, Verdict(reason))
                    self._finish(trial, verdict.status, now, error=verdict.error)
                status = self.ending or ExperimentStatus.DONE
                if status is not ExperimentStatus.STOPPED:  # never resumed: stopped early
                    self._end_paused(now)
                    self._cancel_queued(now)
                self._set_status(status, finished_at=now, error=self.error, server_url=None)
                if self.environment is not None:
                    self._write_environment(ENVIRONMENT_WAIT)
                self.outage.settle(self.store.flush)  # the store may be restarting
                lease = self.keeper.lease
                self.outage.settle(lambda: self.store.release_lease(lease, elapsed=self.elapsed()))
        finally:
            self.keeper.stop()

    def _end_paused(self, now: float) -> None:
        """At the end of an experiment (not a stop, which a resume continues), the trials a
        scheduler paused and never resumed are EARLY_STOPPED, with their last value."""
        for number in sorted(self.paused):
            self._stop_paused(self.paused.pop(number), now)

    def _cancel_queued(self, now: float) -> None:
        """At the end of an experiment (not a stop, whose resume runs them), the trials still
        queued (added, lost, re-run) are interrupted as the running ones are: SYS_CANCELED,
        never left WAITING; one a scheduler resumed, never run again, ends as a paused one."""
        while self.requeue:
            trial = self.requeue.popleft()
            if trial.number in self.reported:  # a paused trial (it paused on a report)
                self._stop_paused(trial, now)
                continue
            self.active[trial.number] = trial
            self._finish(trial, TrialStatus.SYS_CANCELED, now)

    def _stop_paused(self, paused: Trial, now: float) -> None:
        """A paused trial ends EARLY_STOPPED, with its last value."""
        self.active[paused.number] = paused
        value = self.rule.value(paused.metrics)[0] if paused.metrics else None
        self._finish(paused, TrialStatus.EARLY_STOPPED, now, value=value, metrics=paused.metrics)

    def _abandon(self) -> None:
        """The lease is lost: let go of what runs here and write nothing more.

        Trials that outlive their driver (commands) are left to the driver that took over,
        which adopts them; the executor stops the others.
        """
        self.closing = True
        self.active.clear()  # end events of what still runs are ignored from now on
        assert self.keeper is not None
        self.keeper.stop()
        self.executor.detach()

    # ---- submitting -----------------------------------------------------------------------

    def _no_more(self) -> bool:
        if self.requeue:  # queued trials run, a drain's included
            return False
        return (
            self.drain_asked
            or self.exhausted
            or (self.max_trials is not None and self.next_number >= self.max_trials)
        )

    def _schedule(self) -> bool:
        """Act on what the assessor asks for now; True if a trial was queued."""
        queued = False
        now = self.clock.time()
        spent = self.max_trials is not None and self.next_number >= self.max_trials
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
                trial = self.records.new(self.next_number, action.params, parent=action.parent)
                self.next_number += 1
                self.requeue.append(trial)
                queued = True
                spent = self.max_trials is not None and self.next_number >= self.max_trials
        return queued

    def _can_submit(self) -> bool:
        return (
            self.ending is None
            and not self.tuner_waits
            and not self._no_more()
            and self.executor.free_slots > 0
            and (bool(self.requeue) or self.scheduling.admits(self.next_number))
            and (not self.executor.runs_outside or self.outage.due())  # write-ahead
        )

    def _submit_more(self) -> None:
        specs: list[TrialSpec] = []
        trials: list[Trial] = []
        free = self.executor.free_slots
        while free > len(specs) and not self._no_more():
            if not self.requeue and (
                self.tuner_waits or not self.scheduling.admits(self.next_number)
            ):
                break  # the tuner has nothing now, or the scheduler holds new trials back
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
        number = self.next_number
        params = self.tuner.suggest(number)
        if params is None:
            if self.tuner.waits() and self.active:  # it may have more once a trial ends
                self.tuner_waits = True
            else:
                self.exhausted = True
            return None
        self.next_number += 1
        return self.records.new(number, params)

    def _spec(self, trial: Trial) -> TrialSpec:
        return self.records.spec(
            trial,
            checkpoint_keep=self.options.checkpoint_keep,
            round_trip=self.scheduling.assessor is not None,  # decisions act at that report
        )

    # ---- events ---------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        trial = self.active.get(event.number)
        if trial is None:
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
            started = event.time
            if trial.number in self.reruns:
                self.reruns.discard(trial.number)
                started = trial.started_at or started  # a replay starts it when it first did
            trial = self.records.started(trial, started)
            self.active[trial.number] = trial
            self.store.put_trial(trial)
            self.scheduling.started(trial, event.time)
            self.callbacks.trial_started(trial)
        elif isinstance(event, Finished):
            metrics = self._stored_metrics(trial, event)
            if metrics is None:
                return
            value, error = self.rule.value(metrics)
            status = TrialStatus.SUCCEEDED if error is None else TrialStatus.FAILED
            self._finish(trial, status, event.time, value=value, metrics=metrics, error=error)
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
            value = None
            if verdict.status is TrialStatus.EARLY_STOPPED:  # the tuner sees its last value
                value = self.rule.value(metrics)[0]
            self._finish(
                trial, verdict.status, event.time, value=value, metrics=metrics, error=verdict.error
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
        if error is None:
            trial = replace(trial, params={**trial.params, request.name: value})
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
        metrics: dict[str, Any] | None = None,
        error: str | None = None,
        exception: BaseException | None = None,
    ) -> None:
        """Record how ``trial`` ended (or paused) and tell the tuner, the assessor, the
        failure rules and the callbacks; ``exception`` is what a FAILED trial raised."""
        params = trial.params
        if self.asked and status is not TrialStatus.PAUSED:  # it keeps them until it ends
            params = self.by_run.used(params, self.asked.pop(trial.number, None))
        trial = self.records.ended(
            trial, params, status, when, value=value, metrics=metrics or {}, error=error
        )
        del self.active[trial.number]
        reported = trial.number in self.reported
        if status is not TrialStatus.PAUSED:  # it paused on a report: it stays a reporter
            self.reported.discard(trial.number)
        self.store.put_trial(trial)
        if status is not TrialStatus.PAUSED:
            self.callbacks.trial_ended(trial)
        if status is TrialStatus.SYS_CANCELED:  # interrupted: it runs again on resume
            return
        self.scheduling.ended(trial, when, reported=reported)
        if status is TrialStatus.PAUSED:  # a scheduler resumes it later
            self.paused[trial.number] = trial
            return
        self._count(trial)
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

    def _count(self, trial: Trial) -> None:
        self.counts["finished"] += 1
        if trial.status is TrialStatus.FAILED:
            self.counts["failed"] += 1
        if trial.value is not None and self.options.mode.better(trial.value, self.best):
            self.best = trial.value

    # ---- ending and control ---------------------------------------------------------------

    def _end(self, status: ExperimentStatus, reason: TrialStatus) -> None:
        """Stop submitting; ask every running trial to stop, recorded with ``reason``."""
        self.ending = status
        for number in list(self.active):
            self.stop_reasons[number] = Verdict(reason)
            self.executor.stop(number)

    def _set_status(self, status: ExperimentStatus, **fields: object) -> None:
        self.status = status
        self.store.update_experiment(self.id, status=status, **fields)

    def _apply_controls(self) -> None:
        for control in self.store.pending_controls(self.id):
            queued = {trial.number for trial in self.requeue}
            now = Situation(
                self.record,
                self.tuner.space,
                self.next_number,
                self.max_trials,
                self.ending is not None,
                self.active.keys() | self.paused.keys() | queued,
            )
            change = decide(control.request, now)
            self._apply(change)
            self.store.finish_control(control.id, change.outcome)

    def _apply(self, change: Change) -> None:
        """Make the change a control request asks for (``_controls.decide``)."""
        if change.stop and self.ending is None:
            self._end(ExperimentStatus.STOPPED, TrialStatus.SYS_CANCELED)
        if change.kill is not None:
            self._kill(change.kill)
        if change.concurrency is not None:
            self.executor.concurrency = change.concurrency
        if change.space is not None:
            self.by_run.declared = change.space
            self._install(self._retuned(self.by_run.space()))
            self.store.update_experiment(self.id, space=change.space.to_nni())
        if change.add is not None:
            trial = self.records.new(self.next_number, change.add, source=CUSTOM_TRIAL)
            self.next_number += 1
            self.store.put_trial(trial)
            self.requeue.append(trial)
        for result in change.imported:
            self.store.add_imported(self.id, result.params, result.value, result.metrics)
            self.imported += 1
            self.tuner.observe(
                imported_trial(self.id, self.imported, result.params, result.value, result.metrics)
            )
        if change.options:
            self.options = self.options.model_copy(update=change.options)
            self.store.update_experiment(self.id, options=self.options)  # what readers show

    def _kill(self, number: int) -> None:
        """Cancel trial ``number`` (USER_CANCELED): end it if paused or queued, else stop it."""
        paused = self.paused.pop(number, None)
        if paused is not None:
            self.active[paused.number] = paused
            now = self.clock.time()
            self._finish(paused, TrialStatus.USER_CANCELED, now, metrics=paused.metrics)
            return
        queued = next((t for t in self.requeue if t.number == number), None)
        if queued is not None:  # waiting for a slot (an added trial, a resumed one)
            self.requeue.remove(queued)
            self.active[queued.number] = queued
            self._finish(queued, TrialStatus.USER_CANCELED, self.clock.time())
            return
        self.stop_reasons[number] = Verdict(TrialStatus.USER_CANCELED)
        self.executor.stop(number)
