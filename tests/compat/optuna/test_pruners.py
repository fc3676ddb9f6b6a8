"""Optuna's pruners on hyperlab: each pruner's assessor decides exactly as Optuna's pruner.

The comparison drives one scripted sequence of trials through a real in-memory Optuna study
(``study.ask()``, ``trial.report``, ``trial.should_prune()``, ``study.tell``; trials that never
report added with ``create_trial``/``add_trial``) and, report by report, through the assessor
as the driver would (``on_start``, ``on_report``, ``on_end``), and checks every decision is the
same: random curves from several seeds (NaN values, ties, gaps between steps, a step reported
twice), up to three trials running at once, failures, both directions. Now and then the
assessor is replaced by a fresh one fed the history so far, as a resumed driver does, and the
run goes on with it. The rules are also tested alone: arguments, hand-computed decisions, and
``hyperlab.testing.AssessorContract``.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from hyperlab.assessors.base import Assessor, Decision, create_assessor
from hyperlab.compat.optuna import _pruners as pruners
from hyperlab.compat.optuna._rules import HyperbandRule
from hyperlab.errors import ConfigError, TrialError
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.testing import AssessorContract
from hyperlab.testing.assessors import RESOURCE, standard_plans
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from tests.assessors.cases import contract_cases

STUDY = "compared"
"""The Optuna study's name, given to ``HyperbandRule`` so both put a trial in one bracket."""

Spec = tuple[str, tuple[Any, ...], dict[str, Any]]
"""A pruner to build from either module: class name, positional and keyword arguments (a
``Spec`` among them is a wrapped pruner)."""

PRUNERS: dict[str, Spec] = {
    "median": ("MedianPruner", (), {}),
    "median-args": (
        "MedianPruner",
        (2, 2, 3),
        {"n_min_trials": 2},
    ),
    "percentile-25": ("PercentilePruner", (25.0,), {"n_startup_trials": 1}),
    "percentile-80": ("PercentilePruner", (80.0, 0, 1, 2), {}),
    "percentile-0": ("PercentilePruner", (0.0, 3), {"n_min_trials": 3}),
    "halving-auto": ("SuccessiveHalvingPruner", (), {}),
    "halving": ("SuccessiveHalvingPruner", (1, 2, 1), {}),
    "halving-bootstrap": ("SuccessiveHalvingPruner", (2, 3, 0, 2), {}),
    "hyperband-auto": ("HyperbandPruner", (), {}),
    "hyperband": ("HyperbandPruner", (1, 9, 2), {}),
    "hyperband-bootstrap": ("HyperbandPruner", (2, 30, 3, 1), {}),
    "threshold": ("ThresholdPruner", (0.2, 1.1), {}),
    "threshold-upper": (
        "ThresholdPruner",
        (),
        {"upper": 0.9, "n_warmup_steps": 2, "interval_steps": 2},
    ),
    "patient": ("PatientPruner", (None, 2), {}),
    "patient-median": (
        "PatientPruner",
        (("MedianPruner", (1,), {}), 1),
        {"min_delta": 0.05},
    ),
    "patient-halving": (
        "PatientPruner",
        (("SuccessiveHalvingPruner", (1, 2), {}), 1),
        {},
    ),
    "nop": ("NopPruner", (), {}),
}
"""Test id -> the pruner compared."""

SEEDS = (0, 1, 2)
DIRECTIONS = ("minimize", "maximize")


def build(module: Any, spec: Spec) -> Any:
    """The pruner ``spec`` describes, from ``module`` (Optuna's or ours)."""
    name, args, kwargs = spec
    args = tuple(build(module, a) if isinstance(a, tuple) else a for a in args)
    return getattr(module, name)(*args, **kwargs)


def make_assessor(spec: Spec, mode: Mode) -> Assessor | None:
    """Our pruner's assessor, as a study would create it (None: no assessor)."""
    path, args = build(pruners, spec).assessor()
    if path is None:
        return None
    json.dumps(args, allow_nan=False)  # plain JSON values, as the store keeps them
    if path.endswith(":HyperbandRule"):
        args = {**args, "study_name": STUDY}
    return create_assessor(path, mode=mode, metric="value", seed=0, args=args)


