"""auto hands over from gp to cmaes at gp_trials (or, with ``stall_window``, where gp stalls),
and cmaes starts at gp's best trial with a step size of the best trials' spread."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hyperlab import space as hs
from hyperlab.testing import TunerContract
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import AutoTuner, create_tuner
from hyperlab.tuners._cmaes import CMAESTuner

SPACE = hs.SearchSpace({"x": hs.uniform(-5, 5), "y": hs.uniform(-5, 5)})
STALL = {"stall_window": 14}


def _sphere(params: dict[str, Any]) -> float:
    return (params["x"] - 1.0) ** 2 + (params["y"] + 2.0) ** 2


def _drive(tuner: Any, trials: int) -> list[Trial]:
    history = []
    for number in range(trials):
        params = tuner.suggest(number)
        trial = Trial("e", number, params, TrialStatus.SUCCEEDED, value=_sphere(params))
        tuner.observe(trial)
        history.append(trial)
    return history


def test_cmaes_takes_over_where_gp_stalls_before_gp_trials() -> None:
    auto = create_tuner("auto", SPACE, mode="min", seed=0, args=STALL)
    assert isinstance(auto, AutoTuner)
    history = _drive(auto, 60)
    switch = auto.switch()
    assert 2 * auto.stall_window <= switch < 60 < auto.gp_trials
    assert auto.choice(switch - 1) == "gp" and auto.choice(switch) == "cmaes"
    # by default, gp proposes until gp_trials
    patient = create_tuner("auto", SPACE, mode="min", seed=0)
    for trial in history:
        patient.observe(trial)
    assert isinstance(patient, AutoTuner)
    assert patient.switch() == patient.gp_trials == 100


def test_the_switch_and_the_proposals_depend_on_the_set_of_observed_trials_only() -> None:
    history = _drive(create_tuner("auto", SPACE, mode="min", seed=0, args=STALL), 70)
    in_order = create_tuner("auto", SPACE, mode="min", seed=0, args=STALL)
    shuffled = create_tuner("auto", SPACE, mode="min", seed=0, args=STALL)
    for trial in history:
        in_order.observe(trial)
    mixed = history[:]
    random.Random(1).shuffle(mixed)
    for trial in mixed:
        shuffled.observe(trial)
    assert isinstance(in_order, AutoTuner) and isinstance(shuffled, AutoTuner)
    assert in_order.switch() == shuffled.switch() < 70
    assert [in_order.suggest(n) for n in range(70, 76)] == [
        shuffled.suggest(n) for n in range(70, 76)
    ]


def test_cmaes_starts_at_the_best_trial_before_the_switch_with_a_small_step() -> None:
    auto = create_tuner("auto", SPACE, mode="min", seed=0, args={"gp_trials": 12})
    assert isinstance(auto, AutoTuner)
    history = _drive(auto, 60)
    switch = auto.switch()
    assert switch == 12
    cmaes = auto._tuners["cmaes"]
    assert isinstance(cmaes, CMAESTuner) and cmaes.first_trial == switch
    best = min((t for t in history if t.number < switch), key=lambda t: t.value or 0.0)
    assert cmaes.unit.decode(cmaes._mean0) == pytest.approx(best.params)
    assert cmaes.sigma0 < 0.2
    # the cmaes proposals improved on gp's best
    assert min(t.value or 0.0 for t in history if t.number >= switch) < (best.value or 0.0)


def test_cmaes_leaves_the_trials_before_its_first_one_out_of_its_generations() -> None:
    early = _drive(create_tuner("random", SPACE, mode="min", seed=0), 10)
    fresh = CMAESTuner(SPACE, mode="min", seed=5, first_trial=10, popsize=4)
    fed = CMAESTuner(SPACE, mode="min", seed=5, first_trial=10, popsize=4)
    for trial in early:
        fed.observe(trial)
    assert [fed.suggest(n) for n in range(10, 14)] == [fresh.suggest(n) for n in range(10, 14)]
    assert fed._state.start == 10 and fed._state.generation == 0


class TestAutoAcrossTheSwitch(TunerContract):
    """The tuner contract with the switch to cmaes inside the run."""

    @pytest.fixture
    def tuner_name(self) -> str:
        return "auto"

    @pytest.fixture
    def tuner_args(self) -> dict[str, Any]:
        return {"gp_trials": 8, "stall_window": 2}
