"""What survives on the real cluster: a node that dies, a driver that dies; and bad input."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.store import Store
from hyperlab.trial import TrialStatus
from tests.server import wait_for

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = pytest.mark.slow
SPACE = {"x": hyperlab.uniform(0, 1)}


def resumable(params: dict) -> dict:
    state = hyperlab.load_checkpoint()
    start = 0 if state is None else state["step"] + 1
    node = ray.get_runtime_context().get_node_id()
    for step in range(start, 12):
        hyperlab.report(loss=1.0 / (step + 1), node=node, step=step)
        hyperlab.checkpoint({"step": step})
        time.sleep(0.25)
    return {"loss": 0.0, "node": node, "start": start}


def test_a_trial_whose_node_dies_runs_again_elsewhere_from_its_checkpoint(
    cluster: Any, tmp_path: Path
) -> None:
    nodes = [cluster.add_node(num_cpus=1, resources={"fragile": 1}) for _ in range(2)]
    cluster.wait_for_nodes()
    try:
        experiment = hyperlab.Experiment(
            resumable,
            SPACE,
            metric="loss",
            executor="ray",
            executor_args={"resources": {"cpu": 0.5, "fragile": 1}},
            max_trials=1,
            storage=str(tmp_path / "store.db"),
            progress=False,
        )
        experiment.start()

        def reports() -> list:
            trials = experiment.result().trials
            return trials[0].reports if trials and len(trials[0].reports) >= 3 else []

        first = wait_for(reports, timeout=60, what="three reports")[-1].metrics["node"]
        cluster.remove_node(next(n for n in nodes if n.node_id == first))
        result = experiment.wait(timeout=90)
    finally:
        for node in nodes:
            if node in cluster.worker_nodes:
                cluster.remove_node(node)
    (trial,) = result.trials
    assert trial.status is TrialStatus.SUCCEEDED, trial.error
    assert trial.attempt == 2
    assert trial.metrics["node"] != first, "it ran again on the other node"
    start = trial.metrics["start"]
    assert start >= 1, "from its last checkpoint, not from scratch"
    assert start - 1 in [r.step for r in trial.reports if r.attempt == 1]
    again = [r for r in trial.reports if r.attempt == 2]
    # it first reports again the report its checkpoint followed (load_checkpoint's promise)
    assert [r.step for r in again] == list(range(start - 1, 12))


DRIVER = """
import sys, time
import hyperlab

def slow(params):
    for step in range(10):
        hyperlab.report(loss=float(step))
        time.sleep(0.4)
    return 0.0

hyperlab.run(slow, {"x": hyperlab.uniform(0, 1)}, metric="loss", executor="ray",
             executor_args={"ray_address": sys.argv[1]}, id="adopted", max_trials=1,
             storage=sys.argv[2], progress=False)
