"""One behavioural matrix over every local executor, driven through the public API."""

from __future__ import annotations

import os
import threading
import time

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab import space as hs
from tests import objectives
from tests.executors.harness import pid_alive

EXECUTORS = ["inprocess", "threads", "processes"]


def grid_run(objective, n, executor, **options):
    return hyperlab.run(
        objective,
        {"i": hs.choice(*range(n))},
        tuner="grid",
        executor=executor,
        storage=":memory:",
        progress=False,
        **options,
    )


@pytest.mark.parametrize("executor", EXECUTORS)
def test_runs_every_trial_and_finds_the_best(executor):
    result = hyperlab.run(
        objectives.quadratic,
        {"x": hs.uniform(-3, 3)},
        max_trials=12,
        executor=executor,
        concurrency=2,
        storage=":memory:",
        seed=5,
        progress=False,
    )
    assert [t.number for t in result.trials] == list(range(12))
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)
    assert result.best_value == min(t.value for t in result.trials)
    assert result.best_value == pytest.approx((result.best_params["x"] - 1) ** 2)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_raising_trial_fails_and_the_experiment_goes_on(executor):
    result = grid_run(objectives.fail_on_odd, 6, executor, concurrency=2)
    by_i = {t.params["i"]: t for t in result.trials}
    assert len(result.trials) == 6
    for i, trial in by_i.items():
        if i % 2:
            assert trial.status is TrialStatus.FAILED
            assert f"ValueError: odd i={i}" in trial.error
            assert trial.value is None
        else:
            assert trial.status is TrialStatus.SUCCEEDED and trial.value == i
    assert result.status is hyperlab.ExperimentStatus.DONE


@pytest.mark.parametrize("executor", EXECUTORS)
def test_trial_side_api_is_the_same_everywhere(executor):
    result = grid_run(objectives.whoami, 3, executor, seed=11)
    seeds = set()
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.metrics["same_params"] is True
        assert trial.metrics["seed"] == trial.seed
        assert trial.metrics["dir"].endswith(os.path.join("trials", str(trial.number)))
        seeds.add(trial.seed)
        if executor == "processes":
            assert trial.metrics["pid"] != os.getpid()
        else:
            assert trial.metrics["pid"] == os.getpid()
    assert len(seeds) == 3
    again = grid_run(objectives.whoami, 3, executor, seed=11)
    assert [t.seed for t in again.trials] == [t.seed for t in result.trials]


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_concurrency_is_respected(executor):
    result = hyperlab.run(
        objectives.sleep_for,
        {"sleep": hs.choice(1.5)},
        max_trials=4,
        executor=executor,
        concurrency=4,
        storage=":memory:",
        progress=False,
    )
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)
    starts = sorted(t.started_at for t in result.trials)
    ends = sorted(t.finished_at for t in result.trials)
    assert starts[-1] < ends[0], "all four trials should have overlapped"


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_trial_timeout_fails_the_trial_and_the_experiment_continues(executor):
    space = {"sleep": hs.choice(0.05, 30)}
    result = hyperlab.run(
        objectives.sleep_for,
        space,
        tuner="grid",
        executor=executor,
        concurrency=2,
        trial_timeout=1.0,
        storage=":memory:",
        progress=False,
    )
    by_sleep = {t.params["sleep"]: t for t in result.trials}
    assert by_sleep[0.05].status is TrialStatus.SUCCEEDED
    assert by_sleep[30].status is TrialStatus.FAILED
    assert "trial_timeout" in by_sleep[30].error
    assert by_sleep[30].duration < 30  # cut short, not waited for


def test_inprocess_timeout_is_enforced_at_report():
    with pytest.raises(hyperlab.TrialError, match="trial_timeout") as info:
        hyperlab.run(
            objectives.report_slowly,
            {"x": hs.choice(1)},
            max_trials=1,
            trial_timeout=0.3,
            storage=":memory:",
            progress=False,
        )
    (trial,) = info.value.result.trials
    assert trial.status is TrialStatus.FAILED and "trial_timeout" in trial.error


@pytest.mark.parametrize("objective", [objectives.exit_hard, objectives.segfault])
def test_a_dying_process_fails_its_trial_only(objective):
    result = grid_run(objective, 4, "processes", concurrency=2)
    by_i = {t.params["i"]: t for t in result.trials}
    assert by_i[1].status is TrialStatus.FAILED
    expected = "exited with code 3" if objective is objectives.exit_hard else "SIGSEGV"
    assert expected in by_i[1].error
    for i in (0, 2, 3):
        assert by_i[i].status is TrialStatus.SUCCEEDED and by_i[i].value == i


