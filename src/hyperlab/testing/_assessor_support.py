"""The machinery of ``hyperlab.testing.assessors``: a family of scripted learning curves, and
``Simulation``, a small event loop in simulated time that drives an assessor as the driver does
and records every call, so that fresh assessors can be fed the same calls, or the history the
store would hold, and compared.

Private: import these names from ``hyperlab.testing.assessors``, which documents the contract.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from hyperlab.assessors.base import Assessor, Branch, Decision, Resume, Stop
from hyperlab.space import SearchSpace, uniform
from hyperlab.trial import Mode, Report, Trial, TrialStatus

__all__ = [
    "BEST",
    "EXPERIMENT",
    "FAMILY",
    "METRIC",
    "NOISE",
    "RESOURCE",
    "SPACE",
    "START",
    "WORST",
    "Call",
    "Curve",
    "Plan",
    "Simulation",
    "TrialRun",
    "feed",
    "first_mismatch",
    "replay",
    "standard_plans",
    "value_of",
]

RESOURCE = 9
"""Every curve reports at resources 1 .. RESOURCE (steps 0 .. RESOURCE - 1), then finishes."""
METRIC = "score"
"""The judged metric's name in the reports (the experiment's ``metric``)."""
NOISE = 0.005
"""Standard deviation of the noise added to every reported loss."""
START = 1_700_000_000.0
"""Epoch time of simulated second 0."""
EXPERIMENT = "contract"
SPACE = SearchSpace.coerce({"x": uniform(0.0, 1.0)})
"""The search space the assessors are given; a trial's ``x`` says which curve it follows."""


@dataclass(frozen=True)
class Curve:
    """A learning curve in loss terms: ``final + span * exp(-resource / tau)``."""

    final: float
    span: float = 1.0
    tau: float = 3.0

    def loss(self, resource: float) -> float:
        return self.final + self.span * math.exp(-resource / self.tau)


FAMILY: tuple[Curve, ...] = tuple(Curve(final=0.1 * (i + 1)) for i in range(8))
"""Eight curves, best first, 0.1 apart at every resource (they never cross, and the noise is
far smaller than the gaps)."""
BEST = 0
WORST = len(FAMILY) - 1


def value_of(loss: float, mode: Mode) -> float:
    """What a trial reports for ``loss``: the loss itself in min mode, ``1 - loss`` in max mode
    (an accuracy-like score; negative early on for the worst curves)."""
    return loss if mode is Mode.MIN else 1.0 - loss


@dataclass(frozen=True)
class Plan:
    """One trial to run: which curve it follows; a silent one reports nothing and finishes
    with the curve's final value."""

    curve: int
    silent: bool = False


def standard_plans(seed: int) -> list[Plan]:
    """The contract's scenario: the middle curves in a seeded order with a silent trial among
    them, then the worst curve and, last, the best one."""
    middle = [Plan(i) for i in np.random.default_rng(seed).permutation(range(1, WORST))]
    middle.insert(2, Plan(3, silent=True))
    return [*middle, Plan(WORST), Plan(BEST)]


@dataclass(frozen=True)
class Call:
    """One call made to an assessor: ``on_start``, ``on_report``, ``on_end``, ``actions``, or
    ``on_no_more_trials`` (kind ``"no_more"``, with ``count``)."""

    kind: Literal["start", "report", "end", "actions", "no_more"]
    now: float
    trial: Trial | None = None
    report: Report | None = None
    count: int = 0

    def send(self, assessor: Assessor) -> Any:
        """Make this call on ``assessor``; what it returned (None for the hooks)."""
        if self.kind == "actions":
            return assessor.actions(self.now)
        if self.kind == "no_more":
            assessor.on_no_more_trials(self.count, self.now)
            return None
        assert self.trial is not None
        if self.kind == "report":
            assert self.report is not None
            return assessor.on_report(self.trial, self.report, self.now)
        if self.kind == "start":
            assessor.on_start(self.trial, self.now)
        else:
            assessor.on_end(self.trial, self.now)
        return None

    def __str__(self) -> str:
        number = "" if self.trial is None else f" trial {self.trial.number}"
        detail = ""
        if self.report is not None:
            detail = f" step {self.report.step} {self.report.metrics}"
        elif self.kind == "end" and self.trial is not None:
            detail = f" {self.trial.status.value}"
        return f"{self.kind}{number}{detail} at t={self.now - START:.3f}"


@dataclass
class TrialRun:
    """One simulated trial: its plan, progress and what happened to it."""

    number: int
    plan: Plan
    dt: float  # simulated seconds per step
    parent: int | None = None
    step: int = 0  # the next step it reports (its checkpoint)
    status: TrialStatus = TrialStatus.WAITING
    started_at: float | None = None
    finished_at: float | None = None
    reports: list[Report] = field(default_factory=list)
    value: float | None = None
    decisions: list[Decision] = field(default_factory=list)
    resumes: int = 0

    @property
    def reached(self) -> int:
        """The largest resource it reported at (0 if none)."""
        return max((r.step + 1 for r in self.reports), default=0)

    @property
    def stopped(self) -> bool:
        return Decision.STOP in self.decisions


