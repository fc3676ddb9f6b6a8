"""How a Ray Tune run becomes a hyperlab experiment: schedulers into assessors, searchers into
tuners, resources into executor options; and everything without a hyperlab equivalent
refused by name, before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hyperlab.compat.ray import train, tune
from hyperlab.compat.ray.tune._pbt import MutationsPBT
from hyperlab.compat.ray.tune._plan import make_plan
from hyperlab.compat.ray.tune._variants import VariantTuner
from hyperlab.compat.ray.tune.schedulers import (
    ASHAScheduler,
    HyperBandScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
)
from hyperlab.compat.ray.tune.search import BasicVariantGenerator, ConcurrencyLimiter
from hyperlab.compat.ray.tune.search.bayesopt import BayesOptSearch
from hyperlab.compat.ray.tune.search.hyperopt import HyperOptSearch
from hyperlab.compat.ray.tune.search.optuna import OptunaSearch
from hyperlab.store import Store

SPACE = {"lr": tune.loguniform(1e-4, 1e-1)}


def train_fn(config):
    tune.report({"loss": config["lr"]})


def plan(trainable=train_fn, space=SPACE, hyperlab_options=None, run_config=None, **tune_config):
    return make_plan(trainable, space, tune.TuneConfig(**tune_config), run_config, hyperlab_options)


def test_schedulers_become_assessors_with_their_arguments():
    asha = plan(metric="loss", mode="min", scheduler=ASHAScheduler(max_t=27, grace_period=3))
    assert asha.options["assessor"] == "asha"
    assert asha.options["assessor_args"] == {
        "min_resource": 3,
        "max_resource": 27,
        "reduction_factor": 4,
    }
    assert asha.objective.stop("t", {"training_iteration": 27}) is True  # stop_last_trials
    assert asha.objective.stop("t", {"training_iteration": 26}) is False
    hyperband = plan(
        scheduler=HyperBandScheduler(
            metric="loss", mode="min", max_t=81, time_attr="epochs", stop_last_trials=False
        )
    )
    assert hyperband.options["assessor_args"] == {
        "min_resource": 1,
        "max_resource": 81,
        "reduction_factor": 3,
        "resource_attr": "epochs",
    }
    assert hyperband.objective.stop is None
    median = plan(metric="loss", mode="min", scheduler=MedianStoppingRule(grace_period=2.5))
    assert median.options["assessor"] == "median"
    assert median.options["assessor_args"] == {"start_step": 3, "resource_attr": "time_total_s"}
    fifo = plan(scheduler=tune.schedulers.FIFOScheduler())
    assert "assessor" not in fifo.options


def test_pbt_perturbs_its_mutations_over_the_whole_population():
    pbt = plan(
        space={"lr": tune.uniform(0, 1), "batch": 32},
        metric="loss",
        mode="min",
        num_samples=4,
        scheduler=PopulationBasedTraining(
            perturbation_interval=2, hyperparam_mutations={"lr": tune.uniform(0, 1), "m": [1, 2]}
        ),
    )
    assert pbt.options["assessor"] is MutationsPBT
    assert pbt.options["assessor_args"]["mutable"] == ["lr", "m"]
    assert pbt.options["assessor_args"]["population_size"] == 4
    assert pbt.options["concurrency"] == 4
    assert sorted(pbt.space) == ["lr", "m"]  # a mutation missing from param_space joins it
    assert pbt.options["tuner_args"] == {"samples": 4, "branches": True}
    with pytest.raises(NotImplementedError, match=r"'lr' is tune\.uniform.*same one in both"):
        plan(
            space={"lr": tune.uniform(0, 1)},
            metric="loss",
            mode="min",
            scheduler=PopulationBasedTraining(hyperparam_mutations={"lr": tune.uniform(0, 2)}),
        )


def test_searchers_become_tuners():
    cases = [
        (OptunaSearch(seed=3), "tpe", {}, 3),
        (HyperOptSearch(n_initial_points=5, random_state_seed=4), "tpe", {"gamma": 0.25}, 4),
        (BayesOptSearch(random_search_steps=7), "gp", {"n_startup_trials": 7}, 42),
    ]
    for searcher, tuner, args, seed in cases:
        made = plan(metric="loss", mode="min", num_samples=12, search_alg=searcher)
        assert made.options["tuner"] == tuner
        assert args.items() <= made.options["tuner_args"].items()
        assert made.options["seed"] == seed
        assert made.options["max_trials"] == 12
    default = plan(num_samples=3, search_alg=BasicVariantGenerator(random_state=9))
    assert default.options["tuner"] is VariantTuner
    assert default.options["seed"] == 9


def test_concurrency_follows_cpus_and_limits():
    cpus = os.cpu_count() or 1
    assert plan().options["concurrency"] == cpus
    assert plan(max_concurrent_trials=1).options["concurrency"] == 1
    limited = plan(
        metric="loss", mode="min", search_alg=ConcurrencyLimiter(OptunaSearch(), max_concurrent=1)
    )
    assert limited.options["concurrency"] == 1
    half = plan(trainable=tune.with_resources(train_fn, {"cpu": cpus * 2}))
    assert half.options["concurrency"] == 1
    assert plan(hyperlab_options={"concurrency": 7}).options["concurrency"] == 7


def test_resources_map_onto_gpus_or_the_ray_executor():
    shared = plan(trainable=tune.with_resources(train_fn, {"cpu": 1, "gpu": 0.5}))
    assert shared.options["gpus"] == {"indices": "auto", "per_trial": 1, "max_trials_per_gpu": 2}
    bundle = tune.PlacementGroupFactory([{"CPU": 2, "GPU": 1, "special": 1}])
    on_ray = plan(
        trainable=tune.with_resources(train_fn, bundle), hyperlab_options={"executor": "ray"}
    )
    assert on_ray.options["resources"] == {"cpu": 2, "gpu": 1, "special": 1}
    with pytest.raises(NotImplementedError, match="PlacementGroupFactory needs the ray executor"):
        plan(trainable=tune.with_resources(train_fn, bundle))
    with pytest.raises(NotImplementedError, match=r"resources \['memory'\].*ray executor"):
        plan(trainable=tune.with_resources(train_fn, {"cpu": 1, "memory": 2**30}))
    with pytest.raises(NotImplementedError, match="depend on the config"):
        tune.with_resources(train_fn, lambda config: {"cpu": config["n"]})


def test_ray_run_options_become_hyperlab_options(tmp_path):
    made = plan(
        run_config=train.RunConfig(
            name="study",
            storage_path=str(tmp_path),
            verbose=0,
            log_to_file=True,
            checkpoint_config=train.CheckpointConfig(num_to_keep=2),
            failure_config=train.FailureConfig(fail_fast=True),
        ),
        time_budget_s=90,
    )
    options = made.options
    assert options["name"] == "study"
    assert options["working_dir"] == str(tmp_path / "study")
    assert options["progress"] is False and options["echo_output"] is False
    assert options["checkpoint_keep"] == 2 and options["max_duration"] == 90
    assert options["continue_on_failure"] is False
    assert options["executor"] == "processes"
    assert options["metric"] == "training_iteration"  # no metric: any trial succeeds


def test_metric_and_mode_must_agree_and_come_together():
    with pytest.raises(
        ValueError, match="metric: TuneConfig says 'loss' and AsyncHyperBandScheduler says"
    ):
        plan(metric="loss", mode="min", scheduler=ASHAScheduler(metric="acc", mode="max"))
    with pytest.raises(ValueError, match="give both or neither"):
        plan(metric="loss")
    with pytest.raises(ValueError, match="AsyncHyperBandScheduler needs a metric and a mode"):
        plan(scheduler=ASHAScheduler())


def test_num_samples_minus_one_needs_a_time_budget():
    with pytest.raises(ValueError, match="give time_budget_s"):
        plan(num_samples=-1)
    assert plan(num_samples=-1, time_budget_s=5).options["tuner_args"]["samples"] is None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ASHAScheduler(brackets=3), r"AsyncHyperBandScheduler\(brackets=3\)"),
        (lambda: ASHAScheduler(reduction_factor=2.5), "integer reduction_factor"),
        (lambda: MedianStoppingRule(hard_stop=False), r"hard_stop=False"),
        (
            lambda: PopulationBasedTraining(hyperparam_mutations={"lr": lambda: 0.1}),
            "only lists and search primitives",
        ),
        (lambda: PopulationBasedTraining(hyperparam_mutations={"a": [1]}, synch=True), "synch"),
        (lambda: tune.TuneConfig(trial_name_creator=str), "trial_name_creator"),
        (lambda: tune.RunConfig(callbacks=[object()]), r"RunConfig\(callbacks="),
        (lambda: tune.RunConfig(storage_path="s3://bucket/x"), "remote storage"),
        (lambda: train.FailureConfig(max_failures=3), r"max_failures=3"),
        (lambda: BasicVariantGenerator(points_to_evaluate=[{"lr": 0.1}]), "points_to_evaluate"),
        (lambda: OptunaSearch(metric=["a", "b"], mode=["min", "max"]), "multi-objective"),
        (lambda: tune.CLIReporter, "tune.CLIReporter has no hyperlab equivalent"),
        (lambda: tune.schedulers.PB2, "PB2 has no hyperlab equivalent; use PopulationBased"),
        (lambda: tune.stopper.TimeoutStopper, "time_budget_s"),
        (lambda: tune.Tuner("my_registered_trainable"), "registered by name"),
        (lambda: tune.run(train_fn, scheduler="asha"), "pass an instance"),
        (lambda: tune.Tuner.restore("nowhere", train_fn, resume_errored=True), "resume_errored"),
    ],
)
def test_what_has_no_equivalent_is_refused_by_name(make, message):
    with pytest.raises(NotImplementedError, match=message):
        make()


def test_unsupported_ray_modules_refuse_their_names():
    from hyperlab.compat.ray.tune.search import ax

    with pytest.raises(
        NotImplementedError, match=r"ray\.tune\.search\.ax\.AxSearch .*OptunaSearch"
    ):
        ax.AxSearch  # noqa: B018


def test_a_refused_run_writes_nothing():
    with pytest.raises(NotImplementedError, match=r"opt/lr: a tune\.sample_from inside"):
        tune.Tuner(
            train_fn, param_space={"opt": tune.choice([{"lr": tune.sample_from(lambda: 0.1)}])}
        )
    assert Store.open(None).list_experiments() == []


def test_hyperlab_options_take_only_what_ray_cannot_say():
    with pytest.raises(ValueError, match=r"hyperlab_options: \['max_trials'\] cannot be set"):
        plan(hyperlab_options={"max_trials": 3})
    with pytest.raises(ValueError, match="a tuner cannot run grid_search"):
        plan(space={"a": tune.grid_search([1, 2])}, hyperlab_options={"tuner": "tpe"})


def test_importing_tune_does_not_import_ray():
    code = (
        "import sys\n"
        "from hyperlab.compat.ray import train, tune\n"
        "from hyperlab.compat.ray.tune.schedulers import ASHAScheduler\n"
        "from hyperlab.compat.ray.tune.search.optuna import OptunaSearch\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(('ray.', 'optuna'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_param_spaces_and_hyperband_arguments_are_named():
    with pytest.raises(TypeError, match=r"param_space: expected a dict, got list"):
        tune.Tuner(train_fn, param_space=[1, 2])
    with pytest.raises(ValueError, match=r"reduction_factor must be a number > 1, got 1"):
        HyperBandScheduler(reduction_factor=1)
    with pytest.raises(ValueError, match=r"max_t must be a number >= 1, got 'x'"):
        HyperBandScheduler(max_t="x")
