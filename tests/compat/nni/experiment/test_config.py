"""NNI's experiment config on hyperlab: filled in as NNI's examples do, checked as it is filled
in and as a whole, translated through the schema of NNI YAML files, and refused with errors
naming the field (or ``NotImplementedError`` naming the NNI feature) before anything runs."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from hyperlab.compat.nni.experiment import (
    AlgorithmConfig,
    Experiment,
    ExperimentConfig,
    LocalConfig,
    UnknownField,
    UnsupportedFeature,
)
from hyperlab.compat.nni.experiment.config import to_hyperlab
from hyperlab.config import load_config
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.store import Store
from hyperlab.trial import Mode
from tests.compat.nni.experiment.conftest import SPACE, free_port, nni_experiment


def filled(project: Path) -> ExperimentConfig:
    config = nni_experiment(project).config
    assert config is not None
    return config


def test_a_blank_local_config_is_filled_in_by_attribute_as_nni_examples_do(project, monkeypatch):
    monkeypatch.chdir(project)
    experiment = Experiment("local")
    config = experiment.config
    assert isinstance(config, ExperimentConfig)
    assert isinstance(config.training_service, LocalConfig)
    assert config.tuner == AlgorithmConfig(class_args={})  # a blank to fill in
    config.experiment_name = "Example"
    config.trial_concurrency = 2
    config.max_trial_number = 10
    config.search_space = SPACE
    config.trial_command = "python3 trial.py"
    config.trial_code_directory = "./"
    config.tuner.name = "TPE"
    config.tuner.class_args["optimize_mode"] = "maximize"
    config.training_service.use_active_gpu = True
    config.max_experiment_duration = "1h"
    assert config.json() == {
        "experimentName": "Example",
        "searchSpace": SPACE,
        "trialCommand": "python3 trial.py",
        "trialCodeDirectory": str(project),
        "trialConcurrency": 2,
        "maxExperimentDuration": "1h",
        "maxTrialNumber": 10,
        "debug": False,
        "tuner": {"name": "TPE", "classArgs": {"optimize_mode": "maximize"}},
        "trainingService": {"platform": "local", "useActiveGpu": True},
    }
    translated = to_hyperlab(config)
    assert (translated.name, translated.concurrency, translated.max_trials) == ("Example", 2, 10)
    assert (translated.tuner, translated.mode, translated.max_duration) == ("TPE", Mode.MAX, 3600)
    assert (translated.trial.command, translated.trial.code_dir) == (
        "python3 trial.py",
        str(project),
    )
    assert translated.assessor is None and translated.gpus is None


def test_fields_are_taken_in_camel_case_and_nested_dicts_become_configs(project):
    config = ExperimentConfig(
        trialCommand="python3 trial.py",
        trialCodeDirectory=project,
        searchSpace=SPACE,
        trialConcurrency=3,
        trialGpuNumber=1,
        tuner={"name": "TPE", "classArgs": {"optimize_mode": "minimize"}},
        assessor={"name": "Medianstop", "classArgs": {"start_step": 2}},
        trainingService={"platform": "local", "gpuIndices": "0,1", "maxTrialNumberPerGpu": 2},
    )
    assert isinstance(config.tuner, AlgorithmConfig) and config.tuner.name == "TPE"
    assert isinstance(config.training_service, LocalConfig)
    assert config.training_service.gpu_indices == "0,1"
    translated = to_hyperlab(config)
    assert (translated.assessor, translated.assessor_args) == ("median", {"start_step": 2})
    assert translated.gpus is not None
    assert (translated.gpus.indices, translated.gpus.per_trial) == ([0, 1], 1)
    assert translated.gpus.max_trials_per_gpu == 2


def test_the_training_service_fields_win_over_the_shortcuts_of_the_experiment(project, tmp_path):
    config = filled(project)
    other = tmp_path / "other"
    other.mkdir()
    assert config.training_service is not None
    config.training_service.trial_command = "python3 other.py"
    config.training_service.trial_code_directory = other
    translated = to_hyperlab(config)
    assert (translated.trial.command, translated.trial.code_dir) == ("python3 other.py", str(other))


def test_a_python_config_and_the_same_yaml_file_give_one_hyperlab_config(project):
    (project / "space.json").write_text(json.dumps(SPACE))
    yaml_text = """\
