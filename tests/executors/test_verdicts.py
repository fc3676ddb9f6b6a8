"""A running trial asks the driver whether it should stop (``hyperlab.should_stop``, Optuna's
``trial.should_prune()``), and a trial can stop itself early (Optuna's ``TrialPruned``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import hyperlab
from hyperlab.assessors import Assessor, Decision
from hyperlab.errors import TrialStopped
from hyperlab.reporting.context import current
from hyperlab.trial import Report, Trial, TrialStatus

EXECUTORS = ["inprocess", "threads", "processes"]
STEPS = 6


class StopOddAtTwo(Assessor):
    """Stops every odd-numbered trial on its report of step 2."""

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        if trial.number % 2 and report.step == 2:
            return Decision.STOP
        return Decision.CONTINUE


def asks_after_each_report(params: dict) -> float:
    for step in range(STEPS):
        hyperlab.report(loss=params["x"] + step)
        if hyperlab.should_stop():
            raise TrialStopped("pruned")
    return params["x"]


def run(objective, executor: str, **options) -> hyperlab.Result:
    return hyperlab.run(
        objective,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        executor=executor,
        storage=":memory:",
        progress=False,
        **{"max_trials": 4, **options},
    )


@pytest.mark.parametrize("executor", EXECUTORS)
def test_should_stop_answers_on_the_report_just_sent(executor: str) -> None:
    result = run(asks_after_each_report, executor, assessor=StopOddAtTwo, concurrency=2)
    for trial in result.trials:
        steps = [r.step for r in trial.reports]
        if trial.number % 2:
            # the verdict on step 2 reached the trial before it reported step 3
            assert trial.status is TrialStatus.EARLY_STOPPED, trial.error
            assert steps == [0, 1, 2]
            assert trial.value == pytest.approx(trial.params["x"] + 2)
        else:
            assert trial.status is TrialStatus.SUCCEEDED, trial.error
            assert steps == list(range(STEPS))


def test_should_stop_is_false_without_an_assessor() -> None:
    result = run(asks_after_each_report, "threads")
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)


def prunes_itself(params: dict) -> float:
    hyperlab.report(loss=params["x"])
    if params["x"] > 0.5:
        current().request("early_stop")
        raise TrialStopped("pruned by its own rule")
    return params["x"]


def stops_itself(params: dict) -> float:
    hyperlab.report(loss=params["x"])
    if params["x"] > 0.5:
        raise TrialStopped("stopped by its own code")
    return params["x"]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_trial_that_stops_itself_early_ends_early_stopped(executor: str) -> None:
    pruned = run(prunes_itself, executor, seed=3, max_trials=6)
    cancelled = run(stops_itself, executor, seed=3, max_trials=6)
    high = [t.number for t in pruned.trials if t.params["x"] > 0.5]
    assert high, "the seed gives some x above 0.5"
    for early, plain in zip(pruned.trials, cancelled.trials, strict=True):
        if early.number in high:
            assert early.status is TrialStatus.EARLY_STOPPED
            assert early.value == pytest.approx(early.params["x"])  # its last report
            assert plain.status is TrialStatus.USER_CANCELED  # a bare TrialStopped
        else:
            assert early.status is plain.status is TrialStatus.SUCCEEDED


def test_a_command_trial_asks_for_its_verdict_through_its_channel(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import sys, hyperlab\n"
        f"for step in range({STEPS}):\n"
        "    hyperlab.report(loss=hyperlab.get_params()['x'] + step)\n"
        "    if hyperlab.should_stop():\n"
        "        sys.exit(0)\n"
    )
    result = run(
        hyperlab.CommandTrial(f"{sys.executable} {script}"),
        "command",
        assessor=StopOddAtTwo,
        concurrency=2,
    )
    for trial in result.trials:
        steps = [r.step for r in trial.reports]
        assert steps == ([0, 1, 2] if trial.number % 2 else list(range(STEPS))), trial.error
        expected = TrialStatus.EARLY_STOPPED if trial.number % 2 else TrialStatus.SUCCEEDED
        assert trial.status is expected, trial.error


def test_outside_the_driver_should_stop_is_the_local_flag() -> None:
    ctx = hyperlab.reporting.TrialContext(0, "t", {}, None, None, lambda step, metrics: None)
    assert ctx.should_stop() is False
    ctx.request_stop()
    assert ctx.should_stop() is True


def reports_whatever_it_is_told(params: dict) -> float:
    """Reports every step without enforcing a stop (Optuna's ``trial.report``), noting at which
    step ``should_stop`` first said yes."""
    ctx = current()
    told = None
    for step in range(STEPS):
        ctx.report(None, step, {"loss": params["x"] + step}, enforce=False)
        if told is None and hyperlab.should_stop():
            told = step
    if told is not None:
        assert ctx.stop_requested and hyperlab.should_stop()  # it stays told
    return params["x"] + (-1 if told is None else told) * 10


@pytest.mark.parametrize("executor", EXECUTORS)
def test_an_unenforced_report_is_sent_after_the_stop_and_the_trial_ends_as_it_returns(
    executor: str,
) -> None:
    result = run(reports_whatever_it_is_told, executor, assessor=StopOddAtTwo, concurrency=2)
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert [r.step for r in trial.reports] == list(range(STEPS))
        told = 2 if trial.number % 2 else -1  # the verdict on step 2 reached it at step 2
        assert trial.value == pytest.approx(trial.params["x"] + told * 10)
