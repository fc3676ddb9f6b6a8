"""Ray Tune code run end to end on hyperlab: the trial-side calls, schedulers pausing and
branching trials from their checkpoints, the Trainable class, failures, results, restore."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.compat.ray import tune
from hyperlab.compat.ray.tune import _trainable
from hyperlab.compat.ray.tune.schedulers import HyperBandScheduler, PopulationBasedTraining
from hyperlab.store import Store
from tests.compat.ray import trainables

THREADS = {"executor": "threads"}
QUIET = tune.RunConfig(verbose=0)


def fit(trainable, space, *, options=THREADS, run_config=QUIET, **tune_config):
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(**tune_config),
        run_config=run_config,
        hyperlab_options=options,
    )
    return tuner.fit()


def test_a_trial_knows_its_context_and_runs_in_its_folder():
    """The default executor (processes) runs a trial in its folder, as Ray does."""
    results = fit(
        trainables.context,
        {"x": tune.uniform(0, 1)},
        options=None,
        run_config=tune.RunConfig(name="ctx", verbose=0),
        num_samples=2,
    )
    for result in results:
        metrics = result.metrics
        assert metrics["trial_id"] == result.trial.id
        assert metrics["name"] == f"context_{result.trial.id}"
        assert metrics["dir"] == metrics["cwd"] == result.path
        assert metrics["experiment"] == "ctx"
        assert metrics["training_iteration"] == 1


def test_the_run_is_an_ordinary_hyperlab_experiment(tmp_path):
    results = fit(
        trainables.series,
        {"values": [1.0, 2.0]},
        run_config=tune.RunConfig(name="listed", storage_path=str(tmp_path), verbose=0),
    )
    (summary,) = Store.open(None).list_experiments()
    assert summary.name == "listed"
    assert Path(results.experiment_path) == tmp_path / "listed" / summary.id
    assert results[0].path == str(tmp_path / "listed" / summary.id / "trials" / "0")
    stored = hyperlab.load(summary.id)
    assert [t.status for t in stored.trials] == [TrialStatus.SUCCEEDED]
    again = tune.Tuner.restore(results.experiment_path, trainables.series).fit()  # finished
    assert [r.metrics["score"] for r in again] == [2.0]


def test_stop_criteria_end_trials_as_succeeded():
    def endless(config):
        while True:
            tune.report({"loss": 1.0})

    by_dict = fit(endless, {}, run_config=tune.RunConfig(stop={"training_iteration": 3}))
    by_function = fit(
        endless, {}, run_config=tune.RunConfig(stop=lambda trial_id, result: True, verbose=0)
    )
    assert by_dict[0].metrics["training_iteration"] == 3
    assert by_function[0].metrics["training_iteration"] == 1
    assert by_dict[0].trial.status is by_function[0].trial.status is TrialStatus.SUCCEEDED


def test_a_paused_trial_continues_from_its_checkpoint():
    """HyperBand pauses the best trial at its first rung (it gets there first) and resumes it
    once the others of its bracket reached the rung."""
    results = fit(
        trainables.counting,
        {"lr": tune.grid_search([0.1, 0.5, 0.6, 0.7, 0.8, 0.9]), "sleep": 0.05},
        metric="loss",
        mode="min",
        scheduler=HyperBandScheduler(max_t=9, reduction_factor=3),
    )
    best = results.get_best_result()
    assert best.config["lr"] == 0.1
    reports = [r.metrics for r in best.trial.reports]
    assert [m["training_iteration"] for m in reports] == list(range(1, 10))
    assert {m["started_at"] for m in reports} == {0, 1}  # paused after 1, resumed from there
    stopped = [r for r in results if r.metrics["training_iteration"] < 9]
    assert stopped and all(r.trial.status is TrialStatus.EARLY_STOPPED for r in stopped)
    assert best.checkpoint.to_dict() == {"done": 9}


def test_a_pbt_branch_continues_from_its_parents_checkpoint():
    results = fit(
        trainables.climbing,
        {"const": "kept"},
        options={**THREADS, "seed": 2},  # first rates 0.1, 2.0, 0.5, 1.0: a clear worst
        run_config=tune.RunConfig(stop={"training_iteration": 8}, verbose=0),
        metric="height",
        mode="max",
        num_samples=4,
        scheduler=PopulationBasedTraining(
            time_attr="training_iteration",
            perturbation_interval=2,
            hyperparam_mutations={"lr": [0.1, 0.5, 1.0, 2.0]},
        ),
    )
    assert [r.config["lr"] for r in results[:4]] == [0.1, 2.0, 0.5, 1.0]
    branches = [r for r in results if r.trial.parent is not None]
    assert branches
    for branch in branches:
        parent = results[branch.trial.parent]
        first = branch.trial.reports[0].metrics
        (at_checkpoint,) = [  # the parent's report its checkpoint followed
            r.metrics
            for r in parent.trial.reports
            if r.metrics["training_iteration"] == first["training_iteration"] - 1
        ]
        assert first["restored"] == at_checkpoint["height"] > 0
        assert branch.metrics["training_iteration"] >= 8  # from a checkpoint at 8: one more
        assert branch.config["const"] == "kept"
        assert branch.config["lr"] in (0.1, 0.5, 1.0, 2.0)
    assert any(r.trial.status is TrialStatus.EARLY_STOPPED for r in results)


@pytest.mark.parametrize("accept", [True, False])
def test_reuse_actors_hands_the_instance_to_the_next_trial(accept):
    class Recorder(trainables.Recorder):
        setups: list = []
        resets: list = []
        cleanups: list = []
        accept_reset = accept

    try:
        results = fit(
            Recorder,
            {"v": tune.grid_search([1, 2, 3])},
            reuse_actors=True,
            max_concurrent_trials=1,
        )
    finally:
        _trainable._cleanup_idle()
    assert [r.metrics["v"] for r in results] == [r.config["v"] for r in results] == [1, 2, 3]
    assert all(r.metrics["training_iteration"] == 2 for r in results)
    assert Recorder.resets == [2, 3]
    if accept:
        assert Recorder.setups == [1] and Recorder.cleanups == [3]
    else:
        assert Recorder.setups == [1, 2, 3] and Recorder.cleanups == [1, 2, 3]


def test_failed_trials_are_in_the_results():
    results = fit(trainables.failing, {"x": tune.grid_search([0.1, 0.9])})
    assert (results.num_errors, results.num_terminated) == (1, 1)
    assert "ValueError: x=0.9 is too large" in str(results.errors[0])
    assert isinstance(results[1].error, tune.TuneError)
    only_failures = fit(trainables.failing, {"x": 0.9}, num_samples=2)
    assert only_failures.num_errors == 2
    with pytest.raises(ValueError, match=r"x=0\.9 is too large"):
        fit(
            trainables.failing,
            {"x": 0.9},
            run_config=tune.RunConfig(failure_config=tune.FailureConfig(fail_fast="raise")),
        )
    with pytest.raises(tune.TuneError, match="trials did not complete"):
        tune.run(trainables.failing, config={"x": 0.9}, verbose=0, hyperlab_options=THREADS)


def test_the_results_grid_finds_the_best_by_scope():
    results = fit(
        trainables.series,
        {"values": tune.grid_search([[5.0, 1.0], [3.0, 2.0], [0.0, 4.0]])},
        metric="score",
        mode="max",
    )
    assert results.get_best_result().config["values"] == [0.0, 4.0]  # last
    assert results.get_best_result(scope="all").config["values"] == [5.0, 1.0]
    assert results.get_best_result(mode="min", scope="avg").config["values"] == [0.0, 4.0]
    pytest.importorskip("pandas", reason="DataFrames need the pandas extra, not installed")
    frame = results.get_dataframe(filter_metric="score", filter_mode="max")
    assert list(frame["score"]) == [5.0, 3.0, 4.0]
    assert list(results[0].metrics_dataframe["score"]) == [5.0, 1.0]
    with pytest.raises(ValueError, match="no metric and mode"):
        fit(trainables.series, {"values": [1.0]}).get_best_result()


def test_grid_points_repeat_num_samples_times_with_fresh_random_values():
    results = fit(
        trainables.context,
        {"x": tune.uniform(0, 1), "g": tune.grid_search(["a", "b", "c"])},
        num_samples=2,
    )
    assert [r.config["g"] for r in results] == ["a", "b", "c", "a", "b", "c"]
    assert len({r.config["x"] for r in results}) == 6


def test_without_a_trial_count_the_time_budget_ends_the_run():
    def slow(config):
        time.sleep(0.2)
        tune.report({"loss": 1.0})

    results = fit(slow, {}, num_samples=-1, time_budget_s=1.5, max_concurrent_trials=1)
    assert len(results) >= 3 and results.num_errors == 0


RUN = """
import sys, time
from hyperlab.compat.ray import tune

