"""Crash-safe resume: SIGKILL a real driver mid-run, resume it, and check nothing was lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.store import Store
from tests.executors.harness import pid_alive

ROOT = Path(__file__).resolve().parents[2]
DRIVER = """
import sys
import hyperlab
from hyperlab import space as hs
from tests import objectives

exp = hyperlab.Experiment(objectives.fifty_ms_with_pid, {"x": hs.uniform(0, 1)}, max_trials=60,
                          executor="processes", concurrency=2, storage=sys.argv[1], seed=3,
                          progress=False)
print(exp.id, flush=True)
exp.run()
"""


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    return found


def kill_mid_run(url: str) -> tuple[str, list]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, url], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
    )
    experiment_id = proc.stdout.readline().strip()
    assert experiment_id, "the driver did not start"
    store = Store.open(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            trials = store.get_trials(experiment_id, reports=False)
        except hyperlab.ExperimentNotFound:  # printed before the driver recorded it
            trials = []
        if sum(t.status.is_finished() for t in trials) >= 15:
            break
        time.sleep(0.02)
    workers = children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert workers, "the driver had worker processes"
    end = time.monotonic() + 5
    while any(pid_alive(p) for p in workers) and time.monotonic() < end:
        time.sleep(0.02)
    assert not any(pid_alive(p) for p in workers), "worker processes outlived the driver"
    return experiment_id, store.get_trials(experiment_id, reports=False)


def check_resume(url: str) -> None:
    ours_before = set(children(os.getpid()))  # other tests' (a session's browser, say)
    experiment_id, before = kill_mid_run(url)
    finished = {t.number: t for t in before if t.status.is_finished()}
    interrupted = {t.number: t for t in before if not t.status.is_finished()}
    assert 15 <= len(finished) < 60
    assert interrupted, "the kill should have caught trials in flight"

    result = hyperlab.resume(experiment_id, storage=url, progress=False)

    after = {t.number: t for t in result.trials}
    assert sorted(after) == list(range(60))
    assert sum(t.status.is_finished() for t in after.values()) == 60
    assert all(t.status is TrialStatus.SUCCEEDED for t in after.values())
    for number, old in finished.items():
        new = after[number]
        assert (new.params, new.value, new.status, new.attempt, new.finished_at) == (
            old.params,
            old.value,
            old.status,
            old.attempt,
            old.finished_at,
        )
    for number, old in interrupted.items():
        assert after[number].attempt == old.attempt + 1
        assert after[number].params == old.params
    assert result.status is hyperlab.ExperimentStatus.DONE
    left = [p for p in children(os.getpid()) if p not in ours_before and pid_alive(p)]
    assert not left, "resume left processes behind"


@pytest.mark.slow
def test_resume_after_sigkill_sqlite(tmp_path):
    check_resume(f"sqlite:///{tmp_path / 'crash.db'}")


@pytest.mark.slow
@pytest.mark.postgres
def test_resume_after_sigkill_postgres(new_storage):
    check_resume(new_storage("postgresql"))
