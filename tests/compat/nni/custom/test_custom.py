"""A user's own NNI tuner and assessor classes (``algorithms/demo_tuner.py``, written as NNI's
example custom tuner is, importing ``nni``) run unchanged: named in an NNI YAML
(``className``/``codeDirectory``/``classArgs``) run by ``hyperlab run``, in NNI's Python
``Experiment`` (``CustomAlgorithmConfig``), and given as classes to ``hyperlab.run``. Each
records the calls it gets; the tests check NNI's order and arguments, that the trials run the
tuner's parameters, that the assessor's ``Bad`` stops trials, and what a resume replays."""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

import hyperlab
from hyperlab import TrialStatus
from hyperlab.assessors import Decision
from hyperlab.cli import main
from hyperlab.compat.nni.custom import CustomAssessor, CustomTuner
from hyperlab.compat.nni.experiment import CustomAlgorithmConfig, Experiment
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.store import Store
from hyperlab.trial import Report, Trial

ALGORITHMS = Path(__file__).parent / "algorithms"
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}
THRESHOLD = 0.3  # the assessor stops a trial whose second result is below it: x < 0.15


def calls(log: Path) -> list[list[Any]]:
    """The calls the user's classes recorded, in order."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def tuner_calls(log: Path) -> list[list[Any]]:
    """The calls into the tuner alone."""
    assessor = ("assessor.__init__", "assess_trial", "assessor.trial_end")
    return [call for call in calls(log) if call[0] not in assessor]


def expected_tuner_calls(exp_id: str, trials: list[Trial]) -> list[list[Any]]:
    """What NNI's dispatcher calls, trial after trial at concurrency 1: the parameters, then
    the final result as reported (succeeded trials only), then the end."""
    out: list[list[Any]] = []
    for trial in trials:
        out.append(["generate_parameters", trial.number, ["st_callback"]])
        success = trial.status is TrialStatus.SUCCEEDED
        if success:
            kwargs = {"customized": False, "trial_job_id": f"{exp_id}-{trial.number}"}
            value = trial.params["x"] * 3
            out.append(["receive_trial_result", trial.number, trial.params, value, kwargs])
        out.append(["trial_end", trial.number, success, {}])
    return out


def write_config(folder: Path, log: Path, max_trials: int, **tuner_args: Any) -> Path:
    """An NNI v2 config naming the user's classes by ``className``, relative ``codeDirectory``
    included (it is the config file's folder's, as in NNI)."""
    relative = os.path.relpath(ALGORITHMS, folder)
    config = {
        "searchSpace": SPACE,
        "trialCommand": f"{shlex.quote(sys.executable)} trial.py",
        "trialCodeDirectory": str(ALGORITHMS),
        "trialConcurrency": 1,
        "maxTrialNumber": max_trials,
        "tuner": {
            "codeDirectory": relative,
            "className": "demo_tuner.DemoTuner",
            "classArgs": {"log": str(log), "optimize_mode": "maximize", "seed": 3, **tuner_args},
        },
        "assessor": {
            "codeDirectory": str(ALGORITHMS),
            "className": "demo_tuner.ThresholdAssessor",
            "classArgs": {"log": str(log), "threshold": THRESHOLD},
        },
        "trainingService": {"platform": "local"},
    }
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def stored(storage: str) -> tuple[str, list[Trial]]:
    with Store.open(storage) as store:
        (summary,) = store.list_experiments()
        return summary.id, store.get_trials(summary.id)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HYPERLAB_HOME", str(tmp_path / "home"))
    monkeypatch.syspath_prepend(str(ALGORITHMS))  # so the classes are found by path too
    return tmp_path


def test_a_yaml_s_custom_tuner_and_assessor_are_called_in_nni_s_order(home: Path) -> None:
    log = home / "calls.jsonl"
    storage = f"sqlite:///{home / 'runs.db'}"
    seed_of_x = 3  # DemoTuner's seed
    assert main(["--storage", storage, "run", str(write_config(home, log, 6))]) == 0
    exp_id, trials = stored(storage)
    assert len(trials) == 6
    with Store.open(storage) as store:
        options = store.get_experiment(exp_id).options
    assert options.tuner == "hyperlab.compat.nni.custom:CustomTuner"
    assert options.tuner_args["code_directory"] == str(ALGORITHMS.resolve())  # was relative
    assert options.mode.value == "max"  # the class's optimize_mode
    recorded = calls(log)
    assert recorded[:3] == [  # as NNI: both built, then the dispatcher starts
        ["tuner.__init__", "maximize", seed_of_x, None],
        ["assessor.__init__", THRESHOLD, 2],
        ["update_search_space", SPACE],
    ]
    assert tuner_calls(log)[2:] == expected_tuner_calls(exp_id, trials)
    # every trial ran what the tuner proposed for its number
    for trial in trials:
        assert trial.params == {"x": pytest.approx(proposal(seed_of_x, trial.number))}
    # the assessor saw each history as reported (dicts), and stopped the trials below it
    for trial in trials:
        histories = [c[2] for c in recorded if c[0] == "assess_trial" and c[1] == trial.id]
        x = trial.params["x"]
        assert histories[0] == [{"default": x, "step": 0}]
        assert all(len(h) == i + 1 for i, h in enumerate(histories))
        ends = [c for c in recorded if c[0] == "assessor.trial_end" and c[1] == trial.id]
        assert ends == [["assessor.trial_end", trial.id, trial.status is TrialStatus.SUCCEEDED]]
        if 2 * x < THRESHOLD:
            assert trial.status is TrialStatus.EARLY_STOPPED and len(histories) == 2
        else:
            assert trial.status is TrialStatus.SUCCEEDED and len(histories) == 3


def proposal(seed: int, parameter_id: int) -> float:
    """DemoTuner's proposal for ``parameter_id`` (random from its own seed)."""
    import random

    return random.Random(seed * 100_003 + parameter_id).uniform(0, 1)


