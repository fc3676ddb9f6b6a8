"""NNI's ``resume``/``run_or_resume`` with a config that differs from the stored experiment's:
``max_trial_number``, ``max_experiment_duration`` and ``trial_concurrency`` apply (and are
recorded in the store); every other field that differs keeps its stored value, with a warning
naming it (NNI warns about every difference). Steering an experiment that is not running says
so, with how to resume it."""

from __future__ import annotations

import warnings

import pytest

from hyperlab.compat.nni.experiment import Experiment
from hyperlab.compat.nni.experiment._launch import spawn_driver
from hyperlab.errors import ConfigError
from hyperlab.store import Store
from tests.compat.nni.experiment.conftest import free_port, trials


def stored_options(experiment_id: str):
    with Store.open(None) as store:
        return store.get_experiment(experiment_id).options


@pytest.fixture
def three(project, experiments) -> Experiment:
    """An experiment of 3 trials, one at a time, that ended DONE."""
    experiment = experiments(project, max_trial_number=3, trial_concurrency=1)
    assert experiment.run(port=0) is True
    experiment.stop()
    assert len(trials(experiment.id)) == 3
    return experiment


@pytest.mark.parametrize("how", ["run_or_resume", "resume"])
def test_a_raised_max_trial_number_runs_the_trials_it_adds(project, experiments, three, how):
    again = experiments(project, max_trial_number=4, trial_concurrency=1)
    again.id = three.id
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing else differs: nothing to warn about
        assert getattr(again, how)(port=0) is True
    assert len(trials(three.id)) == 4
    assert stored_options(three.id).max_trials == 4
    assert again.get_experiment_profile()["params"]["maxTrialNumber"] == 4


def test_budget_and_concurrency_apply_and_the_rest_is_kept_with_a_warning_each(
    project, experiments, three, capsys
):
    changed = experiments(
        project,
        max_trial_number=5,
        max_experiment_duration="1h",
        trial_concurrency=2,
        search_space={"x": {"_type": "uniform", "_value": [5, 6]}},
        max_trial_duration="10m",
    )
    changed.config.tuner.name = "TPE"
    changed.id = three.id
    with pytest.warns(UserWarning) as caught:
        assert changed.resume(port=0) is True
    said = [str(w.message) for w in caught]
    assert len(said) == 3, said
    assert any(
        s.startswith(
            f"experiment {three.id}: config.tuner.name: 'TPE' was given, the experiment "
            "has 'Random'; a resumed experiment keeps its tuner.name"
        )
        for s in said
    ), said
    assert any(
        "config.max_trial_duration: 600.0 was given, the experiment has None" in s for s in said
    ), said
    assert any(
        "config.search_space: differs from the experiment's (x: {'_type': 'uniform', "
        "'_value': [5, 6]} given, {'_type': 'uniform', '_value': [0, 1]} stored)" in s
        for s in said
    ), said
    err = capsys.readouterr().err
    assert f"experiment {three.id} resumes with max_trial_number: 3 -> 5, " in err
    assert "max_experiment_duration: None -> 3600.0, trial_concurrency: 1 -> 2" in err
    options = stored_options(three.id)
    assert (options.max_trials, options.max_duration, options.concurrency) == (5, 3600.0, 2)
    assert (options.tuner, options.trial_timeout) == ("Random", None)  # kept
    xs = [t.params["x"] for t in trials(three.id)]
    assert len(xs) == 5 and all(0 <= x <= 1 for x in xs)  # the stored space


def test_an_invalid_config_is_refused_before_anything_is_written(project, experiments, three):
    with Store.open(None) as store:
        before = store.get_experiment(three.id), store.get_trials(three.id)
    bad = experiments(project, max_trial_number=4)
    bad.config.trial_concurrency = 0
    bad.id = three.id
    with pytest.raises(ConfigError, match=r"config.trial_concurrency: input should be greater"):
        bad.resume(port=0)
    with Store.open(None) as store:
        assert (store.get_experiment(three.id), store.get_trials(three.id)) == before


def test_steering_an_experiment_that_is_not_running_says_how_to_resume_it(
    project, experiments, three
):
    message = (
        rf"^experiment {three.id} is not running \(DONE\); .*continue it with "
        rf"`hyperlab resume {three.id}` or Experiment\(None, id='{three.id}'\).resume\(\)$"
    )
    for change in (
        lambda: three.update_trial_concurrency(2),
        lambda: three.update_max_trial_number(9),
        lambda: three.update_max_experiment_duration("1h"),
        lambda: three.update_search_space({"x": {"_type": "uniform", "_value": [0, 2]}}),
        lambda: three.kill_trial_job(f"{three.id}-0"),
    ):
        with pytest.raises(ConfigError, match=message):
            change()
    never_run = experiments(project)
    with pytest.raises(ConfigError, match=rf"^experiment {never_run.id} is not running \(not st"):
        never_run.update_max_trial_number(9)


@pytest.mark.slow  # a driver process of its own: about 8 s
def test_a_detached_driver_resumes_with_the_changes(three):
    """``RunMode.Detach`` runs ``hyperlab resume ID --max-trials N ...`` in a process of its
    own: the changes reach it as flags."""
    with Store.open(None) as store:
        changes = {"max_trials": 4, "max_duration": 3600.0, "concurrency": 2}
        driver = spawn_driver(store, three.id, free_port(), "127.0.0.1", changes)
        assert driver.wait(timeout=60) == 0
        options = store.get_experiment(three.id).options
    assert (options.max_trials, options.max_duration, options.concurrency) == (4, 3600.0, 2)
    assert len(trials(three.id)) == 4