# ---- the scripted trials ---------------------------------------------------------------------


@dataclass
class Plan:
    """One trial: ``run`` reports ``values`` at ``steps`` then completes with ``final``;
    ``fail`` does the same then fails; ``silent`` completes without reporting."""

    kind: str
    steps: list[int]
    values: list[float]
    final: float


def make_plans(seed: int, n: int = 24) -> list[Plan]:
    """Random curves: a level, a decay and noise; some rounded (ties), some with NaN values,
    some reporting every few steps or from a later step, one step now and then twice."""
    rng = np.random.default_rng(seed)
    plans = []
    for _ in range(n):
        kind = str(rng.choice(["run"] * 8 + ["silent", "fail"]))
        length = int(rng.integers(2, 16))
        stride = int(rng.choice([1, 1, 1, 2, 3, 12]))
        start = int(rng.choice([0, 0, 0, 1, 2]))
        steps = [start + stride * k for k in range(length)]
        level, decay = rng.uniform(0.0, 1.0), rng.uniform(0.0, 1.0)
        values = level + decay * np.exp(-np.arange(length) / 4) + rng.normal(0.0, 0.05, length)
        if rng.random() < 0.3:
            values = np.round(values, 1)
        values[rng.random(length) < 0.05] = np.nan
        if rng.random() < 0.04:
            values[:] = np.nan
        if rng.random() < 0.15:  # a step reported twice: Optuna keeps the first value
            i = int(rng.integers(length))
            steps.insert(i + 1, steps[i])
            values = np.insert(values, i + 1, rng.uniform(0.0, 2.0))
        plans.append(Plan(kind, steps, [float(v) for v in values], float(level)))
    return plans


@dataclass
class Run:
    """A trial being compared: its Optuna trial and the record the driver would keep."""

    number: int
    plan: Plan
    optuna_trial: Any
    started_at: float
    reports: list[Report] = field(default_factory=list)
    status: TrialStatus = TrialStatus.RUNNING
    finished_at: float | None = None

    def record(self, *, stored: bool = False) -> Trial:
        return Trial(
            "hl-exp",
            self.number,
            {},
            self.status,
            started_at=self.started_at,
            finished_at=self.finished_at,
            reports=tuple(self.reports) if stored else (),
        )


