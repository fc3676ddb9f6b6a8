"""Experiments on the real two-node cluster: placement, GPUs, streaming, stopping, files."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.trial import TrialStatus

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = pytest.mark.slow


def _node_of_special(cluster: Any) -> str:
    return next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "special" in n["Resources"])


def where(params: dict) -> dict:
    return {"loss": params["x"], "node": ray.get_runtime_context().get_node_id()}


def test_a_trial_needing_a_custom_resource_runs_only_where_it_exists(cluster: Any) -> None:
    result = hyperlab.run(
        where,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        executor="ray",
        resources={"cpu": 0.5, "special": 1},
        concurrency=2,
        max_trials=4,
        storage=":memory:",
        progress=False,
    )
    nodes = {trial.metrics["node"] for trial in result.trials}
    assert nodes == {_node_of_special(cluster)}
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)


def share_a_gpu(params: dict) -> dict:
    start = time.time()
    time.sleep(0.6)
    return {
        "loss": params["x"],
        "devices": list(hyperlab.trial_devices()),
        "visible": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        "start": start,
        "end": time.time(),
    }


def test_fractional_gpus_put_two_trials_on_each_fake_gpu(cluster: Any) -> None:
    result = hyperlab.run(
        share_a_gpu,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        executor="ray",
        resources={"cpu": 0.25, "gpu": 0.5},
        concurrency=6,
        max_trials=6,
        storage=":memory:",
        progress=False,
    )
    trials = result.trials
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials)
    for trial in trials:
        devices = trial.metrics["devices"]
        assert len(devices) == 1 and devices[0] in (0, 1), devices
        assert trial.metrics["visible"] == str(devices[0])
    for gpu in (0, 1):  # never more than two trials at once on one GPU
        spans = [
            (t.metrics["start"], t.metrics["end"]) for t in trials if t.metrics["devices"] == [gpu]
        ]
        for start, _ in spans:
            at_once = sum(s <= start < e for s, e in spans)
            assert at_once <= 2, spans


def waits_for_its_report(params: dict) -> float:
    """Reports, then waits until the driver has its report (the test's callback leaves a
    file): it ends only if the report reached the driver while it was running."""
    seen = Path(params["folder"]) / "seen"
    hyperlab.report(loss=1.0)
    for _ in range(600):
        if seen.exists():
            return 0.5
        time.sleep(0.05)
    raise RuntimeError("the report did not reach the driver while the trial ran")


class _LeavesAFile(hyperlab.Callback):
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def on_report(self, trial: Any, report: Any) -> None:
        (self.folder / "seen").touch()


def test_reports_reach_the_driver_while_the_trial_runs(cluster: Any, tmp_path: Path) -> None:
    result = hyperlab.run(
        waits_for_its_report,
        {"folder": hyperlab.choice(str(tmp_path))},
        metric="loss",
        executor="ray",
        max_trials=1,
        storage=":memory:",
        progress=False,
        callbacks=[_LeavesAFile(tmp_path)],
    )
    (trial,) = result.trials
    assert trial.status is TrialStatus.SUCCEEDED, trial.error


def curve(params: dict):
    for step in range(40):
        yield {"loss": params["x"] + 1.0 / (step + 1)}
        time.sleep(0.05)


def test_an_assessor_stops_hopeless_trials(cluster: Any) -> None:
    grid = [0.0, 5.0, 6.0, 7.0, 8.0]
    result = hyperlab.run(
        curve,
        {"x": hyperlab.choice(*grid)},
        metric="loss",
        tuner="grid",
        assessor="median",
        assessor_args={"start_step": 3},
        executor="ray",
        resources={"cpu": 0.5},
        concurrency=1,  # the first trial's curve is the reference when the others are judged
        storage=":memory:",
        progress=False,
    )
    assert result.best_params == {"x": 0.0}
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] + [
        TrialStatus.EARLY_STOPPED
    ] * 4
    # each stop took effect at the report it was decided on (reports are round trips)
    assert {len(t.reports) for t in result.trials[1:]} == {3}


def hang(params: dict) -> float:
    time.sleep(60)
    return 0.0


def test_trial_timeout_kills_the_trial_on_its_node(cluster: Any) -> None:
    experiment = hyperlab.Experiment(
        hang,
        {"x": hyperlab.uniform(0, 1)},
        executor="ray",
        trial_timeout=1.0,
        max_trials=2,
        concurrency=2,
        resources={"cpu": 0.5},
        storage=":memory:",
        progress=False,
    )
    with pytest.raises(hyperlab.TrialError):
        experiment.run()
    trials = experiment.result().trials
    assert [t.status for t in trials] == [TrialStatus.FAILED] * 2
    assert all("trial_timeout=1s" in (t.error or "") for t in trials)


def files_and_checkpoints(params: dict) -> float:
    print("hello from the node", flush=True)
    folder = hyperlab.trial_dir()
    (folder / "model.txt").write_text(f"x={params['x']}")
    for step in range(3):
        hyperlab.checkpoint({"step": step})
        hyperlab.report(loss=float(step))
    return 1.0


def test_logs_files_and_checkpoints_come_back_to_the_driver(cluster: Any, tmp_path: Path) -> None:
    experiment = hyperlab.Experiment(
        files_and_checkpoints,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        executor="ray",
        max_trials=1,
        storage=str(tmp_path / "store.db"),
        working_dir=str(tmp_path / "work"),
        checkpoint_keep=2,
        progress=False,
    )
    experiment.run()
    (trial,) = experiment.result().trials
    folder = experiment.folder / "trials" / "0"
    assert "hello from the node" in (folder / "stdout.log").read_text()
    assert (folder / "model.txt").read_text() == f"x={trial.params['x']}"
    kept = sorted(p.name for p in (folder / "checkpoints").iterdir())
    assert kept == ["checkpoint-000001", "checkpoint-000002"], kept
    state = pickle.loads((folder / "checkpoints" / kept[-1] / "state.pkl").read_bytes())
    assert state == {"step": 2}


def scored_checkpoints(params: dict) -> float:
    for index, acc in enumerate((0.5, 0.9, 0.1, 0.7, 0.3)):
        hyperlab.report(acc=acc)
        hyperlab.checkpoint({"index": index})
    return 0.3


def test_checkpoint_score_keeps_the_best_checkpoints_on_the_driver_too(
    cluster: Any, tmp_path: Path
) -> None:
    experiment = hyperlab.Experiment(
        scored_checkpoints,
        {"x": hyperlab.uniform(0, 1)},
        metric="acc",
        mode="max",
        executor="ray",
        max_trials=1,
        storage=str(tmp_path / "store.db"),
        working_dir=str(tmp_path / "work"),
        checkpoint_keep=2,
        checkpoint_score="acc",
        progress=False,
    )
    experiment.run()
    folder = experiment.folder / "trials" / "0" / "checkpoints"
    kept = [
        pickle.loads((path / "state.pkl").read_bytes())["index"]
        for path in sorted(folder.iterdir())
    ]
    assert kept == [1, 3, 4], kept  # acc 0.9 and 0.7, and the newest


TRAIN = """
import nni
params = nni.get_next_parameter()
for epoch in range(3):
    nni.report_intermediate_result(params["x"] + epoch)
