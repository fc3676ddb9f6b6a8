"""Config files: hyperlab's own format, NNI's v2 format unchanged, and clear errors."""

from __future__ import annotations

import json
import textwrap

import pytest

from hyperlab.config import ExperimentConfig, load_config
from hyperlab.errors import ConfigError

SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


def write(tmp_path, text, name="config.yml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def project(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "space.json").write_text(json.dumps(SPACE))
    return tmp_path


def test_hyperlab_config_with_every_field(project):
    path = write(
        project,
        """
        name: demo
        search_space: space.json
        trial:
          command: python train.py --epochs 3
          code_dir: code
        metric: loss
        mode: max
        tuner: {name: grid, args: {}}
        max_trials: 20
        max_duration: 30m
        concurrency: 3
        trial_timeout: 90s
        max_failed_trials: 4
        gpus: {indices: [0, 1], per_trial: 1, max_trials_per_gpu: 2}
        storage: sqlite:///runs.db
        seed: 7
        env: {DATA: /data}
        working_dir: runs
    """,
    )
    config = load_config(path)
    assert config.name == "demo" and config.mode == "max" and config.metric == "loss"
    assert config.search_space == str(project / "space.json")
    assert config.trial.code_dir == str(project / "code")
    assert config.working_dir == str(project / "runs")
    assert config.max_duration == 1800 and config.trial_timeout == 90
    assert config.tuner == "grid" and config.executor_name == "command"
    assert config.gpus.indices == [0, 1] and config.gpus.max_trials_per_gpu == 2
    assert config.env == {"DATA": "/data"}
    options = config.options()
    assert options.executor == "command" and options.concurrency == 3 and options.seed == 7


def test_json_config_and_inline_space(project):
    path = write(
        project,
        json.dumps(
            {
                "search_space": SPACE,
                "trial": {"function": "mymod:objective", "code_dir": "code"},
                "max_trials": 3,
            }
        ),
        name="config.json",
    )
    config = load_config(path)
    assert config.search_space == SPACE and config.executor_name == "processes"


NNI_CONFIG = """
    experimentName: nni-demo
    searchSpaceFile: space.json
    trialCommand: python3 mnist.py
    trialCodeDirectory: code
    trialConcurrency: 2
    maxTrialNumber: 10
    maxExperimentDuration: 1h
    trialGpuNumber: 1
    experimentWorkingDirectory: work
    logLevel: info
    tuner:
      name: TPE
      classArgs:
        optimize_mode: maximize
        seed: 12
    trainingService:
      platform: local
      useActiveGpu: false
      gpuIndices: "0,1"
      maxTrialNumberPerGpu: 2
"""


def test_nni_v2_config_is_translated(project):
    config = load_config(write(project, NNI_CONFIG))
    assert config.name == "nni-demo"
    assert config.trial.command == "python3 mnist.py"
    assert config.trial.code_dir == str(project / "code")
    assert config.concurrency == 2 and config.max_trials == 10 and config.max_duration == 3600
    assert config.tuner == "TPE" and config.mode == "max" and config.seed == 12
    assert config.gpus.indices == [0, 1] and config.gpus.per_trial == 1
    assert config.gpus.max_trials_per_gpu == 2
    assert config.working_dir == str(project / "work")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("trainingService:\n  platform: remote\n", r"trainingService.platform.*'remote'"),
        ("nniManagerIp: 10.0.0.1\n", r"'nniManagerIp'"),
        ("advisor:\n  name: PPOTuner\n", r"'advisor.name' = 'PPOTuner'"),
        ("useAnnotation: true\n", r"'useAnnotation'"),
        ("tuner:\n  name: TPE\n  classArgs:\n    optimize_mode: best\n", r"optimize_mode.*'best'"),
    ],
)
def test_unsupported_nni_fields_are_named(project, extra, message):
    base = "searchSpaceFile: space.json\ntrialCommand: python3 t.py\nmaxTrialNumber: 2\n"
    with pytest.raises(ConfigError, match=message):
        load_config(write(project, base + extra))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "search_space: space.json\ntrial: {command: x}\nmax_trails: 3\n",
            r"unknown field 'max_trails'; did you mean 'max_trials'\?",
        ),
        ("search_space: space.json\ntrial: {command: x, cwd: .}\n", r"unknown field 'trial.cwd'"),
        (
            "search_space: space.json\ntrial: {command: x}\nconcurrency: many\n",
            r"concurrency: .*integer.*'many'",
        ),
        ("search_space: missing.json\ntrial: {command: x}\n", r"search_space: file .*missing.json"),
        (
            "search_space: space.json\ntrial: {command: x, code_dir: nowhere}\n",
            r"trial.code_dir: folder .*nowhere.* does not exist",
        ),
        ("search_space: space.json\ntrial: {}\n", r"exactly one of `command`"),
        ("search_space: space.json\ntrial: {command: x}\nmode: minimize\n", r"mode"),
        (
            "search_space: space.json\ntrial: {command: x}\nmax_duration: soon\n",
            r"max_duration.*'soon'",
        ),
        ("search_space: [1, 2\ntrial: {command: x}\n", r"config.yml: invalid YAML at line \d+"),
        ("- just\n- a list\n", r"must hold a mapping"),
    ],
)
def test_bad_config_files_get_one_clear_error(project, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(project, text))


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match=r"nope.yml: config file not found"):
        load_config(tmp_path / "nope.yml")


def test_config_model_rejects_unknown_tuner_shape():
    with pytest.raises(ValueError, match="tuner"):
        ExperimentConfig(search_space=SPACE, trial={"command": "x"}, tuner={"nam": "tpe"})


def test_a_relative_sqlite_storage_is_relative_to_the_config_file(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "space.json").write_text('{"x": {"_type": "uniform", "_value": [0, 1]}}')
    for storage, expected in (
        ("runs.db", str(folder / "runs.db")),
        ("sqlite:///data/runs.db", f"sqlite:///{folder / 'data' / 'runs.db'}"),
        ("sqlite:////abs/runs.db", "sqlite:////abs/runs.db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ):
        (folder / "c.yml").write_text(
            f"search_space: space.json\ntrial: {{command: x}}\nmax_trials: 1\nstorage: {storage}\n"
        )
        monkeypatch.chdir(tmp_path)  # elsewhere than the config's folder
        assert load_config(folder / "c.yml").storage == expected
