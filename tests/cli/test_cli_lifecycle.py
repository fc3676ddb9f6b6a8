"""The ``hyperlab`` command when things stop or fail: detached drivers that start (or cannot),
lost drivers, names for ids, failures shown where users look, exit codes, pipes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

import hyperlab
from hyperlab.store import Store
from tests.cli.test_cli import ROOT, TRAIN, cli, config

BROKEN = """
def bad(params):
    raise ValueError(f"no good: {params['x']}")
"""
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def wait_for(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("timed out")


def quick(name, objective=lambda p: p["x"], max_trials=2, **options):
    """An experiment run in this process, in the test's home store; its id."""
    space = {"x": hyperlab.uniform(0, 1)}
    try:
        result = hyperlab.run(
            objective, space, max_trials=max_trials, name=name, progress=False, **options
        )
    except hyperlab.TrialError as exc:
        result = exc.result
    return result.experiment_id


def fail(params):
    raise ValueError(f"no good: {params['x']}")


# ---- run --detach ---------------------------------------------------------------------------


def test_detach_runs_in_the_store_the_config_file_names(project, hyperlab_home):
    db = project / "runs.db"
    path = config(project, SPACE, max_trials=2, storage=str(db))
    started = cli("run", str(path), "--detach", home=hyperlab_home)
    assert started.returncode == 0, started.stderr
    exp_id = started.stdout.strip()
    done = wait_for(lambda: hyperlab.load(exp_id, storage=db).status.is_finished())
    assert done and hyperlab.load(exp_id, storage=db).status is hyperlab.ExperimentStatus.DONE
    assert Store.open(None).list_experiments() == []  # nothing in the default store


def test_detach_with_a_taken_port_exits_2_before_writing_anything(project, hyperlab_home):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = cli(
            "run", str(config(project, SPACE)), "--detach", "--port", str(port), home=hyperlab_home
        )
    assert out.returncode == 2, out.stderr
    assert f"{port} is already in use" in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""
    assert Store.open(None).list_experiments() == []


def test_a_detached_driver_that_cannot_start_exits_1_with_its_log(project, hyperlab_home):
    (project / "picky.py").write_text(
        "import sys\n"
        "if 'resume' in sys.argv:\n"
        "    raise RuntimeError('this objective refuses to load in the background')\n"
        "def objective(params):\n"
        "    return params['x']\n"
    )
    path = config(project, SPACE, trial={"function": "picky:objective", "code_dir": "."})
    out = cli("run", str(path), "--detach", home=hyperlab_home)
    assert out.returncode == 1
    assert "refuses to load in the background" in out.stderr  # from its driver.log
    assert "INITIALIZED" in out.stderr and "Traceback" not in out.stderr
    (exp,) = Store.open(None).list_experiments()
    assert exp.status is hyperlab.ExperimentStatus.INITIALIZED and exp.id in out.stderr


# ---- stop -----------------------------------------------------------------------------------


