"""Ray Tune's older function API: ``f(config, reporter)``, ``tune.track.log``,
``f(config, checkpoint_dir=None)`` with ``tune.checkpoint_dir(step)``, generators and returned
values; and the signatures Ray never calls, refused before anything runs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.compat.ray import tune
from hyperlab.compat.ray.tune.schedulers import ASHAScheduler, HyperBandScheduler
from hyperlab.store import Store

THREADS = {"executor": "threads"}
QUIET = tune.RunConfig(verbose=0)


def fit(trainable, space, *, options=THREADS, run_config=QUIET, **tune_config):
    return tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(**tune_config),
        run_config=run_config,
        hyperlab_options=options,
    ).fit()


def with_reporter(config, reporter):
    for i in range(3):
        reporter(loss=config["x"] * (i + 1), trial=reporter.trial_id, name=reporter.trial_name)
    Path(reporter.logdir, "logdir.txt").write_text(reporter.logdir)


def test_a_reporter_function_runs_through_tune_run_and_the_tuner():
    analysis = tune.run(
        with_reporter,
        config={"x": tune.grid_search([1.0, 2.0])},
        metric="loss",
        mode="min",
        verbose=0,
        hyperlab_options=THREADS,
    )
    results = fit(with_reporter, {"x": 3.0})
    assert [t.status for t in analysis.trials] == ["TERMINATED"] * 2
    assert analysis.best_config == {"x": 1.0}
    for result in [*analysis._grid, *results]:
        reports = [r.metrics for r in result.trial.reports]
        assert [m["training_iteration"] for m in reports] == [1, 2, 3]
        assert [m["loss"] for m in reports] == [result.config["x"] * i for i in (1, 2, 3)]
        assert all(m["time_total_s"] >= m["time_this_iter_s"] >= 0 for m in reports)
        assert reports[0]["trial"] == result.trial.id
        assert reports[0]["name"] == f"with_reporter_{result.trial.id}"
        assert Path(result.path, "logdir.txt").read_text() == result.path


def test_done_ends_a_reporter_function_and_stop_criteria_end_it_too():
    def done_at_two(config, reporter):
        reporter(loss=1.0)
        reporter(loss=0.5, done=True)
        reporter(loss=0.0)  # never reached

    def endless(config, reporter):
        while True:
            reporter(loss=1.0)

    (done,) = fit(done_at_two, {})
    (met,) = fit(endless, {}, run_config=tune.RunConfig(stop={"training_iteration": 4}))
    assert [r.metrics["loss"] for r in done.trial.reports] == [1.0, 0.5]
    assert done.trial.status is met.trial.status is TrialStatus.SUCCEEDED
    assert met.metrics["training_iteration"] == 4


def test_a_scheduler_stop_raises_stop_iteration_from_the_reporter():
    def learner(config, reporter):
        try:
            for _ in range(9):
                time.sleep(0.01)
                reporter(loss=config["lr"])
        except StopIteration:
            Path(reporter.logdir, "stopped").touch()
            raise

    results = fit(
        learner,
        {"lr": tune.grid_search([0.1, 0.2, 0.9, 0.8])},
        options={**THREADS, "concurrency": 2},
        metric="loss",
        mode="min",
        scheduler=ASHAScheduler(max_t=9, grace_period=1, reduction_factor=2),
    )
    stopped = [r for r in results if r.metrics["training_iteration"] < 9]
    assert stopped and results.num_errors == 0
    for result in stopped:
        assert result.trial.status is TrialStatus.EARLY_STOPPED
        assert Path(result.path, "stopped").exists()


def test_track_log_reports_and_init_is_refused_outside_a_trial():
    from hyperlab.compat.ray.tune import track

    def tracked(config):
        track.init()  # ignored inside a trial, as Ray did
        for i in range(2):
            tune.track.log(mean_loss=config["x"] / (i + 1), folder=tune.track.trial_dir())

    (result,) = fit(tracked, {"x": 4.0})
    reports = [r.metrics for r in result.trial.reports]
    assert [(m["mean_loss"], m["training_iteration"]) for m in reports] == [(4.0, 1), (2.0, 2)]
    assert reports[0]["folder"] == result.path
    with pytest.raises(NotImplementedError, match=r"tune\.track\.init\(\) outside a trial"):
        track.init()
    with pytest.raises(RuntimeError, match="only inside a trainable"):
        track.log(loss=1.0)


def counting_in_folders(config, checkpoint_dir=None):
    """Counts to 9 from the count in its checkpoint folder, saving one per step."""
    start = 0
    if checkpoint_dir is not None:
        start = json.loads(Path(checkpoint_dir, "state.json").read_text())["done"]
    for i in range(start, 9):
        time.sleep(config["sleep"])
        with tune.checkpoint_dir(step=i) as folder:
            Path(folder, "state.json").write_text(json.dumps({"done": i + 1}))
        tune.report(loss=config["lr"], started_at=start, given=checkpoint_dir)


def test_a_checkpoint_dir_function_continues_from_its_latest_folder():
    """HyperBand pauses the best trial at its first rung and resumes it: the function gets
    the folder it saved with tune.checkpoint_dir, as Ray 1.x gave it."""
    results = fit(
        counting_in_folders,
        {"lr": tune.grid_search([0.1, 0.5, 0.6, 0.7, 0.8, 0.9]), "sleep": 0.05},
        metric="loss",
        mode="min",
        scheduler=HyperBandScheduler(max_t=9, reduction_factor=3),
    )
    best = results.get_best_result()
    assert best.config["lr"] == 0.1 and best.trial.status is TrialStatus.SUCCEEDED
    reports = [r.metrics for r in best.trial.reports]
    assert [m["training_iteration"] for m in reports] == list(range(1, 10))
    assert [m["started_at"] for m in reports] == [0] + [1] * 8  # paused after 1, resumed there
    assert reports[0]["given"] is None
    given = Path(reports[1]["given"])
    assert given.is_relative_to(Path(best.path) / "checkpoints")
    with best.checkpoint.as_directory() as folder:
        assert json.loads(Path(folder, "state.json").read_text()) == {"done": 9}
    for result in results:  # the folders it wrote into are gone once saved
        assert not list(Path(result.path).glob(".checkpoint_dir-*"))


def dict_checkpoints(config, checkpoint_dir=None):
    """Saves dict checkpoints, which a function taking checkpoint_dir cannot continue from."""
    with pytest.raises(ValueError, match="step must be given, got None"):
        tune.checkpoint_dir(step=None).__enter__()
    for i in range(9):
        time.sleep(config["sleep"])
        tune.report({"loss": config["lr"]}, checkpoint=tune.Checkpoint.from_dict({"i": i}))


def test_a_checkpoint_dir_function_continuing_from_a_dict_checkpoint_fails_naming_it():
    results = fit(
        dict_checkpoints,
        {"lr": tune.grid_search([0.1, 0.5, 0.6, 0.7, 0.8, 0.9]), "sleep": 0.05},
        metric="loss",
        mode="min",
        scheduler=HyperBandScheduler(max_t=9, reduction_factor=3),
    )
    paused = [r for r in results if r.config["lr"] == 0.1]
    assert paused[0].trial.status is TrialStatus.FAILED  # paused at its first rung, resumed
    assert "continues from a dict checkpoint" in str(paused[0].error)


def test_a_checkpoint_made_after_the_last_report_is_saved_when_the_function_returns():
    def saves_at_end(config, checkpoint_dir=None):
        tune.report(loss=1.0)
        with tune.checkpoint_dir(step=1) as folder:
            Path(folder, "model.txt").write_text("final")

    (result,) = fit(saves_at_end, {})
    with result.checkpoint.as_directory() as folder:
        assert Path(folder, "model.txt").read_text() == "final"
    outside = tune.checkpoint_dir(step=0)
    with pytest.raises(RuntimeError, match=r"tune\.checkpoint_dir\(\) works only inside"):
        outside.__enter__()


def test_generators_and_returned_values_are_results_as_in_ray():
    def yielding(config):
        for i in range(3):
            yield {"score": config["x"] + i}
        yield 7.5  # a number: the metric _metric

    def returning_a_number(config):
        return 0.25

    def returning_a_model(config, reporter):
        reporter(loss=0.5)
        return object()  # not a result: ignored, as Ray 0.x ignored return values

    def yielding_text(config):
        yield "not a result"

    (generated,) = fit(yielding, {"x": 1})
    (number,) = fit(returning_a_number, {})
    (model,) = fit(returning_a_model, {})
    (text,) = fit(yielding_text, {})
    assert [r.metrics.get("score") for r in generated.trial.reports] == [1, 2, 3, None]
    assert generated.metrics["_metric"] == 7.5 and generated.metrics["training_iteration"] == 4
    assert number.metrics["_metric"] == 0.25
    assert model.trial.status is TrialStatus.SUCCEEDED and model.metrics["loss"] == 0.5
    assert text.trial.status is TrialStatus.FAILED
    assert "yielded str 'not a result'" in str(text.error)


def test_with_parameters_keeps_the_function_s_form():
    def both(config, reporter, checkpoint_dir=None, data=None):
        reporter(total=sum(data), fresh=checkpoint_dir is None)

    (result,) = fit(tune.with_parameters(both, data=[1, 2, 3]), {})
    assert result.metrics["total"] == 6 and result.metrics["fresh"] is True


@pytest.mark.parametrize(
    ("trainable", "missing"),
    [
        (lambda: None, "too many positional arguments"),
        (lambda config, data, extra: None, "missing a required argument: 'extra'"),
        (lambda config, *, data: None, "missing a required argument: 'data'"),
    ],
)
def test_a_signature_ray_never_calls_is_refused_before_anything_runs(trainable, missing):
    for start in (
        lambda: tune.run(trainable, verbose=0, hyperlab_options=THREADS),
        lambda: tune.Tuner(trainable, hyperlab_options=THREADS),
    ):
        with pytest.raises(TypeError, match="cannot be called as Ray calls") as raised:
            start()
        assert missing in str(raised.value)
        assert "def f(config, reporter)" in str(raised.value)
    assert Store.open(None).list_experiments() == []


def test_restore_refuses_a_signature_ray_never_calls(tmp_path):
    results = fit(with_reporter, {"x": 1.0}, run_config=tune.RunConfig(storage_path=str(tmp_path)))
    with pytest.raises(TypeError, match="cannot be called as Ray calls"):
        tune.Tuner.restore(results.experiment_path, lambda config, a, b: None)


def test_a_plain_hyperlab_objective_taking_checkpoint_dir_gets_no_reporter():
    seen = []

    def objective(params, checkpoint_dir=None):
        seen.append(checkpoint_dir)
        return params["x"]

    hyperlab.run(
        objective,
        {"x": hyperlab.choice(1, 2)},
        max_trials=1,
        storage=":memory:",
        progress=False,
        executor="inprocess",
    )
    assert seen == [None]