class Comparison:
    """Drives the plans through an Optuna study and our assessor, checking each decision."""

    def __init__(self, optuna: ModuleType, spec: Spec, direction: str, seed: int) -> None:
        self.optuna = optuna
        self.spec = spec
        self.mode = Mode.MIN if direction == "minimize" else Mode.MAX
        self.study = optuna.create_study(
            study_name=STUDY, direction=direction, pruner=build(optuna.pruners, spec)
        )
        self.assessor = make_assessor(spec, self.mode)
        self.rng = np.random.default_rng([seed, 7])
        self.plans = make_plans(seed)
        self.concurrency = int(self.rng.integers(1, 4))
        self.runs: dict[int, Run] = {}
        self.running: list[Run] = []
        self.clock = 0.0
        self.decisions = 0
        self.pruned = 0
        self.replays = 0

    def tick(self) -> float:
        self.clock += 1.0
        return self.clock

    def run(self) -> Comparison:
        waiting = list(self.plans)
        while waiting or self.running:
            if self.rng.random() < 0.03 and self.assessor is not None:
                self.replay()
            room = bool(waiting) and len(self.running) < self.concurrency
            start = room and (not self.running or self.rng.random() < 0.5)
            if start:
                self.start(waiting.pop(0))
            else:
                self.advance(self.running[int(self.rng.integers(len(self.running)))])
        return self

    def start(self, plan: Plan) -> None:
        number = len(self.runs)
        now = self.tick()
        if plan.kind == "silent":
            frozen = self.optuna.trial.create_trial(
                value=plan.final, state=self.optuna.trial.TrialState.COMPLETE
            )
            self.study.add_trial(frozen)
            assert self.study.trials[-1].number == number
            run = Run(number, plan, None, now)
            self.runs[number] = run
            self.started(run)
            self.end(run, TrialStatus.SUCCEEDED)
            return
        trial = self.study.ask()
        assert trial.number == number
        run = Run(number, plan, trial, now)
        self.runs[number] = run
        self.running.append(run)
        self.started(run)

    def started(self, run: Run) -> None:
        if self.assessor is not None:
            self.assessor.on_start(run.record(), run.started_at)

    def advance(self, run: Run) -> None:
        plan, k = run.plan, len(run.reports)
        if k == len(plan.steps):
            if plan.kind == "fail":
                self.study.tell(run.optuna_trial, state=self.optuna.trial.TrialState.FAIL)
                self.end(run, TrialStatus.FAILED)
            else:
                self.study.tell(run.optuna_trial, plan.final)
                self.end(run, TrialStatus.SUCCEEDED)
            return
        step, value = plan.steps[k], plan.values[k]
        run.optuna_trial.report(value, step)
        expected = run.optuna_trial.should_prune()
        report = Report(step, {"value": value}, self.tick(), 1)
        run.reports.append(report)
        got = Decision.CONTINUE
        if self.assessor is not None:
            got = self.assessor.on_report(run.record(), report, report.time)
        self.decisions += 1
        assert got is (Decision.STOP if expected else Decision.CONTINUE), (
            f"{self.spec} {self.mode.value}: trial {run.number} at step {step} (value {value}, "
            f"report {k + 1}): Optuna's should_prune() says {expected}, the assessor {got}"
        )
        if expected:
            self.pruned += 1
            self.study.tell(run.optuna_trial, state=self.optuna.trial.TrialState.PRUNED)
            self.end(run, TrialStatus.EARLY_STOPPED)

    def end(self, run: Run, status: TrialStatus) -> None:
        run.status, run.finished_at = status, self.tick()
        if run in self.running:
            self.running.remove(run)
        if self.assessor is not None:
            self.assessor.on_end(run.record(), run.finished_at)

    def replay(self) -> None:
        """Go on with a fresh assessor fed the history, as a resumed driver feeds it (the
        running trials are adopted: they go on with the same attempt)."""
        fresh = make_assessor(self.spec, self.mode)
        Scheduling(fresh).replay([run.record(stored=True) for run in self.runs.values()])
        self.assessor = fresh
        self.replays += 1


@pytest.fixture(scope="module")
def optuna() -> ModuleType:
    module = pytest.importorskip("optuna", reason="Optuna itself is not installed")
    module.logging.set_verbosity(module.logging.ERROR)
    return module


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("name", sorted(PRUNERS))
def test_every_decision_is_optunas(optuna: ModuleType, name: str, direction: str) -> None:
    spec = PRUNERS[name]
    decisions = pruned = replays = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PatientPruner is experimental; steps reported twice
        for seed in SEEDS:
            run = Comparison(optuna, spec, direction, seed).run()
            decisions += run.decisions
            pruned += run.pruned
            replays += run.replays
    assert decisions > 150
    if name != "nop":  # the comparison means something only if both prune now and then
        assert 0 < pruned < decisions, f"{name}: {pruned} of {decisions} reports pruned"
        assert replays > 0


# ---- the rules alone -------------------------------------------------------------------------


def feed(assessor: Assessor, number: int, values: list[float], start: int = 0) -> list[str]:
    """Report ``values`` at steps ``start, start + 1...`` of a new trial; the decisions, as
    letters (``c`` continue, ``S`` stop), up to the first STOP."""
    trial = Trial("exp", number, {}, TrialStatus.RUNNING)
    assessor.on_start(trial, 0.0)
    out = []
    for i, value in enumerate(values):
        decision = assessor.on_report(trial, Report(start + i, {"value": value}, 0.0), 0.0)
        out.append("S" if decision is Decision.STOP else "c")
        if decision is Decision.STOP:
            break
    return out


def complete(assessor: Assessor, number: int, values: list[float]) -> None:
    """A trial that reports ``values`` at steps 0, 1... and succeeds."""
    feed(assessor, number, values)
    assessor.on_end(Trial("exp", number, {}, TrialStatus.SUCCEEDED), 0.0)


