"""The Python API: objective styles, metrics, results, budgets and bad input."""

from __future__ import annotations

import math

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.store import ControlOutcome, KillTrial, SetConcurrency, SetMaxTrials, Store


def run(objective, space=None, **options):
    options.setdefault("storage", ":memory:")
    options.setdefault("progress", False)
    options.setdefault("max_trials", 5)
    return hyperlab.run(objective, space or {"x": hs.uniform(0, 1)}, **options)


def test_float_objective_min_and_max():
    low = run(lambda p: p["x"], max_trials=20, seed=1)
    high = run(lambda p: p["x"], max_trials=20, seed=1, mode="max")
    assert low.best_value == min(t.value for t in low.trials)
    assert high.best_value == max(t.value for t in high.trials)
    assert low.best_params == low.best_trial.params
    assert low.best_trial.status is TrialStatus.SUCCEEDED


def test_dict_result_uses_default_key_or_only_key_or_metric():
    assert run(lambda p: {"default": 2.0, "acc": 0.5}).best_value == 2.0
    assert run(lambda p: {"loss": 3.0}).best_value == 3.0
    assert run(lambda p: {"loss": 3.0, "acc": 0.1}, metric="acc", mode="max").best_value == 0.1


def failed_run(objective, space=None, **options):
    """``run`` of an experiment whose trials fail: the TrialError it raises, and its result."""
    with pytest.raises(hyperlab.TrialError) as info:
        run(objective, space, **options)
    assert info.value.result is not None
    return info.value, info.value.result


def test_ambiguous_metrics_fail_the_trial_with_a_clear_message():
    error, result = failed_run(lambda p: {"loss": 3.0, "acc": 0.1}, max_trials=2)
    assert all(t.status is TrialStatus.FAILED for t in result.trials)
    assert "pass metric=" in result.trials[0].error
    assert "pass metric=" in str(error)  # the first failure's error is in the message


def test_missing_metric_fails_the_trial():
    _, result = failed_run(lambda p: {"loss": 1.0}, metric="accuracy", max_trials=2)
    (first, _) = result.trials
    assert first.status is TrialStatus.FAILED
    assert "'accuracy' is missing" in first.error and "loss" in first.error


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "0.5", None])
def test_non_finite_or_non_numeric_result_fails_and_is_never_best(bad):
    def objective(params):
        return {"default": bad} if params["i"] == 0 else float(params["i"])

    result = run(objective, {"i": hs.choice(0, 1, 2)}, tuner="grid", max_trials=None)
    by_i = {t.params["i"]: t for t in result.trials}
    assert by_i[0].status is TrialStatus.FAILED
    assert result.best_value == 1.0


def test_bare_value_takes_the_metric_name():
    result = run(lambda p: 0.25, metric="loss")
    assert result.trials[0].metrics == {"loss": 0.25}
    assert result.best_value == 0.25


def test_generator_objective_reports_each_yield_and_ends_with_the_last():
    def objective(params):
        for step in range(4):
            yield {"loss": 10.0 - step}

    result = run(objective, max_trials=2)
    trial = result.trials[0]
    assert [r.step for r in trial.reports] == [0, 1, 2, 3]
    assert [r.metrics["loss"] for r in trial.reports] == [10.0, 9.0, 8.0, 7.0]
    assert trial.value == 7.0


def test_report_api_and_return_value():
    def objective(params):
        for step in range(3):
            hyperlab.report(loss=1.0 / (step + 1), step=step * 10)
        return {"loss": 0.01}

    trial = run(objective, max_trials=1).trials[0]
    assert [r.step for r in trial.reports] == [0, 10, 20]
    assert trial.value == 0.01


def test_report_only_objective_uses_the_last_report():
    def objective(params):
        hyperlab.report(0.5)
        hyperlab.report(0.25)

    assert run(objective, max_trials=1).trials[0].value == 0.25


def test_ray_style_reporter_and_done():
    def objective(params, reporter):
        for i in range(10):
            reporter(mean_loss=10.0 - i, done=i == 3)
        raise AssertionError("done=True must end the trial")

    trial = run(objective, metric="mean_loss", max_trials=1).trials[0]
    assert trial.status is TrialStatus.SUCCEEDED, trial.error
    assert trial.value == 7.0 and len(trial.reports) == 4


def test_objective_returning_nothing_fails():
    _, result = failed_run(lambda p: None, max_trials=1)
    trial = result.trials[0]
    assert trial.status is TrialStatus.FAILED and "returned None" in trial.error