experimentName: same
searchSpaceFile: space.json
trialCommand: python3 trial.py
trialCodeDirectory: .
trialConcurrency: 2
maxTrialNumber: 5
maxTrialDuration: 90s
tuner:
  name: TPE
  classArgs:
    optimize_mode: maximize
assessor:
  name: Curvefitting
  classArgs:
    epoch_num: 3
trainingService:
  platform: local
"""
    path = project / "config.yml"
    path.write_text(yaml_text)
    from_python = to_hyperlab(ExperimentConfig.load(path))
    assert from_python == load_config(path)
    assert from_python.search_space == str(project / "space.json")
    assert from_python.trial_timeout == 90


def test_an_unknown_field_is_refused_at_once_with_the_nearest_name(project):
    config = filled(project)
    with pytest.raises(
        UnknownField,
        match=r"ExperimentConfig has no field 'trial_comand'; did you mean 'trial_command'\?",
    ):
        config.trial_comand = "python3 trial.py"  # type: ignore[attr-defined]
    assert config.tuner is not None
    with pytest.raises(
        AttributeError, match=r"AlgorithmConfig has no field 'nmae'; did you mean 'name'"
    ):
        config.tuner.nmae = "TPE"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"ExperimentConfig has no field 'maxTrials'"):
        ExperimentConfig(maxTrials=3)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "trial_concurrency",
            "2",
            r"ExperimentConfig\.trial_concurrency: expected int \| None, got '2'",
        ),
        (
            "max_trial_number",
            True,
            r"ExperimentConfig\.max_trial_number: expected int \| None, got True",
        ),
        (
            "max_experiment_duration",
            1.5,
            r"max_experiment_duration: expected str \| int \| None, got 1\.5",
        ),
        ("use_annotation", "yes", r"ExperimentConfig\.use_annotation: expected bool, got 'yes'"),
        (
            "tuner",
            "TPE",
            r"\.tuner: expected AlgorithmConfig \| None \(or a dict of its fields\), got 'TPE'",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_the_field(project, field, value, message):
    config = filled(project)
    with pytest.raises(ConfigError, match=message):
        setattr(config, field, value)


def test_a_dict_changed_in_place_is_checked_by_validate(project):
    config = filled(project)
    assert config.tuner is not None and config.tuner.class_args is not None
    config.tuner.class_args[1] = "one"  # type: ignore[index]
    with pytest.raises(
        ConfigError, match=r"config\.tuner\.class_args: expected dict\[str, Any\] \| None, got \{"
    ):
        config.validate()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"trial_command": None},
            r"config\.trial_command: required: the shell command that runs one trial",
        ),
        (
            {"search_space": None},
            r"config\.search_space: give exactly one of search_space .* and search_space_file",
        ),
        ({"search_space_file": "space.json"}, r"give exactly one of search_space"),
        ({"search_space": "space.json"}, r"config\.search_space: expected a dict in NNI's format"),
        (
            {"trial_code_directory": "missing"},
            r"config\.trial_code_directory: folder '.*missing' does not exist",
        ),
        (
            {"trial_concurrency": 0},
            r"config\.trial_concurrency: input should be greater than or equal to 1, got 0",
        ),
        (
            {"max_trial_number": -1},
            r"config\.max_trial_number: input should be greater than or equal to 1, got -1",
        ),
        (
            {"max_experiment_duration": "1x"},
            r"config\.max_experiment_duration: expected a positive number of seconds .*, got '1x'",
        ),
        (
            {"max_trial_duration": 0},
            r"config\.max_trial_duration: expected a positive number of seconds",
        ),
        (
            {"log_level": "loud"},
            r"config\.log_level: expected one of fatal, error, warning, info, debug, trace, got",
        ),
        (
            {"assessor": {"name": "Nope"}},
            r"NNI field 'assessor\.name' = 'Nope' is not supported by hyperlab",
        ),
        (
            {"assessor": {"class_args": {"start_step": 1}}},
            r"config\.assessor\.name: required once assessor\.class_args is set",
        ),
    ],
)
def test_validate_names_the_nni_field_that_is_missing_or_wrong(project, change, message):
    config = filled(project)
    for field, value in change.items():
        setattr(config, field, value)
    with pytest.raises(ConfigError, match=message):
        config.validate()


def test_optimize_mode_and_the_search_space_are_checked_naming_them(project):
    config = filled(project)
    assert config.tuner is not None and config.tuner.class_args is not None
    config.tuner.class_args["optimize_mode"] = "up"
    with pytest.raises(
        ConfigError,
        match=r"tuner\.class_args\.optimize_mode must be 'minimize' or 'maximize', got 'up'",
    ):
        config.validate()
    config.tuner.class_args["optimize_mode"] = "maximize"
    config.search_space = {"x": {"_type": "uniform", "_value": [1, 0]}}
    with pytest.raises(SearchSpaceError, match=r"config\.search_space: x: "):
        config.validate()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tuner": {"name": "Nope"}}, r"tuner: unknown tuner 'Nope'"),
        (
            {"tuner": {"name": "TPE", "class_args": {"speed": 2}}},
            r"tuner\.class_args of 'TPE' does not accept 'speed'",
        ),
        (
            {"max_trial_number": None},
            r"give a budget: max_trial_number=N and/or max_experiment_duration",
        ),
    ],
)
def test_start_refuses_what_hyperlab_cannot_build_before_anything_is_written(
    project, change, message
):
    experiment = nni_experiment(project)
    for field, value in change.items():
        setattr(experiment.config, field, value)
    port = free_port()
    with pytest.raises(ConfigError, match=message):
        experiment.start(port)
    experiment.stop()
    assert Store.open(None).list_experiments() == []
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # nothing serves it


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"use_annotation": True}, r"config\.use_annotation = True is not supported by hyperlab"),
        ({"experiment_type": "nas"}, r"config\.experiment_type = 'nas' is not supported"),
        (
            {"shared_storage": {"storageType": "NFS"}},
            r"config\.shared_storage = .* is not supported",
        ),
        ({"tuner_gpu_indices": [0]}, r"config\.tuner_gpu_indices = \[0\] is not supported"),
        (
            {"training_service": LocalConfig(reuse_mode=True)},
            r"config\.training_service\.reuse_mode = True is not supported",
        ),
        (
            {"training_service": LocalConfig(platform="openpai")},
            r"config\.training_service\.platform = 'openpai' is not supported",
        ),
    ],
)
def test_nni_features_hyperlab_lacks_raise_not_implemented_naming_them(project, change, message):
    config = filled(project)
    for field, value in change.items():
        setattr(config, field, value)
    with pytest.raises(NotImplementedError, match=message) as caught:
        config.validate()
    assert isinstance(caught.value, UnsupportedFeature) and isinstance(caught.value, ConfigError)


@pytest.mark.parametrize("platform", ["remote", ["local", "remote"], {"platform": "kubeflow"}])
def test_training_services_other_than_local_are_not_implemented(platform):
    with pytest.raises(
        NotImplementedError, match=r"training_service: .* not supported by hyperlab"
    ):
        if isinstance(platform, dict):
            ExperimentConfig(training_service=platform)
        else:
            Experiment(platform)


def test_ids_and_stores_the_experiment_cannot_use_are_refused():
    with pytest.raises(ConfigError, match=r"id: expected 1 to 32 lowercase letters"):
        Experiment("local", id="Not An Id")
    with pytest.raises(ConfigError, match=r"storage: ':memory:' is private"):
        Experiment("local", storage=":memory:")
    assert len(Experiment("local").id) == 8 and Experiment("local", id="mine").id == "mine"


def test_the_package_lists_exactly_its_public_names_nni_s_among_them():
    import hyperlab.compat.nni.experiment as package

    modules = {"config", "data", "experiment"}
    public = {name for name in vars(package) if not name.startswith("_")} - modules
    assert set(package.__all__) == public
    nni = {"Experiment", "RunMode", "ExperimentConfig", "AlgorithmConfig", "LocalConfig"}
    nni |= {"CustomAlgorithmConfig", "TrialJob", "TrialMetricData", "TrialResult"}
    assert nni | {"TrialHyperParameters"} <= public