@pytest.mark.parametrize("executor", EXECUTORS)
def test_stop_cancels_running_trials_and_records_everything(executor):
    exp = hyperlab.Experiment(
        objectives.report_slowly,
        {"x": hs.uniform(0, 1)},
        max_trials=50,
        executor=executor,
        concurrency=2,
        metric="loss",
        storage=":memory:",
        progress=False,
    )
    if executor == "inprocess":  # the driver runs in this thread: stop from another one
        threading.Timer(0.5, exp.stop).start()
        result = exp.run()
    else:
        exp.start()
        assert exp.status is hyperlab.ExperimentStatus.RUNNING
        deadline = time.monotonic() + 30  # both running trials have reported (workers start)
        while time.monotonic() < deadline:
            if sum(bool(t.reports) for t in exp.result().trials) == 2:
                break
            time.sleep(0.05)
        exp.stop()
        result = exp.wait()
    assert result.status is hyperlab.ExperimentStatus.STOPPED
    assert result.trials, "some trials had started"
    # interrupted by the stop, not killed on purpose: they run again on resume
    assert all(t.status is TrialStatus.SYS_CANCELED for t in result.trials)
    assert all(t.reports for t in result.trials)
    assert len(result.trials) < 50


def test_processes_leave_no_process_behind(tmp_path):
    with pytest.raises(hyperlab.TrialError, match="trial_timeout") as info:
        hyperlab.run(
            objectives.spawn_grandchild,
            {"x": hs.choice(1, 2)},
            tuner="grid",
            executor="processes",
            concurrency=2,
            trial_timeout=2,
            storage=str(tmp_path / "db.sqlite"),
            progress=False,
        )
    result = info.value.result
    pids = [t.reports[0].metrics["pid"] for t in result.trials]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(p) for p in pids)
    assert all(t.status is TrialStatus.FAILED for t in result.trials)


def test_unpicklable_objective_for_processes_is_a_config_error():
    lock = threading.Lock()

    def objective(params):
        with lock:
            return 1.0

    with pytest.raises(hyperlab.ConfigError, match=r"cannot be pickled.*threads"):
        hyperlab.run(
            objective,
            {"x": hs.uniform(0, 1)},
            max_trials=1,
            executor="processes",
            storage=":memory:",
        )
    # threads take it
    result = hyperlab.run(
        objective,
        {"x": hs.uniform(0, 1)},
        max_trials=2,
        executor="threads",
        storage=":memory:",
        progress=False,
    )
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials)


def test_closures_and_lambdas_run_in_processes():
    offset = 3.0
    result = hyperlab.run(
        lambda p: p["x"] + offset,
        {"x": hs.choice(1.0, 2.0)},
        tuner="grid",
        executor="processes",
        storage=":memory:",
        progress=False,
    )
    assert sorted(t.value for t in result.trials) == [4.0, 5.0]


@pytest.mark.parametrize(
    "storage", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_trial_row_is_committed_before_a_worker_process_runs_it(
    tmp_path, monkeypatch, storage, new_storage
):
    url = new_storage("postgresql") if storage == "postgres" else f"sqlite:///{tmp_path / 'wal.db'}"
    monkeypatch.setenv("HYPERLAB_TEST_URL", url)
    result = hyperlab.run(
        objectives.check_own_row,
        {"x": hs.uniform(0, 1)},
        max_trials=6,
        executor="processes",
        concurrency=2,
        storage=url,
        progress=False,
    )
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.trials), result.trials[0].error
    assert all(t.metrics["found"] is True for t in result.trials)
    assert {t.metrics["status"] for t in result.trials} <= {"WAITING", "RUNNING"}


def test_raising_concurrency_wakes_a_threads_poll_waiting_for_events():
    from hyperlab.executors.base import create_executor

    executor = create_executor("threads", objectives.quadratic, concurrency=0)
    poller = threading.Thread(target=executor.poll, args=(3600.0,), daemon=True)  # no events
    poller.start()
    executor.concurrency = 1
    poller.join(timeout=60)
    woken = not poller.is_alive()
    assert woken and executor.free_slots == 1
    executor.close()
