"""The ``dask`` executor on a real ``distributed.LocalCluster`` of two worker processes: the
executor contract, an experiment with an assessor end to end, a worker killed under a trial,
an address that does not answer, and a resumed driver adopting a trial still running."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.executors import Executor, TrialSpec, create_executor
from hyperlab.executors._dask._gpus import GpuLoads, visible_gpus
from hyperlab.executors._dask._task import Inbox
from hyperlab.store import Store
from hyperlab.testing import ExecutorContract
from hyperlab.testing.behaviours import behave
from hyperlab.testing.executors import ExecutorFactory, behaviour_command
from hyperlab.trial import TrialStatus
from tests.server import wait_for

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

SPACE = {"x": hyperlab.uniform(0, 1)}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes of one thread each, each declaring one GPU (there is none: what
    the trials see is checked, not used), started once for the module."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        resources={"GPU": 1},
        dashboard_address=":0",
        worker_dashboard_address=":0",
    ) as made:
        yield made


class TestDaskFunctions(ExecutorContract):
    @pytest.fixture
    def make_executor(self, cluster: Any) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            return create_executor("dask", behave, dask_cluster=cluster, **options)

        return make


class TestDaskCommands(ExecutorContract):
    @pytest.fixture
    def make_executor(self, cluster: Any) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            address = cluster.scheduler_address
            return create_executor("dask", behaviour_command(), dask_address=address, **options)

        return make


# ---- end to end ------------------------------------------------------------------------------


def curve(params: dict) -> float:
    loss = 1.0
    for step in range(6):
        loss = params["x"] + 1.0 / (step + 1)
        hyperlab.report(loss=loss)  # no pause: only a round trip stops it at this report
    return loss


@pytest.mark.slow
def test_an_experiment_with_an_assessor_runs_its_trials_on_the_cluster(
    cluster: Any, tmp_path: Path
) -> None:
    result = hyperlab.run(
        curve,
        {"x": hyperlab.choice(0.0, 5.0, 6.0)},
        metric="loss",
        tuner="grid",
        executor="dask",
        executor_args={"dask_cluster": cluster},
        assessor="median",  # judges from the second report on
        storage=str(tmp_path / "store.db"),
        progress=False,
    )
    trials = {t.params["x"]: t for t in result.trials}
    assert trials[0.0].status is TrialStatus.SUCCEEDED
    assert [r.step for r in trials[0.0].reports] == list(range(6))
    for worse in (5.0, 6.0):  # stopped at the report the decision was made on, not later
        assert trials[worse].status is TrialStatus.EARLY_STOPPED, trials[worse]
        assert [r.step for r in trials[worse].reports] == [0, 1]
    stored = Store.open(str(tmp_path / "store.db"))
    try:
        options = stored.get_experiment(result.experiment_id).options
    finally:
        stored.close()
    assert options.dask_address == cluster.scheduler_address, "what resume connects to"


# ---- a worker that dies ----------------------------------------------------------------------


def resumable(params: dict) -> dict:
    state = hyperlab.load_checkpoint()
    start = 0 if state is None else state["step"] + 1
    for step in range(start, 10):
        hyperlab.report(loss=1.0 / (step + 1), step=step)
        hyperlab.checkpoint({"step": step})
        time.sleep(0.3)
    return {"loss": 0.0, "start": start}


def _worker_of_the_trial(client: Any) -> str:
    processing = client.processing()
    return next(addr for addr, keys in processing.items() if any("hyperlab-" in k for k in keys))


@pytest.mark.slow
def test_a_trial_whose_worker_dies_runs_again_from_its_checkpoint(
    cluster: Any, tmp_path: Path
) -> None:
    experiment = hyperlab.Experiment(
        resumable,
        SPACE,
        metric="loss",
        executor="dask",
        executor_args={"dask_cluster": cluster},
        max_trials=1,
        storage=str(tmp_path / "store.db"),
        progress=False,
    )
    experiment.start()
    with distributed.Client(cluster, set_as_default=False) as client:

        def reports() -> list:
            trials = experiment.result().trials
            return trials[0].reports if trials and len(trials[0].reports) >= 3 else []

        wait_for(reports, timeout=60, what="three reports")
        worker = _worker_of_the_trial(client)
        pid = client.run(os.getpid, workers=[worker])[worker]
        os.kill(pid, signal.SIGKILL)
        result = experiment.wait(timeout=90)
    (trial,) = result.trials
    assert trial.status is TrialStatus.SUCCEEDED, trial.error
    assert trial.attempt == 2, "run once more, as attempt 2"
    start = trial.metrics["start"]
    assert start >= 1, "from its last checkpoint, not from scratch"
    again = [r.step for r in trial.reports if r.attempt == 2]
    assert again == list(range(start - 1, 10)), "the report its checkpoint followed, then on"
    assert {r.step for r in trial.reports} == set(range(10)), "no step lost between them"


# ---- bad input -------------------------------------------------------------------------------


def _nothing_written(storage: str) -> bool:
    if not Path(storage).exists():
        return True
    store = Store.open(storage)
    try:
        return store.list_experiments() == []
    finally:
        store.close()


def test_an_address_that_does_not_answer_is_named_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    storage = str(tmp_path / "store.db")
    with pytest.raises(ConfigError, match=r"dask_address.*'tcp://127\.0\.0\.1:9'.*unreachable"):
        hyperlab.run(
            curve,
            SPACE,
            executor="dask",
            executor_args={"dask_address": "tcp://127.0.0.1:9"},
            max_trials=1,
            storage=storage,
        )
    assert _nothing_written(storage)


def test_without_the_extra_the_error_names_it(monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    storage = str(tmp_path / "store.db")
    with pytest.raises(ConfigError, match=r"pip install 'hyperlab\[dask\]'"):
        hyperlab.run(
            curve,
            SPACE,
            executor="dask",
            executor_args={"dask_address": "tcp://127.0.0.1:9"},
            max_trials=1,
            storage=storage,
        )
    assert _nothing_written(storage)


def test_a_config_file_cannot_give_a_cluster_object(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"dask_cluster: expected a running Dask cluster"):
        hyperlab.run(
            curve,
            SPACE,
            executor="dask",
            executor_args={"dask_cluster": "tcp://127.0.0.1:8786"},
            max_trials=1,
            storage=":memory:",
        )


def test_resources_no_worker_declares_fail_the_trial_naming_them(cluster: Any) -> None:
    experiment = hyperlab.Experiment(
        curve,
        SPACE,
        executor="dask",
        executor_args={"dask_cluster": cluster, "resources": {"gpu": 2}},
        max_trials=1,
        storage=":memory:",
        progress=False,
    )
    with pytest.raises(hyperlab.TrialError):  # rather than waiting forever
        experiment.run()
    (trial,) = experiment.result().trials
    assert trial.status is TrialStatus.FAILED
    assert "GPU=2" in (trial.error or "") and "declares is 1" in (trial.error or ""), trial.error


def test_options_of_other_executors_are_refused_naming_them(tmp_path: Path) -> None:
    refused = {
        "gpus": {"gpus": {"indices": [0]}},
        "echo_output": {"echo_output": True},
    }
    for name, args in refused.items():
        with pytest.raises(ConfigError, match=rf"^{name}: .*'dask' executor"):
            hyperlab.run(curve, SPACE, executor="dask", executor_args=args, max_trials=1)
    with pytest.raises(ConfigError, match=r"dask_address: applies to executor='dask'"):
        hyperlab.run(
            curve,
            SPACE,
            executor="processes",
            executor_args={"dask_address": "tcp://127.0.0.1:8786"},
            max_trials=1,
        )


# ---- GPUs ------------------------------------------------------------------------------------


def devices(params: dict) -> dict:
    return {"loss": 0.0, "visible": os.environ.get("CUDA_VISIBLE_DEVICES", "unset")}


def test_a_trial_holding_a_gpu_sees_only_its_device(cluster: Any) -> None:
    result = hyperlab.run(
        devices,
        SPACE,
        metric="loss",
        executor="dask",
        executor_args={"dask_cluster": cluster, "resources": {"gpu": 1}},
        max_trials=2,
        concurrency=2,
        storage=":memory:",
        progress=False,
    )
    assert [t.metrics["visible"] for t in result.trials] == ["0", "0"], "one GPU per worker"


def two_at_once(params: dict) -> dict:
    started = Path(params["folder"]) / f"{params['x']}.started"
    started.touch()
    wait_for(lambda: len(list(started.parent.glob("*.started"))) >= 2, 30, "the other trial")
    return {"loss": 0.0, "visible": os.environ.get("CUDA_VISIBLE_DEVICES", "unset")}


def test_two_trials_at_once_on_a_worker_of_two_gpus_get_one_each(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # the worker's GPUs: 0 and 1
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        resources={"GPU": 2},
        dashboard_address=":0",
    ) as two_gpus:
        result = hyperlab.run(
            two_at_once,
            {"x": hyperlab.choice(1, 2), "folder": hyperlab.choice(str(tmp_path))},
            metric="loss",
            tuner="grid",
            executor="dask",
            executor_args={"dask_cluster": two_gpus, "resources": {"gpu": 1}},
            concurrency=2,
            storage=":memory:",
            progress=False,
        )
    assert sorted(t.metrics["visible"] for t in result.trials) == ["0", "1"]


def test_the_trials_on_one_worker_get_distinct_gpus_the_least_loaded_first() -> None:
    loads = GpuLoads()
    held = [loads.hold(1, (2, 3, 5)) for _ in range(3)]
    assert sorted(held) == [(2,), (3,), (5,)]
    loads.release((3,), 1)
    assert loads.hold(1, (2, 3, 5)) == (3,)
    assert loads.hold(2, (0, 1, 2, 3)) == (0, 1)
    halves = GpuLoads()
    assert [halves.hold(0.5, (0, 1)) for _ in range(4)] == [(0,), (1,), (0,), (1,)]
    assert loads.hold(0, (0,)) == ()


def test_a_workers_devices_are_its_jobs_cuda_visible_devices(monkeypatch: Any) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    assert visible_gpus(2) == (4, 6)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-5d1f,GPU-77aa")  # UUIDs: left to the worker
    assert visible_gpus(2) == ()
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert visible_gpus(2) == (0, 1)


# ---- a driver that dies ----------------------------------------------------------------------

DRIVER = """
import sys, time
import hyperlab

