"""The ``hyperlab`` command, run as a user would: a subprocess, real files, real store."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import hyperlab

ROOT = Path(__file__).resolve().parents[2]
TRAIN = """
import sys, time
import hyperlab
p = hyperlab.get_params()
print(f"training with x={p['x']}", flush=True)
for step in range(int(p.get("steps", 3))):
    hyperlab.report(loss=(p["x"] - 0.3) ** 2 + 1.0 / (step + 1))
    time.sleep(float(p.get("sleep", 0.0)))
if p.get("fail"):
    print("it broke", file=sys.stderr)
    sys.exit(3)
hyperlab.report(loss=(p["x"] - 0.3) ** 2)
"""


def cli(*args, home, timeout=120):
    env = {**os.environ, "HYPERLAB_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "hyperlab", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def config(project, space, **fields):
    body = {
        "name": "cli-test",
        "search_space": space,
        "trial": {"command": f"{sys.executable} train.py", "code_dir": "."},
        "metric": "loss",
        "max_trials": 4,
        "concurrency": 2,
        "seed": 1,
        **fields,
    }
    path = project / "config.yml"
    path.write_text(json.dumps(body))
    return path


def only_experiment(home):
    """The one experiment in the home store (the test's HYPERLAB_HOME is ``home``)."""
    from hyperlab.store import Store

    (summary,) = Store.open(None).list_experiments()
    return summary


def test_version(hyperlab_home):
    out = cli("--version", home=hyperlab_home)
    assert out.returncode == 0 and out.stdout.strip() == f"hyperlab {hyperlab.__version__}"


def test_run_then_inspect_with_every_reading_command(project, hyperlab_home):
    space = {"x": {"_type": "uniform", "_value": [0, 1]}}
    out = cli("run", str(config(project, space)), home=hyperlab_home)
    assert out.returncode == 0, out.stderr
    assert "DONE, 4 trials" in out.stdout and "best parameters" in out.stdout
    exp = only_experiment(hyperlab_home)

    listing = cli("ls", home=hyperlab_home).stdout
    assert exp.id in listing and "cli-test" in listing and "4/4" in listing

    shown = cli("show", exp.id, home=hyperlab_home)
    assert shown.returncode == 0 and "top 10 trials" in shown.stdout
    assert "4 SUCCEEDED" in shown.stdout and "python" in shown.stdout

    trials = cli("trials", exp.id, "--sort", "metric", "--limit", "2", home=hyperlab_home)
    assert trials.returncode == 0 and trials.stdout.count("SUCCEEDED") == 2

    logs = cli("logs", exp.id, "0", home=hyperlab_home)
    assert logs.returncode == 0 and "training with x=" in logs.stdout

    out_csv = project / "trials.csv"
    assert (
        cli("export", exp.id, "--format", "csv", "-o", str(out_csv), home=hyperlab_home).returncode
        == 0
    )
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["number"] for r in rows] == ["0", "1", "2", "3"]
    assert {"params.x", "metrics.loss", "duration", "status"} <= set(rows[0])
    exported = json.loads(cli("export", exp.id, "--format", "json", home=hyperlab_home).stdout)
    assert [r["value"] for r in exported] == [float(r["value"]) for r in rows]

    assert cli("rm", exp.id, home=hyperlab_home).returncode == 2  # no --yes, no terminal
    removed = cli("rm", exp.id, "--yes", home=hyperlab_home)
    assert removed.returncode == 0
    gone = cli("show", exp.id, home=hyperlab_home)
    assert gone.returncode == 2 and f"no experiment with id or name '{exp.id}'" in gone.stderr


def test_failed_trials_show_stderr_and_the_experiment_ends_in_error(project, hyperlab_home):
    space = {
        "x": {"_type": "uniform", "_value": [0, 1]},
        "fail": {"_type": "choice", "_value": [1]},
    }
    out = cli(
        "run", str(config(project, space, max_failed_trials=2, concurrency=1)), home=hyperlab_home
    )
    assert out.returncode == 1
    assert "2 trials failed in a row" in out.stderr
    exp = only_experiment(hyperlab_home)
    failed = cli("trials", exp.id, "--status", "failed", home=hyperlab_home)
    assert failed.stdout.count("FAILED") == 2
    assert failed.stdout.count("it broke") == 2  # the error column: its last line
    err = cli("logs", exp.id, "0", "--stderr", home=hyperlab_home)
    assert "it broke" in err.stdout
    assert hyperlab.load(exp.id).trials[0].error.rstrip().endswith("it broke")


