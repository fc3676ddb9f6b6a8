"""The driver: the loop that owns one running experiment.

It asks the tuner, writes each trial to the store before it runs, submits it to the executor,
turns the executor's events into trial records, enforces the budget and obeys control
requests read from the store. It is the only code that calls the tuner and writes the
experiment's rows, always from one thread.

What happens to each trial is ``TrialFlow``'s (``_flow``), which the driver extends with the
loop: the lease and its heartbeat, group commits, store outages, control requests (``_controls``
decides what each changes, ``Driver._apply`` makes the change), adopting what an earlier driver
left running (``_resume``), and the end of the run.
"""

from __future__ import annotations

import math
import threading
import traceback
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hyperlab._interrupts import interrupts_deferred
from hyperlab.assessors.base import Assessor
from hyperlab.config import ExperimentOptions
from hyperlab.environment import EnvironmentCapture
from hyperlab.errors import ConfigError, ExperimentBusy
from hyperlab.executors.base import Executor
from hyperlab.experiment._clock import SYSTEM_CLOCK, Clock
from hyperlab.experiment._controls import Change, Situation, decide
from hyperlab.experiment._flow import TrialFlow
from hyperlab.experiment._history import imported_trial
from hyperlab.experiment._keeper import LeaseKeeper
from hyperlab.experiment._objective import ConstraintsFunc
from hyperlab.experiment._progress import make_progress
from hyperlab.experiment._resume import adopt_orphans, still_queued
from hyperlab.experiment._scheduling import Verdict
from hyperlab.experiment._strategy import Submissions, TrialHandle
from hyperlab.store import HEARTBEAT_INTERVAL, ExperimentRecord, LeaseLost, Store, StoreUnavailable
from hyperlab.trial import CUSTOM_TRIAL, ExperimentStatus, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

FLUSH_INTERVAL = 0.1  # seconds between group commits
CONTROL_INTERVAL = 0.1  # seconds between reads of the control table
POLL_TIMEOUT = 0.05
ENVIRONMENT_WAIT = 10.0  # seconds a run's end waits for its environment capture


def budget_left(options: ExperimentOptions, created: int, spent: float) -> bool:
    """True while ``options`` let an experiment create another trial: it created fewer than
    ``max_trials`` and spent less than ``max_duration`` seconds (of experiment time, or of its
    trials' with ``budget_time="trials"``)."""
    max_trials, max_duration = options.max_trials, options.max_duration
    return (max_trials is None or created < max_trials) and (
        max_duration is None or spent < max_duration
    )


