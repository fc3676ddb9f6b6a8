"""What if: an assessor replayed over an experiment's stored learning curves, in simulated
time (``hyperlab replay``, ``Result.replay``).

The assessor is built as the driver builds it (``make_assessor``: the experiment's modes,
metrics, seed and space; ``assessor_args={"objective": ...}`` on several objectives) and fed
through the driver's own ``Scheduling``: each trial's start, its reports one by one, its end,
and the assessor's ``actions`` after every event, with ``on_no_more_trials`` once the last
trial has started (for a finished experiment). No decision is made here.

**Simulated time.** With ``order="time"`` the trials start when they started and their reports
come at their stored times, all trials interleaved in that order (as a resumed driver replays
them). With ``order="sequential"`` the trials run one at a time in number order, as with
``concurrency=1``, each report at its stored offset from the trial's start; a resumed trial runs
next, before new ones, as the driver queues it.

**Verdicts.** A trial told to STOP ends there (EARLY_STOPPED): its later reports are dropped. A
trial told to PAUSE ends PAUSED; when the assessor later resumes it (``Resume``), it continues
from the report after the pause (as from its checkpoint), its remaining reports shifted in
time to start at the resume with their stored spacing; a ``Stop`` of a paused trial, or a
finished experiment's end with the trial still paused, counts as a stop at its pause. Branches
(population based training) cannot be run from stored curves: they are ignored and counted.

**Curves.** A trial's curve is its stored reports, steps increasing (a re-run after a crash
replaces the reports from the step it went back to). A trial cut short in the store (stopped
early by the experiment's own assessor, or still running) is replayed as far as it went.
"""

from __future__ import annotations

import copy
import heapq
import json
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Literal

from hyperlab.assessors.base import Assessor, Branch, Resume, Stop
from hyperlab.errors import ConfigError, TrialError
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.experiment._setup import make_assessor
from hyperlab.experiment._whatif_records import (
    PAUSED,
    RAN,
    STOPPED,
    UNFINISHED,
    AssessorReplay,
    ReplayedTrial,
)
from hyperlab.pareto import pareto_front
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

__all__ = ["ORDERS", "Order", "replay_assessor"]

Order = Literal["time", "sequential"]
ORDERS: tuple[Order, ...] = ("time", "sequential")
"""How simulated time runs: ``time``, the stored timestamps; ``sequential``, one trial at a
time in number order."""

_START, _REPORT, _END = 0, 1, 2


def replay_assessor(
    record: ExperimentRecord,
    trials: list[Trial],
    assessor: str | type[Assessor] | Assessor,
    assessor_args: dict[str, Any] | None = None,
    *,
    order: Order = "time",
) -> AssessorReplay:
    """Run ``assessor`` over the stored learning curves of ``trials`` (the experiment
    ``record``'s, with their reports) in simulated time.

    Raises:
        ConfigError: an unknown assessor, arguments it refuses, an unknown ``order``, an
            experiment whose trials never reported, or reports the assessor cannot judge.
    """
    if order not in ORDERS:
        raise ConfigError(f"replay: order must be one of {list(ORDERS)}, got {order!r}")
    judged = _build(record, assessor, assessor_args)
    curves = [_curve(t) for t in trials if t.started_at is not None]
    if not any(c.reports for c in curves):
        raise ConfigError(
            f"replay: experiment {record.id} has no intermediate reports (no trial called "
            "hyperlab.report(...) before its end), so there are no learning curves to replay"
        )
    sim = _Simulation(judged, curves, order=order, final=record.status.is_finished())
    sim.run()
    options = record.options
    replayed = tuple(sim.replayed(c) for c in curves)
    survivors = {t.number for t in replayed if t.outcome == RAN}
    return AssessorReplay(
        experiment_id=record.id,
        assessor=_label(judged, assessor, assessor_args),
        order=order,
        modes=options.modes,
        metrics=options.metrics,
        trials=replayed,
        best_without=_best(trials, options.modes),
        best_with=_best([t for t in trials if t.number in survivors], options.modes),
        notes=tuple(_notes(record, curves, sim)),
    )


