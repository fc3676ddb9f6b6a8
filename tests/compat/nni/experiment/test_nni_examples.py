"""NNI's own launchers, with only their import line changed, run on hyperlab to the end:

- ``examples/tutorials/hpo_quickstart_pytorch/main.py`` (``experiment.run(8080)``, then
  ``stop()``) runs its 10 trials;
- the notebook ``python_api_start.ipynb`` (start, status, export_data, get_job_metrics, stop)
  run cell by cell as Jupyter would, a person's pause between cells;
- the notebook ``python_api_connect.ipynb`` (connect, profile, update_max_trial_number,
  profile, stop) against ``main.py`` running in another process.

They are in ``scripts/``, each with a tiny trial script in place of the models NNI trains. Each
test runs a copy in a folder of its own, with port 8080 replaced by a free one (tests run side
by side). Trials take ``TRIAL_SECONDS``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from hyperlab.store import Store
from hyperlab.trial import Mode
from tests.compat.nni.experiment.conftest import (
    SCRIPTS,
    free_port,
    start_script,
    stored_status,
    trials,
    wait_for,
)

SKLEARN_KEYS = {"C", "kernel", "degree", "gamma", "coef0"}


def copy(example: str, folder: Path, port: int) -> Path:
    """The example's folder copied into ``folder``, its scripts serving ``port``."""
    target = folder / example
    shutil.copytree(SCRIPTS / example, target)
    for script in target.glob("*.py"):
        script.write_text(script.read_text().replace("8080", str(port)))
    return target


def run_notebook(folder: Path, notebook: str, pause: float, **env: str) -> subprocess.Popen[str]:
    runner = str(SCRIPTS / "run_cells.py")
    return start_script([runner, notebook, "out.json", "--pause", str(pause)], folder, **env)


def shown(folder: Path) -> dict[str, object]:
    """What the notebook showed, by the code of the cell (the last time it ran)."""
    return {cell["code"]: cell["value"] for cell in json.loads((folder / "out.json").read_text())}


def only_experiment() -> str:
    with Store.open(None) as store:
        (summary,) = store.list_experiments()
        return summary.id


def test_the_pytorch_quickstart_runs_its_ten_trials(tmp_path):
    folder = copy("hpo_quickstart_pytorch", tmp_path, free_port())
    process = start_script(["main.py"], folder, TRIAL_SECONDS="0")
    output = process.communicate(timeout=120)[0]
    assert process.returncode == 0, output
    experiment_id = only_experiment()
    assert stored_status(experiment_id) == "DONE"
    done = trials(experiment_id)
    assert [str(t.status) for t in done] == ["SUCCEEDED"] * 10
    for trial in done:
        assert set(trial.params) == {"features", "lr", "momentum"}
        assert trial.params["features"] in (128, 256, 512, 1024)
        assert len(trial.reports) == 5 and trial.value == trial.reports[-1].metrics["default"]
    with Store.open(None) as store:
        options = store.get_experiment(experiment_id).options
    assert (options.tuner, options.mode, options.concurrency) == ("TPE", Mode.MAX, 2)


def test_the_start_notebook_shows_a_running_experiment_its_results_and_stops_it(tmp_path):
    folder = copy("sklearn_classification", tmp_path, free_port())
    process = run_notebook(folder, "python_api_start.py", 1.5, TRIAL_SECONDS="1")
    output = process.communicate(timeout=120)[0]
    assert process.returncode == 0, output
    values = shown(folder)
    assert values["experiment.get_status()"] == "RUNNING"
    exported = values["experiment.export_data()"]
    assert isinstance(exported, list) and exported
    for result in exported:
        assert set(result) == {"parameter", "value", "trialJobId"}
        assert set(result["parameter"]) == SKLEARN_KEYS and 0 < result["value"] < 1
    metrics = values["experiment.get_job_metrics()"]
    assert isinstance(metrics, dict) and len(metrics) >= len(exported)
    for trial_job_id, records in metrics.items():
        assert [r["type"] for r in records] == ["FINAL"]
        assert records[0]["trialJobId"] == trial_job_id and records[0]["sequence"] == 0
    assert "TrialResult(parameter={'C': " in output and "TrialMetricData(timestamp=" in output

    experiment_id = only_experiment()
    assert stored_status(experiment_id) in ("STOPPED", "DONE")  # stopped in its last cell
    finished = trials(experiment_id)
    assert 0 < len(finished) <= 10
    with Store.open(None) as store:
        record = store.get_experiment(experiment_id)
    assert (record.name, record.options.tuner, record.options.mode) == ("Example", "TPE", Mode.MAX)


def test_the_connect_notebook_updates_and_stops_the_quickstart_running_elsewhere(tmp_path):
    port = free_port()
    quickstart = copy("hpo_quickstart_pytorch", tmp_path, port)
    notebook = copy("sklearn_classification", tmp_path, port)
    launcher = start_script(["main.py"], quickstart, TRIAL_SECONDS="2")
    try:
        experiment_id = wait_for(_running_experiment, what="the quickstart running")
        process = run_notebook(notebook, "python_api_connect.py", 0.2)
        output = process.communicate(timeout=60)[0]
        assert process.returncode == 0, output
        launched = launcher.communicate(timeout=60)[0]
    finally:
        launcher.kill()
    assert launcher.returncode == 0, launched  # its run() returned, then its stop()
    assert f"connected to port {port}: experiment {experiment_id}, status RUNNING" in output
    values = json.loads((notebook / "out.json").read_text())
    before, after = (cell["value"] for cell in values)
    assert before["id"] == after["id"] == experiment_id
    assert before["params"]["maxTrialNumber"] == 10 and after["params"]["maxTrialNumber"] == 200
    assert before["params"]["searchSpace"]["features"]["_type"] == "choice"
    assert stored_status(experiment_id) == "STOPPED"
    assert len(trials(experiment_id)) < 10


def _running_experiment() -> str | None:
    try:
        experiment_id = only_experiment()
    except ValueError:  # none yet
        return None
    return experiment_id if stored_status(experiment_id) == "RUNNING" else None
