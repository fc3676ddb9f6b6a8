"""A trial's processes end with it, even a daemon that left its process group (``setsid``).

Each trial here starts a daemon (``tests/executors/daemon_trial.py``) that forks, calls
``setsid``, forks again and ignores SIGTERM, then ends one way or another: by itself, failing,
stopped, killed after ignoring SIGTERM, timed out. Once the trial has ended (and the executor
closed), the daemon is gone: not running, and not a zombie of this process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab import space as hs
from hyperlab.executors import (
    CommandTrial,
    Executor,
    Failed,
    Finished,
    Reported,
    Stopped,
    create_executor,
)
from hyperlab.executors._reaper import MARKS_VARIABLE, add_mark, marked, new_mark, processes
from tests.executors import daemon_trial
from tests.executors.harness import PYTHON, Recorder, pid_alive, spec

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="processes that left the group: Linux only"
)

EXECUTORS = ["processes", "command"]
COMMAND = f"{PYTHON} -S {Path(daemon_trial.__file__)}"
ENDS = {"finish": Finished, "fail": Failed, "stop": Stopped, "kill": Stopped, "hang": Failed}

_opened: list[Executor] = []


@pytest.fixture(autouse=True)
def _close_executors():
    yield
    while _opened:
        _opened.pop().close()  # closing twice is harmless


def objective_for(name: str) -> Any:
    return CommandTrial(COMMAND) if name == "command" else daemon_trial.objective


def executor_for(name: str, **options) -> Executor:
    executor = create_executor(name, objective_for(name), **options)
    _opened.append(executor)
    return executor


def gone(pid: int) -> bool:
    """Neither running nor a zombie of ours (an orphan's zombie is init's to reap)."""
    if pid_alive(pid):
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return int(stat.rsplit(")", 1)[1].split()[1]) != os.getpid()


def wait_gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return gone(pid)


def daemon_of(executor: Executor, folder: Path, recorder: Recorder, number: int) -> int:
    """The pid of the daemon trial ``number`` started (running when the trial reported it)."""
    deadline = time.monotonic() + 30
    while not recorder.of(number, Reported):
        assert time.monotonic() < deadline, "the trial did not report its daemon"
        executor.poll(0.05)
    return int((folder / "trials" / str(number) / "daemon.pid").read_text())


def until_ended(executor: Executor, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while executor.running:
        assert time.monotonic() < deadline, "the trial did not end in time"
        executor.poll(0.05)


@pytest.mark.parametrize("mode", list(ENDS))
@pytest.mark.parametrize("name", EXECUTORS)
def test_a_daemon_ends_with_its_trial(tmp_path, name, mode):
    executor = executor_for(
        name, concurrency=1, stop_grace=0.5, trial_timeout=2.0 if mode == "hang" else None
    )
    recorder = Recorder()
    executor.open(recorder)
    executor.submit(spec(0, tmp_path, {"mode": mode}))
    daemon = daemon_of(executor, tmp_path, recorder, 0)
    if mode in ("stop", "kill", "hang"):
        assert pid_alive(daemon)
    if mode in ("stop", "kill"):
        executor.stop(0)
    until_ended(executor)
    assert isinstance(recorder.end(0), ENDS[mode])
    if not (name == "processes" and mode == "kill"):  # ended as SIGTERM is sent: the worker
        assert wait_gone(daemon, within=2.0), f"the daemon outlived its {mode} trial"  # lives
    executor.close()
    assert wait_gone(daemon, within=2.0), "the daemon outlived the executor"


def test_a_daemon_without_the_mark_still_ends_with_a_processes_trial(tmp_path):
    """The worker's subreaper keeps it in reach although its environment is empty."""
    executor = executor_for("processes", concurrency=1)
    recorder = Recorder()
    executor.open(recorder)
    executor.submit(spec(0, tmp_path, {"mode": "bare"}))
    daemon = daemon_of(executor, tmp_path, recorder, 0)
    assert MARKS_VARIABLE not in Path(f"/proc/{daemon}/environ").read_text()
    until_ended(executor)
    assert isinstance(recorder.end(0), Finished)
    assert wait_gone(daemon, within=2.0)


def test_a_processes_trials_orphans_go_to_its_workers_keeper_which_reaps_them(tmp_path):
    """Not to init, nor to the driver: to the keeper above the worker, which reaps the
    daemon's first parent (exited) as init would."""
    executor = executor_for("processes", concurrency=1)
    recorder = Recorder()
    executor.open(recorder)
    executor.submit(spec(0, tmp_path, {"mode": "stop"}))
    daemon = daemon_of(executor, tmp_path, recorder, 0)
    keeper = processes()[daemon].ppid
    assert processes()[keeper].ppid == os.getpid()
    deadline = time.monotonic() + 5
    while [p for p in processes().values() if p.ppid == keeper and p.zombie]:
        assert time.monotonic() < deadline, "the keeper left a zombie"
        time.sleep(0.01)
    executor.stop(0)
    until_ended(executor)
    assert wait_gone(daemon, within=2.0)


