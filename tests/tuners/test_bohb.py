"""BOHB: a tuner that runs its own Hyperband schedule. Its arguments and names, its proposals
against random ones on a synthetic problem with learning curves, and replay after a run and
after a stopped one. (``test_contract.py`` runs the tuner contract over it,
``tests/assessors/test_contract_schedulers.py`` the assessor contract.)"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.config import translate_nni_config, validate_options
from hyperlab.errors import ConfigError
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.experiment._setup import make_assessor
from hyperlab.space import SearchSpace
from hyperlab.store import StopExperiment
from hyperlab.trial import Mode, Trial
from hyperlab.tuners import BOHB, create_tuner, tuner_class
from tests.assessors.sim import Checkpoints
from tests.simulation import Sim, resume, simulate

SPACE = SearchSpace.coerce({"x": hs.uniform(-5.0, 5.0), "y": hs.uniform(-5.0, 5.0)})


def quality(params: dict[str, Any]) -> float:
    """The loss a configuration converges to (best at x = 1, y = -2)."""
    return (params["x"] - 1.0) ** 2 + (params["y"] + 2.0) ** 2


def curve(params: dict[str, Any], resource: int) -> float:
    return quality(params) + 10.0 / resource


def bohb(seed: int, **args: Any) -> BOHB:
    return BOHB(SPACE, seed=seed, min_resource=1, max_resource=9, reduction_factor=3, **args)


def experiment(tmp_path: Path, seed: int, **args: Any) -> tuple[Sim, Checkpoints]:
    checkpoints = Checkpoints()
    tuner = bohb(seed, **args)
    sim = simulate(
        checkpoints.script(curve, total=9, every=0.1),  # short steps: fewer control reads
        tmp_path,
        space=SPACE,
        tuner=tuner,
        assessor=tuner,
        metric="loss",
        max_trials=85,
        concurrency=2,
    )
    return sim, checkpoints


# ---- names and arguments ---------------------------------------------------------------------


def test_registered_as_bohb_and_nnis_advisor_name():
    assert tuner_class("bohb") is BOHB and tuner_class("BOHB") is BOHB
    tuner = create_tuner(
        "BOHB",
        SPACE,
        mode="max",
        seed=3,
        args={"min_resource": 1, "max_resource": "27", "reduction_factor": 3, "top_n_percent": 20},
    )
    assert isinstance(tuner, BOHB) and tuner.rungs == (1, 3, 9, 27) and tuner.mode is Mode.MAX
    assert tuner.min_points_in_model == 3  # dimensions + 1
    assert tuner.budget() is None


def test_nnis_bohb_advisor_config_translates_to_it():
    nni = {
        "name": "BOHB",
        "classArgs": {
            "optimize_mode": "maximize",
            "min_budget": 1,
            "max_budget": 27,
            "eta": 3,
            "min_points_in_model": 4,
            "top_n_percent": 20,
            "num_samples": 32,
            "random_fraction": 0.2,
            "bandwidth_factor": 3.0,  # NNI's KDE bandwidths: accepted, without effect
            "min_bandwidth": 0.001,
        },
    }
    out = translate_nni_config({"advisor": nni})
    assert "bandwidth_factor" not in out["tuner_args"]
    assert (out["tuner"], out["mode"]) == ("bohb", "max")
    tuner = create_tuner(out["tuner"], SPACE, mode=out["mode"], seed=0, args=out["tuner_args"])
    assert isinstance(tuner, BOHB) and tuner.rungs == (1, 3, 9, 27)
    assert (tuner.min_points_in_model, tuner.num_samples, tuner.random_fraction) == (4, 32, 0.2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"min_resource": 9, "max_resource": 3}, r"min_resource < max_resource, got "),
        ({"reduction_factor": 1}, r"reduction_factor >= 2, got reduction_factor=1"),
        ({"random_fraction": 1.5}, r"0 <= random_fraction <= 1, got 1.5"),
        ({"top_n_percent": 0}, r"0 < top_n_percent < 100, got 0"),
        ({"min_points_in_model": 0}, r"min_points_in_model to be an integer >= 1 or None, got 0"),
        ({"num_samples": 0}, r"num_samples to be an integer >= 1, got 0"),
    ],
)
def test_bad_arguments_are_config_errors_naming_them(args, message):
    with pytest.raises(ConfigError, match=r"tuner_args: bohb needs .*" + message):
        create_tuner("bohb", SPACE, mode="min", seed=0, args=args)


def test_it_is_the_experiments_assessor_and_refuses_another():
    tuner = bohb(0)
    options = validate_options(tuner="bohb", max_trials=10)
    assert make_assessor(options, tuner, None) is tuner
    with pytest.raises(ConfigError, match="schedules its own trials"):
        make_assessor(validate_options(tuner="bohb", assessor="median"), tuner, "median")


# ---- proposals ---------------------------------------------------------------------------------


def late_quality(sim: Sim, warm_up: int) -> float:
    """The median quality of the configurations proposed after ``warm_up`` trials."""
    return statistics.median(quality(t.params) for t in sim.trials() if t.number >= warm_up)


def test_after_warm_up_it_proposes_better_configurations_than_random(tmp_path):
    ours, random = [], []
    for seed in range(5):
        sim, _ = experiment(tmp_path, seed)
        assert sim.run() is ExperimentStatus.DONE
        ours.append(late_quality(sim, 34))
        sim, _ = experiment(tmp_path, seed, random_fraction=1.0)  # Hyperband, random proposals
        assert sim.run() is ExperimentStatus.DONE
        random.append(late_quality(sim, 34))
    assert statistics.median(ours) < 0.5 * statistics.median(random)
    assert sum(a < b for a, b in zip(ours, random, strict=True)) >= 4


def test_it_runs_the_hyperband_schedule(tmp_path):
    sim, _ = experiment(tmp_path, 0)
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    succeeded = [t.number for t in trials if t.status is TrialStatus.SUCCEEDED]
    stopped = [t for t in trials if t.status is TrialStatus.EARLY_STOPPED]  # at their rungs
    assert len(trials) == 85 and len(succeeded) + len(stopped) == 85
    # per cycle of 17: one of bracket 0 and one of bracket 1 reach the end, and bracket 2's three
    cycles = [range(17 * c, 17 * c + 17) for c in range(5)]
    assert [sum(n in c for n in succeeded) for c in cycles] == [5] * 5


# ---- replay ------------------------------------------------------------------------------------


def replayed(history: list[Trial], seed: int) -> BOHB:
    """A fresh BOHB fed ``history`` as a resumed driver feeds it."""
    fresh = bohb(seed)
    for trial in history:
        if trial.status.is_finished() and trial.status is not TrialStatus.SYS_CANCELED:
            fresh.observe(trial)
    Scheduling(fresh).replay(history)
    return fresh


def assert_same_state(original: BOHB, fresh: BOHB, next_number: int) -> None:
    for level in range(len(original.rungs)):
        assert fresh.observations(level) == original.observations(level)
    assert fresh.model_budget() == original.model_budget() is not None
    for number in range(next_number, next_number + 6):
        assert fresh.suggest(number) == original.suggest(number)


def test_a_fresh_bohb_replaying_the_history_proposes_what_the_original_would(tmp_path):
    sim, _ = experiment(tmp_path, 4)
    sim.run()
    history = sim.store.get_trials(sim.id)
    assert isinstance(sim.tuner, BOHB)
    assert_same_state(sim.tuner, replayed(history, 4), len(history))


def test_after_a_stop_the_resumed_experiment_continues_from_the_replayed_state(tmp_path):
    sim, checkpoints = experiment(tmp_path, 2)
    sim.clock.call_at(5.05, lambda: sim.store.send_control(sim.id, StopExperiment()))
    assert sim.run() is ExperimentStatus.STOPPED
    history = sim.store.get_trials(sim.id)
    assert {TrialStatus.SYS_CANCELED, TrialStatus.PAUSED} <= {t.status for t in history}
    assert isinstance(sim.tuner, BOHB)
    assert_same_state(sim.tuner, replayed(history, 2), len(history))
    fresh = bohb(2)
    again = resume(sim, checkpoints.script(curve, total=9, every=0.1), tuner=fresh, assessor=fresh)
    assert again.run() is ExperimentStatus.DONE
    trials = again.trials()
    assert len(trials) == 85
    assert {t.status for t in trials} == {TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED}
