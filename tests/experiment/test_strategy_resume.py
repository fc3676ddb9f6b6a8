"""A strategy loop SIGKILLed mid-run and resumed with ``hyperlab.Experiment.resume``: no trial
that ended is lost or changed, every trial in flight at the kill runs again exactly once, no
number is doubled or skipped, and the resumed loop's ``trials`` gives back the ended trials
and handles on the re-run ones. A trial whose handle resolved is in the store, whenever the
loop is killed after.

The loop (``strategy_loops``) runs in a process of its own, on SQLite and PostgreSQL, with
threads and with worker processes; it is resumed in the test's process.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.store import Store
from hyperlab.trial import CUSTOM_TRIAL, Trial
from tests.experiment import strategy_loops
from tests.faults.harness import check_attempts, trials_or_none

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "from tests.experiment.strategy_loops import main; main()"
DEADLINE = 60.0  # seconds a poll waits: generous, the suite runs on two busy cores
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
EXECUTORS = ["threads", "processes"]
UNENDED = (TrialStatus.WAITING, TrialStatus.RUNNING)

T = TypeVar("T")


def wait_for(check: Callable[[], T], what: str) -> T:
    """Poll ``check`` until it returns something true; fail saying ``what`` did not happen."""
    deadline = time.monotonic() + DEADLINE
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {DEADLINE:g}s waiting for {what}")
        time.sleep(0.01)
    return value


class LoopProcess:
    """``strategy_loops.main`` in a process of its own; its printed lines read as they come."""

    def __init__(self, stderr: Path, *args: str) -> None:
        self._stderr_path = stderr
        with open(stderr, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SCRIPT, *args],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    @property
    def experiment_id(self) -> str:
        return wait_for(lambda: self.lines, "the loop to print its experiment's id")[0]

    def kill(self) -> None:
        """SIGKILL it (if it runs still), reap it, and read what it printed to the end."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join()

    def resolved(self) -> dict[int, float]:
        """``number: value`` of each trial whose handle resolved in it, once it is dead."""
        assert self.proc.returncode is not None
        return {int(n): float(v) for n, v in (line.split() for line in self.lines[1:])}

    def stderr(self) -> str:
        return self._stderr_path.read_text()


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Callable[..., LoopProcess]]:
    """``loops(storage, executor, kill_after, resumed=None)`` starts a loop (on experiment
    ``resumed``, or a new one); any left is killed at the end."""
    started: list[LoopProcess] = []

    def start(storage: str, executor: str, kill_after: int, resumed: str = "") -> LoopProcess:
        args = [storage, executor, str(kill_after)] + ([resumed] if resumed else [])
        loop = LoopProcess(tmp_path / f"stderr{len(started)}", *args)
        started.append(loop)
        return loop

    yield start
    for loop in started:
        loop.kill()


def killed_mid_run(loop: LoopProcess, storage: str, ended_before: int = 0) -> dict[int, Trial]:
    """SIGKILL ``loop`` once two more of its trials ended (than ``ended_before``) and some
    run; its trials as it left them."""
    store = Store.open(storage)
    experiment_id = loop.experiment_id

    def ended_and_running() -> bool:
        statuses = [t.status for t in trials_or_none(store, experiment_id)]
        ended = statuses.count(TrialStatus.SUCCEEDED)
        return ended >= ended_before + 2 and TrialStatus.RUNNING in statuses

    wait_for(ended_and_running, f"trials to end and run (loop's stderr: {loop.stderr()})")
    loop.kill()
    before = {t.number: t for t in store.get_trials(experiment_id, reports=False)}
    ended = [n for n, t in before.items() if t.status is TrialStatus.SUCCEEDED]
    unended = [n for n, t in before.items() if t.status in UNENDED]
    assert ended and unended, f"the kill should find trials ended and in flight: {before}"
    assert len(ended) + len(unended) == len(before), f"a trial ended otherwise: {before}"
    return before


