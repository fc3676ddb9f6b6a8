"""``max_duration`` reached while trials run, on every executor (issue 25, budgets exact).

The budget is lowered to "spent" (a ``SetMaxDuration`` control, the check the driver makes on
every loop turn) once the trials are running, so the trials are surely mid-run when it is
reached however slowly the machine starts them. Every trial is stopped at its next ``report``;
those that do not report again are interrupted where the executor can: ``command`` sends
SIGTERM at once, ``processes`` kills the worker once ``stop_grace`` (5 s) has passed. A trial
in the driver's own process (``inprocess``, ``threads``) cannot be interrupted and runs to its
end (docs/config.md, "Budgets").
"""

from __future__ import annotations

import threading
import time

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.executors import CommandTrial
from hyperlab.store import SetMaxDuration
from tests.executors.harness import script

STEPS = 500  # reports 20 ms apart: 10 s, far longer than any of these tests runs
SILENT = threading.Semaphore(0)  # released by each silent trial of this process once it reported


def chatty(params):
    """Reports every 20 ms for 10 s."""
    for step in range(STEPS):
        hyperlab.report(loss=params["x"] / (step + 1))
        time.sleep(0.02)
    return {"loss": 0.0}


def silent(params):
    """Reports once, then works 2 s without reporting."""
    hyperlab.report(loss=params["x"])
    SILENT.release()  # an in-process trial blocks the driver's loop: the store shows nothing yet
    time.sleep(2.0)
    return {"loss": params["x"]}


def silent_long(params):
    """Reports once, then works 60 s without reporting."""
    hyperlab.report(loss=params["x"])
    time.sleep(60.0)
    return {"loss": params["x"]}


def objective_for(executor: str, kind: str):
    if executor == "command":
        steps, sleep = (STEPS, 0.02) if kind == "chatty" else (1, 60.0)
        return CommandTrial(script("report_steps.py", "--steps", steps, "--sleep", sleep))
    if kind == "chatty":
        return chatty
    return silent if executor in ("inprocess", "threads") else silent_long


def run_until_budget_hits(executor: str, kind: str, storage: str) -> tuple[list, hyperlab.Result]:
    """Start an experiment, wait until each slot's trial runs and reported, spend the budget;
    the trials the store showed running then (none for an in-process silent one), the result."""
    concurrency = 1 if executor == "inprocess" else 2
    exp = hyperlab.Experiment(
        objective_for(executor, kind),
        {"x": hs.uniform(1, 2)},
        max_duration=600,
        executor=executor,
        concurrency=concurrency,
        metric="loss",
        storage=storage,
        progress=False,
    )
    exp.start()
    try:
        if executor in ("inprocess", "threads") and kind == "silent":
            assert all(SILENT.acquire(timeout=60) for _ in range(concurrency))
            running = []
        else:
            running = wait_for_reports(exp, concurrency)
        exp.store.send_control(exp.id, SetMaxDuration(value=1e-3))  # spent already
        result = exp.wait(60)
    finally:
        if exp.running:
            exp.stop()
            exp.wait(60)
    return running, result


def wait_for_reports(exp: hyperlab.Experiment, count: int) -> list:
    """The running trials, once ``count`` of them reported (workers start slowly under load)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        running = [t for t in exp.result().trials if t.status is TrialStatus.RUNNING]
        if sum(bool(t.reports) for t in running) == count:
            return running
        time.sleep(0.02)
    pytest.fail(f"{count} trials did not run and report within 60s")


@pytest.mark.parametrize("executor", ["inprocess", "threads", "processes", "command"])
def test_reporting_trials_running_when_max_duration_is_reached_end_sys_canceled(executor, tmp_path):
    running, result = run_until_budget_hits(executor, "chatty", str(tmp_path / "db.sqlite"))
    assert result.status is ExperimentStatus.DONE
    assert [t.number for t in result.trials] == [t.number for t in running]  # no trial after
    for trial in result.trials:
        assert trial.status is TrialStatus.SYS_CANCELED, (trial.number, trial.status)
        assert 0 < len(trial.reports) < STEPS  # interrupted, its reports kept
        assert trial.finished_at is not None


@pytest.mark.parametrize("executor", [pytest.param("processes", marks=pytest.mark.slow), "command"])
def test_silent_trials_are_interrupted_where_the_executor_can(executor, tmp_path):
    """A minute-long trial that does not report: SIGTERM (command), or killed after the 5 s
    ``stop_grace`` (processes)."""
    started = time.monotonic()
    running, result = run_until_budget_hits(executor, "silent", str(tmp_path / "db.sqlite"))
    assert time.monotonic() - started < 50  # not its minute
    assert result.status is ExperimentStatus.DONE
    assert [t.number for t in result.trials] == [t.number for t in running]
    assert all(t.status is TrialStatus.SYS_CANCELED for t in result.trials), [
        t.status for t in result.trials
    ]


@pytest.mark.parametrize("executor", ["inprocess", "threads"])
def test_a_trial_in_the_drivers_process_that_does_not_report_runs_to_its_end(executor, tmp_path):
    """What docs/config.md says: a thread cannot be interrupted; it is stopped at its next
    ``report``, and one that does not report again ends as it would have."""
    _, result = run_until_budget_hits(executor, "silent", str(tmp_path / "db.sqlite"))
    assert result.status is ExperimentStatus.DONE
    assert len(result.trials) == (1 if executor == "inprocess" else 2)  # none after the budget
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)