def rule(pruner: pruners.BasePruner, mode: str = "min") -> Assessor:
    path, args = pruner.assessor()
    assert path is not None
    return create_assessor(path, mode=mode, metric="value", seed=0, args=args)


def test_median_by_hand() -> None:
    median = rule(pruners.MedianPruner(n_startup_trials=3))
    assert feed(median, 0, [5.0, 5.0]) == ["c", "c"]  # nothing completed yet
    complete(median, 1, [1.0, 0.8, 0.6])
    complete(median, 2, [2.0, 1.5, 1.0])
    assert feed(median, 3, [9.0]) == ["c"]  # two completed: below n_startup_trials
    complete(median, 4, [3.0, 2.0, 1.5])
    # medians of the completed trials: 2.0 at step 0, 1.5 at step 1, 1.0 at step 2
    assert feed(median, 5, [2.5]) == ["S"]  # 2.5 > 2.0
    assert feed(median, 6, [1.5, 1.8, 1.2]) == ["c", "c", "S"]  # best 1.5 > 1.0 at step 2
    assert feed(median, 7, [2.0, 1.5, 1.0]) == ["c", "c", "c"]  # equal to the median: kept
    assert feed(median, 8, [math.nan]) == ["S"]  # nothing but NaN
    assert feed(median, 9, [0.5, 0.5, 0.5, 0.5, 9.0]) == ["c"] * 5  # no one reached step 3


def test_percentile_in_max_mode_keeps_the_top_share() -> None:
    top = rule(pruners.PercentilePruner(25.0, n_startup_trials=1), "max")
    for number, value in enumerate([1.0, 2.0, 3.0, 4.0, 5.0]):
        complete(top, number, [value])
    # the 75th percentile of 1..5 (linear) is 4.0: a best value below it is pruned
    assert feed(top, 10, [3.9]) == ["S"]
    assert feed(top, 11, [4.0]) == ["c"]


def test_warmup_and_interval_choose_the_judged_steps() -> None:
    threshold = rule(
        pruners.ThresholdPruner(lower=0.0, upper=1.0, n_warmup_steps=1, interval_steps=2)
    )
    assert feed(threshold, 0, [5.0, 5.0]) == ["c", "S"]  # step 0 is warm-up; step 1 judged
    assert feed(threshold, 1, [0.5, 0.5, 5.0, 5.0]) == ["c", "c", "c", "S"]  # 2 is not judged
    # the first report in an interval is judged, even off the interval's first step: step 2
    # (in the interval of steps 1-2), then step 3
    assert feed(threshold, 2, [0.5, 5.0], start=2) == ["c", "S"]
    assert feed(threshold, 3, [math.nan]) == ["c"]  # warm-up
    assert feed(threshold, 4, [0.5, math.nan]) == ["c", "S"]  # NaN at a judged step


def test_successive_halving_by_hand() -> None:
    halving = rule(pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=2))
    # rung 0 at step 1, rung 1 at step 2, rung 2 at step 4
    assert feed(halving, 0, [9.0, 0.5]) == ["c", "c"]  # alone at rung 0: leads it
    assert feed(halving, 1, [9.0, 0.7]) == ["c", "S"]  # [0.5, 0.7]: the best 1 goes on
    assert feed(halving, 2, [9.0, 0.4, 0.3]) == ["c", "c", "c"]  # leads rungs 0 and 1
    # one report reaching rungs 0 and 1 at once is judged at both with its value
    assert feed(halving, 3, [0.25], start=2) == ["c"]  # best 2 of 4 at rung 0, best at 1
    assert feed(halving, 4, [0.6], start=4) == ["S"]  # rung 0: 5 values, best 2: 0.25, 0.4


def test_successive_halving_auto_waits_for_a_completed_trial() -> None:
    halving = rule(pruners.SuccessiveHalvingPruner())
    assert feed(halving, 0, [9.0] * 5) == ["c"] * 5  # min_resource unknown: nothing recorded
    complete(halving, 1, [1.0] * 300)  # last step 299: min_resource = 299 // 100 = 2
    assert feed(halving, 2, [1.0, 1.0, 1.0]) == ["c", "c", "c"]  # leads rung 0 (step 2)
    assert feed(halving, 3, [1.0, 1.0, 2.0]) == ["c", "c", "S"]


