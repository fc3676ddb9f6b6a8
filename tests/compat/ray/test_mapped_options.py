"""Ray Tune options mapped onto hyperlab (issue 28): PBT's constants mutated within
``hyperparam_mutations``, ``CheckpointConfig``'s ranking by a metric, ``BayesOptSearch``'s
``utility_kwargs``."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.compat.ray import train, tune
from hyperlab.compat.ray.tune._plan import make_plan
from hyperlab.compat.ray.tune.schedulers import PopulationBasedTraining
from hyperlab.compat.ray.tune.search.bayesopt import BayesOptSearch
from tests.compat.ray import trainables


def plan(space, **tune_config):
    return make_plan(trainables.context, space, tune.TuneConfig(**tune_config), None, None)


# ---- population based training from constants -------------------------------------------------


def climb(config):
    """Scores ``lr`` times the iteration, except the population's trial 3, which scores a
    hundredth of it: PBT's bottom quantile, whatever order the trials report in."""
    number = int(tune.get_context().get_trial_id().rpartition("-")[2])
    weight = 0.01 if number == 3 else 1.0
    checkpoint = tune.get_checkpoint()
    for i in range(checkpoint.to_dict()["i"] if checkpoint else 0, 20):
        time.sleep(0.01)  # the population reports side by side
        tune.report(
            {"score": weight * config["lr"] * (i + 1), "factor": config["factor"]},
            checkpoint=tune.Checkpoint.from_dict({"i": i + 1}),
        )


def test_pbt_starts_from_the_constants_and_mutates_within_the_mutations():
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=5,
        resample_probability=1.0,  # every explored value is drawn from the mutation
        hyperparam_mutations={"lr": tune.uniform(0.001, 1.0), "factor": [1, 2, 3]},
    )
    results = tune.Tuner(
        climb,
        param_space={"lr": 0.001, "factor": 2, "fixed": "kept"},
        tune_config=tune.TuneConfig(metric="score", mode="max", num_samples=4, scheduler=pbt),
        run_config=tune.RunConfig(verbose=0),
        hyperlab_options={"executor": "threads", "seed": 5},
    ).fit()
    first = [r for r in results if r.trial.parent is None]
    assert [r.config for r in first] == [{"lr": 0.001, "factor": 2, "fixed": "kept"}] * 4
    branches = [r for r in results if r.trial.parent is not None]
    assert branches, "PBT branched no trial"
    assert first[3].trial.status is TrialStatus.EARLY_STOPPED
    for result in branches:
        assert 0.001 <= result.config["lr"] <= 1.0
        assert result.config["factor"] in (1, 2, 3)
        assert result.config["fixed"] == "kept"
    assert any(r.config["lr"] != 0.001 for r in branches)


def test_pbt_constants_become_the_tuners_starts():
    pbt = PopulationBasedTraining(
        hyperparam_mutations={"lr": tune.uniform(0.0001, 0.02), "some_other_factor": [1, 2]}
    )
    made = plan(
        {"lr": 0.0001, "some_other_factor": 1, "checkpoint_interval": 5},
        metric="mean_accuracy",
        mode="max",
        num_samples=8,
        scheduler=pbt,
    )
    assert made.options["tuner_args"]["starts"] == {"lr": 0.0001, "some_other_factor": 1}
    # PBT explores within the space: there, the mutations' distributions
    assert made.space == {
        "lr": hyperlab.uniform(0.0001, 0.02),
        "some_other_factor": hyperlab.choice(1, 2),
    }


@pytest.mark.parametrize(
    ("constant", "mutation", "message"),
    [
        (5.0, tune.uniform(0, 1), r"'lr' starts at 5\.0 .*cannot take"),
        (4, [1, 2], r"'lr' starts at 4 .*4 is not one of \[1, 2\]"),
        ([1, 2], [1, 2], r"'lr' starts at \[1, 2\]"),  # a list in param_space is a constant
    ],
)
def test_a_constant_its_mutation_cannot_take_is_refused(constant, mutation, message):
    pbt = PopulationBasedTraining(hyperparam_mutations={"lr": mutation})
    with pytest.raises(ValueError, match=message):
        plan({"lr": constant}, metric="m", mode="max", num_samples=2, scheduler=pbt)


# ---- CheckpointConfig by a metric -------------------------------------------------------------


