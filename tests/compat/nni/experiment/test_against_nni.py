"""NNI's ``python_api_start`` and ``python_api_connect`` notebooks run twice in one test: by
NNI 3.0 itself (the environment of ``tests/server/nni_client.py``, the notebooks with NNI's own
import line) and by hyperlab (the import line changed), and what each notebook showed compared:
the same cells showing values of the same shapes (NNI's ``TrialResult``, ``TrialMetricData``
and experiment profile), the same statuses and the same updates taking effect. The one
difference, checked too: a launcher whose experiment another process stopped ends well on
hyperlab, where NNI's raises.

Each run gets a folder, a port and (for NNI) a home of its own, so NNI's experiment files stay
in the test's folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.compat.nni.experiment.conftest import SCRIPTS, environment, free_port, wait_for
from tests.compat.nni.experiment.test_nni_examples import SKLEARN_KEYS
from tests.server.nni_client import client_python

pytestmark = pytest.mark.slow

HYPERLAB_IMPORT = "from hyperlab.compat.nni.experiment import Experiment"
NNI_IMPORT = "from nni.experiment import Experiment"
# NNI options with nothing to do in hyperlab (annotations, its manager's debug mode and logs)
NNI_ONLY_PARAMS = {"useAnnotation", "debug", "logLevel"}
SAME_PARAMS = ("experimentType", "searchSpace", "trialCommand", "trialConcurrency", "tuner")
TRIAL_METRIC_FIELDS = {"timestamp", "trialJobId", "parameterId", "type", "sequence", "data"}


class Runner:
    """Runs the example scripts with one library: ``"nni"`` (NNI 3.0) or ``"hyperlab"``."""

    def __init__(self, library: str, folder: Path) -> None:
        self.library = library
        self.folder = folder
        self.port = free_port()
        if library == "nni":
            python = client_python()
            self.python = str(python)
            home = folder / "home"
            home.mkdir(parents=True)
            # NNI's trial commands (``python3 main.py``) must find NNI's interpreter first
            path = os.pathsep.join([str(python.parent), os.environ.get("PATH", "")])
            base = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
            self.env = {**base, "PATH": path, "HOME": str(home)}
        else:
            self.python = sys.executable
            self.env = environment()

    def copy(self, example: str) -> Path:
        """The example's folder, its scripts importing this library and serving this port."""
        target = self.folder / example
        target.mkdir(parents=True)
        for source in (SCRIPTS / example).iterdir():
            text = source.read_text().replace("8080", str(self.port))
            if self.library == "nni":
                text = text.replace(HYPERLAB_IMPORT, NNI_IMPORT)
            (target / source.name).write_text(text)
        return target

    def start(self, args: list[str], cwd: Path, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.python, *args],
            cwd=cwd,
            env={**self.env, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def notebook(self, folder: Path, notebook: str, pause: float, **extra: str) -> list[dict]:
        """The notebook run cell by cell; what its cells showed."""
        runner = str(SCRIPTS / "run_cells.py")
        process = self.start([runner, notebook, "out.json", "--pause", str(pause)], folder, **extra)
        output = process.communicate(timeout=180)[0]
        assert process.returncode == 0, f"{self.library}:\n{output[-4000:]}"
        self.output = output
        shown: list[dict] = json.loads((folder / "out.json").read_text())
        return shown

    def status(self) -> str | None:
        """The experiment's status as NNI's REST API at this port gives it (None: no answer)."""
        url = f"http://127.0.0.1:{self.port}/api/v1/nni/check-status"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return str(json.load(answer)["status"])
        except (OSError, ValueError, KeyError):
            return None


def by_code(shown: list[dict]) -> dict[str, object]:
    return {cell["code"]: cell["value"] for cell in shown}


def start_notebook(runner: Runner) -> dict[str, object]:
    folder = runner.copy("sklearn_classification")
    return by_code(runner.notebook(folder, "python_api_start.py", 5.0, TRIAL_SECONDS="2"))


def test_the_start_notebook_shows_what_it_shows_on_nni(tmp_path):
    on_nni = start_notebook(nni := Runner("nni", tmp_path / "nni"))
    on_hyperlab = start_notebook(hyperlab := Runner("hyperlab", tmp_path / "hyperlab"))

    cells = ["experiment.get_status()", "experiment.export_data()", "experiment.get_job_metrics()"]
    assert list(on_nni) == list(on_hyperlab) == cells
    # still running its trials, or all ten started (NNI and hyperlab start at different speeds)
    assert on_nni["experiment.get_status()"] in ("RUNNING", "NO_MORE_TRIAL")
    assert on_hyperlab["experiment.get_status()"] in ("RUNNING", "NO_MORE_TRIAL")
    for shown in (on_nni, on_hyperlab):
        exported = shown["experiment.export_data()"]
        assert isinstance(exported, list) and exported  # trials ended during the cells' pauses
        for result in exported:
            assert set(result) == {"parameter", "value", "trialJobId"}
            assert set(result["parameter"]) == SKLEARN_KEYS
            assert isinstance(result["value"], float) and 0 < result["value"] < 1
        metrics = shown["experiment.get_job_metrics()"]
        assert isinstance(metrics, dict) and len(metrics) >= len(exported)
        for trial_job_id, records in metrics.items():
            (record,) = records
            assert set(record) == TRIAL_METRIC_FIELDS
            assert (record["trialJobId"], record["type"], record["sequence"]) == (
                trial_job_id,
                "FINAL",
                0,
            )
            assert isinstance(record["timestamp"], int) and isinstance(record["parameterId"], str)
            assert isinstance(record["data"], float)
        assert {r["trialJobId"] for r in exported} <= set(metrics)
    for output in (nni.output, hyperlab.output):  # the records' reprs, as Jupyter shows them
        assert "TrialResult(parameter={'C': " in output
        assert "TrialMetricData(timestamp=" in output


def connect_notebook(runner: Runner) -> tuple[list[dict], subprocess.CompletedProcess[str]]:
    """The quickstart launched, the connect notebook run against it: what the notebook showed,
    and how the launcher ended."""
    quickstart = runner.copy("hpo_quickstart_pytorch")
    notebook = runner.copy("sklearn_classification")
    launcher = runner.start(["main.py"], quickstart, TRIAL_SECONDS="2")
    try:
        wait_for(lambda: runner.status() == "RUNNING", 60, f"{runner.library}'s quickstart")
        shown = runner.notebook(notebook, "python_api_connect.py", 0.2)
        output = launcher.communicate(timeout=90)[0]
    finally:
        launcher.kill()
    return shown, subprocess.CompletedProcess(launcher.args, launcher.returncode, output)


def test_the_connect_notebook_updates_and_stops_the_quickstart_as_on_nni(tmp_path):
    on_nni, nni_launcher = connect_notebook(Runner("nni", tmp_path / "nni"))
    on_hyperlab, hyperlab_launcher = connect_notebook(Runner("hyperlab", tmp_path / "hyperlab"))

    # The one difference: NNI's notebook stops the experiment by stopping its manager, so the
    # launcher's run() loses it and raises; hyperlab's run() returns, as for a stop at home.
    assert nni_launcher.returncode == 1
    assert "in _wait_completion" in nni_launcher.stdout and "ConnectionError" in nni_launcher.stdout
    assert hyperlab_launcher.returncode == 0, hyperlab_launcher.stdout[-4000:]
    for shown in (on_nni, on_hyperlab):
        assert [cell["code"] for cell in shown] == ["experiment.get_experiment_profile()"] * 2
        before, after = (cell["value"] for cell in shown)
        assert before["id"] == after["id"]
        assert before["params"]["maxTrialNumber"] == 10
        assert after["params"]["maxTrialNumber"] == 200
        assert before["params"]["searchSpace"]["features"] == {
            "_type": "choice",
            "_value": [128, 256, 512, 1024],
        }
        assert before["params"]["trialConcurrency"] == 2
    nni_profile, hyperlab_profile = on_nni[0]["value"], on_hyperlab[0]["value"]
    assert set(nni_profile) == set(hyperlab_profile)
    nni_params, hyperlab_params = nni_profile["params"], hyperlab_profile["params"]
    assert set(nni_params) - set(hyperlab_params) == NNI_ONLY_PARAMS
    for name in SAME_PARAMS:
        assert nni_params[name] == hyperlab_params[name], name
    for params in (nni_params, hyperlab_params):  # the folders are each run's own
        assert params["trialCodeDirectory"].endswith("hpo_quickstart_pytorch")
        assert params["trainingService"]["trialCodeDirectory"] == params["trialCodeDirectory"]
        assert params["trainingService"]["platform"] == "local"