def test_stop_of_an_experiment_whose_driver_was_killed_answers_at_once(project, hyperlab_home):
    space = {
        **SPACE,
        "steps": {"_type": "choice", "_value": [20]},
        "sleep": {"_type": "choice", "_value": [0.05]},
    }
    path = config(project, space, max_trials=50)
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home)}
    driver = subprocess.Popen(
        [sys.executable, "-m", "hyperlab", "run", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    try:
        wait_for(lambda: any(e.n_running for e in Store.open(None).list_experiments()))
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    exp = only()
    assert exp.driver_lost
    assert "RUNNING (driver lost)" in cli("ls", home=hyperlab_home).stdout

    stopped = cli("stop", exp.id, home=hyperlab_home, timeout=15)  # no wait for a dead driver
    assert stopped.returncode == 0, stopped.stderr
    assert "driver was gone; marked STOPPED" in stopped.stdout
    assert f"hyperlab resume {exp.id}" in stopped.stdout
    assert hyperlab.load(exp.id).status is hyperlab.ExperimentStatus.STOPPED
    again = cli("stop", exp.id, home=hyperlab_home)
    assert again.returncode == 2 and "not running" in again.stderr


def only():
    (summary,) = Store.open(None).list_experiments()
    return summary


# ---- names ----------------------------------------------------------------------------------


def test_a_unique_name_works_wherever_an_id_does(hyperlab_home):
    exp_id = quick("solo")
    for args in (["show", "solo"], ["trials", "solo"], ["export", "solo"], ["logs", "solo", "0"]):
        out = cli(*args, home=hyperlab_home)
        assert out.returncode == 0, (args, out.stderr)
        assert args[0] != "show" or exp_id in out.stdout
    stop = cli("stop", "solo", home=hyperlab_home)
    assert stop.returncode == 2 and f"experiment {exp_id} is not running" in stop.stderr
    removed = cli("rm", "solo", "--yes", home=hyperlab_home)
    assert removed.returncode == 0 and f"deleted {exp_id}" in removed.stdout


def test_a_shared_name_says_which_ids_it_matches(hyperlab_home):
    with pytest.warns(UserWarning, match="already exists"):
        ids = [quick("twin"), quick("twin")]
    for command in ("show", "stop", "resume", "rm"):
        out = cli(command, "twin", home=hyperlab_home)
        assert out.returncode == 2, command
        assert f"shared by experiments {ids[0]}, {ids[1]}" in out.stderr
        assert "Traceback" not in out.stderr


# ---- failures shown where users look ----------------------------------------------------------


def test_run_of_failing_trials_ends_with_the_summary_and_the_error(project, hyperlab_home):
    (project / "broken_trials.py").write_text(BROKEN)
    trial = {"function": "broken_trials:bad", "code_dir": "."}
    path = config(project, SPACE, trial=trial, concurrency=1)
    out = cli("run", str(path), home=hyperlab_home)
    assert out.returncode == 1
    assert ": ERROR, 3 trials, 3 failed (most often ValueError: 3)" in out.stdout
    assert "ValueError: no good" in out.stderr and "fail_fast" in out.stderr


def test_resume_of_failing_trials_ends_with_the_summary_and_the_error(project, hyperlab_home):
    (project / "broken_on_resume.py").write_text(BROKEN.replace("bad", "worse"))
    trial = {"function": "broken_on_resume:worse", "code_dir": "."}
    path = config(project, SPACE, name="doomed", trial=trial, concurrency=1)
    exp_id = hyperlab.Experiment.from_config(path).save()
    out = cli("resume", "doomed", home=hyperlab_home)
    assert out.returncode == 1
    assert f"experiment {exp_id}: ERROR, 3 trials, 3 failed" in out.stdout
    assert "ValueError: no good" in out.stderr


def test_show_and_trials_show_the_errors_of_failed_trials(hyperlab_home):
    exp_id = quick("failing", objective=fail, max_trials=3)
    trials = cli("trials", exp_id, home=hyperlab_home)
    assert trials.returncode == 0
    assert "error" in trials.stdout and trials.stdout.count("ValueError: no good:") == 3
    shown = cli("show", exp_id, home=hyperlab_home).stdout
    assert "3 failed, most often ValueError (3x" in shown
    assert "the first 3 trials all failed with ValueError" in shown  # why it ended


def test_logs_of_a_failed_function_trial_end_with_its_error(hyperlab_home):
    exp_id = quick("failing", objective=fail, max_trials=3)
    out = cli("logs", exp_id, "1", "--stderr", home=hyperlab_home)
    assert out.returncode == 0, out.stderr
    assert "Traceback" in out.stdout and "ValueError: no good:" in out.stdout


def test_logs_of_a_silent_function_trial_say_it_wrote_nothing(hyperlab_home):
    exp_id = quick("silent")  # its trials print nothing: no log files are made
    out = cli("logs", exp_id, "0", home=hyperlab_home)
    assert out.returncode == 0 and out.stdout == ""
    assert "has no stdout.log or stderr.log" in out.stderr
    assert "it wrote no output" in out.stderr and "it has no error (SUCCEEDED)" in out.stderr


# ---- ls, exit codes, pipes ------------------------------------------------------------------


def test_ls_filters_by_status_and_name_and_prints_json(hyperlab_home):
    alpha, beta = quick("alpha"), quick("beta")
    failing = quick("failing", objective=fail, max_trials=3)

    def listed(*options):
        out = cli("ls", *options, "--json", home=hyperlab_home)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    everything = listed()
    assert [e["id"] for e in everything] == [failing, beta, alpha]  # newest first
    assert {"status", "driver_lost", "elapsed", "n_failed", "best_value"} <= set(everything[0])
    assert everything[0]["status"] == "ERROR" and everything[0]["n_failed"] == 3
    assert [e["id"] for e in listed("--status", "error")] == [failing]
    assert [e["id"] for e in listed("--status", "DONE", "--name", "al*")] == [alpha]
    assert listed("--name", "nobody") == []
    bad = cli("ls", "--status", "finished", home=hyperlab_home)
    assert bad.returncode == 2 and "expected one of INITIALIZED" in bad.stderr


def test_a_store_that_cannot_be_opened_is_bad_input(project, hyperlab_home):
    garbage = project / "garbage.db"
    garbage.write_text("not a database, not at all " * 100)
    for args in (["ls"], ["show", "abc"], ["run", str(config(project, SPACE))]):
        out = cli("--storage", str(garbage), *args, home=hyperlab_home)
        assert out.returncode == 2, (args, out.stderr)
        assert "cannot open store" in out.stderr and "Traceback" not in out.stderr


def test_export_into_head_exits_0_without_a_traceback(hyperlab_home):
    exp_id = quick("many", max_trials=2000)  # far more than a pipe's buffer
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home)}
    for fmt in ("json", "csv"):
        out = subprocess.run(
            [
                "bash",
                "-c",
                f"set -o pipefail; {sys.executable} -m hyperlab export {exp_id} --format {fmt} "
                "| head -1",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert out.stderr == ""
        assert out.stdout.startswith("[" if fmt == "json" else "number,status,value,")
