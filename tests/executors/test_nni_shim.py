"""The ``nni`` shim: NNI trial scripts run unchanged, on hyperlab's reporting."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab import space as hs
from hyperlab.compat import nni
from hyperlab.compat.nni import trial as nni_trial
from hyperlab.compat.nni.utils import merge_parameter
from hyperlab.executors import CommandTrial
from tests.executors.harness import script

# ---- an NNI example script, run by the command executor --------------------------------------


def test_an_nni_example_script_runs_unchanged(tmp_path):
    space = {  # NNI's search_space.json of the mnist example, trimmed
        "batch_size": {"_type": "choice", "_value": [16, 128]},
        "hidden_size": {"_type": "choice", "_value": [128, 1024]},
        "lr": {"_type": "choice", "_value": [0.001, 0.1]},
        "momentum": {"_type": "uniform", "_value": [0, 1]},
    }
    result = hyperlab.run(
        CommandTrial(script("nni_mnist_style.py", "--epochs", 3, site=True), code_dir=tmp_path),
        space,
        mode="max",
        max_trials=2,
        executor="command",
        concurrency=2,
        storage=f"sqlite:///{tmp_path / 'db.sqlite'}",
        seed=1,
        progress=False,
    )
    assert len(result.trials) == 2
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert len(trial.reports) == 3
        assert [r.step for r in trial.reports] == [0, 1, 2]
        assert trial.value == pytest.approx(trial.reports[-1].metrics["default"])
        folder = Path(os.environ["HYPERLAB_HOME"], "experiments", result.experiment_id)
        view = json.loads((folder / "trials" / str(trial.number) / "nni_view.json").read_text())
        assert view["nni_file"].endswith(os.path.join("nni", "__init__.py"))
        assert "site-packages" not in view["nni_file"]
        assert view["trial_id"] == f"{result.experiment_id}-{trial.number}"
        assert view["experiment_id"] == result.experiment_id
        assert view["sequence_id"] == trial.number
        (phase,) = trial.phases  # it called get_next_parameter() again: a second phase
        assert view["again"] == phase.params != trial.params
        assert phase.status is TrialStatus.FAILED  # it reported no result for that phase
        params = view["params"]
        assert params["epochs"] == 3 and params["data_dir"] == "./data"  # argparse defaults kept
        for key in space:
            assert params[key] == trial.params[key]
    assert result.best_value == max(t.value for t in result.trials)


# ---- the shim inside a function trial ------------------------------------------------------


def nni_objective(params):
    assert nni.get_next_parameter() == params
    for step in range(3):
        nni.report_intermediate_result({"default": params["x"] * step, "step_seen": step})
    nni.report_final_result(params["x"] * 10)
    return None


def test_nni_calls_in_a_function_trial_report_and_set_the_final_result():
    result = hyperlab.run(
        nni_objective,
        {"x": hs.choice(1.0, 2.0)},
        tuner="grid",
        storage=":memory:",
        progress=False,
    )
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.value == trial.params["x"] * 10
        x = trial.params["x"]
        assert [r.metrics["default"] for r in trial.reports] == [x * step for step in range(3)]
        assert [r.metrics["step_seen"] for r in trial.reports] == [0, 1, 2]


def test_get_next_parameter_returns_a_copy_and_then_the_next_phase():
    seen = {}

    def objective(params):
        first = nni.get_next_parameter()
        seen.update(current=nni.get_current_parameter(), tag=nni.get_current_parameter("x"))
        first["x"] = "changed"
        seen.update(
            second=nni.get_next_parameter(),  # a grid's points are the trials': no phase 1
            after=nni.get_current_parameter(),
            ids=(nni.get_trial_id(), nni.get_experiment_id(), nni.get_sequence_id()),
        )
        return params["x"]

    result = hyperlab.run(objective, {"x": hs.choice(0.5)}, tuner="grid", storage=":memory:")
    (trial,) = result.trials
    assert trial.status is TrialStatus.SUCCEEDED and trial.params == {"x": 0.5}
    assert seen["current"] == {"x": "changed"} and seen["tag"] == 0.5  # the object it returned
    assert seen["second"] is None and seen["after"] is None and trial.phases == ()
    assert seen["ids"] == (f"{result.experiment_id}-0", result.experiment_id, 0)


def test_outside_a_trial_the_shim_behaves_like_nnis_standalone_mode(caplog, monkeypatch):
    monkeypatch.delenv("HYPERLAB_PARAMS_FILE", raising=False)
    with pytest.warns(RuntimeWarning, match="without a hyperlab trial"):
        assert nni.get_next_parameter() == {}
    assert nni.get_next_parameters is not None and nni.get_current_parameter() == {}
    with caplog.at_level(logging.INFO, logger="nni"):
        nni.report_intermediate_result(0.5)
        nni.report_final_result({"default": 0.9})
    assert "Intermediate result: 0.5" in caplog.text and "Final result:" in caplog.text
    assert nni.get_trial_id() == nni.get_experiment_id() == "STANDALONE"
    assert nni.get_sequence_id() == 0
    assert nni_trial.STANDALONE == "STANDALONE"


# ---- merge_parameter ----------------------------------------------------------------------


def parser_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--act", default="relu")
    parser.add_argument("--batch_num", type=int, default=None)
    return parser.parse_args([])


def test_merge_parameter_sets_namespace_attributes_in_place():
    args = parser_args()
    merged = merge_parameter(args, {"batch_size": 32, "lr": 0.1, "act": "tanh", "batch_num": 5})
    assert merged is args
    assert vars(args) == {"batch_size": 32, "lr": 0.1, "act": "tanh", "batch_num": 5}
    assert merge_parameter(args, None) is args


def test_merge_parameter_casts_numbers_to_the_existing_type_when_nothing_is_lost():
    args = merge_parameter(parser_args(), {"lr": 1, "batch_size": 16.0})
    assert args.lr == 1.0 and type(args.lr) is float
    assert args.batch_size == 16 and type(args.batch_size) is int
    base = {"momentum": 0.5, "layers": 2, "name": None}
    assert merge_parameter(base, {"momentum": 0, "layers": 3.0, "name": 7}) == {
        "momentum": 0.0,
        "layers": 3,
        "name": 7,
    }
    assert type(base["momentum"]) is float and type(base["layers"]) is int


@pytest.mark.parametrize(
    ("override", "error", "match"),
    [
        ({"nope": 1}, ValueError, r"Key 'nope' not found in base parameters.*'batch_size'"),
        ({"batch_size": 16.5}, TypeError, r"'batch_size'.*'int'.*64.*float 16\.5"),
        ({"lr": "fast"}, TypeError, r"'lr'.*'float'.*str 'fast'"),
        ({"act": 3}, TypeError, r"'act'.*'str'.*int 3"),
        ({"batch_size": True}, TypeError, r"'batch_size'.*bool True"),
    ],
)
def test_merge_parameter_rejects_unknown_keys_and_lossy_types(override, error, match):
    with pytest.raises(error, match=match):
        merge_parameter(parser_args(), override)
    with pytest.raises(error):
        merge_parameter(vars(parser_args()), override)