def test_patient_asks_the_wrapped_pruner_only_when_patience_ran_out() -> None:
    patient = rule(pruners.PatientPruner(None, patience=1, min_delta=0.1))
    # pruned once the best of the last 2 values is worse than the best before by over 0.1
    assert feed(patient, 0, [1.0, 1.15, 1.2]) == ["c", "c", "S"]  # 1.15 > 1.0 + 0.1
    assert feed(patient, 1, [1.0, 1.05, 1.2, 0.9, 1.3, 1.4]) == ["c"] * 5 + ["S"]
    wrapped = rule(pruners.PatientPruner(pruners.ThresholdPruner(upper=0.9), patience=0))
    assert feed(wrapped, 2, [1.0, 1.0, 1.1]) == ["c", "c", "S"]  # worse, and above 0.9
    assert feed(wrapped, 3, [0.5, 0.6, 0.7]) == ["c", "c", "c"]  # worse, within bounds


def test_hyperband_brackets_follow_optunas_hash() -> None:
    hyperband = rule(pruners.HyperbandPruner(min_resource=1, max_resource=27))
    assert isinstance(hyperband, HyperbandRule)
    feed(hyperband, 0, [1.0])  # the first report sets the brackets up
    assert hyperband.budgets == [27, 12, 6, 4]  # ceil(4 * 3**s / (s + 1)), s = 3 .. 0
    seen = {hyperband.bracket_of(Trial("exp", n, {})) for n in range(200)}
    auto = rule(pruners.HyperbandPruner())
    assert isinstance(auto, HyperbandRule)
    feed(auto, 0, [1.0])
    assert auto.budgets == []  # max_resource="auto": set up once a trial completed
    complete(auto, 1, [1.0] * 8)  # last step 7: max_resource 8, floor(log3(8)) + 1 brackets
    feed(auto, 2, [1.0])
    assert (auto.max_resource, auto.budgets) == (8, [3, 2])
    assert seen == {0, 1, 2, 3}
    named = rule(pruners.HyperbandPruner(min_resource=1, max_resource=27))
    assert isinstance(named, HyperbandRule)
    named.study_name = "exp"
    feed(named, 0, [1.0])
    for n in range(50):  # the study's name, when given, stands for the experiment id
        trial = Trial("another", n, {})
        assert named.bracket_of(trial) == hyperband.bracket_of(Trial("exp", n, {}))


def test_a_stopped_trial_stays_stopped_and_an_ended_one_is_not_judged() -> None:
    threshold = rule(pruners.ThresholdPruner(upper=1.0))
    trial = Trial("exp", 0, {}, TrialStatus.RUNNING)
    threshold.on_start(trial, 0.0)
    assert threshold.on_report(trial, Report(0, {"value": 2.0}, 0.0), 0.0) is Decision.STOP
    assert threshold.on_report(trial, Report(1, {"value": 0.5}, 0.0), 0.0) is Decision.STOP
    threshold.on_end(Trial("exp", 0, {}, TrialStatus.EARLY_STOPPED), 0.0)
    assert threshold.on_report(trial, Report(2, {"value": 2.0}, 0.0), 0.0) is Decision.CONTINUE


def test_a_stopped_trial_that_goes_on_reporting_keeps_its_values_for_the_others() -> None:
    # an Optuna objective that never asks should_prune() reports every step and completes:
    # Optuna's study keeps those values, and judges later trials against them
    median = rule(pruners.MedianPruner(n_startup_trials=1))
    feed(median, 0, [1.0, 1.0])
    median.on_end(Trial("exp", 0, {}, TrialStatus.SUCCEEDED), 0.0)
    trial = Trial("exp", 1, {}, TrialStatus.RUNNING)
    median.on_start(trial, 0.0)
    for step, value in enumerate([5.0, 9.0]):
        assert median.on_report(trial, Report(step, {"value": value}, 0.0), 0.0) is Decision.STOP
    assert median.trials.values[1] == {0: 5.0, 1: 9.0}
    median.on_end(Trial("exp", 1, {}, TrialStatus.SUCCEEDED), 0.0)
    # step 1's median is that of 1.0 and 9.0 (not of 1.0 alone): a best of 3.0 passes it
    assert feed(median, 2, [3.0, 4.0]) == ["c", "c"]