class _SpaceOnly(Tuner):
    """What ``make_assessor`` reads of a tuner: the search space (it proposes nothing)."""

    def suggest(self, number: int) -> dict[str, Any] | None:
        return None


def _build(
    record: ExperimentRecord,
    assessor: str | type[Assessor] | Assessor,
    args: dict[str, Any] | None,
) -> Assessor:
    """The assessor as the driver of ``record`` would build it with ``args``."""
    if args is not None and not isinstance(args, dict):
        raise ConfigError(f"replay: assessor_args must be a dict, got {args!r}"[:300])
    if isinstance(assessor, Assessor):
        assessor = copy.deepcopy(assessor)  # the caller's stays fresh for another replay
        name = type(assessor).__name__
    elif isinstance(assessor, (str, type)):
        name = assessor if isinstance(assessor, str) else assessor.__name__
    else:
        raise ConfigError(
            "replay: assessor must be a name, an Assessor subclass or an instance, got "
            f"{type(assessor).__name__} {assessor!r}"[:300]
        )
    options = record.options.model_copy(
        update={"assessor": name, "assessor_args": dict(args or {})}
    )
    stand_in = _SpaceOnly(SearchSpace.from_nni(record.space), mode=options.modes, seed=0)
    made = make_assessor(options, stand_in, assessor)
    assert made is not None
    return made


@dataclass
class _Curve:
    """A stored trial and its learning curve: reports (steps increasing) at offsets from its
    start, and its end's offset (None when it never ended)."""

    trial: Trial
    reports: list[Report]
    offsets: list[float]
    end: float | None


def _curve(trial: Trial) -> _Curve:
    start = trial.started_at
    assert start is not None
    kept: list[Report] = []
    for report in trial.reports:  # (attempt, step, time) order: a re-run goes back to its step
        while kept and kept[-1].step >= report.step:
            kept.pop()
        kept.append(replace(report, attempt=1))
    offsets: list[float] = []
    for report in kept:
        offsets.append(max(report.time - start, offsets[-1] if offsets else 0.0))
    status = trial.status
    end = None
    if status.is_finished() and status is not TrialStatus.SYS_CANCELED:
        last = offsets[-1] if offsets else 0.0
        end = max((trial.finished_at or start) - start, last)
    return _Curve(trial, kept, offsets, end)