def test_detach_then_stop_from_another_process(project, hyperlab_home):
    space = {
        "x": {"_type": "uniform", "_value": [0, 1]},
        "steps": {"_type": "choice", "_value": [400]},
        "sleep": {"_type": "choice", "_value": [0.05]},
    }
    started = cli("run", str(config(project, space, max_trials=50)), "--detach", home=hyperlab_home)
    assert started.returncode == 0, started.stderr
    exp_id = started.stdout.strip()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        trials = hyperlab.load(exp_id).trials
        if any(t.reports for t in trials):
            break
        time.sleep(0.1)
    stopped = cli("stop", exp_id, home=hyperlab_home)
    assert stopped.returncode == 0, stopped.stderr
    assert "STOPPED" in stopped.stdout
    result = hyperlab.load(exp_id)
    assert result.status is hyperlab.ExperimentStatus.STOPPED
    assert result.trials and all(  # interrupted: they run again on resume
        t.status is hyperlab.TrialStatus.SYS_CANCELED for t in result.trials
    )
    again = cli("stop", exp_id, home=hyperlab_home)
    assert again.returncode == 2 and "not running" in again.stderr


@pytest.mark.parametrize(
    "command",
    [["show"], ["trials"], ["stop"], ["resume"], ["rm", "--yes"], ["export"], ["logs", "_", "0"]],
)
def test_unknown_id_is_one_clear_line(hyperlab_home, command):
    args = [c if c != "_" else "zzzzzzzz" for c in command]
    if "_" not in command:
        args = [command[0], "zzzzzzzz", *command[1:]]
    out = cli(*args, home=hyperlab_home)
    assert out.returncode == 2
    assert "no experiment with id or name 'zzzzzzzz'" in out.stderr
    assert "Traceback" not in out.stderr


def test_bad_config_is_one_line_and_writes_nothing(project, hyperlab_home):
    path = project / "bad.yml"
    path.write_text(
        textwrap.dedent("""
        search_space: {x: {_type: uniform, _value: [0, 1]}}
        trial: {command: python train.py}
        max_trails: 3
    """)
    )
    out = cli("run", str(path), home=hyperlab_home)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "did you mean 'max_trials'" in out.stderr
    assert cli("ls", home=hyperlab_home).stdout.count("cli-test") == 0
    assert not (hyperlab_home / "experiments").exists()


def test_debug_shows_the_traceback(hyperlab_home):
    out = cli("--debug", "show", "zzzzzzzz", home=hyperlab_home)
    assert out.returncode != 0 and "Traceback" in out.stderr


def test_bad_storage_is_one_line_without_traceback(hyperlab_home):
    out = cli("--storage", "mysql://x/y", "ls", home=hyperlab_home)
    assert out.returncode == 2
    assert out.stderr.startswith("hyperlab: error: storage:") and "Traceback" not in out.stderr


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_with_port_serves_the_rest_api_while_it_runs(project, hyperlab_home):
    import urllib.request

    space = {
        "x": {"_type": "uniform", "_value": [0, 1]},
        "steps": {"_type": "choice", "_value": [30]},
        "sleep": {"_type": "choice", "_value": [0.05]},
    }
    port = free_port()
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hyperlab",
            "run",
            str(config(project, space, max_trials=4)),
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        body = None
        while time.monotonic() < deadline and body is None:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/v1/nni/check-status", timeout=2
                ) as response:
                    body = json.loads(response.read())
            except OSError:
                time.sleep(0.1)
        assert body is not None, "the API never answered"
        assert body["status"] in ("RUNNING", "NO_MORE_TRIAL", "DONE")
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/v1/experiments", timeout=2
        ) as response:
            (listed,) = json.loads(response.read())
        assert listed["name"] == "cli-test"
    finally:
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"127.0.0.1:{port}" in err


def test_logs_follow_streams_a_running_trial_to_its_end(project, hyperlab_home):
    space = {
        "x": {"_type": "uniform", "_value": [0, 1]},
        "steps": {"_type": "choice", "_value": [20]},
        "sleep": {"_type": "choice", "_value": [0.05]},
    }
    started = cli(
        "run",
        str(config(project, space, max_trials=2, concurrency=1)),
        "--detach",
        home=hyperlab_home,
    )
    exp_id = started.stdout.strip()
    followed = cli("logs", exp_id, "1", "--follow", home=hyperlab_home, timeout=60)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.startswith("training with x=")
    assert hyperlab.load(exp_id).trials[1].status is hyperlab.TrialStatus.SUCCEEDED


def test_home_option_chooses_the_store(project, tmp_path, hyperlab_home):
    other = tmp_path / "other-home"
    space = {"x": {"_type": "uniform", "_value": [0, 1]}}
    assert (
        cli(
            "--home",
            str(other),
            "run",
            str(config(project, space, max_trials=1)),
            home=hyperlab_home,
        ).returncode
        == 0
    )
    assert (other / "hyperlab.db").is_file()
    assert "cli-test" in cli("--home", str(other), "ls", home=hyperlab_home).stdout
    assert "cli-test" not in cli("ls", home=hyperlab_home).stdout


@pytest.mark.parametrize(
    ("gpus", "message"),
    [
        ({"indices": [0, -1]}, "gpus.indices"),
        ({"indices": [0, 1], "per_trial": 3}, "gpus.per_trial"),
    ],
)
def test_bad_gpu_settings_are_named(project, hyperlab_home, gpus, message):
    space = {"x": {"_type": "uniform", "_value": [0, 1]}}
    out = cli("run", str(config(project, space, gpus=gpus)), home=hyperlab_home)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