def test_no_more_trial_error_ends_the_search(home: Path) -> None:
    log = home / "calls.jsonl"
    storage = f"sqlite:///{home / 'runs.db'}"
    assert main(["--storage", storage, "run", str(write_config(home, log, 10, max_params=2))]) == 0
    exp_id, trials = stored(storage)
    assert [t.number for t in trials] == [0, 1]
    generated = [c[1] for c in tuner_calls(log) if c[0] == "generate_parameters"]
    assert generated == [0, 1, 2]  # the third raised NoMoreTrialError
    with Store.open(storage) as store:
        assert store.get_experiment(exp_id).status.value == "DONE"


def objective(params: dict[str, float]) -> None:
    """A function trial reporting through NNI's trial API."""
    import hyperlab.compat.nni as nni

    x = params["x"]
    for step in range(3):
        nni.report_intermediate_result({"default": x * (step + 1), "step": step})
    nni.report_final_result(x * 3)


def run_classes(home: Path, log: Path, max_trials: int) -> hyperlab.Result:
    from demo_tuner import DemoTuner, ThresholdAssessor

    return hyperlab.run(
        objective,
        SPACE,
        tuner=DemoTuner,
        tuner_args={"log": str(log), "seed": 3},
        assessor=ThresholdAssessor,
        assessor_args={"log": str(log), "threshold": THRESHOLD},
        mode="max",
        max_trials=max_trials,
        storage=f"sqlite:///{home / 'runs.db'}",
        progress=False,
    )


def test_classes_given_to_run_are_adapted_and_a_resume_replays_the_history(home: Path) -> None:
    log = home / "calls.jsonl"
    result = run_classes(home, log, 4)
    exp_id, trials = stored(f"sqlite:///{home / 'runs.db'}")
    assert tuner_calls(log)[2:] == expected_tuner_calls(exp_id, trials)
    assert all(
        (t.status is TrialStatus.EARLY_STOPPED) == (2 * t.params["x"] < THRESHOLD) for t in trials
    )
    succeeded = [t for t in trials if t.status is TrialStatus.SUCCEEDED]
    assert result.best_trial == max(succeeded, key=lambda t: t.value or 0)
    log.unlink()
    hyperlab.resume(exp_id, storage=f"sqlite:///{home / 'runs.db'}", max_trials=6)
    _, after = stored(f"sqlite:///{home / 'runs.db'}")
    assert len(after) == 6 and after[:4] == trials
    replayed = tuner_calls(log)
    # a fresh instance, load_checkpoint, the space, then the history in number order, as
    # NNI's dispatcher would have called it, then the search goes on from trial 4
    assert replayed[:3] == [
        ["tuner.__init__", "maximize", 3, None],
        ["load_checkpoint"],
        ["update_search_space", SPACE],
    ]
    history = expected_tuner_calls(exp_id, trials)
    assert replayed[3:] == [c for c in history if c[0] != "generate_parameters"] + (
        expected_tuner_calls(exp_id, after[4:])
    )
    for trial in after[4:]:
        assert trial.params == {"x": pytest.approx(proposal(3, trial.number))}


