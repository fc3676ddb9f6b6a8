"""Adopting command trials: a second executor takes over the trials of one that died (its driver
killed) and delivers exactly the reports not yet stored, then the trial's end."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hyperlab.executors import (
    CommandTrial,
    Failed,
    Finished,
    Reported,
    Started,
    Stopped,
    TrialSpec,
    create_executor,
)
from hyperlab.executors._command._run import group_runs
from hyperlab.executors._logs import CappedLog, open_for_trial
from tests.executors.harness import PYTHON, Recorder, pid_alive, script, spec, wait_dead

ROOT = Path(__file__).resolve().parents[2]
_opened: list = []
_abandoned: list[subprocess.Popen] = []
_folders: list[str] = []


def command(cmd: str, **options):
    """A command executor closed after the test, even when the test fails."""
    options.setdefault("concurrency", 2)
    options.setdefault("stop_grace", 1.0)
    executor = create_executor("command", CommandTrial(cmd), **options)
    _opened.append(executor)
    return executor


@pytest.fixture(autouse=True)
def _clean_up():
    yield
    while _opened:
        _opened.pop().close()
    while _abandoned:  # what a test left running: the trials of a "dead" executor
        process = _abandoned.pop()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    while _folders:
        shutil.rmtree(_folders.pop(), ignore_errors=True)


def abandon(executor) -> None:
    """Let go of ``executor``'s trials as a driver that lost its lease does: they run on."""
    _abandoned.extend(run.process for run in executor._runs.values())
    executor.detach()
    _opened.remove(executor)
    if executor._links is not None:  # its trials' PYTHONPATH: removed once they are gone
        _folders.append(executor._links)


def start(cmd: str, spec_: TrialSpec, *, reports: int = 0, **options) -> Recorder:
    """Run ``spec_`` with a first executor until it delivered ``reports`` reports."""
    recorder = Recorder()
    executor = command(cmd, **options)
    executor.open(recorder)
    executor.submit(spec_)
    deadline = time.monotonic() + 30
    while len(recorder.of(spec_.number, Reported)) < reports:
        executor.poll(0.02)
        assert time.monotonic() < deadline, "the trial did not report in time"
    abandon(executor)
    return recorder


def watch(executor, limit: float = 30.0) -> Recorder:
    """Poll an executor that adopted trials until they all ended; what it delivered."""
    recorder = executor.listener
    deadline = time.monotonic() + limit
    while executor.running:
        executor.poll(0.05)
        assert time.monotonic() < deadline, "the adopted trials did not end in time"
    return recorder


def adopter(cmd: str, **options):
    """A second executor, opened with a ``Recorder``, to adopt the trials of the first."""
    executor = command(cmd, **options)
    executor.open(Recorder())
    return executor


def wait_for(check, what: str, within: float = 20.0):
    deadline = time.monotonic() + within
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return value


def steps(recorder: Recorder, number: int = 0) -> list[int]:
    return [e.step for e in recorder.of(number, Reported)]


# ---- reports and ends ----------------------------------------------------------------------


def test_the_adopter_delivers_exactly_the_reports_not_yet_stored(tmp_path):
    cmd = script("report_steps.py", "--steps", 8, "--sleep", 0.15)
    trial = spec(0, tmp_path, {"x": 8.0})
    first = start(cmd, trial, reports=2)
    stored = len(first.of(0, Reported))

    executor = adopter(cmd)
    started = executor.adopt(trial, reports=stored)
    assert started is not None and started <= time.time()
    assert executor.running == 1 and executor.free_slots == 1
    rec = watch(executor)

    assert steps(first) + steps(rec) == list(range(8))
    assert not rec.of(0, Started), "an adopted trial started under the dead driver"
    end = rec.end(0)
    assert isinstance(end, Finished) and end.metrics["loss"] == pytest.approx(1.0)
    assert not (Path(trial.trial_dir) / "group.json").exists()


def test_a_final_result_reported_before_the_adoption_is_the_result(tmp_path):
    cmd = script("report_steps.py", "--steps", 2, "--final", 0.25) + " && sleep 0.5"
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=2)
    wait_for(lambda: b"final" in (Path(trial.trial_dir) / "metrics.jsonl").read_bytes(), "final")

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=len(first.of(0, Reported))) is not None
    rec = watch(executor)
    assert steps(rec) == []
    assert rec.end(0) == Finished(0, rec.end(0).time, {"loss": 0.25})


