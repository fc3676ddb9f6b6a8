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
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

import hyperlab
from hyperlab import TrialStatus
from hyperlab.assessors.base import Assessor, Decision
from hyperlab.cli import main
from hyperlab.compat.nni.advisor import CustomAdvisor
from hyperlab.compat.nni.custom import load_class
from hyperlab.compat.nni.experiment import CustomAlgorithmConfig, Experiment
from hyperlab.config import load_config
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.store import Store
from hyperlab.trial import Report, Trial

ALGORITHMS = Path(__file__).parent / "algorithms"
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


def calls(log: Path) -> list[list[Any]]:
    """The calls the advisor recorded, in order."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def proposal(seed: int, index: int) -> float:
    """The x DemoAdvisor sends as its ``index``-th parameter set."""
    return random.Random(seed * 100_003 + index).uniform(0, 1)


def ended(
    exp_id: str, trial: Trial, parameter_id: Any, source: str, reported: list[Any] | None = None
) -> list[list[Any]]:
    """What NNI's manager sends for ``trial``: each intermediate result as it came
    (``reported``, PERIODICAL, numbered from 0); when it ends, its final result as JSON text
    (if it succeeded), then its end with the parameters the advisor sent."""
    job_id = f"{exp_id}-{trial.number}"
    out: list[list[Any]] = []
    for sequence, value in enumerate(reported or []):
        periodical = {"parameter_id": parameter_id, "trial_job_id": job_id, "type": "PERIODICAL"}
        periodical |= {"sequence": sequence, "value": json.dumps(value)}
        out.append(["handle_report_metric_data", periodical])
    hyper_params = {"parameter_id": parameter_id, "parameter_source": source}
    hyper_params["parameters"] = trial.params
    if trial.status is TrialStatus.SUCCEEDED:
        final = {"parameter_id": parameter_id, "trial_job_id": job_id, "type": "FINAL"}
        final |= {"sequence": 0, "value": json.dumps(trial.params["x"] * 3)}
        out.append(["handle_report_metric_data", final])
    end = {"trial_job_id": job_id, "event": trial.status.value}
    end |= {"hyper_params": json.dumps(hyper_params), "parameter_id": parameter_id}
    return [*out, ["handle_trial_end", end]]


def script_reports(trial: Trial, kill_below: float | None = None) -> list[Any]:
    """What ``trial.py`` reported for ``trial`` before it ended: three results, or only the
    first when it was below ``kill_below`` (the advisor killed it there)."""
    x = trial.params["x"]
    reports = [{"default": x * (step + 1), "step": step} for step in range(3)]
    killed = kill_below is not None and x < kill_below
    assert trial.status is (TrialStatus.EARLY_STOPPED if killed else TrialStatus.SUCCEEDED)
    return reports[:1] if killed else reports


def expected_calls(
    exp_id: str, trials: list[Trial], seed: int, kill_below: float | None = None
) -> list[list[Any]]:
    """At concurrency 1 (``trial.py``): a request for each trial, its intermediate results,
    its final result and end; then the request answered by ``NoMoreTrialJobs``."""
    out: list[list[Any]] = []
    for trial in trials:
        assert trial.params == {"x": pytest.approx(proposal(seed, trial.number))}
        out.append(["handle_request_trial_jobs", 1])
        reported = script_reports(trial, kill_below)
        out += ended(exp_id, trial, f"p{trial.number}", "algorithm", reported)
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


@pytest.mark.parametrize(("legacy", "kill_below"), [(False, None), (True, None), (False, 0.5)])
def test_a_yaml_s_advisor_proposes_the_trials_hears_their_results_and_ends_the_search(
    home: Path, legacy: bool, kill_below: float | None
) -> None:
    log = home / "calls.jsonl"
    storage = f"sqlite:///{home / 'runs.db'}"
    config = write_config(home, log, seed=3, max_params=4, legacy=legacy, kill_below=kill_below)
    assert main(["--storage", storage, "run", str(config)]) == 0
    exp_id, trials = stored(storage)
    assert len(trials) == 4  # NoMoreTrialJobs, not maxTrialNumber: 10, ended it
    made = calls(log)
    assert made[:2] == [["advisor.__init__", "maximize", 3, 4], ["handle_initialize", SPACE]]
    # each intermediate result as PERIODICAL, in order, before the FINAL; with kill_below,
    # trial 1 (x = 0.07) is killed at its first result and ends EARLY_STOPPED
    assert made[2:] == expected_calls(exp_id, trials, 3, kill_below)
    stopped = [t.number for t in trials if t.status is TrialStatus.EARLY_STOPPED]
    assert stopped == ([1] if kill_below else [])


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
    for step in range(2):
        hyperlab.report(params["x"] * (step + 1))
    return params["x"] * 3


def objective_reports(trial: Trial, kill_below: float) -> list[float]:
    """What ``objective`` reported for ``trial``: two results, or the first when the advisor
    killed it there."""
    x = trial.params["x"]
    killed = x < kill_below
    assert trial.status is (TrialStatus.EARLY_STOPPED if killed else TrialStatus.SUCCEEDED)
    return [x] if killed else [x, x * 2]


def test_a_class_given_to_run_is_adapted_and_a_resume_replays_the_history(home: Path) -> None:
    DemoAdvisor = load_class("advisor", "demo_advisor.DemoAdvisor", str(ALGORITHMS))
    log = home / "calls.jsonl"
    storage = f"sqlite:///{home / 'runs.db'}"
    args = {"log": str(log), "seed": 7, "max_params": 5, "kill_below": 0.65}
    kwargs: dict[str, Any] = {"mode": "max", "storage": storage, "progress": False}
    result = hyperlab.run(
        objective, SPACE, tuner=DemoAdvisor, tuner_args=args, max_trials=3, **kwargs
    )
    exp_id, trials = stored(storage)
    assert len(trials) == 3 and result.best_trial == max(trials, key=lambda t: t.value or 0)
    assert [t.status for t in trials].count(TrialStatus.EARLY_STOPPED) == 1  # x = 0.63
    made = calls(log)
    assert made[:2] == [["advisor.__init__", "maximize", 7, 5], ["handle_initialize", SPACE]]
    live: list[list[Any]] = []
    for trial in trials:
        assert trial.params == {"x": pytest.approx(proposal(7, trial.number))}
        reported = objective_reports(trial, 0.65)
        live += [["handle_request_trial_jobs", 1]]
        live += ended(exp_id, trial, f"p{trial.number}", "algorithm", reported)
    assert made[2:] == live
    log.unlink()
    hyperlab.resume(exp_id, storage=storage, max_trials=5)
    _, after = stored(storage)
    assert len(after) == 5 and after[:3] == trials
    replayed = calls(log)
    # a fresh instance, load_checkpoint, the space, then the history in number order (each
    # trial's intermediate results, final result and end) with the trials' numbers as
    # parameter ids, then the search goes on
    assert replayed[:3] == [
        ["advisor.__init__", "maximize", 7, 5],
        ["load_checkpoint"],
        ["handle_initialize", SPACE],
    ]
    history = [
        c for t in trials for c in ended(exp_id, t, t.number, "resumed", objective_reports(t, 0.65))
    ]
    assert replayed[3 : 3 + len(history)] == history
    going_on: list[list[Any]] = []
    for index, trial in enumerate(after[3:]):  # the fresh instance counts from p0 again
        assert trial.params == {"x": pytest.approx(proposal(7, index))}
        going_on += [
            ["handle_request_trial_jobs", 1],
            *ended(exp_id, trial, f"p{index}", "algorithm", objective_reports(trial, 0.65)),
        ]
    assert replayed[3 + len(history) :] == going_on


def test_an_advisor_beside_an_assessor_is_refused(home: Path) -> None:
    log = home / "calls.jsonl"
    config = write_config(home, log)
    data = yaml.safe_load(config.read_text())
    data["assessor"] = {"name": "Medianstop"}
    config.write_text(yaml.safe_dump(data))
    with pytest.raises(
        ConfigError, match=r"advisor\.className = 'demo_advisor\.DemoAdvisor'.*remove assessor"
    ):
        load_config(config)
    DemoAdvisor = load_class("advisor", "demo_advisor.DemoAdvisor", str(ALGORITHMS))
    with pytest.raises(ConfigError, match=r"schedules its own trials.*remove assessor='median'"):
        hyperlab.run(
            objective,
            SPACE,
            tuner=DemoAdvisor,
            tuner_args={"log": str(log)},
            assessor="median",
            storage=f"sqlite:///{home / 'runs.db'}",
            progress=False,
        )


def test_a_kill_of_an_ended_trial_is_ignored_and_of_a_running_one_stops_it() -> None:
    name = "demo_advisor.KillingAdvisor"

    def advisor(**class_args: Any) -> CustomAdvisor:
        args = {"log": os.devnull, **class_args}
        made = CustomAdvisor(SearchSpace.from_nni(SPACE), class_name=name, class_args=args)
        assert isinstance(made, Assessor)  # the experiment's assessor, as BOHB is
        return made

    def trial(number: int, x: float, status: TrialStatus = TrialStatus.RUNNING) -> Trial:
        value = x if status is TrialStatus.SUCCEEDED else None
        return Trial("e", number, {"x": x}, status, value=value, metrics={"default": x})

    report = Report(0, {"default": 0.5}, 0.0)
    own = advisor()  # kills the trial whose result came
    running = trial(0, own.suggest(0)["x"])
    own.on_start(running, 0.0)
    assert own.on_report(running, report, 0.0) is Decision.STOP
    own.observe(trial(0, running.params["x"], TrialStatus.SUCCEEDED))  # kills e-0: ignored
    other = advisor(target="e-1")
    first, second = trial(0, other.suggest(0)["x"]), trial(1, other.suggest(1)["x"])
    for started in (first, second):
        other.on_start(started, 0.0)
    other.observe(replace(first, status=TrialStatus.SUCCEEDED, value=0.5))  # kills e-1
    assert other.on_report(second, report, 0.0) is Decision.STOP
    assert other.on_report(second, replace(report, step=1), 0.0) is Decision.STOP


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