class _Simulation:
    """The driver's loop over stored curves: events in simulated time, the assessor fed
    through ``Scheduling`` as the live driver feeds it."""

    def __init__(
        self, assessor: Assessor, curves: list[_Curve], *, order: Order, final: bool
    ) -> None:
        self.assessor = assessor
        self.scheduling = Scheduling(assessor)
        self.curves = {c.trial.number: c for c in curves}
        self.count = max(self.curves, default=-1) + 1
        self.order = order
        self.final = final
        self.heap: list[tuple[float, int, int, int]] = []  # (time, kind, number, index)
        self.fed: dict[int, int] = {}  # number -> reports fed
        self.base: dict[int, float] = {}  # number -> the simulated time its offsets count from
        self.outcome: dict[int, str] = {}
        self.stopped_at: dict[int, int] = {}
        self.pauses: dict[int, int] = {}
        self.resumes: dict[int, int] = {}
        self.paused: set[int] = set()
        self.started: set[int] = set()
        self.branches = 0
        self.now = min((c.trial.started_at or 0.0 for c in curves), default=0.0)
        self.waiting = deque(sorted(self.curves))  # sequential: not started yet
        self.resumed: deque[int] = deque()  # sequential: resumed, to run next
        self.running: int | None = None  # sequential: the trial running

    # ---- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        if self.order == "time":
            for number, curve in self.curves.items():
                assert curve.trial.started_at is not None
                self._start(number, curve.trial.started_at)
        while True:
            if self.order == "sequential" and self.running is None:
                self._next()
            if not self.heap:
                self._act()
                if self.heap or (self.order == "sequential" and (self.resumed or self.waiting)):
                    continue
                break
            when, kind, number, index = heapq.heappop(self.heap)
            self.now = max(self.now, when)
            if kind == _START:
                self._started(number)
            elif kind == _REPORT:
                self._reported(number, index)
            else:
                self._ended(number)
            self._act()
        if self.final:  # the driver's end: the trials never resumed are stopped
            for number in sorted(self.paused):
                self.outcome[number] = STOPPED
                record = self._record(number, TrialStatus.EARLY_STOPPED)
                self.scheduling.ended(record, self.now, reported=True)
            self.paused.clear()

    def _next(self) -> None:
        """Sequential: start the next trial (a resumed one first, then new ones in order)."""
        if self.resumed:
            self.running = self.resumed.popleft()
            self._continue(self.running)
        elif self.waiting:
            self.running = self.waiting.popleft()
            self._start(self.running, self.now)

    def _start(self, number: int, when: float) -> None:
        self.base[number] = when
        self.fed[number] = 0
        heapq.heappush(self.heap, (when, _START, number, 0))

    def _continue(self, number: int) -> None:
        """A resumed trial goes on now, from the report after its pause."""
        curve = self.curves[number]
        self.base[number] = self.now - curve.offsets[self.fed[number] - 1]
        heapq.heappush(self.heap, (self.now, _START, number, self.fed[number]))

    def _push_next(self, number: int) -> None:
        curve = self.curves[number]
        index = self.fed[number]
        if index < len(curve.reports):
            when = self.base[number] + curve.offsets[index]
            heapq.heappush(self.heap, (when, _REPORT, number, index))
        elif curve.end is not None:
            heapq.heappush(self.heap, (self.base[number] + curve.end, _END, number, index))
        else:  # it has not ended in the store: what it reported is all there is
            self.outcome[number] = UNFINISHED
            self._free(number)

    def _free(self, number: int) -> None:
        if self.running == number:
            self.running = None

    # ---- events -----------------------------------------------------------------------------

    def _started(self, number: int) -> None:
        self.started.add(number)
        self.outcome.pop(number, None)
        self.scheduling.started(self._record(number, TrialStatus.RUNNING), self.now)
        self._push_next(number)

    def _reported(self, number: int, index: int) -> None:
        curve = self.curves[number]
        report = replace(curve.reports[index], time=self.now)
        self.fed[number] = index + 1
        verdict = self.scheduling.reported(
            self._record(number, TrialStatus.RUNNING), report, self.now
        )
        if verdict is None:
            self._push_next(number)
        elif verdict.status is TrialStatus.FAILED:
            raise ConfigError(
                f"replay: the {type(self.assessor).__name__} assessor cannot judge trial "
                f"{number}'s report at step {report.step}: {verdict.error}"
            )
        else:
            self.stopped_at[number] = report.step
            status = verdict.status
            if status is TrialStatus.PAUSED:
                self.paused.add(number)
                self.pauses[number] = self.pauses.get(number, 0) + 1
                self.outcome[number] = PAUSED
            else:
                self.outcome[number] = STOPPED
            self.scheduling.ended(self._record(number, status), self.now, reported=True)
            self._free(number)

    def _ended(self, number: int) -> None:
        self.outcome[number] = RAN
        self.stopped_at.pop(number, None)
        # a trial that never reported is listed in the notes; the driver would print it once
        self.scheduling.ended(self._record(number, None), self.now, reported=True)
        self._free(number)

    def _act(self) -> None:
        """Ask the assessor for its actions, as the driver does after every event."""
        no_more = self.final and len(self.started) == len(self.curves)
        actions = self.scheduling.actions(self.now, no_more=no_more, count=self.count)
        for action in actions:
            if isinstance(action, Branch):
                self.branches += 1
            elif action.number not in self.paused:
                continue  # ignored, as the driver ignores it
            elif isinstance(action, Resume):
                self.paused.discard(action.number)
                self.resumes[action.number] = self.resumes.get(action.number, 0) + 1
                if self.order == "sequential":
                    self.resumed.appendleft(action.number)  # the driver's requeue order
                else:
                    self._continue(action.number)
            elif isinstance(action, Stop):
                self.paused.discard(action.number)
                self.outcome[action.number] = STOPPED
                record = self._record(action.number, TrialStatus.EARLY_STOPPED)
                self.scheduling.ended(record, self.now, reported=True)

    # ---- records ----------------------------------------------------------------------------

    def _record(self, number: int, status: TrialStatus | None) -> Trial:
        """The trial as the driver would show it now: ``status`` (None: its stored end)."""
        curve = self.curves[number]
        kept = tuple(curve.reports[: self.fed.get(number, 0)])
        trial = replace(curve.trial, attempt=1, reports=kept, phases=())
        if status is None:
            return replace(trial, finished_at=self.now)
        running = status is TrialStatus.RUNNING
        return replace(
            trial,
            status=status,
            value=None,
            values=None,
            metrics={} if running or not kept else dict(kept[-1].metrics),
            error=None,
            finished_at=None if running else self.now,
            constraints=None,
        )

    def replayed(self, curve: _Curve) -> ReplayedTrial:
        number = curve.trial.number
        kept = self.fed.get(number, 0)
        outcome = self.outcome.get(number, PAUSED if number in self.paused else UNFINISHED)
        last = curve.reports[kept - 1] if kept else None
        return ReplayedTrial(
            number=number,
            status=curve.trial.status,
            value=curve.trial.value,
            outcome=outcome,
            stopped_at=self.stopped_at.get(number) if outcome in (STOPPED, PAUSED) else None,
            reports=len(curve.reports),
            kept=kept,
            resource=self._resource(curve.reports[-1] if curve.reports else None),
            kept_resource=self._resource(last),
            pauses=self.pauses.get(number, 0),
            resumes=self.resumes.get(number, 0),
            last_value=None if last is None else self._value(last),
        )

    def _resource(self, report: Report | None) -> float:
        if report is None:
            return 0.0
        try:
            return self.assessor.resource(report)
        except TrialError:
            return float(report.step + 1)

    def _value(self, report: Report) -> float | None:
        try:
            return self.assessor.value(report)
        except TrialError:
            return None


