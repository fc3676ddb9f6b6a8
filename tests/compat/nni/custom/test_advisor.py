"""A user's own NNI advisor (``algorithms/demo_advisor.py``, a ``MsgDispatcherBase`` subclass
written as NNI's Hyperband and BOHB are, importing ``nni``) runs as hyperlab's tuner: named in
an NNI YAML (``advisor: {className, codeDirectory, classArgs}``) run by ``hyperlab run``, in
NNI's Python ``Experiment`` (``config.advisor``), and given as a class to ``hyperlab.run``. It
records every ``handle_*`` call; the tests check NNI's order and messages, that the trials run
the parameters it sent, that ``NoMoreTrialJobs`` ends the search, and what a resume replays."""

from __future__ import annotations

import json
import os
import random
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import hyperlab
from hyperlab import TrialStatus
from hyperlab.cli import main
from hyperlab.compat.nni.advisor import CustomAdvisor
from hyperlab.compat.nni.custom import load_class
from hyperlab.compat.nni.experiment import CustomAlgorithmConfig, Experiment
from hyperlab.config import load_config
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.store import Store
from hyperlab.trial import Trial

ALGORITHMS = Path(__file__).parent / "algorithms"
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


def calls(log: Path) -> list[list[Any]]:
    """The calls the advisor recorded, in order."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def proposal(seed: int, index: int) -> float:
    """The x DemoAdvisor sends as its ``index``-th parameter set."""
    return random.Random(seed * 100_003 + index).uniform(0, 1)


def ended(exp_id: str, trial: Trial, parameter_id: Any, source: str) -> list[list[Any]]:
    """What NNI's manager sends when ``trial`` (which succeeded) ends: its final result as
    JSON text, then its end with the parameters the advisor sent."""
    job_id = f"{exp_id}-{trial.number}"
    hyper_params = {"parameter_id": parameter_id, "parameter_source": source}
    hyper_params["parameters"] = trial.params
    final = {"parameter_id": parameter_id, "trial_job_id": job_id, "type": "FINAL"}
    final |= {"sequence": 0, "value": json.dumps(trial.params["x"] * 3)}
    end = {"trial_job_id": job_id, "event": "SUCCEEDED"}
    end |= {"hyper_params": json.dumps(hyper_params), "parameter_id": parameter_id}
    return [["handle_report_metric_data", final], ["handle_trial_end", end]]


def expected_calls(exp_id: str, trials: list[Trial], seed: int) -> list[list[Any]]:
    """At concurrency 1: a request for each trial, its result and end; then the request
    answered by ``NoMoreTrialJobs``."""
    out: list[list[Any]] = []
    for trial in trials:
        assert trial.status is TrialStatus.SUCCEEDED
        assert trial.params == {"x": pytest.approx(proposal(seed, trial.number))}
        out.append(["handle_request_trial_jobs", 1])
        out += ended(exp_id, trial, f"p{trial.number}", "algorithm")
    return [*out, ["handle_request_trial_jobs", 1]]


def stored(storage: str) -> tuple[str, list[Trial]]:
    with Store.open(storage) as store:
        (summary,) = store.list_experiments()
        return summary.id, store.get_trials(summary.id)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HYPERLAB_HOME", str(tmp_path / "home"))
    monkeypatch.syspath_prepend(str(ALGORITHMS))  # so the classes are found by path too
    return tmp_path


def write_config(folder: Path, log: Path, **class_args: Any) -> Path:
    config = {
        "searchSpace": SPACE,
        "trialCommand": f"{shlex.quote(sys.executable)} trial.py",
        "trialCodeDirectory": str(ALGORITHMS),
        "trialConcurrency": 1,
        "maxTrialNumber": 10,
        "advisor": {
            "codeDirectory": str(ALGORITHMS),
            "className": "demo_advisor.DemoAdvisor",
            "classArgs": {"log": str(log), "optimize_mode": "maximize", **class_args},
        },
        "trainingService": {"platform": "local"},
    }
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.parametrize("legacy", [False, True])
def test_a_yaml_s_advisor_proposes_the_trials_and_ends_the_search(home: Path, legacy: bool) -> None:
    log = home / "calls.jsonl"
    storage = f"sqlite:///{home / 'runs.db'}"
    config = write_config(home, log, seed=3, max_params=4, legacy=legacy)
    assert main(["--storage", storage, "run", str(config)]) == 0
    exp_id, trials = stored(storage)
    assert len(trials) == 4  # NoMoreTrialJobs, not maxTrialNumber: 10, ended it
    made = calls(log)
    assert made[:2] == [["advisor.__init__", "maximize", 3, 4], ["handle_initialize", SPACE]]
    assert made[2:] == expected_calls(exp_id, trials, 3)


def test_nni_s_python_experiment_runs_an_advisor_class(home: Path) -> None:
    log = home / "calls.jsonl"
    experiment = Experiment("local", storage=f"sqlite:///{home / 'runs.db'}")
    experiment.config.trial_command = f"{shlex.quote(sys.executable)} trial.py"
    experiment.config.trial_code_directory = ALGORITHMS
    experiment.config.search_space = SPACE
    experiment.config.advisor = CustomAlgorithmConfig(
        class_name="demo_advisor.DemoAdvisor",
        code_directory=ALGORITHMS,
        class_args={"log": str(log), "optimize_mode": "maximize", "seed": 5, "max_params": 2},
    )
    experiment.config.max_trial_number = 5
    experiment.config.trial_concurrency = 1
    assert experiment.run(port=0) is True
    exp_id, trials = stored(f"sqlite:///{home / 'runs.db'}")
    assert len(trials) == 2
    made = calls(log)
    # the launch checks the config by building the tuner (only) before the driver does
    assert [call[0] for call in made[:2]] == ["advisor.__init__", "advisor.__init__"]
    assert made[2] == ["handle_initialize", SPACE]
    assert made[3:] == expected_calls(exp_id, trials, 5)


def objective(params: dict[str, float]) -> float:
    return params["x"] * 3


def test_a_class_given_to_run_is_adapted_and_a_resume_replays_the_history(home: Path) -> None:
    DemoAdvisor = load_class("advisor", "demo_advisor.DemoAdvisor", str(ALGORITHMS))
    log = home / "calls.jsonl"
    storage = f"sqlite:///{home / 'runs.db'}"
    args = {"log": str(log), "seed": 7, "max_params": 5}
    kwargs: dict[str, Any] = {"mode": "max", "storage": storage, "progress": False}
    result = hyperlab.run(
        objective, SPACE, tuner=DemoAdvisor, tuner_args=args, max_trials=3, **kwargs
    )
    exp_id, trials = stored(storage)
    assert len(trials) == 3 and result.best_trial == max(trials, key=lambda t: t.value or 0)
    made = calls(log)
    assert made[:2] == [["advisor.__init__", "maximize", 7, 5], ["handle_initialize", SPACE]]
    assert made[2:] == expected_calls(exp_id, trials, 7)[:-1]
    log.unlink()
    hyperlab.resume(exp_id, storage=storage, max_trials=5)
    _, after = stored(storage)
    assert len(after) == 5 and after[:3] == trials
    replayed = calls(log)
    # a fresh instance, load_checkpoint, the space, then the history in number order with
    # the trials' numbers as parameter ids, then the search goes on
    assert replayed[:3] == [
        ["advisor.__init__", "maximize", 7, 5],
        ["load_checkpoint"],
        ["handle_initialize", SPACE],
    ]
    history = [c for t in trials for c in ended(exp_id, t, t.number, "resumed")]
    assert replayed[3 : 3 + len(history)] == history
    going_on: list[list[Any]] = []
    for index, trial in enumerate(after[3:]):  # the fresh instance counts from p0 again
        assert trial.params == {"x": pytest.approx(proposal(7, index))}
        going_on += [
            ["handle_request_trial_jobs", 1],
            *ended(exp_id, trial, f"p{index}", "algorithm"),
        ]
    assert replayed[3 + len(history) :] == going_on


def test_a_kill_of_an_ended_trial_is_ignored_and_of_another_refused(home: Path) -> None:
    log = home / "calls.jsonl"
    name = "demo_advisor.KillingAdvisor"

    def advisor(**class_args: Any) -> CustomAdvisor:
        args = {"log": str(log), **class_args}
        return CustomAdvisor(SearchSpace.from_nni(SPACE), class_name=name, class_args=args)

    def finished(number: int, x: float) -> Trial:
        return Trial("e", number, {"x": x}, TrialStatus.SUCCEEDED, value=x, metrics={"default": x})

    own = advisor()
    own.observe(finished(0, own.suggest(0)["x"]))  # it kills e-0, which has ended
    other = advisor(target="e-9")
    with pytest.raises(NotImplementedError, match=r"KillTrialJob '\"e-9\"'.*NNI Assessor"):
        other.observe(finished(0, other.suggest(0)["x"]))


def test_an_advisor_with_a_tuner_or_no_advisor_class_is_refused(home: Path) -> None:
    log = home / "calls.jsonl"
    config = write_config(home, log)
    data = yaml.safe_load(config.read_text())
    data["tuner"] = {"name": "TPE"}
    config.write_text(yaml.safe_dump(data))
    with pytest.raises(
        ConfigError, match=r"advisor\.className = 'demo_advisor\.DemoAdvisor'.*remove tuner"
    ):
        load_config(config)
    with pytest.raises(
        ConfigError, match=r"advisor\.class_name: 'demo_tuner\.DemoTuner' is no NNI advisor"
    ):
        CustomAdvisor(
            SearchSpace.from_nni(SPACE),
            class_name="demo_tuner.DemoTuner",
            class_args={"log": str(log)},
        )


def test_an_advisor_recovers_earlier_parameter_ids_as_nni_s_recoverable_does() -> None:
    advisor = load_class("advisor", "demo_advisor.DemoAdvisor", str(ALGORITHMS))(os.devnull)
    assert not advisor.is_created_in_previous_exp(0)
    earlier = [
        json.dumps({"parameter_id": 4, "parameters": {"x": 0.5}}),
        {"parameter_id": 2, "parameters": {"x": 0.1}},
        {"parameter_id": "custom", "parameters": {"x": 0.9}},  # skipped, as in NNI
    ]
    assert advisor.recover_parameter_id(earlier) == 4
    assert advisor.is_created_in_previous_exp(4) and not advisor.is_created_in_previous_exp(5)
    assert not advisor.is_created_in_previous_exp(None)
    assert advisor.get_previous_param(2) == {"x": 0.1}


def test_an_advisor_that_holds_trials_back_is_asked_again_as_trials_end(home: Path) -> None:
    storage = f"sqlite:///{home / 'runs.db'}"
    config = {
        "searchSpace": {**SPACE, "round": {"_type": "choice", "_value": [1, 2]}},
        "trialCommand": f"{shlex.quote(sys.executable)} round_trial.py",
        "trialCodeDirectory": str(ALGORITHMS),
        "trialConcurrency": 2,
        "maxTrialNumber": 20,
        "advisor": {
            "codeDirectory": str(ALGORITHMS),
            "className": "demo_advisor.RoundAdvisor",
            "classArgs": {"size": 3, "rounds": 2},
        },
        "trainingService": {"platform": "local"},
    }
    path = home / "config.yml"
    path.write_text(yaml.safe_dump(config))
    assert main(["--storage", storage, "run", str(path)]) == 0
    _, trials = stored(storage)
    # round 2 was sent while trial 2 ran, none of it before round 1 ended, and asked for
    # again when trials ended
    assert [t.params["round"] for t in trials] == [1, 1, 1, 2, 2, 2]
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials)
    first_round_end = max(t.finished_at or 0 for t in trials[:3])
    assert all((t.started_at or 0) >= first_round_end for t in trials[3:])
