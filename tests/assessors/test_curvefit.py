"""Learning-curve extrapolation: the curve model, the stopping rule in both modes, and the
assessor under the driver in simulated time."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.assessors import CurveFittingAssessor, Decision, _curvefit, create_assessor
from hyperlab.assessors._curvefit import predict_final
from hyperlab.trial import Mode, Report, Trial
from tests.assessors.sim import Curves
from tests.simulation import simulate

EPOCHS = 20


def trial(number: int, status: TrialStatus = TrialStatus.RUNNING, value=None) -> Trial:
    return Trial("curvefit", number, {"x": number}, status, value=value)


def curvefit(mode: Mode, **args) -> CurveFittingAssessor:
    args = {"epoch_num": EPOCHS, **args}
    assessor = create_assessor("curvefit", mode=mode, metric="acc", seed=0, args=args)
    assert isinstance(assessor, CurveFittingAssessor)
    return assessor


def rising(final: float, tau: float = 4.0):
    """An accuracy-like curve rising to ``final``."""
    return lambda step: final * (1 - math.exp(-(step + 1) / tau))


def feed(assessor: CurveFittingAssessor, number: int, curve, steps: int = EPOCHS, noise=0.0):
    """Trial ``number`` reports ``curve(step)``; the answers until a STOP; it succeeds if it
    was never stopped."""
    rng = np.random.default_rng(number)
    assessor.on_start(trial(number), 0.0)
    answers = []
    value = None
    for step in range(steps):
        value = curve(step) + rng.normal(0.0, noise)
        answers.append(assessor.on_report(trial(number), Report(step, {"acc": value}, 0.0), 0.0))
        if answers[-1] is Decision.STOP:
            assessor.on_end(trial(number, TrialStatus.EARLY_STOPPED, value), 0.0)
            return answers
    assessor.on_end(trial(number, TrialStatus.SUCCEEDED, value), 0.0)
    return answers


# ---- the curve model ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "curve",
    [
        lambda r: 0.9 - 0.6 * math.exp(-r / 5.0),  # exponential
        lambda r: 0.95 - 0.8 * r**-0.7,  # power law
        lambda r: 0.1 + 1.0 / (1.0 + 0.3 * r),  # hyperbolic loss
        lambda r: 0.4 + 0.1 * math.log(r),  # logarithmic
    ],
    ids=["exp", "pow", "hyp", "log"],
)
def test_the_model_extrapolates_each_family_from_the_first_third(curve):
    rs = np.arange(1, 8)  # 7 of 20 epochs
    predicted = predict_final(tuple(rs / EPOCHS), tuple(curve(r) for r in rs))
    assert predicted == pytest.approx(curve(EPOCHS), abs=0.02)


def test_the_model_is_robust_to_noise_and_flat_curves():
    rng = np.random.default_rng(0)
    rs = np.arange(1, 11)
    noisy = 0.8 * (1 - np.exp(-rs / 3)) + rng.normal(0, 0.01, len(rs))
    assert predict_final(tuple(rs / EPOCHS), tuple(noisy)) == pytest.approx(0.8, abs=0.05)
    assert predict_final((0.1, 0.2, 0.3, 0.4), (0.5, 0.5, 0.5, 0.5)) == pytest.approx(0.5)
    assert predict_final((0.1, 0.2), (0.5, 0.6)) is None  # too few points


def test_scipy_is_imported_when_the_assessor_is_made_not_before():
    code = (
        "import sys\n"
        "from hyperlab.assessors import create_assessor, CurveFittingAssessor\n"
        "print('scipy' in sys.modules)\n"
        "a = create_assessor('curvefit', mode='max', metric=None, seed=0, args={'epoch_num': 9})\n"
        "print('scipy.optimize' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


# ---- the rule -----------------------------------------------------------------------------------


def test_nothing_is_judged_before_a_trial_succeeded():
    assessor = curvefit(Mode.MAX, start_step=2)
    assert feed(assessor, 0, lambda step: 0.1, steps=10) == [Decision.CONTINUE] * 10


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["positive", "negative"])
def test_max_mode_stops_a_flat_bad_curve_and_keeps_a_good_one(sign):
    """Accuracies (positive), or negated losses: the margin is a share of ``|best|``."""
    assessor = curvefit(Mode.MAX, start_step=6)
    base = 0.0 if sign > 0 else -1.0
    good = feed(assessor, 0, lambda step: base + rising(0.9)(step))
    assert Decision.STOP not in good  # the first trial: nothing to compare with
    flat = feed(assessor, 1, lambda step: base + 0.5, noise=0.005)
    assert flat == [Decision.CONTINUE] * 5 + [Decision.STOP]  # judged from resource 6
    better = feed(assessor, 2, lambda step: base + rising(0.92)(step), noise=0.005)
    assert Decision.STOP not in better
    slow = feed(assessor, 3, lambda step: base + rising(0.95, tau=6.0)(step), noise=0.005)
    assert Decision.STOP not in slow  # a slow starter that ends near the best is kept


def test_min_mode_is_the_mirror_image():
    assessor = create_assessor(
        "curvefit", mode="min", metric="loss", seed=0, args={"epoch_num": EPOCHS}
    )
    answers = {}
    for number, (final, noise) in enumerate([(0.2, 0.0), (0.6, 0.005), (0.19, 0.005)]):
        assessor.on_start(trial(number), 0.0)
        rng = np.random.default_rng(number)
        for step in range(EPOCHS):
            loss = final + math.exp(-(step + 1) / 4.0) + rng.normal(0.0, noise)
            decision = assessor.on_report(trial(number), Report(step, {"loss": loss}, 0.0), 0.0)
            answers.setdefault(number, []).append(decision)
            if decision is Decision.STOP:
                break
        status = (
            TrialStatus.SUCCEEDED if decision is Decision.CONTINUE else TrialStatus.EARLY_STOPPED
        )
        assessor.on_end(trial(number, status, loss), 0.0)
    assert Decision.STOP not in answers[0]
    assert answers[1] == [Decision.CONTINUE] * 5 + [Decision.STOP]
    assert Decision.STOP not in answers[2]


def test_a_trial_whose_best_already_reaches_the_bound_is_not_stopped():
    assessor = curvefit(Mode.MAX, start_step=6)
    feed(assessor, 0, rising(0.9))
    # peaks at 0.95 early, then collapses: predicted low, but its best is above the bound
    peaked = feed(assessor, 1, lambda step: 0.95 if step == 0 else 0.3)
    assert Decision.STOP not in peaked


def test_judged_every_gap_resources_from_start_step(monkeypatch):
    judged: list[int] = []

    def spy(ts, ys):
        judged.append(round(ts[-1] * EPOCHS))
        return -10.0  # a loss: predicts a great final value, so nothing is stopped

    monkeypatch.setattr(_curvefit, "predict_final", spy)
    assessor = curvefit(Mode.MAX, start_step=4, gap=3)
    feed(assessor, 0, rising(0.9))
    assert judged == []
    assert Decision.STOP not in feed(assessor, 1, lambda step: 0.5)
    assert judged == [4, 7, 10, 13, 16, 19]  # never at epoch_num: nothing left to predict


# ---- under the driver ---------------------------------------------------------------------------


def test_under_the_driver_a_flat_bad_curve_stops_and_good_ones_finish(tmp_path):
    finals = {0: 0.9, 1: None, 2: 0.93, 3: 0.91}  # trial 1 is flat at 0.4

    def acc(number: int, step: int) -> float:
        final = finals[number]
        return 0.4 if final is None else rising(final)(step)

    sim = simulate(
        Curves(acc, epochs=10, metric="acc"),
        tmp_path,
        assessor="curvefit",
        assessor_args={"epoch_num": 10, "start_step": 4},
        metric="acc",
        mode="max",
        max_trials=4,
    )
    assert sim.run() is ExperimentStatus.DONE
    statuses = sim.statuses()
    assert statuses == {
        0: TrialStatus.SUCCEEDED,
        1: TrialStatus.EARLY_STOPPED,
        2: TrialStatus.SUCCEEDED,
        3: TrialStatus.SUCCEEDED,
    }
    assert sim.reached()[1] == 4  # judged first at resource start_step