def train(config):
    checkpoint = tune.get_checkpoint()
    start = checkpoint.to_dict()["done"] if checkpoint else 0
    for i in range(start, 5):
        time.sleep(config["sleep"])
        tune.report({"loss": config["x"]}, checkpoint=tune.Checkpoint.from_dict({"done": i + 1}))

tune.Tuner(
    train,
    param_space={"x": tune.grid_search([1, 2, 3]), "sleep": 0.3},
    tune_config=tune.TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
    run_config=tune.RunConfig(name="interrupted", storage_path=sys.argv[1], verbose=0),
    hyperlab_options={"executor": "threads", "id": "interrupted"},
).fit()
"""


def restored_train(config):
    """The trainable given again to Tuner.restore: the same, without the sleep."""
    checkpoint = tune.get_checkpoint()
    start = checkpoint.to_dict()["done"] if checkpoint else 0
    for i in range(start, 5):
        tune.report(
            {"loss": config["x"], "started_at": start},
            checkpoint=tune.Checkpoint.from_dict({"done": i + 1}),
        )


def test_restore_continues_a_killed_run(tmp_path, hyperlab_home):
    script = tmp_path / "run.py"
    script.write_text(RUN)
    process = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)],
        env={**os.environ, "HYPERLAB_HOME": str(hyperlab_home)},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            trials = _trials("interrupted")
            if len(trials) == 2 and len(trials[1].reports) >= 2:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run never got to its second trial")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    path = tmp_path / "interrupted"
    assert tune.Tuner.can_restore(path) and not tune.Tuner.can_restore(tmp_path / "other")
    results = tune.Tuner.restore(path, restored_train).fit()
    assert [r.trial.status for r in results] == [TrialStatus.SUCCEEDED] * 3
    assert [r.metrics["training_iteration"] for r in results] == [5, 5, 5]
    rerun = results[1].trial
    assert rerun.attempt == 2 and rerun.reports[-1].metrics["started_at"] >= 1  # not 0
    assert results.get_best_result().config == {"x": 1, "sleep": 0.3}


def _trials(experiment_id):
    try:
        return Store.open(None).get_trials(experiment_id)
    except hyperlab.ExperimentNotFound:
        return []


def test_sample_from_values_reach_the_trainable_and_the_results():
    import numpy as np

    results = fit(
        trainables.echo,
        {
            "width": tune.grid_search([8, 16]),
            "units": tune.sample_from(lambda spec: 2 * spec.config.width),
            "noise": tune.sample_from(lambda: np.random.uniform()),
        },
        options=None,  # trials in processes of their own: the functions travel there
    )
    assert [r.config["width"] for r in results] == [8, 16]
    for result in results:
        assert result.error is None
        assert result.metrics["seen"] == result.config  # the trainable's, read back the same
        assert result.config["units"] == 2 * result.config["width"]
    assert results[0].config["noise"] != results[1].config["noise"]


def test_a_trial_whose_sample_from_raises_fails_and_the_results_still_read():
    results = fit(
        trainables.echo,
        {"x": tune.grid_search([0, 1]), "y": tune.sample_from(lambda spec: 1 / spec.config.x)},
    )
    assert results.num_errors == 1
    assert "y: its tune.sample_from function raised ZeroDivisionError" in str(results.errors[0])
    assert [r.config for r in results] == [{"x": 0}, {"x": 1, "y": 1.0}]


def test_the_best_result_of_a_metric_that_is_not_a_number_is_refused_naming_it():
    results = fit(trainables.echo, {"x": tune.grid_search([1, 2])})
    with pytest.raises(ValueError, match=r"metric 'seen': trial .* reported \{'x': 1\}, not a"):
        results.get_best_result(metric="seen", mode="max")
    pytest.importorskip("pandas", reason="DataFrames need the pandas extra, not installed")
    frame = results.get_dataframe()
    assert list(frame["config/x"]) == [1, 2]