def test_trial_stopped_raised_by_user_is_not_a_failure():
    def objective(params):
        raise hyperlab.TrialStopped("enough")

    trial = run(objective, max_trials=1).trials[0]
    assert trial.status is TrialStatus.USER_CANCELED


def test_continue_on_failure_false_ends_at_first_failure():
    def objective(params):
        raise RuntimeError("boom")

    exp = hyperlab.Experiment(
        objective,
        {"x": hs.uniform(0, 1)},
        max_trials=10,
        continue_on_failure=False,
        storage=":memory:",
        progress=False,
    )
    with pytest.raises(RuntimeError, match=r"^boom"):  # the trial's own exception
        exp.run()
    result = exp.result()
    assert result.status is ExperimentStatus.ERROR
    assert len(result.trials) == 1
    assert "boom" in result.error


def test_max_failed_trials_counts_consecutive_failures():
    def objective(params):
        raise RuntimeError("always")

    _, result = failed_run(objective, max_trials=50, max_failed_trials=3, fail_fast=False)
    assert result.status is ExperimentStatus.ERROR
    assert len(result.trials) == 3
    assert "3 trials failed in a row" in result.error


def test_the_first_trials_failing_the_same_way_raise_their_error_at_once():
    def objective(params):
        return {"loss": params["x"]}

    error, result = failed_run(objective, metric="los", max_trials=100, concurrency=1)
    assert len(result.trials) == 3 and result.status is ExperimentStatus.ERROR
    assert "the first 3 trials all failed" in str(error)
    assert "metric 'los' is missing" in str(error)
    assert result.failures() == {"metric 'los' is missing from the trial's result ['loss']": 3}


def test_some_failures_are_tolerated_and_counted_in_the_summary():
    def objective(params):
        if params["i"] % 3 == 0:
            raise ValueError(f"bad {params['i']}")
        return float(params["i"])

    result = run(objective, {"i": hs.choice(*range(9))}, tuner="grid", max_trials=None)
    assert result.status is ExperimentStatus.DONE
    assert [t.number for t in result.failed_trials] == [0, 3, 6]
    assert result.failures() == {"ValueError": 3}
    assert "9 trials, 3 failed (most often ValueError: 3), best 1" in result.summary()


def test_seed_reproduces_proposals():
    a = run(lambda p: p["x"], max_trials=100, seed=42)
    b = run(lambda p: p["x"], max_trials=100, seed=42)
    c = run(lambda p: p["x"], max_trials=100, seed=43)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    assert [t.params for t in a.trials] != [t.params for t in c.trials]


def test_max_duration_ends_the_experiment_and_cancels_running_trials():
    def objective(params):
        for _ in range(1000):
            hyperlab.report(1.0)
            import time

            time.sleep(0.01)

    result = run(objective, max_trials=None, max_duration="0.5s")
    assert result.status is ExperimentStatus.DONE
    assert result.trials[-1].status is TrialStatus.SYS_CANCELED


def test_result_to_dataframe_flattens_params():
    pytest.importorskip("pandas", reason="DataFrames need the pandas extra, not installed")
    result = run(
        lambda p: p["x"],
        {"x": hs.uniform(0, 1), "opt": hs.choice({"_name": "sgd", "lr": hs.uniform(0, 1)})},
        max_trials=3,
    )
    frame = result.to_dataframe()
    assert list(frame["number"]) == [0, 1, 2]
    assert {"params.x", "params.opt/_name", "params.opt/lr", "value"} <= set(frame.columns)
    assert list(frame["value"]) == [t.value for t in result.trials]