def test_nni_s_python_experiment_runs_a_custom_algorithm_config(home: Path) -> None:
    log = home / "calls.jsonl"
    experiment = Experiment("local", storage=f"sqlite:///{home / 'runs.db'}")
    experiment.config.trial_command = f"{shlex.quote(sys.executable)} trial.py"
    experiment.config.trial_code_directory = ALGORITHMS
    experiment.config.search_space = SPACE
    experiment.config.tuner = CustomAlgorithmConfig(
        class_name="demo_tuner.DemoTuner",
        code_directory=ALGORITHMS,
        class_args={"log": str(log), "optimize_mode": "maximize", "seed": 3},
    )
    experiment.config.assessor.class_name = "demo_tuner.ThresholdAssessor"
    experiment.config.assessor.code_directory = ALGORITHMS
    experiment.config.assessor.class_args = {"log": str(log), "threshold": THRESHOLD}
    experiment.config.max_trial_number = 3
    experiment.config.trial_concurrency = 1
    assert experiment.run(port=0) is True
    exp_id, trials = stored(f"sqlite:///{home / 'runs.db'}")
    made = tuner_calls(log)
    # the launch checks the config by building the tuner (only) before the driver does
    assert [call[0] for call in made[:2]] == ["tuner.__init__", "tuner.__init__"]
    assert made[2] == ["update_search_space", SPACE]
    assert made[3:] == expected_tuner_calls(exp_id, trials)
    assert sum(1 for c in calls(log) if c[0] == "assess_trial") >= 2 * len(trials)


def test_what_cannot_run_is_refused_naming_it(home: Path) -> None:
    from demo_tuner import DemoTuner

    config = write_config(home, home / "calls.jsonl", 2)
    data = yaml.safe_load(config.read_text())
    with pytest.raises(ConfigError, match=r"tuner: an instance of the NNI tuner DemoTuner"):
        hyperlab.run(objective, SPACE, tuner=DemoTuner(str(home / "x")), max_trials=1)
    data["tuner"] = {"className": "demo_tuner.Nothing", "codeDirectory": str(ALGORITHMS)}
    config.write_text(yaml.safe_dump(data))
    storage = f"sqlite:///{home / 'runs.db'}"
    assert main(["--storage", storage, "run", str(config)]) != 0


def make_tuner(log: Path) -> CustomTuner:
    space = SearchSpace.from_nni(SPACE)
    return CustomTuner(
        space,
        mode="max",
        seed=0,
        class_name="demo_tuner.DemoTuner",
        code_directory=str(ALGORITHMS),
        class_args={"log": str(log)},
    )


def test_imported_results_go_to_import_data_and_hand_added_trials_are_not_learnt(
    home: Path,
) -> None:
    log = home / "calls.jsonl"
    tuner = make_tuner(log)
    assert tuner.suggest(0) == {"x": pytest.approx(proposal(0, 0))}
    tuner.observe(
        Trial("e", -1, {"x": 0.5}, TrialStatus.SUCCEEDED, value=2, metrics={"default": 2})
    )
    added = Trial("e", 1, {"x": 0.2}, TrialStatus.SUCCEEDED, value=1, metrics={"default": 1})
    tuner.observe(replace(added, source="custom"))
    both = {"default": 3.0, "loss": 1.0}
    tuner.observe(Trial("e", 0, {"x": 0.1}, TrialStatus.SUCCEEDED, value=3, metrics=both))
    assert tuner_calls(log)[3:] == [
        ["import_data", [{"parameter": {"x": 0.5}, "value": 2}]],
        ["trial_end", 1, True, {}],  # a hand-added trial's result is not given (NNI's rule)
        # the params the tuner proposed, the value as reported (a dict: two metrics)
        [
            "receive_trial_result",
            0,
            {"x": proposal(0, 0)},
            both,
            {"customized": False, "trial_job_id": "e-0"},
        ],
        ["trial_end", 0, True, {}],
    ]


def test_an_assessor_answer_that_is_no_assess_result_is_an_error(home: Path) -> None:
    assessor = CustomAssessor(
        class_name="demo_tuner.ThresholdAssessor",
        code_directory=str(ALGORITHMS),
        class_args={"log": str(home / "calls.jsonl"), "threshold": 0.5},
        mode="max",
    )
    trial = Trial("e", 0, {"x": 0.1}, TrialStatus.RUNNING)
    assessor.on_start(trial, 0.0)
    assert assessor.on_report(trial, Report(0, {"default": 0.1}, 0.0), 0.0) is Decision.CONTINUE
    assert assessor.on_report(trial, Report(1, {"default": 0.1}, 0.0), 0.0) is Decision.STOP
    assessor.algorithm.assess_trial = lambda job, history: "maybe"
    other = replace(trial, number=1)
    assessor.on_start(other, 0.0)
    with pytest.raises(TypeError, match=r"returned 'maybe'; expected AssessResult.Good or"):
        assessor.on_report(other, Report(0, {"default": 0.1}, 0.0), 0.0)