def test_an_adopted_trial_that_exits_non_zero_fails_quoting_its_stderr(tmp_path):
    cmd = script("report_steps.py", "--steps", 3, "--sleep", 0.2, "--exit", 3, "--stderr", "boom")
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=1)

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=len(first.of(0, Reported))) is not None
    rec = watch(executor)
    assert steps(first) + steps(rec) == [0, 1, 2]
    end = rec.end(0)
    assert isinstance(end, Failed)
    assert "exited with code 3" in end.error and "boom" in end.error


def test_a_trial_that_ended_while_no_driver_watched_is_adopted_with_its_end(tmp_path):
    cmd = script("report_steps.py", "--steps", 3, "--final", 0.5)
    trial = spec(0, tmp_path)
    start(cmd, trial)  # abandoned before it delivered anything
    wait_for(lambda: (Path(trial.trial_dir) / "exit_status").exists(), "the trial's end")

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=0) is not None
    rec = watch(executor)
    assert steps(rec) == [0, 1, 2]
    assert isinstance(rec.end(0), Finished) and rec.end(0).metrics == {"loss": 0.5}


def test_an_adopted_shell_killed_without_a_status_fails_saying_so(tmp_path):
    cmd = script("report_steps.py", "--steps", 50, "--sleep", 0.1)
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=1)
    (pgid,) = [p.pid for p in _abandoned]

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=len(first.of(0, Reported))) is not None
    os.kill(pgid, signal.SIGKILL)  # the shell alone: its python goes on until it is killed
    rec = watch(executor)
    end = rec.end(0)
    assert isinstance(end, Failed)
    assert "ended without recording its exit status" in end.error
    wait_for(lambda: not group_runs(pgid), "what was left of the group to be killed")


# ---- what cannot be adopted ----------------------------------------------------------------


def test_a_trial_whose_group_is_gone_is_not_adopted(tmp_path):
    cmd = script("report_steps.py", "--steps", 50, "--sleep", 0.1)
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=1)
    (pgid,) = [p.pid for p in _abandoned]
    os.killpg(pgid, signal.SIGKILL)
    wait_for(lambda: not group_runs(pgid), "the group to go")

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=len(first.of(0, Reported))) is None
    assert executor.running == 0


def test_another_attempt_or_a_channel_shorter_than_the_store_is_not_adopted(tmp_path):
    cmd = script("report_steps.py", "--steps", 50, "--sleep", 0.1)
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=1)
    (pgid,) = [p.pid for p in _abandoned]

    executor = adopter(cmd)
    stored = len(first.of(0, Reported))
    assert executor.adopt(dataclasses.replace(trial, attempt=2), reports=stored) is None
    assert executor.adopt(trial, reports=1000) is None
    assert executor.adopt(spec(1, tmp_path), reports=0) is None  # no folder, no group.json
    assert executor.running == 0
    assert group_runs(pgid), "a trial that was not adopted was touched"


# ---- stopping, timeouts, close, logs ---------------------------------------------------------


def test_stop_ends_an_adopted_trial_and_its_whole_group(tmp_path):
    cmd = script("report_steps.py", "--steps", 200, "--sleep", 0.05)
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=1)
    (pgid,) = [p.pid for p in _abandoned]

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=len(first.of(0, Reported))) is not None
    executor.stop(0)
    rec = watch(executor)
    assert isinstance(rec.end(0), Stopped) and rec.end(0).metrics is not None
    assert not group_runs(pgid)


def test_trial_timeout_counts_from_the_adopted_trials_start(tmp_path):
    cmd = script("report_steps.py", "--steps", 200, "--sleep", 0.05)
    trial = spec(0, tmp_path)
    start(cmd, trial, reports=1)
    time.sleep(0.5)

    executor = adopter(cmd, trial_timeout=0.5)
    assert executor.adopt(trial, reports=0) is not None  # reports=0: re-delivers what it sent
    rec = watch(executor)
    end = rec.end(0)
    assert isinstance(end, Failed) and "trial_timeout=0.5s" in end.error
    assert rec.of(0, Reported)[0].step == 0