def check_resolved_are_stored(loop: LoopProcess, before: dict[int, Trial]) -> None:
    """Every trial the killed loop saw resolve is in the store, SUCCEEDED, with that value."""
    for number, value in loop.resolved().items():
        assert number in before, f"trial {number} resolved in the loop but is not stored"
        stored = before[number]
        assert (stored.status, stored.value) == (TrialStatus.SUCCEEDED, value), number


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_killed_loop_resumes_without_losing_or_doubling(backend, executor, new_storage, loops):
    storage = new_storage(backend)
    loop = loops(storage, executor, 0)
    before = killed_mid_run(loop, storage)
    check_resolved_are_stored(loop, before)
    ended = {n: t for n, t in before.items() if t.status is TrialStatus.SUCCEEDED}
    interrupted = {n: t for n, t in before.items() if t.status in UNENDED}

    exp = hyperlab.Experiment.resume(loop.experiment_id, storage=storage, progress=False)
    assert exp.budget_available()
    with exp:
        handles = exp.trials(status=["SUCCEEDED", "WAITING", "RUNNING"])
        assert [h.number for h in handles] == sorted(before)
        for handle in handles:
            assert handle.params == before[handle.number].params
            if handle.number in ended:
                assert handle.done(), f"trial {handle.number} ended before the kill"
                assert handle.result() == ended[handle.number]
        succeeded = exp.trials(status="SUCCEEDED")  # those before the kill, and re-runs since
        assert set(ended) <= {h.number for h in succeeded} <= set(before)
        assert all(h.done() for h in succeeded)
        strategy_loops.evolve(exp, handles)
    reruns = {h.number: h.result() for h in handles if h.number in interrupted}
    assert exp.budget_available() is False

    store = Store.open(storage)
    after = {t.number: t for t in store.get_trials(exp.id, reports=False)}
    assert sorted(after) == list(range(strategy_loops.MAX_TRIALS))
    assert all(t.status is TrialStatus.SUCCEEDED for t in after.values()), after
    assert {t.source for t in after.values()} == {CUSTOM_TRIAL}
    assert store.get_experiment(exp.id).status is ExperimentStatus.DONE
    for number, old in ended.items():
        new = after[number]
        assert (new.params, new.value, new.attempt, new.finished_at) == (
            old.params,
            old.value,
            old.attempt,
            old.finished_at,
        ), f"trial {number} changed"
    for number, old in interrupted.items():
        assert (after[number].params, after[number].attempt) == (old.params, 2), number
        assert reruns[number] == after[number], f"trial {number}'s handle resolved otherwise"
    events = store.get_trial_events(exp.id)
    check_attempts(events)
    ends = sorted(
        (e.number, e.attempt) for e in events if e.status.is_finished() and e.number in interrupted
    )
    assert ends == [(number, 2) for number in sorted(interrupted)], "each ran again once"


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trial_whose_handle_resolved_survives_a_kill_right_after(
    backend, executor, new_storage, loops
):
    storage = new_storage(backend)
    kill_after = 3
    loop = loops(storage, executor, kill_after)
    loop.proc.wait(DEADLINE)
    loop.kill()
    assert loop.proc.returncode == -9, f"the loop should have killed itself: {loop.stderr()}"
    resolved = loop.resolved()
    assert len(resolved) == kill_after
    store = Store.open(storage)
    before = {t.number: t for t in store.get_trials(loop.experiment_id, reports=False)}
    check_resolved_are_stored(loop, before)


def test_trials_read_on_the_resumed_handle_before_it_runs_resolve_once_rerun(new_storage, loops):
    """``Experiment.resume`` says its ``trials`` gives the interrupted trials as handles that
    resolve once run again: read before the loop starts, too (as a script resumes: the
    handles first, then the ``with`` block)."""
    storage = new_storage("sqlite")
    loop = loops(storage, "threads", 0)
    before = killed_mid_run(loop, storage)
    interrupted = sorted(n for n, t in before.items() if t.status in UNENDED)

    exp = hyperlab.Experiment.resume(loop.experiment_id, storage=storage, progress=False)
    handles = exp.trials(status=["WAITING", "RUNNING"])
    assert [h.number for h in handles] == interrupted
    with exp:
        rerun = exp.wait(handles)
    assert [(t.status, t.attempt) for t in rerun] == [(TrialStatus.SUCCEEDED, 2)] * len(rerun)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_killed_twice_runs_each_trial_again_once_per_kill_it_was_in_flight_for(
    backend, new_storage, loops
):
    storage = new_storage(backend)
    first = loops(storage, "processes", 0)
    at_first = killed_mid_run(first, storage)
    in_flight = Counter(n for n, t in at_first.items() if t.status in UNENDED)
    ended = sum(t.status is TrialStatus.SUCCEEDED for t in at_first.values())

    second = loops(storage, "processes", 0, first.experiment_id)  # resumed by a script
    assert second.experiment_id == first.experiment_id
    at_second = killed_mid_run(second, storage, ended)
    check_resolved_are_stored(second, at_second)
    for number, old in at_first.items():
        if old.status is TrialStatus.SUCCEEDED:
            assert at_second[number] == old, f"trial {number} changed"
    for number, trial in at_second.items():
        if trial.status in UNENDED:
            assert trial.attempt == 1 + in_flight[number], trial
            in_flight[number] += 1

    with hyperlab.Experiment.resume(first.experiment_id, storage=storage, progress=False) as exp:
        strategy_loops.evolve(exp, exp.trials(status=["SUCCEEDED", "WAITING", "RUNNING"]))
    store = Store.open(storage)
    after = {t.number: t for t in store.get_trials(exp.id, reports=False)}
    assert sorted(after) == list(range(strategy_loops.MAX_TRIALS))
    assert {t.status for t in after.values()} == {TrialStatus.SUCCEEDED}
    assert {n: t.attempt for n, t in after.items()} == {n: 1 + in_flight[n] for n in after}
    for number, old in at_second.items():
        if old.status is TrialStatus.SUCCEEDED:
            assert after[number] == old, f"trial {number} changed"
    check_attempts(store.get_trial_events(exp.id))