def kept(result) -> list[int]:
    folder = Path(result.path, "checkpoints")
    states = [pickle.loads((p / "state.pkl").read_bytes()) for p in sorted(folder.iterdir())]
    return [state["index"] for state in states]


@pytest.mark.parametrize(("order", "expected"), [("max", [1, 3, 4]), ("min", [2, 4])])
@pytest.mark.parametrize("executor", ["processes", "threads"])
def test_checkpoint_config_keeps_the_best_by_the_score_attribute(executor, order, expected):
    checkpoints = train.CheckpointConfig(
        num_to_keep=2, checkpoint_score_attribute="acc", checkpoint_score_order=order
    )
    results = tune.Tuner(
        trainables.accuracies,
        tune_config=tune.TuneConfig(metric="acc", mode="max"),
        run_config=tune.RunConfig(verbose=0, checkpoint_config=checkpoints),
        hyperlab_options={"executor": executor},
    ).fit()
    (result,) = results
    assert kept(result) == expected  # the best two by acc, and the newest
    latest = result.checkpoint
    assert latest is not None and latest.to_dict() == {"index": 4}  # the latest, as in Ray


def test_checkpoint_config_becomes_checkpoint_score():
    checkpoints = train.CheckpointConfig(
        num_to_keep=3, checkpoint_score_attribute="loss", checkpoint_score_order="min"
    )
    made = make_plan(
        trainables.context, {}, None, tune.RunConfig(checkpoint_config=checkpoints), None
    )
    assert made.options["checkpoint_keep"] == 3
    assert made.options["checkpoint_score"] == "loss"
    assert made.options["checkpoint_score_mode"] == "min"
    with pytest.raises(ValueError, match="checkpoint_score_order must be 'min' or 'max'"):
        train.CheckpointConfig(checkpoint_score_attribute="loss", checkpoint_score_order="low")


def test_tune_run_reads_the_min_prefix_of_checkpoint_score_attr():
    analysis = tune.run(
        trainables.accuracies,
        metric="acc",
        mode="max",
        keep_checkpoints_num=1,
        checkpoint_score_attr="min-acc",
        verbose=0,
        hyperlab_options={"executor": "threads"},
    )
    (trial,) = analysis.trials
    assert kept(trial) == [2, 4]  # the best (lowest) acc, and the newest


# ---- BayesOptSearch's utility_kwargs ----------------------------------------------------------


@pytest.mark.parametrize(
    ("utility", "args"),
    [
        (None, {"acquisition": "ucb", "kappa": 2.576}),  # Ray's default
        ({"kind": "ucb", "kappa": 2.5, "xi": 0.0}, {"acquisition": "ucb", "kappa": 2.5}),
        ({"kind": "ei", "xi": 0.01}, {"acquisition": "ei", "xi": 0.01}),
    ],
)
def test_utility_kwargs_become_the_gps_acquisition(utility, args):
    searcher = BayesOptSearch(utility_kwargs=utility, random_search_steps=3)
    made = plan({"x": tune.uniform(0, 1)}, metric="loss", mode="min", search_alg=searcher)
    assert made.options["tuner"] == "gp"
    assert made.options["tuner_args"] == {"n_startup_trials": 3, **args}


def test_probability_of_improvement_is_refused():
    with pytest.raises(NotImplementedError, match=r"'poi'\) has no hyperlab equivalent"):
        BayesOptSearch(utility_kwargs={"kind": "poi", "kappa": 2.5, "xi": 0.0})
    with pytest.raises(ValueError, match=r"unknown keys \['beta'\]"):
        BayesOptSearch(utility_kwargs={"kind": "ucb", "beta": 1})


def quadratic(config):
    tune.report({"loss": (config["x"] - 0.3) ** 2})


def test_bayesopt_with_ucb_runs_and_finds_the_minimum():
    searcher = BayesOptSearch(
        utility_kwargs={"kind": "ucb", "kappa": 2.5, "xi": 0.0}, random_search_steps=4
    )
    results = tune.Tuner(
        quadratic,
        param_space={"x": tune.uniform(0, 1)},
        tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=12, search_alg=searcher),
        run_config=tune.RunConfig(verbose=0),
        hyperlab_options={"executor": "inprocess"},
    ).fit()
    assert results.get_best_result().metrics["loss"] < 0.01
