"""The median stopping rule, fed by hand and under the driver in simulated time."""

from __future__ import annotations

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.assessors import Decision, MedianAssessor, create_assessor
from hyperlab.trial import Mode, Report, Trial
from tests.assessors.sim import Curves
from tests.simulation import simulate

A = [1.0, 0.8, 0.6, 0.4]  # running averages 1.0, 0.9, 0.8, 0.7
B = [0.9, 0.7, 0.5, 0.3]  # 0.9, 0.8, 0.7, 0.6
C = [2.0, 1.0, 0.9, 0.8]  # 2.0, 1.5, 1.33, 1.175
FLAT = [0.95] * 6


def trial(number: int, status: TrialStatus = TrialStatus.RUNNING) -> Trial:
    return Trial("median", number, {"x": number}, status)


def median(mode: Mode = Mode.MIN, **args) -> MedianAssessor:
    assessor = create_assessor("median", mode=mode, metric="loss", seed=0, args=args)
    assert isinstance(assessor, MedianAssessor)
    return assessor


def complete(assessor: MedianAssessor, number: int, losses: list[float], mode: Mode) -> None:
    """Trial ``number`` reports ``losses`` and succeeds."""
    assessor.on_start(trial(number), 0.0)
    for step, loss in enumerate(losses):
        decision = assessor.on_report(trial(number), report(step, loss, mode), 0.0)
        assert decision is Decision.CONTINUE
    assessor.on_end(trial(number, TrialStatus.SUCCEEDED), 0.0)


def report(step: int, loss: float, mode: Mode) -> Report:
    return Report(step, {"loss": loss if mode is Mode.MIN else -loss}, 0.0)


def decisions(assessor: MedianAssessor, number: int, losses: list[float], mode: Mode) -> list:
    """What the assessor answers to trial ``number`` reporting ``losses``, until it stops."""
    assessor.on_start(trial(number), 0.0)
    answers = []
    for step, loss in enumerate(losses):
        answers.append(assessor.on_report(trial(number), report(step, loss, mode), 0.0))
        if answers[-1] is Decision.STOP:
            break
    return answers


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_stops_when_the_best_so_far_is_worse_than_the_median_running_average(mode):
    assessor = median(mode)
    for number, losses in enumerate([C, A, B]):  # C first: nothing to stop it
        complete(assessor, number, losses, mode)
    # resource 1: median of 0.9, 1.0, 2.0 is 1.0 >= 0.95; resource 2: median 0.9 < 0.95
    assert decisions(assessor, 3, FLAT, mode) == [Decision.CONTINUE, Decision.STOP]


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_start_step_delays_the_first_judgement(mode):
    assessor = median(mode, start_step=3)
    for number, losses in enumerate([C, A, B]):  # C first: nothing to stop it
        complete(assessor, number, losses, mode)
    # resources 1 and 2 are not judged; at 3 the median is 0.8 < 0.95
    assert decisions(assessor, 3, FLAT, mode) == [Decision.CONTINUE] * 2 + [Decision.STOP]


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_by_default_the_first_report_is_not_judged(mode):
    # a slow starter: far worse than every completed trial at resource 1, best from 2 on
    slow = [5.0, 0.1, 0.1, 0.1]
    assessor = median(mode)
    for number, losses in enumerate([C, A, B]):
        complete(assessor, number, losses, mode)
    assert decisions(assessor, 3, slow, mode) == [Decision.CONTINUE] * 4
    assessor = median(mode, start_step=0)  # NNI's Medianstop: judged from the first
    for number, losses in enumerate([C, A, B]):
        complete(assessor, number, losses, mode)
    assert decisions(assessor, 3, slow, mode) == [Decision.STOP]


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_with_an_even_count_the_more_lenient_middle_value_is_the_median(mode):
    assessor = median(mode)
    complete(assessor, 0, A, mode)
    complete(assessor, 1, B, mode)
    # resource 1: 0.9 and 1.0, the lenient one is 1.0; resource 2: 0.8 and 0.9 -> 0.9 < 0.95
    assert decisions(assessor, 2, FLAT, mode) == [Decision.CONTINUE, Decision.STOP]


def test_the_best_value_so_far_is_judged_not_the_last():
    assessor = median()
    complete(assessor, 0, A, Mode.MIN)
    # 0.5 at resource 1 is the best so far: later worse values are not stopped
    assert decisions(assessor, 1, [0.5, 2.0, 2.0, 2.0], Mode.MIN) == [Decision.CONTINUE] * 4


def test_only_succeeded_trials_count_and_only_as_far_as_they_reported():
    assessor = median(start_step=0)
    assessor.on_start(trial(0), 0.0)  # running: does not count
    for step, loss in enumerate(A):
        assessor.on_report(trial(0), report(step, loss, Mode.MIN), 0.0)
    for number, status in [(1, TrialStatus.EARLY_STOPPED), (2, TrialStatus.FAILED)]:
        assessor.on_start(trial(number), 0.0)
        assessor.on_report(trial(number), report(0, 0.1, Mode.MIN), 0.0)
        assessor.on_end(trial(number, status), 0.0)
    assert decisions(assessor, 3, [5.0, 5.0], Mode.MIN) == [Decision.CONTINUE] * 2
    complete(assessor, 4, [1.0, 1.0], Mode.MIN)  # two reports: resources 1 and 2
    assert decisions(assessor, 5, [1.5, 1.5, 1.5], Mode.MIN) == [Decision.STOP]
    assessor.on_start(trial(6), 0.0)
    late = assessor.on_report(trial(6), Report(2, {"loss": 9.0}, 0.0), 0.0)  # resource 3
    assert late is Decision.CONTINUE  # no completed trial got that far


def test_under_the_driver_the_bad_curves_stop_at_the_step_the_rule_says(tmp_path):
    base = [0.5, 0.4, 0.45, 0.9, 0.3, 1.2]  # trials 3 and 5 are bad

    def loss(number: int, step: int) -> float:
        return base[number] + 1 / (step + 1)

    sim = simulate(
        Curves(loss, epochs=6),
        tmp_path,
        assessor="median",
        assessor_args={"start_step": 2},
        metric="loss",
        max_trials=6,
    )
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    # at resource 2 the completed trials' running averages are base + 0.75; the median of
    # 1.25, 1.15, 1.2 (and 1.05 for trial 5) is 1.2; trial 3's best is 1.4, trial 5's 1.7
    assert sim.executor.stop_requests == [3, 5]
    for t in trials:
        if t.number in (3, 5):
            assert t.status is TrialStatus.EARLY_STOPPED
            assert [r.step for r in t.reports] == [0, 1]
            assert t.value == pytest.approx(base[t.number] + 0.5)  # the tuner sees the last
        else:
            assert t.status is TrialStatus.SUCCEEDED
            assert len(t.reports) == 6
    # one trial at a time, a report a second: trial 3 runs from 18 s, trial 5 from 26 s
    assert sim.t(trials[3].finished_at) == pytest.approx(20.0)
    assert sim.t(trials[5].finished_at) == pytest.approx(28.0)
