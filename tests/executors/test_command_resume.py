"""A command trial outlives a killed driver; when it cannot be adopted (its shell is gone, its
program is not), resuming stops what is left of it before its next attempt runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import hyperlab
from hyperlab.store import Store
from tests.executors.harness import pid_alive

ROOT = Path(__file__).resolve().parents[2]
TRIAL = """
import os, time, hyperlab
attempt = int(os.environ["HYPERLAB_ATTEMPT"])
(hyperlab.trial_dir() / f"pid-{attempt}").write_text(str(os.getpid()))
if attempt == 1:
    time.sleep(120)
hyperlab.report(loss=float(attempt))
"""


def test_resume_stops_an_orphaned_attempt_it_cannot_adopt_then_reruns_it(tmp_path, hyperlab_home):
    (tmp_path / "trial.py").write_text(TRIAL)
    config = {
        "search_space": {"x": {"_type": "choice", "_value": [1, 2]}},
        "trial": {"command": f"{sys.executable} trial.py", "code_dir": str(tmp_path)},
        "tuner": "grid",
        "concurrency": 2,
        "metric": "loss",
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home)}
    driver = subprocess.Popen(
        [sys.executable, "-m", "hyperlab", "run", "config.json"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    trials_dir = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = sorted(hyperlab_home.glob("experiments/*/trials/*/pid-1"))
        if len(found) == 2:
            trials_dir = found[0].parent.parent
            break
        time.sleep(0.05)
    assert trials_dir is not None, "the trials did not start"
    first = [int(p.read_text()) for p in sorted(trials_dir.glob("*/pid-1"))]
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    time.sleep(0.3)
    assert all(pid_alive(pid) for pid in first), "command trials run in their own sessions"
    for group in trials_dir.glob("*/group.json"):  # the shells die, their programs run on:
        os.kill(json.loads(group.read_text())["pgid"], signal.SIGKILL)  # nothing to adopt
    time.sleep(0.3)
    assert all(pid_alive(pid) for pid in first)

    (summary,) = Store.open(None).list_experiments()
    resumed = subprocess.run(
        [sys.executable, "-m", "hyperlab", "resume", summary.id],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert not any(pid_alive(pid) for pid in first), "the first attempts were left running"
    result = hyperlab.load(summary.id)
    assert [t.attempt for t in result.trials] == [2, 2]
    assert all(t.status is hyperlab.TrialStatus.SUCCEEDED and t.value == 2.0 for t in result.trials)
