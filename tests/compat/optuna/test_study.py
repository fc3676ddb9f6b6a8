"""``hyperlab.compat.optuna``: Optuna's study and trial API, on a hyperlab experiment."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import hyperlab
import hyperlab.compat.optuna as optuna
from hyperlab.compat.optuna.distributions import (
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
    from_spec,
    to_spec,
)
from hyperlab.compat.optuna.trial import TrialState
from hyperlab.store import Store
from hyperlab.trial import TrialStatus


def storage(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'optuna.db'}"


@pytest.mark.parametrize(
    ("distribution", "values"),
    [
        (IntDistribution(1, 3), {1, 2, 3}),  # Optuna's high is included
        (IntDistribution(0, 10, step=4), {0, 4, 8}),  # high lowered onto the step
        (IntDistribution(1, 9, step=4), {1, 5, 9}),  # a low off the step: its own values
        (FloatDistribution(0.0, 1.0, step=0.25), {0.0, 0.25, 0.5, 0.75, 1.0}),
        (CategoricalDistribution(["a", None, 2]), {"a", None, 2}),
        (FloatDistribution(2.0, 2.0), {2.0}),
    ],
)
def test_each_distribution_takes_exactly_optunas_values(distribution, values) -> None:
    import numpy as np

    from hyperlab.space import SearchSpace

    spec = to_spec(distribution)
    drawn = SearchSpace({"p": spec}).sample(np.random.default_rng(0), 400)
    assert {distribution.cast(d["p"]) for d in drawn} == values
    if not isinstance(distribution, FloatDistribution) or distribution.low != distribution.high:
        back = from_spec(spec)
        assert back == distribution or (
            isinstance(back, CategoricalDistribution) and set(back.choices) == values
        )


def test_log_ints_stay_ints_and_in_range(tmp_path: Path) -> None:
    def objective(trial: optuna.Trial) -> float:
        n = trial.suggest_int("n", 2, 300, log=True)
        assert isinstance(n, int) and 2 <= n <= 300
        return float(n)

    study = optuna.create_study(storage=storage(tmp_path))
    study.optimize(objective, n_trials=10)
    assert all(isinstance(t.params["n"], int) for t in study.trials)
    assert study.trials[0].distributions["n"] == IntDistribution(2, 300, log=True)


def test_a_contradicting_suggest_fails_the_trial_naming_both(tmp_path: Path) -> None:
    def objective(trial: optuna.Trial) -> float:
        if trial.number == 0:
            return trial.suggest_float("x", 0, 1)
        return trial.suggest_int("x", 0, 10)

    study = optuna.create_study(storage=storage(tmp_path))
    study.optimize(objective, n_trials=2, catch=(ValueError,))
    second = hyperlab.load(study.experiment_id, storage=storage(tmp_path)).trials[1]
    assert second.status is TrialStatus.FAILED
    assert "'x'" in (second.error or "") and "uniform" in (second.error or "")
    assert "randint" in (second.error or "")


def test_unmapped_calls_are_refused_before_anything_runs() -> None:
    with pytest.raises(NotImplementedError, match=r"optuna\.copy_study: .*import-optuna"):
        optuna.copy_study(from_study_name="a", from_storage="x", to_storage="y")
    with pytest.raises(NotImplementedError, match=r"NSGAIISampler\(mutation="):
        optuna.samplers.NSGAIISampler(mutation=object())
    with pytest.raises(NotImplementedError, match="BLXAlphaCrossover"):
        optuna.samplers.nsgaii.BLXAlphaCrossover()
    with pytest.raises(NotImplementedError, match="sampler=object"):
        optuna.create_study(sampler=object())  # type: ignore[arg-type]


def test_names_are_unique_unless_loaded(tmp_path: Path) -> None:
    url = storage(tmp_path)
    study = optuna.create_study(study_name="s", storage=url, direction="maximize")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    with pytest.raises(optuna.exceptions.DuplicatedStudyError, match="load_if_exists"):
        optuna.create_study(study_name="s", storage=url)
    again = optuna.create_study(study_name="s", storage=url, load_if_exists=True)
    assert again.direction is optuna.study.StudyDirection.MAXIMIZE
    again.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    assert len(optuna.load_study(study_name="s", storage=url).trials) == 5
    assert optuna.get_all_study_names(url) == ["s"]
    with pytest.raises(KeyError):
        optuna.load_study(study_name="nope", storage=url)


def test_an_uncaught_exception_ends_optimize_after_failing_the_trial(tmp_path: Path) -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        if trial.number == 2:
            raise RuntimeError("boom")
        if trial.number == 1:
            raise KeyError("caught")
        return x

    study = optuna.create_study(storage=storage(tmp_path))
    with pytest.raises(RuntimeError, match="boom"):
        study.optimize(objective, n_trials=10, catch=(KeyError,))
    states = [t.state for t in study.trials]
    assert states == [TrialState.COMPLETE, TrialState.FAIL, TrialState.FAIL]


def test_timeout_and_stop_let_running_trials_finish(tmp_path: Path) -> None:
    def slow(trial: optuna.Trial) -> float:
        time.sleep(0.3)
        return trial.suggest_float("x", 0, 1)

    study = optuna.create_study(storage=storage(tmp_path))
    study.optimize(slow, timeout=0.5, n_jobs=2)  # without a trial count: the timeout ends it
    assert study.trials and all(t.state is TrialState.COMPLETE for t in study.trials)

    def stop_after_three(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        if trial.number == 2:
            study.stop()

    other = optuna.create_study(storage=f"sqlite:///{tmp_path / 'other.db'}")
    other.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=50, callbacks=[stop_after_three])
    assert len(other.trials) == 3


def test_a_grid_sampler_covers_its_grid_then_ends(tmp_path: Path) -> None:
    grid = {"x": [-1.0, 0.0, 1.0], "n": [1, 2]}
    study = optuna.create_study(
        storage=storage(tmp_path), sampler=optuna.samplers.GridSampler(grid)
    )
    study.optimize(lambda t: t.suggest_float("x", -5, 5) * t.suggest_int("n", 0, 10), n_trials=50)
    seen = {(t.params["x"], t.params["n"]) for t in study.trials}
    assert len(study.trials) == 6 and seen == {(x, n) for x in grid["x"] for n in grid["n"]}


def test_should_prune_reflects_the_report_just_made(tmp_path: Path) -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        for step in range(10):
            trial.report(x + step * (0 if trial.number < 3 else 1), step)
            if trial.should_prune():
                trial.set_user_attr("pruned_at", step)
                raise optuna.TrialPruned()
        return x

    study = optuna.create_study(
        storage=storage(tmp_path),
        pruner=optuna.pruners.ThresholdPruner(upper=3.5),
    )
    study.optimize(objective, n_trials=5)
    pruned = [t for t in study.trials if t.state is TrialState.PRUNED]
    assert [t.number for t in pruned] == [3, 4]
    for trial in pruned:  # the verdict on the first value above 3.5 came right after it
        first = next(s for s, v in sorted(trial.intermediate_values.items()) if v > 3.5)
        assert max(trial.intermediate_values) == first


def test_ask_and_tell_from_threads(tmp_path: Path) -> None:
    study = optuna.create_study(storage=storage(tmp_path))
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(5):
                trial = study.ask()
                study.tell(trial, trial.suggest_float("x", 0, 1))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert sorted(t.number for t in study.trials) == list(range(10))
    assert all(t.state is TrialState.COMPLETE for t in study.trials)
    with pytest.raises(ValueError, match="not an asked trial"):
        study.tell(0, 1.0)
    study.stop()  # ends the session: its experiment stops, nothing left running
    record = hyperlab.load(study.experiment_id, storage=storage(tmp_path))
    assert record.status is hyperlab.ExperimentStatus.STOPPED
    assert study.ask().number == 10  # a new session continues the study
    study.stop()


def square(trial: optuna.Trial) -> float:
    return trial.suggest_float("x", -5, 5) ** 2


def test_hyperlab_resume_continues_a_study_with_its_stored_objective(tmp_path: Path) -> None:
    url = storage(tmp_path)
    study = optuna.create_study(study_name="again", storage=url)
    study.optimize(square, n_trials=3)
    result = hyperlab.resume("again", storage=url, max_trials=5, progress=False)
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 5
    assert len(optuna.load_study(study_name="again", storage=url).trials) == 5


def test_a_loaded_study_runs_with_the_sampler_and_pruner_it_is_given(tmp_path: Path) -> None:
    def reporting(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        trial.report(1.0, 0)
        if trial.should_prune():
            raise optuna.TrialPruned()
        return x

    first = optuna.create_study(study_name="s", storage=storage(tmp_path))
    first.optimize(reporting, n_trials=3)  # the default pruner prunes none of these
    loaded = optuna.create_study(  # Optuna keeps neither sampler nor pruner with the study
        study_name="s",
        storage=storage(tmp_path),
        load_if_exists=True,
        sampler=optuna.samplers.RandomSampler(seed=1),
        pruner=optuna.pruners.ThresholdPruner(upper=0.5),
    )
    loaded.optimize(reporting, n_trials=2)
    states = [t.state for t in loaded.trials]
    assert states == [TrialState.COMPLETE] * 3 + [TrialState.PRUNED] * 2
    with Store.open(storage(tmp_path)) as store:
        options = store.get_experiment(store.resolve("s")).options
    assert (options.tuner, options.assessor) == (
        "random",
        "hyperlab.compat.optuna._rules:ThresholdRule",
    )


def test_user_attrs_come_back_and_only_trials_that_set_some_store_them(tmp_path: Path) -> None:
    def objective(trial: optuna.Trial) -> float:
        if trial.number == 0:
            trial.set_user_attr("note", "first")
        return trial.suggest_float("x", 0, 1)

    study = optuna.create_study(storage=storage(tmp_path))
    study.optimize(objective, n_trials=2)
    assert [t.user_attrs for t in study.trials] == [{"note": "first"}, {}]
    with Store.open(storage(tmp_path)) as store:
        (experiment,) = store.list_experiments()
        stored = store.get_trials(experiment.id)
    assert [sorted(t.metrics) for t in stored] == [["user_attrs", "value"], ["value"]]


def test_bad_optimize_and_tell_arguments_are_named_and_leave_the_study_usable(
    tmp_path: Path,
) -> None:
    study = optuna.create_study(storage=storage(tmp_path))
    with pytest.raises(ValueError, match=r"timeout: expected seconds >= 0 or None, got 'x'"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), timeout="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"n_trials: expected a non-negative int .* got '3'"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials="3")  # type: ignore[arg-type]
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    assert len(study.trials) == 2
    study.ask()
    with pytest.raises(TypeError, match=r"tell\(trial\): expected an asked Trial .* got '0'"):
        study.tell("0", 1.0)  # type: ignore[arg-type]
    study.stop()
    with pytest.raises(TypeError, match=r"GridSampler: search_space must map .* got \[1, 2\]"):
        optuna.samplers.GridSampler([1, 2])  # type: ignore[arg-type]


def test_a_loaded_study_refuses_another_grid(tmp_path: Path) -> None:
    def objective(trial: optuna.Trial) -> float:
        return trial.suggest_float("x", 0, 1)

    grid = optuna.samplers.GridSampler({"x": [0.1, 0.2]})
    optuna.create_study(study_name="g", storage=storage(tmp_path), sampler=grid).optimize(
        objective, n_trials=1
    )
    other = optuna.samplers.GridSampler({"x": [0.3, 0.4]})
    loaded = optuna.load_study(study_name="g", storage=storage(tmp_path), sampler=other)
    with pytest.raises(hyperlab.ConfigError, match=r"not the grid the study was created with"):
        loaded.optimize(objective, n_trials=1)


def test_a_study_in_memory_reads_its_own_trials() -> None:
    study = optuna.create_study(storage=":memory:")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 3
    assert study.best_value == min(t.value for t in study.trials if t.value is not None)


def test_optimize_keeps_no_trial_object_once_it_ended(tmp_path: Path) -> None:
    kept: list[object] = []

    def objective(trial: optuna.Trial) -> float:
        kept.append(trial)
        return trial.suggest_float("x", 0, 1)

    import gc
    import weakref

    study = optuna.create_study(storage=storage(tmp_path))
    study.optimize(objective, n_trials=3)
    refs = [weakref.ref(t) for t in kept]
    kept.clear()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