class Driver(TrialFlow):
    """Runs one experiment to its end. Build it, then call ``run`` from the thread that owns it.

    Args:
        store: Where every row goes; the driver is its only writer for this experiment.
        record: The experiment's stored record (already created).
        options: Validated options (budget, metric, concurrency...).
        tuner: A fresh tuner; ``history`` is replayed into it first.
        executor: Runs the trials.
        history: Trials already in the store (on resume), in number order: a list, or a
            ``_resume.StoredTrials`` stream (it may be iterated twice).
        experiment_dir: Folder under which each trial gets ``trials/<number>/``.
        progress: False, True or None (a bar on a terminal, plain lines otherwise), or the
            seconds between plain lines (see ``make_progress``).
        clock: Where time comes from: stamps, the ``max_duration`` budget, heartbeats,
            flush and control intervals; a ``hyperlab.testing.FakeClock`` in simulated time.
        server_url: Where the experiment is served while this driver runs it (recorded for
            readers), or None.
        callbacks: Objects whose ``on_trial_start``, ``on_report`` and ``on_trial_end`` this
            driver calls (checked by ``check_callbacks``; see ``hyperlab.Callback``).
        counted: Trials and seconds the budget counts as spent before this run (NNI's
            ``load_state_dict``).
        submissions: The strategy loop's side (``_strategy``), when its handles were made
            before the run (``Experiment.trials`` of a resumed experiment).
        environment: The environment capture of a new experiment still under way: the driver
            writes it to the store once it is done (at the latest as the run ends).
        read_at: For a resumed experiment, its change cursor (``Store.change_cursor``) read
            before ``history``: a driver that ran it since (they raced to continue it, the
            other took the lease first and ended) made ``history`` stale, so ``run`` raises
            ``ExperimentBusy`` instead of numbering trials again.
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
        constraints: ConstraintsFunc | None = None,
        history: Iterable[Trial] | None = None,
        experiment_dir: Path,
        progress: bool | float | None = False,
        clock: Clock = SYSTEM_CLOCK,
        server_url: str | None = None,
        callbacks: Sequence[Any] = (),
        environment: EnvironmentCapture | None = None,
        counted: tuple[int, float] = (0, 0.0),
        submissions: Submissions | None = None,
        read_at: int | None = None,
    ) -> None:
        super().__init__(
            store,
            record,
            options,
            tuner,
            executor,
            assessor=assessor,
            constraints=constraints,
            history=history or [],
            trials_dir=str(experiment_dir / "trials"),
            clock=clock,
            callbacks=callbacks,
            submissions=submissions,
            counted=counted,
        )
        self.server_url = server_url
        self.read_at = read_at
        self.started = threading.Event()
        self.keeper: LeaseKeeper | None = None
        self.environment = environment
        self._t0: float | None = None  # when this driver's run began (monotonic)
        self._elapsed0 = record.elapsed  # experiment time of earlier drivers
        kept = "kept in memory" if store.in_memory else f"stored in {store.masked_url}"
        where = f"{kept}, files in {experiment_dir}"
        self.progress = make_progress(progress, self.id, options.max_trials, where)

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
            and (not self.exhausted or self.submissions.attached)
            and budget_left(self.options, self.created, self.spent())
        )

    def submit(self, params: list[dict[str, Any]]) -> list[TrialHandle]:
        """Queue trials a strategy loop submits, checked parameter sets (any thread): they
        run before any the tuner proposes; their handles resolve once they ended.

        Raises:
            ConfigError: the run ended or is ending, or the budget has no room for them all
                (nothing is queued then; the message is NNI's engine's).
        """
        with self.submissions.lock:
            self._check_room(len(params))
            return self.submissions.submit(params, self._next_locked)

    def _next_locked(self) -> int:
        number = self.next_number  # the caller holds submissions.lock
        self.next_number += 1
        return number

    def _check_room(self, count: int) -> None:
        """Raise ConfigError unless ``count`` more trials may be created now: a spent budget
        is named first (in NNI's words), as the reason a run that spent it ended."""
        created, max_trials = self.created, self.max_trials
        if max_trials is not None and created + count > max_trials:
            raise ConfigError(
                f"experiment {self.id}: Maximum number of models reached "
                f"({created + count} > {max_trials}). Models cannot be submitted anymore: "
                f"{created} of its max_trials={max_trials} trials were created, so "
                f"{max_trials - created} more can be, and {count} were submitted"
            )
        limit, spent = self.options.max_duration, self.spent()
        if limit is not None and spent >= limit:
            counted = (
                "its trials' durations"
                if self.options.budget_time == "trials"
                else "experiment time"
            )
            raise ConfigError(
                f"experiment {self.id}: Maximum duration reached ({spent:f} > {limit:f}). "
                f"Models cannot be submitted anymore: max_duration={limit:g} s of {counted} "
                "are spent"
            )
        if self.submissions.closed or self.closing or self.ending is not None:
            status = self.ending or self.status
            raise ConfigError(
                f"experiment {self.id} ended ({status}): no trial can be submitted; "
                f"hyperlab.Experiment.resume({self.id!r}) continues it"
            )
        if self.stop_asked is not None or self.drain_asked:
            why = "it is stopping" if self.stop_asked is not None else "drain() was called"
            raise ConfigError(f"experiment {self.id}: {why}, so no trial can be submitted")

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
        if self.read_at is not None and self.store.change_cursor(self.id) != self.read_at:
            self.store.release_lease(lease, elapsed=lease.elapsed)
            raise ExperimentBusy(
                f"experiment {self.id}: another driver ran it between the read of its trials "
                "and this driver's start; load it again to continue it"
            )
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
            self.executor.attach(self.store, self.id)
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
                if self.submissions:
                    self._take_submitted()
                if self.ending is None:
                    self._schedule()
                    self._submit_more()
                if self.progress is not None:  # once ended trials' places are taken again
                    self.progress.update(self)
                if not self.executor.running and (self.ending is not None or self._no_more()):
                    break
                if self._can_submit():
                    self.executor.poll(0)
                elif self.submissions.attached and not self.executor.running:
                    self.submissions.idle(POLL_TIMEOUT)  # woken by the next submit
                else:
                    self.executor.poll(POLL_TIMEOUT)
                if self.callbacks.error is not None:  # callbacks_raise: it ends the run
                    raise self.callbacks.error
            final = self.ending or ExperimentStatus.DONE
        except KeyboardInterrupt:
            self.ending, final = ExperimentStatus.STOPPED, ExperimentStatus.STOPPED
            self._shutdown(TrialStatus.SYS_CANCELED)
            raise
        except (LeaseLost, StoreUnavailable) as exc:  # nothing more can be written
            self._abandon(exc)
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
            self.outage.call(self._apply_controls)  # one it could not apply stays pending
            self._last_control = self.clock.monotonic()  # from its end: a slow poll never chains
        if self.stop_asked is not None and self.ending is None:
            self._end(ExperimentStatus.STOPPED, TrialStatus.SYS_CANCELED)
        max_duration = self.options.max_duration
        if (
            max_duration is not None
            and self.ending is None
            and self.options.budget_time == "experiment"  # else it only stops new trials
            and self.spent() >= max_duration
        ):
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
        if tick - self._last_flush >= FLUSH_INTERVAL or self.commit_soon:  # the time spent too
            self._flush()
            # counted from the flush's end: a commit slower than the interval (a busy server)
            # must not make every loop turn commit, which would run only `concurrency` trials
            # between two commits
            self._last_flush = self.clock.monotonic()

    def _flush(self) -> bool:
        """Group-commit now; False while the store does not answer (the rows wait in memory,
        see ``_outage``). The flush that ends an outage has the lease renewed at once."""
        riding = self.outage.active
        if not self.outage.flush():
            return False
        if self.ends:  # committed: their handles resolve
            self.submissions.resolve(self.ends)
            self.ends = []
        self.commit_soon = False
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
                self._take_submitted()  # written: a resume runs them, or they are cancelled
                if status is not ExperimentStatus.STOPPED:  # never resumed: stopped early
                    self._end_paused(now)
                    self._cancel_queued(now)
                self._set_status(status, finished_at=now, error=self.error, server_url=None)
                if self.environment is not None:
                    self._write_environment(ENVIRONMENT_WAIT)
                self.outage.settle(self.store.flush)  # the store may be restarting
                self.submissions.resolve(self.ends)
                self.ends = []
                lease = self.keeper.lease
                self.outage.settle(lambda: self.store.release_lease(lease, elapsed=self.elapsed()))
        finally:
            self.keeper.stop()
            self.submissions.close(self.stored_trials, None)

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

    def stored_trials(self, numbers: list[int]) -> dict[int, Trial]:
        """Trials ``numbers`` as stored: one by one for a few, else in one read."""
        if len(numbers) <= 16:
            return {n: self.store.get_trial(self.id, n) for n in numbers}
        wanted = set(numbers)
        return {
            t.number: t for t in self.store.get_trials(self.id, reports=False) if t.number in wanted
        }

    def _abandon(self, why: BaseException) -> None:
        """The lease is lost (or the store gone): let go of what runs here and write nothing
        more; a strategy's handles left get ``why``.

        Trials that outlive their driver (commands) are left to the driver that took over,
        which adopts them; the executor stops the others.
        """
        self.closing = True
        self.submissions.close(None, why)
        self.active.clear()  # end events of what still runs are ignored from now on
        assert self.keeper is not None
        self.keeper.stop()
        self.executor.detach()

    # ---- ending and control ---------------------------------------------------------------

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
            trial = self.records.new(self._take_number(), change.add, source=CUSTOM_TRIAL)
            self.store.put_trial(trial)
            self.requeue.append(trial)
        for result in change.imported:
            self.store.add_imported(self.id, result.params, result.value, result.metrics)
            self.imported += 1
            self.tuner.observe(
                imported_trial(
                    self.id,
                    self.imported,
                    result.params,
                    result.value,
                    result.metrics,
                    self.options,
                )
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