class Simulation:
    """Runs ``plans`` against ``assessor`` in simulated time, acting on its answers as the
    driver does, and records every call and answer.

    At most ``concurrency`` trials run; a trial reports one step every ``dt`` simulated
    seconds (its own, so no two reports share a time stamp), and its ``step``-th report is at
    resource ``step + 1``. STOP ends it EARLY_STOPPED, PAUSE ends it PAUSED (it keeps its
    step, as a checkpoint would); after every event ``actions`` is asked (after
    ``on_no_more_trials`` once ``max_trials`` trials exist, as the driver does): a ``Resume`` runs a
    paused trial again from where it paused, a ``Branch`` starts a new trial on its parent's
    curve from the parent's step, both at once (or as soon as a slot is free, before any new
    trial; a new trial only when ``admits_new_trial`` allows it). Answers that break the
    contract are collected in ``violations``.

    Args:
        assessor: The assessor under test.
        plans: The trials to run, in order.
        mode: The experiment's mode: values are ``value_of(loss, mode)``.
        seed: Seeds the noise.
        concurrency: How many trials run at once.
        extra: Extra metrics of a report, from (trial number, step).
        max_trials: How many trials may exist, branches included (default: twice the plans).
    """

    def __init__(
        self,
        assessor: Assessor,
        plans: Sequence[Plan],
        *,
        mode: Mode,
        seed: int = 0,
        concurrency: int = 2,
        extra: Callable[[int, int], dict[str, Any]] | None = None,
        max_trials: int | None = None,
    ) -> None:
        self.assessor = assessor
        self.plans = list(plans)
        self.mode = mode
        self.seed = seed
        self.concurrency = concurrency
        self.extra = extra
        self.max_trials = 2 * len(self.plans) if max_trials is None else max_trials
        self.runs: dict[int, TrialRun] = {}
        self.calls: list[Call] = []
        self.answers: list[Any] = []
        self.violations: list[str] = []
        self.cuts: list[tuple[int, list[Trial]]] = []
        """(index of the next call, the history a store would hold then) at quiet moments:
        when no resumed or branched trial waits for a slot (a driver holds those in memory)."""
        self.now = START
        self._events: list[tuple[float, int, int]] = []  # (time, order, trial number)
        self._order = 0
        self._queue: deque[int] = deque()  # resumed and branched trials, to start first
        self._next_plan = 0

    # ---- running ---------------------------------------------------------------------------

    def run(self) -> Simulation:
        """Run every plan to its end; returns self."""
        self._ask_actions()
        self._fill()
        while self._events:
            when, _, number = heapq.heappop(self._events)
            self.now = when
            self._step(self.runs[number])
            self._ask_actions()
            self._fill()
            if not self._queue:
                self.cuts.append((len(self.calls), self.history()))
        return self

    def call(self, call: Call) -> Any:
        """Make ``call`` on the assessor and record it with its answer."""
        self.calls.append(call)
        answer = call.send(self.assessor)
        self.answers.append(answer)
        return answer

    def record(self, run: TrialRun, *, stored: bool = False) -> Trial:
        """``run`` as a frozen record: as the driver passes it live (no reports), or as the
        store holds it (``stored``: its reports included)."""
        ended = (TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED)
        value = run.value if run.status in ended else None
        return Trial(
            EXPERIMENT,
            run.number,
            {"x": (run.plan.curve + 0.5) / len(FAMILY)},
            run.status,
            1,
            value,
            dict(run.reports[-1].metrics) if run.reports and run.status.is_finished() else {},
            tuple(run.reports) if stored else (),
            None,
            run.number,
            START,
            run.started_at,
            run.finished_at,
            run.parent,
        )

    def history(self) -> list[Trial]:
        """The trials as the store holds them now, in number order."""
        return [self.record(run, stored=True) for run in self.runs.values()]

    def report_of(self, run: TrialRun, step: int, when: float) -> Report:
        """What ``run`` reports at ``step``: its curve's loss there plus seeded noise."""
        resource = step + 1
        noise = np.random.default_rng([self.seed, run.plan.curve, step]).normal(0.0, NOISE)
        loss = FAMILY[run.plan.curve].loss(resource) + float(noise)
        metrics: dict[str, Any] = {METRIC: value_of(loss, self.mode)}
        if self.extra is not None:
            metrics.update(self.extra(run.number, step))
        return Report(step, metrics, when, 1)

    def _fill(self) -> None:
        running = sum(run.status is TrialStatus.RUNNING for run in self.runs.values())
        while running < self.concurrency:
            if self._queue:
                run = self.runs[self._queue.popleft()]
            elif (
                self._next_plan < len(self.plans)
                and len(self.runs) < self.max_trials
                and self.assessor.admits_new_trial(len(self.runs))
            ):
                run = self._new(self.plans[self._next_plan])
                self._next_plan += 1
            else:
                return
            self._start(run)
            running += 1

    def _new(self, plan: Plan, *, parent: int | None = None, step: int = 0) -> TrialRun:
        number = len(self.runs)
        dt = 1.0 + 0.5 * ((number + 1) * 0.6180339887498949 % 1.0)  # distinct for each
        run = TrialRun(number, plan, dt, parent=parent, step=step)
        self.runs[number] = run
        return run

    def _start(self, run: TrialRun) -> None:
        run.status = TrialStatus.RUNNING
        run.started_at, run.finished_at = self.now, None
        self.call(Call("start", self.now, self.record(run)))
        duration = run.dt * RESOURCE if run.plan.silent else run.dt
        self._schedule(run, self.now + duration)

    def _schedule(self, run: TrialRun, when: float) -> None:
        self._order += 1
        heapq.heappush(self._events, (when, self._order, run.number))

    def _step(self, run: TrialRun) -> None:
        if run.plan.silent:
            run.value = value_of(FAMILY[run.plan.curve].loss(RESOURCE), self.mode)
            self._end(run, TrialStatus.SUCCEEDED)
            return
        report = self.report_of(run, run.step, self.now)
        decision = self.call(Call("report", self.now, self.record(run), report))
        if not isinstance(decision, Decision):
            self.violations.append(
                f"on_report answered {decision!r} for trial {run.number} at step {run.step}; "
                "expected a Decision"
            )
            decision = Decision.CONTINUE
        run.reports.append(report)
        run.decisions.append(decision)
        run.value = report.metrics[METRIC]
        run.step += 1
        if decision is Decision.STOP:
            self._end(run, TrialStatus.EARLY_STOPPED)
        elif decision is Decision.PAUSE:
            self._end(run, TrialStatus.PAUSED)
        elif run.step >= RESOURCE:
            self._end(run, TrialStatus.SUCCEEDED)
        else:
            self._schedule(run, self.now + run.dt)

    def _end(self, run: TrialRun, status: TrialStatus) -> None:
        run.status = status
        run.finished_at = self.now
        self.call(Call("end", self.now, self.record(run)))

    def _ask_actions(self) -> None:
        if len(self.runs) >= self.max_trials:  # as the driver says once its budget is spent
            self.call(Call("no_more", self.now, count=len(self.runs)))
        actions = self.call(Call("actions", self.now))
        if not isinstance(actions, list):
            self.violations.append(f"actions() returned {actions!r}; expected a list")
            return
        for action in actions:
            if isinstance(action, Resume):
                run = self.runs.get(action.number)
                if (
                    run is None
                    or run.status is not TrialStatus.PAUSED
                    or action.number in self._queue
                ):
                    state = "unknown" if run is None else run.status.value
                    if run is not None and action.number in self._queue:
                        state = "already resumed"
                    self.violations.append(
                        f"actions() asked to resume trial {action.number}, which is not "
                        f"paused ({state}) at t={self.now - START:.3f}"
                    )
                    continue
                run.resumes += 1
                self._queue.append(action.number)
            elif isinstance(action, Stop):
                run = self.runs.get(action.number)
                if run is None or run.status is not TrialStatus.PAUSED:
                    state = "unknown" if run is None else run.status.value
                    self.violations.append(
                        f"actions() asked to stop trial {action.number}, which is not "
                        f"paused ({state}) at t={self.now - START:.3f}"
                    )
                    continue
                self._end(run, TrialStatus.EARLY_STOPPED)
            elif isinstance(action, Branch):
                parent = self.runs.get(action.parent)
                if parent is None:
                    self.violations.append(
                        f"actions() asked to branch from trial {action.parent}, which does "
                        "not exist"
                    )
                    continue
                if len(self.runs) < self.max_trials:
                    branch = self._new(parent.plan, parent=parent.number, step=parent.step)
                    self._queue.append(branch.number)
            else:
                self.violations.append(
                    f"actions() returned {action!r}; expected Resume, Stop or Branch actions"
                )


# ---- feeding and comparing -----------------------------------------------------------------


def feed(assessor: Assessor, calls: Sequence[Call]) -> list[Any]:
    """Make ``calls`` on ``assessor`` in order; their answers."""
    return [call.send(assessor) for call in calls]


def replay(assessor: Assessor, history: list[Trial]) -> None:
    """Feed ``history`` to a fresh ``assessor`` the way a resumed driver does."""
    from hyperlab.experiment import replay_to_assessor

    replay_to_assessor(assessor, history)


def first_mismatch(calls: Sequence[Call], expected: Sequence[Any], got: Sequence[Any]) -> str:
    """The first call answered differently, described; empty if none."""
    for call, a, b in zip(calls, expected, got, strict=True):
        if a != b:
            return f"{call}: expected {a!r}, got {b!r}"
    return ""
