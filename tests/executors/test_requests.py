"""Define by run: a running trial asks the driver for parameters (``hyperlab.suggest``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

import hyperlab
from hyperlab.config import load_config
from hyperlab.store import Store
from hyperlab.trial import TrialStatus
from hyperlab.tuners import RandomTuner

EXECUTORS = ["inprocess", "threads", "processes"]
SPACE = {"x": hyperlab.uniform(0, 1)}


def define_by_run(params: dict) -> float:
    lr = hyperlab.suggest("lr", hyperlab.loguniform(1e-4, 1e-1))
    layers = hyperlab.suggest("layers", {"_type": "choice", "_value": [1, 2, 3]})
    assert hyperlab.suggest("lr", hyperlab.loguniform(1e-4, 1e-1)) == lr  # asked once
    assert params["lr"] == lr and params["layers"] == layers  # its params grow
    return (params["x"] - 0.5) ** 2 + lr + layers


@pytest.mark.parametrize("executor", EXECUTORS)
def test_asked_parameters_are_drawn_from_their_distribution_and_stored(
    executor: str, tmp_path: Path
) -> None:
    storage = str(tmp_path / "store.db")
    result = hyperlab.run(
        define_by_run,
        SPACE,
        executor=executor,
        concurrency=2,
        max_trials=8,
        seed=7,
        storage=storage,
        progress=False,
    )
    stored = hyperlab.load(result.experiment_id, storage=storage).trials
    assert len(stored) == 8
    for trial in stored:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert set(trial.params) == {"x", "lr", "layers"}
        assert 1e-4 <= trial.params["lr"] <= 1e-1
        assert trial.params["layers"] in (1, 2, 3)
        assert trial.value == pytest.approx(
            (trial.params["x"] - 0.5) ** 2 + trial.params["lr"] + trial.params["layers"]
        )
    assert len({t.params["lr"] for t in stored}) == 8, "each trial draws its own"


def test_the_same_seed_gives_the_same_values_on_every_executor() -> None:
    seen = []
    for executor in EXECUTORS:
        result = hyperlab.run(
            define_by_run,
            SPACE,
            executor=executor,
            max_trials=4,
            seed=11,
            progress=False,
            storage=":memory:",
        )
        seen.append([(t.params["lr"], t.params["layers"]) for t in result.trials])
    assert seen[0] == seen[1] == seen[2]


def asks_twice_differently(params: dict) -> float:
    hyperlab.suggest("lr", hyperlab.uniform(0, 1))
    hyperlab.suggest("lr", hyperlab.loguniform(1e-4, 1e-1))
    return 0.0


def asks_for_x_as_defined(params: dict) -> float:
    return hyperlab.suggest("x", hyperlab.uniform(0, 1)) - params["x"]  # the tuner's value


def asks_for_x_differently(params: dict) -> float:
    hyperlab.suggest("x", hyperlab.uniform(0, 2))
    return 0.0


@pytest.mark.parametrize(
    ("objective", "expected"),
    [
        (asks_twice_differently, ["parameter 'lr'", "'uniform'", "'loguniform'"]),
        (asks_for_x_differently, ["parameter 'x'", "search space defines it", "[0, 2]"]),
    ],
)
@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_a_contradicting_definition_fails_the_trial_naming_both(
    objective: object, expected: list[str], executor: str
) -> None:
    experiment = hyperlab.Experiment(
        objective, SPACE, executor=executor, max_trials=1, storage=":memory:", progress=False
    )
    with pytest.raises(hyperlab.TrialError):
        experiment.run()
    (trial,) = experiment.result().trials
    assert trial.status is TrialStatus.FAILED
    for text in expected:
        assert text in (trial.error or ""), trial.error


def test_a_parameter_of_the_space_gets_the_tuners_value() -> None:
    result = hyperlab.run(
        asks_for_x_as_defined,
        SPACE,
        executor="threads",
        max_trials=3,
        storage=":memory:",
        progress=False,
    )
    assert [t.value for t in result.trials] == [0.0, 0.0, 0.0]
    assert all(set(t.params) == {"x"} for t in result.trials)


def test_a_bad_distribution_is_named() -> None:
    def bad(params: dict) -> float:
        hyperlab.suggest("lr", {"_type": "loguniform", "_value": [0, 1]})
        return 0.0

    experiment = hyperlab.Experiment(
        bad, SPACE, executor="threads", max_trials=1, storage=":memory:", progress=False
    )
    with pytest.raises(hyperlab.TrialError):
        experiment.run()
    assert "lr" in (experiment.result().trials[0].error or "")


def test_a_tuner_with_a_model_learns_from_its_own_parameters_and_resume_replays(
    tmp_path: Path,
) -> None:
    storage = str(tmp_path / "store.db")
    first = hyperlab.run(
        define_by_run,
        SPACE,
        tuner="tpe",
        max_trials=15,
        seed=5,
        storage=storage,
        progress=False,
    )
    again = hyperlab.resume(first.experiment_id, storage=storage, max_trials=20, progress=False)
    trials = again.trials
    assert len(trials) == 20
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials)
    assert all(set(t.params) == {"x", "lr", "layers"} for t in trials)


def test_outside_a_trial_suggest_says_so() -> None:
    with pytest.raises(hyperlab.HyperlabError, match="no trial is running"):
        hyperlab.suggest("lr", hyperlab.uniform(0, 1))


def test_a_command_trial_asks_through_its_channel(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import hyperlab\n"
        "lr = hyperlab.suggest('lr', hyperlab.loguniform(1e-4, 1e-1))\n"
        "x = hyperlab.suggest('x', hyperlab.uniform(0, 1))\n"
        "hyperlab.report(loss=x + lr)\n"
    )
    storage = str(tmp_path / "store.db")
    result = hyperlab.run(
        hyperlab.CommandTrial(f"{sys.executable} {script}"),
        SPACE,
        executor="command",
        concurrency=2,
        max_trials=3,
        seed=4,
        storage=storage,
        progress=False,
        metric="loss",
    )
    local = hyperlab.run(
        define_by_run, SPACE, max_trials=3, seed=4, storage=":memory:", progress=False
    )
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.value == pytest.approx(trial.params["x"] + trial.params["lr"])
    # before any trial ended, lr was drawn from the trial's seed, as in a function trial
    assert result.trials[0].params["lr"] == local.trials[0].params["lr"]


class RecordingTuner(RandomTuner):
    """A random tuner that remembers the spaces it was built on."""

    spaces: ClassVar[list[list[str]]] = []

    def __init__(self, space: Any, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        RecordingTuner.spaces.append(list(self.space.names))


def conditional(params: dict) -> float:
    lr = hyperlab.suggest("lr", hyperlab.loguniform(1e-4, 1e-1))
    if params["x"] > 0.5:
        hyperlab.suggest("momentum", hyperlab.uniform(0, 1))
    return params["x"] + lr


def test_the_tuner_models_what_every_trial_defined_and_draws_the_rest(tmp_path: Path) -> None:
    RecordingTuner.spaces.clear()
    storage = str(tmp_path / "store.db")
    result = hyperlab.run(
        conditional,
        SPACE,
        tuner=RecordingTuner,
        max_trials=12,
        seed=2,
        storage=storage,
        progress=False,
    )
    assert RecordingTuner.spaces[0] == ["x"]
    # lr is in every trial: modelled; momentum only where x > 0.5: drawn once a trial lacks it
    assert RecordingTuner.spaces[-1] == ["x", "lr"], RecordingTuner.spaces
    store = Store.open(storage)
    try:  # both recorded, with their distributions
        suggested = store.get_experiment(result.experiment_id).options.suggested
    finally:
        store.close()
    assert set(suggested) == {"lr", "momentum"}
    assert suggested["lr"] == {"_type": "loguniform", "_value": [1e-4, 0.1]}
    trials = hyperlab.load(result.experiment_id, storage=storage).trials
    assert all(("momentum" in t.params) == (t.params["x"] > 0.5) for t in trials)
    # resumed, the tuner is rebuilt the same way before it proposes again
    RecordingTuner.spaces.clear()
    hyperlab.resume(result.experiment_id, storage=storage, max_trials=14, progress=False)
    assert RecordingTuner.spaces[-1] == ["x", "lr"]


def first_uniform_then_log(params: dict) -> float:
    first = params["n"] == 0
    hyperlab.suggest("lr", hyperlab.uniform(0, 1) if first else hyperlab.loguniform(1e-3, 1))
    return 0.0


def test_a_trial_contradicting_an_earlier_trial_fails_naming_both() -> None:
    experiment = hyperlab.Experiment(
        first_uniform_then_log,
        {"n": hyperlab.choice(0, 1)},
        tuner="grid",
        max_trials=2,
        storage=":memory:",
        progress=False,
        fail_fast=False,
    )
    experiment.run()
    first, second = experiment.result().trials
    assert first.status is TrialStatus.SUCCEEDED
    assert second.status is TrialStatus.FAILED
    assert "an earlier trial defined it as" in (second.error or "")
    assert "'loguniform'" in (second.error or "") and "'uniform'" in (second.error or "")


def test_hyperlab_show_lists_the_parameters_defined_by_run(tmp_path: Path) -> None:
    storage = str(tmp_path / "store.db")
    result = hyperlab.run(define_by_run, SPACE, max_trials=2, storage=storage, progress=False)
    shown = subprocess.run(
        [sys.executable, "-m", "hyperlab", "--storage", storage, "show", result.experiment_id],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if x.strip().startswith("by run"))
    assert "lr loguniform[0.0001, 0.1]" in line and "layers choice[1, 2, 3]" in line


def test_a_config_file_cannot_set_what_the_driver_records(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "search_space: {x: {_type: uniform, _value: [0, 1]}}\n"
        "trial: {command: 'true'}\n"
        "max_trials: 1\n"
        "suggested: {lr: {_type: uniform, _value: [0, 1]}}\n"
    )
    with pytest.raises(hyperlab.ConfigError, match="suggested: the driver records"):
        load_config(path)