print("trained on", params["x"], flush=True)
nni.report_final_result(params["x"])
"""


def test_a_config_file_runs_an_nni_command_trial_on_the_cluster(
    cluster: Any, tmp_path: Path
) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "config.yaml").write_text(
        "search_space: {x: {_type: uniform, _value: [0, 1]}}\n"
        "trial: {command: python train.py, code_dir: .}\n"
        "executor: ray\n"
        "resources: {cpu: 0.5, special: 1}\n"
        "concurrency: 2\n"
        "max_trials: 3\n"
        "storage: store.db\n"
    )
    experiment = hyperlab.Experiment.from_config(tmp_path / "config.yaml", progress=False)
    result = experiment.run()
    assert len(result.trials) == 3
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.value == trial.params["x"]
        assert [r.step for r in trial.reports] == [0, 1, 2]
        log = experiment.folder / "trials" / str(trial.number) / "stdout.log"
        assert f"trained on {trial.params['x']}" in log.read_text()


def define_by_run(params: dict) -> float:
    lr = hyperlab.suggest("lr", hyperlab.loguniform(1e-4, 1e-1))
    return params["x"] + lr


def test_a_trial_on_the_cluster_asks_the_driver_for_parameters(cluster: Any) -> None:
    result = hyperlab.run(
        define_by_run,
        {"x": hyperlab.uniform(0, 1)},
        executor="ray",
        resources={"cpu": 0.5},
        concurrency=2,
        max_trials=4,
        seed=3,
        storage=":memory:",
        progress=False,
    )
    local = hyperlab.run(
        define_by_run,
        {"x": hyperlab.uniform(0, 1)},
        max_trials=4,
        seed=3,
        storage=":memory:",
        progress=False,
    )
    # before any trial ended, lr was drawn from the trial's seed: the same on the cluster
    assert result.trials[0].params["lr"] == local.trials[0].params["lr"]
    assert all(t.value == pytest.approx(t.params["x"] + t.params["lr"]) for t in result.trials)
