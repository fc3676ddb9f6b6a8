"""The same user's tuner and assessor (``algorithms/demo_tuner.py``) and trial script, run by
NNI 3.0 itself (its own environment, ``tests.server.nni_client``) and by ``hyperlab run``
from one NNI YAML: each call NNI's dispatcher made into them, with its arguments, is made by
hyperlab too, trial by trial.

NNI's dispatcher handles trial ends and intermediate results on one thread and final results
and requests for parameters on another, so only each trial's own calls have a fixed order;
trial job ids are NNI's random ones there, and are compared by the order trials started.
NNI's assessor does not see every history (intermediate results that arrive together are
assessed once, as NNI's documentation of ``assess_trial`` warns), hyperlab's sees each; so
every history NNI's assessed up to hyperlab's verdict must have been assessed alike by
hyperlab's, and the verdicts must agree. And NNI kills a trial its assessor judged ``Bad``
later, asynchronously: such a trial may report more results there, even its final result
(given to ``receive_trial_result`` before ``trial_end(id, False)``), where hyperlab stops it at
the report judged ``Bad``; that final result is left out of NNI's side.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hyperlab.cli import main
from tests.compat.nni.custom.test_custom import ALGORITHMS, SPACE, THRESHOLD, calls
from tests.server.nni_client import client_python

LAUNCH = """\
import sys
from nni.experiment import Experiment, ExperimentConfig

experiment = Experiment(ExperimentConfig.load(sys.argv[1]))
try:
    assert experiment.run(int(sys.argv[2])) is True
finally:
    experiment.stop()
"""


def config(folder: Path, python: str, log: Path) -> Path:
    data = {
        "searchSpace": SPACE,
        "trialCommand": f"{python} trial.py",
        "trialCodeDirectory": str(ALGORITHMS),
        "trialConcurrency": 1,
        "maxTrialNumber": 5,
        "tuner": {
            "codeDirectory": str(ALGORITHMS),
            "className": "demo_tuner.DemoTuner",
            "classArgs": {"log": str(log), "optimize_mode": "maximize", "seed": 3},
        },
        "assessor": {
            "codeDirectory": str(ALGORITHMS),
            "className": "demo_tuner.ThresholdAssessor",
            "classArgs": {"log": str(log), "threshold": THRESHOLD},
        },
        "trainingService": {"platform": "local"},
        "experimentWorkingDirectory": str(folder / "work"),
    }
    folder.mkdir(parents=True)
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def by_trial(log: Path) -> dict[str, Any]:
    """The calls grouped as they can be compared: the first ones, each parameter id's tuner
    calls, and each trial's assessor calls (trials by the order they were first assessed)."""
    recorded = calls(log)
    jobs: dict[str, int] = {}
    tuner: dict[int, list[list[Any]]] = {}
    assessor: dict[int, list[list[Any]]] = {}
    stopped: set[int] = set()  # parameter ids whose trial ended without success
    for call in recorded[3:]:
        name = call[0]
        if name in ("assess_trial", "assessor.trial_end"):
            job = jobs.setdefault(call[1], len(jobs))
            assessor.setdefault(job, []).append([name, *call[2:]])
        else:
            if name == "receive_trial_result":
                call[4].pop("trial_job_id")
            if name == "trial_end" and not call[2]:
                stopped.add(call[1])
            tuner.setdefault(call[1], []).append(call)
    for parameter_id in stopped:  # a late kill's final result (see above)
        tuner[parameter_id] = [c for c in tuner[parameter_id] if c[0] != "receive_trial_result"]
    return {"first": recorded[:3], "tuner": tuner, "assessor": assessor}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_calls_into_a_custom_tuner_and_assessor_are_nni_s(tmp_path: Path) -> None:
    python = client_python()
    nni_log = tmp_path / "nni.jsonl"
    nni_config = config(tmp_path / "nni", str(python), nni_log)
    (tmp_path / "launch.py").write_text(LAUNCH)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [str(python), str(tmp_path / "launch.py"), str(nni_config), str(free_port())],
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ours_log = tmp_path / "ours.jsonl"
    ours_config = config(tmp_path / "ours", sys.executable, ours_log)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HYPERLAB_HOME", str(tmp_path / "home"))
        storage = f"sqlite:///{tmp_path / 'runs.db'}"
        assert main(["--storage", storage, "run", str(ours_config)]) == 0
    theirs, ours = by_trial(nni_log), by_trial(ours_log)
    assert ours["first"] == theirs["first"]
    assert ours["tuner"] == theirs["tuner"]
    assert ours["assessor"].keys() == theirs["assessor"].keys()
    for job, seen in ours["assessor"].items():
        nni_seen = theirs["assessor"][job]
        assert seen[-1] == nni_seen[-1]  # the assessor's trial_end, success alike
        assessed = [call for call in seen if call[0] == "assess_trial"]
        nni_assessed = [call for call in nni_seen if call[0] == "assess_trial"]
        last = len(assessed[-1][1])
        assert all(call in assessed for call in nni_assessed if len(call[1]) <= last)
        verdict = next((c for c in nni_assessed if c[2] == "Bad"), nni_assessed[-1])[2]
        assert assessed[-1][2] == verdict
    stopped = [job for job, seen in ours["assessor"].items() if seen[-1][-1] is False]
    assert stopped and len(stopped) < len(ours["assessor"])  # both kinds of trial were seen
    assert json.dumps(theirs)  # the calls were plain JSON on both sides