@pytest.mark.parametrize("name", EXECUTORS)
def test_only_the_ending_trials_processes_are_killed(tmp_path, name):
    outsider = subprocess.Popen(
        [sys.executable, "-S", "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        executor = executor_for(name, concurrency=2, stop_grace=0.5)
        recorder = Recorder()
        executor.open(recorder)
        executor.submit(spec(1, tmp_path, {"mode": "stop"}))
        running = daemon_of(executor, tmp_path, recorder, 1)
        assert pid_alive(running)
        executor.submit(spec(0, tmp_path, {"mode": "finish"}))
        finished = daemon_of(executor, tmp_path, recorder, 0)
        deadline = time.monotonic() + 30
        while not [e for e in recorder.of(0) if isinstance(e, Finished)]:
            assert time.monotonic() < deadline
            executor.poll(0.05)
        assert wait_gone(finished, within=2.0)
        assert pid_alive(running), "another trial's daemon was killed"
        executor.close()
        assert wait_gone(running, within=2.0)
        assert outsider.poll() is None, "a process that is no trial's was killed"
    finally:
        outsider.kill()
        outsider.wait()


@pytest.mark.parametrize("name", EXECUTORS)
def test_no_daemon_outlives_an_experiment(tmp_path, name):
    """The case seen: trials ending every way, through the public API."""
    result = hyperlab.run(
        objective_for(name),
        {"mode": hs.choice("finish", "fail", "hang")},
        tuner="grid",
        executor=name,
        concurrency=3,
        trial_timeout=3,
        metric="daemon",
        storage=str(tmp_path / "db.sqlite"),
        progress=False,
    )
    daemons = [t.reports[0].metrics["daemon"] for t in result.trials]
    assert len(daemons) == 3
    assert sorted(t.status.name for t in result.trials) == ["FAILED", "FAILED", "SUCCEEDED"]
    assert all(wait_gone(pid, within=2.0) for pid in daemons)


@pytest.mark.parametrize("name", EXECUTORS)
def test_no_daemon_outlives_a_stopped_experiment(tmp_path, name):
    experiment = hyperlab.Experiment(
        objective_for(name),
        {"mode": hs.choice("stop")},
        max_trials=2,
        executor=name,
        concurrency=2,
        metric="daemon",
        storage=str(tmp_path / "db.sqlite"),
        progress=False,
    )
    experiment.start()
    deadline = time.monotonic() + 30
    while sum(bool(t.reports) for t in experiment.result().trials) < 2:
        assert time.monotonic() < deadline, "the trials did not report their daemons"
        time.sleep(0.05)
    experiment.stop()
    result = experiment.wait()
    daemons = [t.reports[0].metrics["daemon"] for t in result.trials]
    assert all(t.status is TrialStatus.SYS_CANCELED for t in result.trials)
    assert all(wait_gone(pid, within=2.0) for pid in daemons)


DRIVER = """
import sys
import hyperlab
from hyperlab import space as hs
from tests.executors import daemon_trial
hyperlab.run(daemon_trial.objective, {"mode": hs.choice("hang")}, tuner="grid",
             executor="processes", storage=sys.argv[1], progress=False)
"""


def test_a_driver_killed_by_sigkill_takes_its_processes_trials_daemons_along(tmp_path):
    """The worker's keeper outlives the driver by an instant, and ends what is below it."""
    root = Path(__file__).resolve().parents[2]
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path / "db.sqlite")], cwd=root)
    try:
        deadline = time.monotonic() + 60
        while not (found := list(tmp_path.rglob("daemon.pid"))):
            assert driver.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        daemon = int(found[0].read_text())
        assert pid_alive(daemon)
    finally:
        driver.kill()
        driver.wait()
    assert wait_gone(daemon, within=5.0), "the daemon outlived its killed driver"


def test_marks_add_up_and_find_only_their_processes():
    """A nested executor's mark joins the inherited one: both find the process."""
    outer, inner, other = new_mark(), new_mark(), new_mark()
    env = add_mark(add_mark(dict(os.environ), outer), inner)
    assert env[MARKS_VARIABLE] == f"{outer} {inner}"
    child = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(30)"], env=env)
    try:
        for mark in (outer, inner):
            assert [p.pid for p in marked(mark, processes())] == [child.pid]
        assert marked(other, processes()) == []
        assert marked(outer[:8], processes()) == []  # whole marks only
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