"""


def test_a_resumed_driver_adopts_the_trial_still_running_on_the_cluster(
    cluster: Any, tmp_path: Path
) -> None:
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(DRIVER))
    storage = str(tmp_path / "store.db")
    driver = subprocess.Popen([sys.executable, str(script), cluster.address, storage])
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


# ---- bad input -------------------------------------------------------------------------------


def _nothing_written(storage: str) -> bool:
    if not Path(storage).exists():
        return True
    store = Store.open(storage)
    try:
        return store.list_experiments() == []
    finally:
        store.close()


def test_without_the_extra_the_error_names_it(monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    storage = str(tmp_path / "store.db")
    with pytest.raises(ConfigError, match=r"pip install 'hyperlab\[ray\]'"):
        hyperlab.run(lambda p: 0.0, SPACE, executor="ray", max_trials=1, storage=storage)
    assert _nothing_written(storage)


def test_an_unreachable_address_is_refused_quickly_and_nothing_is_written(tmp_path: Path) -> None:
    storage = str(tmp_path / "store.db")
    code = textwrap.dedent(
        """
        import sys, hyperlab
        try:
            hyperlab.run(lambda p: 0.0, {"x": hyperlab.uniform(0, 1)}, executor="ray",
                         executor_args={"ray_address": "127.0.0.1:9"}, max_trials=1,
                         storage=sys.argv[1])
        except hyperlab.ConfigError as exc:
            print(exc)
            sys.exit(3)
        """
    )
    done = subprocess.run(  # the bound: an answer within 30 s
        [sys.executable, "-c", code, storage], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 3, done.stderr
    assert "ray_address" in done.stdout and "127.0.0.1:9" in done.stdout
    assert "unreachable" in done.stdout
    assert _nothing_written(storage)


def test_resources_no_node_has_fail_the_trial_naming_them(cluster: Any) -> None:
    for resources, named in (({"tpu_pod": 1}, "tpu_pod=1"), ({"gpu": 3}, "GPU=3")):
        experiment = hyperlab.Experiment(
            lambda p: 0.0,
            SPACE,
            executor="ray",
            executor_args={"resources": resources},
            max_trials=1,
            storage=":memory:",
            progress=False,
        )
        with pytest.raises(hyperlab.TrialError):  # rather than waiting forever
            experiment.run()
        (trial,) = experiment.result().trials
        assert trial.status is TrialStatus.FAILED
        assert named in (trial.error or ""), trial.error


def test_an_objective_that_cannot_be_shipped_names_what_cannot(tmp_path: Path) -> None:
    lock = threading.Lock()

    def holds_a_lock(params: dict) -> float:
        with lock:
            return 0.0

    storage = str(tmp_path / "store.db")
    with pytest.raises(ConfigError, match="cannot be serialized") as caught:
        hyperlab.run(holds_a_lock, SPACE, executor="ray", max_trials=1, storage=storage)
    assert "lock" in str(caught.value)
    assert _nothing_written(storage)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"executor": "processes", "ray_address": "auto"}, "ray_address"),
        ({"executor": "threads", "resources": {"gpu": 1}}, "resources"),
        ({"executor": "ray", "resources": {"gpu": 1.5}}, "resources.gpu"),
        ({"executor": "ray", "resources": {"memory": "lots"}}, "resources.memory"),
        ({"executor": "ray", "resources": {"cpu": -1}}, "resources.cpu"),
        ({"executor": "ray", "gpus": {"indices": [0]}}, "gpus"),
    ],
)
def test_ray_options_are_checked(options: dict, field: str, cluster: Any) -> None:
    executor = options.pop("executor")
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        hyperlab.run(
            lambda p: 0.0,
            SPACE,
            max_trials=1,
            storage=":memory:",
            executor=executor,
            executor_args=options,
        )


def test_the_executor_is_imported_only_when_used() -> None:
    code = "import hyperlab, sys; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False"


# ---- the other ways to name a cluster -------------------------------------------------------

TINY = """
import sys, hyperlab

def objective(params):
    hyperlab.report(loss=params["x"])
    return params["x"]

address = sys.argv[1] or None
result = hyperlab.run(objective, {"x": hyperlab.uniform(0, 1)}, metric="loss", executor="ray",
                      executor_args={"ray_address": address}, max_trials=3, concurrency=2,
                      storage=":memory:", progress=False)
print(sorted(t.status.name for t in result.trials))
"""


def _run_driver(address: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", TINY, address],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_a_ray_client_address_runs_trials_through_the_client(cluster: Any) -> None:
    done = _run_driver(cluster.client_address)
    if "Starting Ray client server failed" in done.stderr:
        # Ray's proxy starts a server per client on the first free port from 23000, and one
        # left by an earlier cluster on this machine may still hold it: Ray's, not ours
        done = _run_driver(cluster.client_address)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']"


def test_without_an_address_hyperlab_starts_a_local_instance_and_it_stops_with_the_process(
    tmp_path: Path,
) -> None:
    temp = Path("/tmp") / f"hl{os.getpid()}"  # short: Ray's socket paths must stay short
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(temp)  # no cluster recorded there: ray.init() would start one
    try:
        done = _run_driver("", env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == "['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']"
        assert any(temp.glob("ray/session_*")), "it started its own instance there"
        wait_for(lambda: not _processes_mentioning(str(temp)), timeout=30, what="no process left")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _processes_mentioning(text: str) -> list[int]:
    """The processes whose command line holds ``text`` (a zombie's is empty)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in line:
                found.append(int(entry.name))
    return found


def test_a_dead_cluster_recorded_on_this_machine_is_not_joined(monkeypatch: Any) -> None:
    # `ray start` records its cluster in a file; one that died without cleaning up leaves it
    import ray._private.services as services

    from hyperlab.executors._ray import _cluster

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(services, "canonicalize_bootstrap_address", lambda address: "127.0.0.1:9")
    assert _cluster._running_cluster() is None  # hyperlab starts its own instead
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")  # named by the user: reported, not skipped
    assert _cluster._running_cluster() == "127.0.0.1:9"
