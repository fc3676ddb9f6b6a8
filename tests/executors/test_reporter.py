"""Ray Tune's function API: ``f(params, reporter)`` as its ``StatusReporter`` behaves."""

from __future__ import annotations

import time

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.assessors.base import Assessor, Decision
from hyperlab.trial import Report, Trial

EXECUTORS = ["inprocess", "threads"]


class StopAtTwo(Assessor):
    """Stops every trial at its step 2."""

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        return Decision.STOP if report.step >= 2 else Decision.CONTINUE


def run(objective, executor: str, **options):
    options.setdefault("metric", "loss")
    return hyperlab.run(
        objective,
        {"x": hyperlab.choice(1.0)},
        executor=executor,
        max_trials=1,
        storage=":memory:",
        progress=False,
        **options,
    ).trials[0]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_ray_code_catching_stop_iteration_ends_early_stopped(executor):
    caught: list[BaseException] = []

    def objective(params, reporter):
        for i in range(200):
            try:
                reporter(loss=1.0 / (i + 1))
            except StopIteration as exc:  # how Ray Tune code learns it must stop
                caught.append(exc)
                return
            time.sleep(0.005)
        raise AssertionError("the trial was never told to stop")

    trial = run(objective, executor, assessor=StopAtTwo)
    assert trial.status is TrialStatus.EARLY_STOPPED, trial.error
    (exc,) = caught
    assert isinstance(exc, hyperlab.TrialStopped)
    assert trial.value == pytest.approx(1.0 / (trial.reports[-1].step + 1))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_ray_code_that_lets_the_stop_propagate_ends_early_stopped(executor):
    def objective(params, reporter):
        for i in range(200):
            reporter(loss=float(i))
            time.sleep(0.005)

    trial = run(objective, executor, assessor=StopAtTwo)
    assert trial.status is TrialStatus.EARLY_STOPPED, trial.error


@pytest.mark.parametrize("executor", EXECUTORS)
def test_every_report_carries_the_time_of_its_iteration(executor):
    def objective(params, reporter):
        for i in range(3):
            time.sleep(0.05)
            reporter(loss=float(i))
        reporter(loss=9.0, time_this_iter_s=123.0)  # given: kept as it is
        reporter({"loss": 10.0, "time_this_iter_s": 7.0})

    trial = run(objective, executor)
    assert trial.status is TrialStatus.SUCCEEDED, trial.error
    times = [r.metrics["time_this_iter_s"] for r in trial.reports]
    assert all(0.04 <= t < 1.0 for t in times[:3]), times
    assert times[3:] == [123.0, 7.0]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_reporter_logdir_is_the_trial_folder(executor):
    seen = {}

    def objective(params, reporter):
        seen["logdir"] = reporter.logdir
        seen["trial_dir"] = hyperlab.trial_dir()
        return 1.0

    trial = run(objective, executor)
    assert trial.status is TrialStatus.SUCCEEDED, trial.error
    assert isinstance(seen["logdir"], str) and seen["logdir"] == str(seen["trial_dir"])


def test_a_bare_stop_iteration_ends_a_ray_function_without_error():
    def objective(params, reporter):
        reporter(loss=0.5)
        raise StopIteration  # Ray's runner ends the function quietly

    trial = run(objective, "inprocess")
    assert trial.status is TrialStatus.SUCCEEDED and trial.value == 0.5, trial.error


def test_a_stop_inside_a_ray_style_generator_still_stops_it():
    def objective(params, reporter):  # PEP 479 turns a StopIteration raised in it into an error
        for i in range(200):
            reporter(loss=float(i))
            yield {"loss": float(i)}

    trial = run(objective, "inprocess", assessor=StopAtTwo)
    assert trial.status is TrialStatus.EARLY_STOPPED, trial.error