def slow(params):
    for step in range(10):
        hyperlab.report(loss=float(step))
        time.sleep(0.4)
    return 0.0

hyperlab.run(slow, {"x": hyperlab.uniform(0, 1)}, metric="loss", executor="dask",
             executor_args={"dask_address": sys.argv[1]}, id="adopted", max_trials=1,
             storage=sys.argv[2], progress=False)
"""


@pytest.mark.slow
def test_a_resumed_driver_adopts_the_trial_still_running_on_the_cluster(
    cluster: Any, tmp_path: Path
) -> None:
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(DRIVER))
    storage = str(tmp_path / "store.db")
    driver = subprocess.Popen(
        [sys.executable, str(script), cluster.scheduler_address, storage],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:

        def reported() -> bool:
            if not Path(storage).exists():
                return False
            try:
                trials = hyperlab.load("adopted", storage=storage).trials
            except Exception:
                return False
            return bool(trials) and len(trials[0].reports) >= 3

        wait_for(reported, timeout=60, what="three reports")
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    result = hyperlab.resume("adopted", storage=storage, progress=False)
    (trial,) = result.trials
    assert trial.status is TrialStatus.SUCCEEDED, trial.error
    assert trial.attempt == 1, "adopted, not run again"
    assert [r.step for r in trial.reports] == list(range(10)), "each report stored once"


def test_adopt_finds_no_task_for_a_trial_never_submitted_and_the_scheduler_logs_no_error(
    cluster: Any, caplog: Any
) -> None:
    executor = create_executor("dask", curve, dask_cluster=cluster)
    executor.open(lambda event: None)
    try:
        spec = TrialSpec(0, "never-0", {"x": 0.5}, 1, None)
        with caplog.at_level(logging.ERROR, logger="distributed"):
            assert executor.adopt(spec, reports=0) is None
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert errors == []
        assert executor.running == 0
    finally:
        executor.close()


def test_what_the_driver_sends_last_still_wakes_the_task(cluster: Any) -> None:
    with distributed.Client(cluster, set_as_default=False) as client:
        task = Inbox("hyperlab-inbox-test", client)  # the task's end, made first
        driver = Inbox("hyperlab-inbox-test", client)
        driver.put(["kill"])
        driver.close()  # the driver forgets the run at once: its kill must still arrive
        assert task.take(timeout=5.0) == [["kill"]]
        assert task.take(timeout=0.1) == []
        task.close(reader=True)