def _label(
    made: Assessor, given: str | type[Assessor] | Assessor, args: dict[str, Any] | None
) -> str:
    """The assessor as the replay names it: its own ``repr`` where it has one (the arguments
    in effect), else its name and the arguments given."""
    if type(made).__repr__ is not object.__repr__:
        return repr(made)
    name = given if isinstance(given, str) else type(made).__name__
    return f"{name} {json.dumps(args or {}, default=str)}"


def _best(trials: list[Trial], modes: tuple[Mode, ...]) -> tuple[int, ...]:
    """The best trial's number (one objective), or the Pareto front's numbers."""
    if len(modes) == 1:
        best = modes[0].best(trials)
        return () if best is None else (best.number,)
    return tuple(t.number for t in pareto_front(trials, modes))


def _notes(record: ExperimentRecord, curves: list[_Curve], sim: _Simulation) -> list[str]:
    """What the replay could not see or do."""
    notes = []
    cut = [c.trial.number for c in curves if c.trial.status is TrialStatus.EARLY_STOPPED]
    if cut:
        notes.append(
            f"{len(cut)} trials were stopped early in the experiment itself (by its assessor "
            f"{record.options.assessor!r} or the trial): their curves end there, so the replay "
            "cannot tell how they would have gone on"
        )
    silent = [c.trial.number for c in curves if not c.reports]
    if silent:
        notes.append(
            f"{len(silent)} trials never reported (e.g. trial {silent[0]}): no assessor can "
            "judge them; they run as stored"
        )
    unfinished = [n for n, o in sim.outcome.items() if o == UNFINISHED]
    if unfinished:
        notes.append(
            f"{len(unfinished)} trials have not ended in the store (the experiment is "
            f"{record.status}): the replay uses the reports stored so far"
        )
    if sim.branches:
        notes.append(
            f"the assessor asked for {sim.branches} new trials from others' checkpoints "
            "(branches): a replay of stored curves cannot run them, so they were ignored"
        )
    return notes