def test_close_leaves_no_process_of_an_adopted_trial(tmp_path):
    cmd = script("report_steps.py", "--steps", 200, "--sleep", 0.05)
    trial = spec(0, tmp_path)
    start(cmd, trial, reports=1)
    (pgid,) = [p.pid for p in _abandoned]

    executor = adopter(cmd)
    assert executor.adopt(trial, reports=1) is not None
    executor.close()
    assert not group_runs(pgid)
    assert isinstance(executor.listener.end(0), Stopped)


def test_a_log_trimmed_by_the_dead_driver_keeps_one_marker_and_counts_every_drop(tmp_path):
    path = tmp_path / "stdout.log"
    fd = open_for_trial(path)
    line = b"x" * 99 + b"\n"
    os.write(fd, line * 100)
    first = CappedLog(path, 2048)
    assert first.finish()
    head, dropped = first.head, first.dropped
    first.close()  # the dead driver's
    os.write(fd, line * 50)

    again = CappedLog.reopen(path, 2048)
    assert (again.head, again.dropped) == (head, dropped)
    assert again.finish()
    os.close(fd)
    data = path.read_bytes()
    assert data.count(b"[hyperlab:") == 1
    total = again.dropped
    assert total > dropped and f"[hyperlab: {total} bytes".encode() in data
    assert len(data) - again.marker <= 2048
    again.close()


def test_an_adopted_trials_logs_stay_capped(tmp_path):
    chatty = tmp_path / "chatty.py"
    chatty.write_text(
        "import sys, time, hyperlab\n"
        "for i in range(40):\n"
        "    print(str(i) * 2000, flush=True)\n"
        "    hyperlab.report(loss=float(i))\n"
        "    time.sleep(0.03)\n"
    )
    cmd = f"{PYTHON} {chatty}"
    trial = spec(0, tmp_path)
    first = start(cmd, trial, reports=5, max_log_bytes=4096)

    executor = adopter(cmd, max_log_bytes=4096)
    assert executor.adopt(trial, reports=len(first.of(0, Reported))) is not None
    rec = watch(executor)
    assert steps(first) + steps(rec) == list(range(40))
    data = (Path(trial.trial_dir) / "stdout.log").read_bytes()
    assert data.count(b"[hyperlab:") == 1
    assert len(data) <= 4096 + 200


# ---- a driver process killed for real ------------------------------------------------------

DRIVER = """
import json, sys, time
from pathlib import Path
from hyperlab.executors import CommandTrial, Reported, create_executor
from tests.executors.harness import Recorder, spec

cmd, folder = sys.argv[1], Path(sys.argv[2])
recorder = Recorder()
executor = create_executor("command", CommandTrial(cmd), concurrency=2)
executor.open(recorder)
for number in (0, 1):
    executor.submit(spec(number, folder))
while min(len(recorder.of(n, Reported)) for n in (0, 1)) < 2:
    executor.poll(0.02)
counts = [len(recorder.of(n, Reported)) for n in (0, 1)]
print(json.dumps(counts), flush=True)
time.sleep(120)
"""


def test_trials_of_a_sigkilled_driver_are_adopted_by_another_process(tmp_path):
    cmd = 'echo $$ >> "$HYPERLAB_TRIAL_DIR/shells" && ' + script(
        "report_steps.py", "--steps", 10, "--sleep", 0.15
    )
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, cmd, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        stored = json.loads(driver.stdout.readline())
    finally:
        driver.kill()
        driver.communicate()
    shells = [int((tmp_path / "trials" / str(n) / "shells").read_text()) for n in (0, 1)]
    assert all(pid_alive(pid) for pid in shells), "the trials died with their driver"

    executor = adopter(cmd)
    for number in (0, 1):
        assert executor.adopt(spec(number, tmp_path), reports=stored[number]) is not None
    rec = watch(executor)
    for number in (0, 1):
        assert [e.step for e in rec.of(number, Reported)] == list(range(stored[number], 10))
        assert isinstance(rec.end(number), Finished)
    assert not wait_dead(shells)
