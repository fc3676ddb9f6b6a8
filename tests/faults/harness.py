"""What the fault tests share: driver processes, waiting, worker pids, trial-event checks."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hyperlab.store import Store, TrialEvent

ROOT = Path(__file__).resolve().parents[2]
PREAMBLE = """
import json, os, sys, time
import hyperlab
from tests.faults import objectives
"""

T = TypeVar("T")


def spawn(script: str, *args: object) -> subprocess.Popen:
    """``python -c PREAMBLE + script args...`` in the project root, stdout and stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-c", PREAMBLE + script, *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(check: Callable[[], T], what: str, timeout: float = 30.0) -> T:
    """Poll ``check`` until it returns something true; fail saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.02)


def trials_or_none(store: Store, experiment_id: str) -> list:
    """The experiment's trials, [] while it is not recorded yet."""
    try:
        return store.get_trials(experiment_id, reports=False)
    except Exception:  # ExperimentNotFound: the driver prints its id before recording it
        return []


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc`` and reap it (a zombie would still look like a live driver)."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def worker_pids(store: Store, experiment_id: str) -> set[int]:
    """Every pid a trial of the experiment recorded in its folder (``objectives._note_pid``)."""
    folder = store.experiment_folder(store.get_experiment(experiment_id)) / "trials"
    return {int(line) for f in folder.glob("*/pids") for line in f.read_text().split()}


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def lingering(pids: set[int], within: float = 5.0) -> set[int]:
    """The pids still alive after waiting up to ``within`` seconds for them to go."""
    deadline = time.monotonic() + within
    while (left := {p for p in pids if alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def check_no_worker_left(store: Store, experiment_id: str) -> None:
    """Trials ran in worker processes, and none of those processes is left."""
    pids = worker_pids(store, experiment_id)
    assert pids, "no trial recorded its worker's pid"
    left = lingering(pids)
    assert not left, f"worker processes of experiment {experiment_id} still alive: {left}"


def check_attempts(events: list[TrialEvent]) -> None:
    """Each (trial, attempt) ends at most once, and a trial's attempts go 1, 2, 3... in order."""
    ends: dict[tuple[int, int], list[str]] = defaultdict(list)
    attempts: dict[int, list[int]] = defaultdict(list)
    for event in events:
        if event.status.is_finished():
            ends[event.number, event.attempt].append(str(event.status))
        seen = attempts[event.number]
        if not seen or seen[-1] != event.attempt:
            seen.append(event.attempt)
    twice = {key: statuses for key, statuses in ends.items() if len(statuses) > 1}
    assert not twice, f"(trial, attempt) that ended more than once: {twice}"
    jumps = {n: seen for n, seen in attempts.items() if seen != list(range(1, len(seen) + 1))}
    assert not jumps, f"trials whose attempts do not go 1, 2, 3... in order: {jumps}"
