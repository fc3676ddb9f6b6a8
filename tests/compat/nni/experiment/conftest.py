"""Fixtures of the NNI ``Experiment`` tests: a project folder holding an NNI trial script whose
trials the test holds running (while a file ``hold`` exists) or makes fail (``fail``), NNI
experiments filled in as NNI's examples do, and scripts run in other processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hyperlab.compat.nni.experiment import Experiment
from hyperlab.store import Store
from hyperlab.trial import Trial

SCRIPTS = Path(__file__).parent / "scripts"

TRIAL = """\
import time
from pathlib import Path

import nni

here = Path(__file__).parent
params = nni.get_next_parameter()
if (here / "fail").exists():
    raise SystemExit("failing on purpose")
step = 0
while True:
    nni.report_intermediate_result(params["x"] * step)
    step += 1
    if step >= 3 and not (here / "hold").exists():
        break
    time.sleep(0.05)
nni.report_final_result(params["x"])
"""
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with the trial script ``trial.py``."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "trial.py").write_text(TRIAL)
    return folder


def nni_experiment(project: Path, storage: str | None = None, **fields: object) -> Experiment:
    """An experiment of ``trial.py`` set up field by field as NNI's examples do."""
    experiment = Experiment("local", storage=storage)
    experiment.config.trial_command = f"{sys.executable} trial.py"
    experiment.config.trial_code_directory = project
    experiment.config.search_space = SPACE
    experiment.config.tuner.name = "Random"
    experiment.config.tuner.class_args["seed"] = 7
    experiment.config.max_trial_number = 4
    experiment.config.trial_concurrency = 2
    for name, value in fields.items():
        setattr(experiment.config, name, value)
    return experiment


@pytest.fixture
def experiments() -> Iterator[Callable[..., Experiment]]:
    """``experiments(project, **fields)``: ``nni_experiment``, stopped after the test."""
    made: list[Experiment] = []

    def make(project: Path, storage: str | None = None, **fields: object) -> Experiment:
        made.append(nni_experiment(project, storage, **fields))
        return made[-1]

    yield make
    for experiment in made:
        experiment.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(**extra: str) -> dict[str, str]:
    """This process's environment (its ``HYPERLAB_HOME`` included), with this interpreter first
    on ``PATH`` so that trial commands' ``python`` and ``python3`` are it."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, **extra}


def start_script(args: list[str], cwd: Path, **extra: str) -> subprocess.Popen[str]:
    """``python ARGS`` in ``cwd``, its output (stdout and stderr) captured as text."""
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        env=environment(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> object:
    """``condition()``'s first true value, looked at every 50 ms; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g}s waiting for {what or condition}")
        time.sleep(0.05)


def trials(experiment_id: str, storage: str | None = None) -> list[Trial]:
    """The experiment's trials as the store holds them."""
    with Store.open(storage) as store:
        return store.get_trials(experiment_id, reports=True)


def stored_status(experiment_id: str, storage: str | None = None) -> str:
    with Store.open(storage) as store:
        return str(store.get_experiment(experiment_id).status)