def test_reports_it_cannot_judge_raise_trial_error() -> None:
    median = rule(pruners.MedianPruner())
    trial = Trial("exp", 0, {}, TrialStatus.RUNNING)
    with pytest.raises(TrialError, match="lacks"):
        median.on_report(trial, Report(0, {"loss": 1.0}, 0.0), 0.0)
    with pytest.raises(TrialError, match="step=-1"):
        median.on_report(trial, Report(-1, {"value": 1.0}, 0.0), 0.0)
    with pytest.raises(TrialError, match="not a number"):
        median.on_report(trial, Report(0, {"value": "high"}, 0.0), 0.0)


# ---- the pruners' arguments --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: pruners.PercentilePruner(101.0), ValueError, "percentile=101.0"),
        (lambda: pruners.PercentilePruner(-1), ValueError, "0 <= percentile <= 100"),
        (lambda: pruners.MedianPruner(n_startup_trials=-1), ValueError, "n_startup_trials=-1"),
        (lambda: pruners.MedianPruner(n_warmup_steps=-2), ValueError, "n_warmup_steps=-2"),
        (lambda: pruners.MedianPruner(interval_steps=0), ValueError, "interval_steps=0"),
        (lambda: pruners.MedianPruner(n_min_trials=0), ValueError, "n_min_trials=0"),
        (lambda: pruners.SuccessiveHalvingPruner(0), ValueError, "min_resource=0"),
        (lambda: pruners.SuccessiveHalvingPruner("x"), ValueError, "min_resource='x'"),
        (lambda: pruners.SuccessiveHalvingPruner(2.5), ValueError, "min_resource=2.5"),
        (lambda: pruners.SuccessiveHalvingPruner(1, 1), ValueError, "reduction_factor=1"),
        (
            lambda: pruners.SuccessiveHalvingPruner(1, 2, -1),
            ValueError,
            "min_early_stopping_rate=-1",
        ),
        (lambda: pruners.SuccessiveHalvingPruner(1, 2, 0, -1), ValueError, "bootstrap_count=-1"),
        (
            lambda: pruners.SuccessiveHalvingPruner(bootstrap_count=2),
            ValueError,
            "min_resource='auto'",
        ),
        (lambda: pruners.HyperbandPruner(0), ValueError, "min_resource=0"),
        (lambda: pruners.HyperbandPruner(1, "x"), ValueError, "max_resource='x'"),
        (lambda: pruners.HyperbandPruner(1, 9, 1), ValueError, "reduction_factor=1"),
        (lambda: pruners.HyperbandPruner(bootstrap_count=1), ValueError, "max_resource='auto'"),
        (lambda: pruners.ThresholdPruner(), TypeError, "lower or upper"),
        (lambda: pruners.ThresholdPruner(lower="low"), TypeError, "lower='low'"),
        (lambda: pruners.ThresholdPruner(2.0, 1.0), ValueError, "lower=2.0, upper=1.0"),
        (lambda: pruners.ThresholdPruner(0.0, n_warmup_steps=-1), ValueError, "n_warmup_steps"),
        (lambda: pruners.PatientPruner(None, -1), ValueError, "patience=-1"),
        (lambda: pruners.PatientPruner(None, 1, -0.5), ValueError, "min_delta=-0.5"),
        (lambda: pruners.PatientPruner(object(), 1), TypeError, "builtins.object"),
        (lambda: pruners.WilcoxonPruner(), NotImplementedError, "MedianPruner or Percentile"),
    ],
)
def test_bad_arguments_are_refused_naming_them(make: Any, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        make()
    assert message in str(raised.value)


def test_each_pruner_names_an_assessor_with_json_arguments() -> None:
    for spec in PRUNERS.values():
        path, args = build(pruners, spec).assessor()
        assert (path is None) == (spec[0] == "NopPruner")
        assert json.loads(json.dumps(args, allow_nan=False)) == args
    assert pruners.PatientPruner(pruners.NopPruner(), 2).assessor() == (None, {})
    _, args = pruners.ThresholdPruner(lower=-math.inf, upper=1).assessor()
    assert args["lower"] is None and args["upper"] == 1.0


def test_a_pruner_of_ones_own_is_refused_saying_what_to_do() -> None:
    class Mine(pruners.MedianPruner):
        def prune(self, study: Any, trial: Any) -> bool:
            return False

    with pytest.raises(NotImplementedError, match=r"Mine: .*prune\(study, trial\).*Assessor"):
        Mine().assessor()
    with pytest.raises(NotImplementedError, match="Empty"):
        type("Empty", (pruners.BasePruner,), {})().assessor()


def test_the_rules_check_their_arguments_as_assessor_args() -> None:
    path = "hyperlab.compat.optuna._rules:PercentileRule"
    with pytest.raises(ConfigError, match="percentile=150"):
        create_assessor(path, mode="min", metric="value", seed=0, args={"percentile": 150})
    with pytest.raises(ConfigError, match="resource_attr"):
        create_assessor(
            path, mode="min", metric="value", seed=0, args={"percentile": 50, "resource_attr": "e"}
        )
    patient = "hyperlab.compat.optuna._rules:PatientRule"
    with pytest.raises(ConfigError, match="wrapped must name a rule"):
        create_assessor(
            patient,
            mode="min",
            metric="value",
            seed=0,
            args={"patience": 1, "wrapped": {"assessor": "median"}},
        )


# ---- the assessor contract -----------------------------------------------------------------------

RULES = "hyperlab.compat.optuna._rules"
CONTRACT: dict[str, tuple[str, dict[str, Any]]] = {
    "percentile": (f"{RULES}:PercentileRule", {"percentile": 50.0}),
    # with "auto", trials that report before one completed are recorded at the rungs late,
    # with their value at a later step, which may then stop the best curve (as in Optuna)
    "halving": (f"{RULES}:SuccessiveHalvingRule", {"min_resource": 1}),
    "hyperband": (f"{RULES}:HyperbandRule", {"max_resource": RESOURCE}),
    "threshold": (
        f"{RULES}:ThresholdRule",
        {"lower": 0.05, "upper": 0.95, "n_warmup_steps": 4},
    ),
}
"""Test id -> (assessor, assessor_args) fitting the contract's curves (steps 0 .. 8). Patience
is left out: the contract's curves never stall."""


class TestRulesKeepTheAssessorContract(contract_cases(CONTRACT), AssessorContract):
    @pytest.fixture
    def unjudged(self, case: tuple[str, dict[str, Any]]) -> frozenset[int]:
        """Hyperband's trials in brackets whose first rung lies beyond the last step."""
        if not case[0].endswith(":HyperbandRule"):
            return frozenset()
        hyperband = create_assessor(case[0], mode="min", metric="value", seed=0, args=case[1])
        assert isinstance(hyperband, HyperbandRule)
        feed(hyperband, 0, [1.0])  # sets the brackets up
        count = len(standard_plans(0))
        return frozenset(
            n
            for n in range(count)
            if 3 ** hyperband.bracket_of(Trial("contract", n, {})) > RESOURCE - 1
        )

    def test_resource_attr_counts_the_resource(
        self, assessor_name: str, assessor_args: dict[str, Any]
    ) -> None:
        """Replaced: Optuna's pruners judge the reported step, so the rules refuse
        ``resource_attr`` rather than count it."""
        args = {**assessor_args, "resource_attr": "epoch"}
        with pytest.raises(ConfigError, match="does not accept 'resource_attr'"):
            create_assessor(assessor_name, mode="min", metric="value", seed=0, args=args)

    def test_a_report_without_the_judged_metric_raises_trial_error(  # without resource_attr
        self, run: Any, make_assessor: Any, mode: Mode, label: str
    ) -> None:
        assessor = run.assessor
        self._expect_trial_error(run, assessor, {"other": 0.5}, 0, label, "lacks the metric")
        ambiguous = make_assessor(mode, metric=None)
        self._expect_trial_error(run, ambiguous, {"a": 0.5, "b": 0.2}, 0, label, "has two metrics")