def test_load_reads_a_finished_experiment_from_disk(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    result = run(lambda p: p["x"], storage=url, name="loaded", max_trials=4)
    loaded = hyperlab.load(result.experiment_id, storage=url)
    assert loaded.status is ExperimentStatus.DONE
    assert [t.params for t in loaded.trials] == [t.params for t in result.trials]
    assert loaded.best_value == result.best_value


def test_default_storage_is_a_sqlite_file_in_the_home(hyperlab_home):
    result = hyperlab.run(lambda p: p["x"], {"x": hs.uniform(0, 1)}, max_trials=2, progress=False)
    assert (hyperlab_home / "hyperlab.db").exists()
    assert hyperlab.load(result.experiment_id).best_value == result.best_value
    ids = [e.id for e in Store.open(None).list_experiments()]
    assert result.experiment_id in ids


# ---- bad input: a clear ConfigError, and nothing written ----------------------------------

BAD = [
    ({"max_trials": None}, "budget"),
    ({"tuner": "bogus"}, "unknown tuner 'bogus'.*random"),
    ({"executor": "gpu-cluster"}, "unknown executor 'gpu-cluster'.*processes"),
    ({"concurrency": 0}, "concurrency"),
    ({"mode": "minimize"}, "mode.*'min' or 'max'.*minimize"),
    ({"max_duration": "soon"}, "max_duration.*'soon'"),
    ({"tuner_args": {"nope": 1}}, "tuner_args.*'nope'"),
    ({"working_dir": 5}, "working_dir.*5"),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_bad_options_raise_config_error_and_write_nothing(tmp_path, options, message):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with pytest.raises(hyperlab.ConfigError, match=message):
        run(lambda p: 1.0, storage=url, **options)
    if (tmp_path / "h.db").exists():
        assert Store.open(url).list_experiments() == []


def test_objective_must_be_callable():
    with pytest.raises(hyperlab.ConfigError, match="objective: expected a callable"):
        run("not a function")


def test_grid_on_a_float_range_names_the_parameter():
    with pytest.raises(hyperlab.SearchSpaceError, match="lr"):
        run(lambda p: 1.0, {"lr": hs.uniform(0, 1)}, tuner="grid")


def test_unknown_storage_scheme():
    with pytest.raises(hyperlab.ConfigError, match=r"storage.*mysql"):
        run(lambda p: 1.0, storage="mysql://localhost/db")


def test_resume_and_load_of_unknown_id():
    with pytest.raises(hyperlab.ExperimentNotFound, match="nosuchid"):
        hyperlab.resume("nosuchid", storage=":memory:")
    with pytest.raises(hyperlab.ExperimentNotFound):
        hyperlab.load("nosuchid", storage=":memory:")


def test_every_error_derives_from_the_root():
    for name in (
        "ConfigError",
        "SearchSpaceError",
        "StoreError",
        "ExperimentNotFound",
        "TrialError",
        "TrialStopped",
    ):
        assert issubclass(getattr(hyperlab, name), hyperlab.HyperlabError)


def test_budget_and_concurrency_changes_reach_the_driver_and_the_stored_config(tmp_path):
    import time

    url = f"sqlite:///{tmp_path / 'h.db'}"

    def objective(params):
        time.sleep(0.05)
        return params["x"]

    exp = hyperlab.Experiment(
        objective,
        {"x": hs.uniform(0, 1)},
        max_trials=1000,
        executor="threads",
        concurrency=1,
        storage=url,
        progress=False,
    )
    exp.start()
    store = Store.open(url)
    ids = [
        store.send_control(exp.id, SetMaxTrials(value=6)),
        store.send_control(exp.id, SetConcurrency(value=3)),
        store.send_control(exp.id, KillTrial(number=999)),
    ]
    result = exp.wait(timeout=30)
    assert len(result.trials) == 6 and result.status is ExperimentStatus.DONE
    outcomes = [store.get_control(i).outcome for i in ids]
    assert outcomes[:2] == [ControlOutcome.ok(), ControlOutcome.ok()]
    assert outcomes[2] == ControlOutcome.rejected("trial 999 is not running")
    options = store.get_experiment(exp.id).options
    assert options.max_trials == 6 and options.concurrency == 3


def test_result_reads_trials_lazily_and_best_agrees_either_way(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    result = run(lambda p: (p["x"] - 0.5) ** 2, storage=url, max_trials=12, seed=3)
    assert "trials" not in vars(result)  # nothing loaded yet
    best_by_query = result.best_trial
    loaded = hyperlab.load(result.experiment_id, storage=url)
    assert len(loaded.trials) == 12
    assert loaded.best_trial == best_by_query
    assert best_by_query.value == min(t.value for t in loaded.trials)


# ---- tuner= takes a name, a "module:Class" path, a class or an instance ----------------------


def test_tuner_given_as_class_path_or_instance_runs_and_is_recorded(tmp_path):
    from hyperlab.tuners import TPETuner

    space = hs.SearchSpace({"x": hs.uniform(0, 1)})
    url = f"sqlite:///{tmp_path / 'h.db'}"
    by_class = run(lambda p: p["x"], space, tuner=TPETuner, seed=3, storage=url, max_trials=6)
    by_name = run(lambda p: p["x"], space, tuner="tpe", seed=3, max_trials=6)
    by_path = run(
        lambda p: p["x"], space, tuner="hyperlab.tuners._tpe:TPETuner", seed=3, max_trials=6
    )
    assert [t.params for t in by_class.trials] == [t.params for t in by_name.trials]
    assert [t.params for t in by_path.trials] == [t.params for t in by_name.trials]
    stored = Store.open(url).get_experiment(by_class.experiment_id).options
    assert stored.tuner == "tpe"  # a registered class is stored by its name
    instance = TPETuner(space, mode="max", seed=11, n_startup_trials=2)
    by_instance = run(lambda p: p["x"], space, tuner=instance, mode="max", max_trials=6)
    assert len(by_instance.trials) == 6


def test_a_tuner_instance_is_stored_before_its_first_trial_and_rebuilt_on_resume(tmp_path):
    from hyperlab.tuners import TPETuner

    space = hs.SearchSpace({"x": hs.uniform(0, 1), "y": hs.randint(0, 5)})
    url = f"sqlite:///{tmp_path / 'h.db'}"
    straight = run(
        lambda p: p["x"] + p["y"],
        space,
        tuner=TPETuner(space, seed=5, n_startup_trials=3),
        max_trials=10,
        seed=1,
    )
    first = run(
        lambda p: p["x"] + p["y"],
        space,
        tuner=TPETuner(space, seed=5, n_startup_trials=3),
        max_trials=6,
        seed=1,
        storage=url,
    )
    resumed = hyperlab.resume(first.experiment_id, storage=url, max_trials=10, progress=False)
    assert [t.params for t in resumed.trials] == [t.params for t in straight.trials]


@pytest.mark.parametrize(
    ("tuner", "options", "message"),
    [
        ("hyperlab.space:SearchSpace", {}, "not a subclass of hyperlab.tuners.base.Tuner"),
        ("nowhere.at_all:Tuner", {}, "cannot import 'nowhere.at_all:Tuner'"),
        (42, {}, "expected a name, a Tuner subclass or a Tuner instance"),
        (dict, {}, "expected a Tuner subclass"),
    ],
)
def test_bad_tuner_values_are_config_errors(tuner, options, message):
    with pytest.raises(hyperlab.ConfigError, match=message):
        run(lambda p: p["x"], tuner=tuner, **options)


def test_a_tuner_instance_must_match_the_experiment():
    from hyperlab.tuners import RandomTuner

    space = hs.SearchSpace({"x": hs.uniform(0, 1)})
    other = RandomTuner(hs.SearchSpace({"y": hs.uniform(0, 1)}))
    with pytest.raises(hyperlab.ConfigError, match="another search space"):
        run(lambda p: p["x"], space, tuner=other)
    with pytest.raises(hyperlab.ConfigError, match="mode='max'"):
        run(lambda p: p["x"], space, tuner=RandomTuner(space, mode="max"))
    with pytest.raises(hyperlab.ConfigError, match="takes no tuner_args"):
        run(lambda p: p["x"], space, tuner=RandomTuner(space), tuner_args={"a": 1})


def test_ray_style_reporter_with_one_metric_needs_no_metric_name():
    def objective(params, reporter):
        for step in range(3):
            reporter(loss=params["x"] + step)  # the reporter adds time_this_iter_s

    result = run(objective, max_trials=2)
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)
    assert all("time_this_iter_s" in t.reports[0].metrics for t in result.trials)
    assert result.best_value == min(t.params["x"] + 2 for t in result.trials)


def test_drain_lets_the_running_trials_finish_and_starts_no_more(tmp_path):
    import threading

    started: list[float] = []
    two_started, release = threading.Event(), threading.Event()

    def objective(params):
        started.append(params["x"])
        if len(started) == 2:
            two_started.set()
        release.wait(timeout=10)
        return params["x"]

    exp = hyperlab.Experiment(
        objective,
        {"x": hs.uniform(0, 1)},
        max_trials=100,
        executor="threads",
        concurrency=2,
        storage=f"sqlite:///{tmp_path / 'h.db'}",
        progress=False,
    )
    exp.start()
    assert exp.running
    assert two_started.wait(timeout=10)
    queued = exp.add_trial({"x": 0.5})  # waits for a slot: it runs, drain or not
    exp.drain()
    release.set()
    result = exp.wait(timeout=30)
    assert not exp.running
    assert result.status is ExperimentStatus.DONE
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 3  # none after drain()
    assert result.trials[queued].params == {"x": 0.5}


def test_drain_refuses_an_experiment_not_running_here(tmp_path):
    exp = hyperlab.Experiment(
        lambda p: p["x"], {"x": hs.uniform(0, 1)}, max_trials=2, storage=":memory:", progress=False
    )
    assert not exp.running
    with pytest.raises(hyperlab.ConfigError, match=f"experiment {exp.id}: drain\\(\\) needs"):
        exp.drain()
    exp.run()
    with pytest.raises(hyperlab.ConfigError, match="it ended DONE"):
        exp.drain()
