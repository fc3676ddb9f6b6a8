"""Detached drivers: ``python -m hyperlab ... resume <id> --quiet`` started in a process of its
own, which outlives the process that launched it (``hyperlab run --detach``, NNI's
``Experiment.start(run_mode=RunMode.Detach)``), and the wait for a driver to take its
experiment, which NNI's in-thread driver waits with too.

```python
driver = start_detached(store, experiment_id, ["--port", "8080"])
print(driver.process.pid, driver.log_path, driver.started.status)
```
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hyperlab._terminal import printable
from hyperlab.errors import HyperlabError
from hyperlab.store import ExperimentRecord, Store
from hyperlab.store.tokens import open_private_log
from hyperlab.trial import ExperimentStatus

__all__ = [
    "DETACHED_STORAGE_VAR",
    "DRIVER_START_WAIT",
    "DetachedDriver",
    "DriverNotStarted",
    "detached_command",
    "start_detached",
    "wait_for_driver",
]

DETACHED_STORAGE_VAR = "HYPERLAB_DETACHED_STORAGE"
"""Hands a store URL with a password to a detached driver, never on its command line (where
``ps`` shows it): ``hyperlab --storage-from-env`` reads the URL from it and removes it."""
DRIVER_START_WAIT = 30.0
"""Seconds a driver, detached or in a thread, may take to start its experiment (import
hyperlab and the objective, open the store, take the lease, record the experiment RUNNING)
before its launcher gives up waiting. A detached driver may still start after that."""
LOG_TAIL = 20
"""Lines of a detached driver's log quoted when it could not start."""
_POLL = 0.02
"""Seconds between two looks at the experiment while waiting for its driver."""
_RUNNING = (ExperimentStatus.RUNNING, ExperimentStatus.NO_MORE_TRIAL)
"""The statuses of an experiment that a driver runs."""


class DriverNotStarted(HyperlabError):
    """A detached driver did not start its experiment: it exited first (``exit_code``), or
    had not started it after ``DRIVER_START_WAIT`` seconds (``exit_code`` None; it may still).

    Attributes:
        experiment_id: The experiment.
        pid: The driver's process id.
        exit_code: How the driver exited, or None when it still ran.
        log_path: The driver's log (its output), quoted at the end of the message.
    """

    def __init__(self, experiment_id: str, pid: int, exit_code: int | None, log_path: Path) -> None:
        self.experiment_id = experiment_id
        self.pid = pid
        self.exit_code = exit_code
        self.log_path = log_path
        if exit_code is None:
            why = f"(pid {pid}) has not started it within {DRIVER_START_WAIT:g}s"
        else:
            why = f"exited with code {exit_code} before it started"
        super().__init__(
            f"experiment {experiment_id}: its detached driver {why}; {_log_tail(log_path)}"
        )


@dataclass(frozen=True)
class DetachedDriver:
    """A detached driver that started its experiment.

    Attributes:
        process: The driver's process (in a session of its own).
        log_path: Its log, ``driver.log`` in the experiment's folder.
        started: The experiment as the wait last read it: run by the driver, or already
            ended (a short experiment).
    """

    process: subprocess.Popen[bytes]
    log_path: Path
    started: ExperimentRecord


def detached_command(store: Store, experiment_id: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a driver process that resumes ``experiment_id`` quietly.

    The store's URL is on the command line when it holds no password; otherwise it is in the
    environment's ``DETACHED_STORAGE_VAR``. Callers append their own options (``--port``,
    budget changes) to the command.
    """
    env = dict(os.environ)
    command = [sys.executable, "-m", "hyperlab"]
    if store.masked_url == store.url:
        command += ["--storage", store.url]
    else:
        env[DETACHED_STORAGE_VAR] = store.url
        command += ["--storage-from-env"]
    return [*command, "resume", experiment_id, "--quiet"], env


def start_detached(store: Store, experiment_id: str, options: Sequence[str] = ()) -> DetachedDriver:
    """Run ``hyperlab resume ID --quiet`` and ``options`` (``--port``, ``--max-trials``...)
    in a new session, so that it outlives this process and Ctrl-C here does not reach it;
    return once it runs the experiment (or ran it to its end), waiting as ``wait_for_driver``.

    The experiment must be saved in ``store``. The driver's output goes to ``driver.log`` in
    the experiment's folder.

    Raises:
        DriverNotStarted: it exited before it started the experiment, or did not start it
            within ``DRIVER_START_WAIT`` seconds (the message quotes the end of its log).
    """
    folder = store.experiment_folder(store.get_experiment(experiment_id))
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "driver.log"
    command, env = detached_command(store, experiment_id)
    launched = time.time()
    with open_private_log(log_path) as log:  # the driver keeps the link out of it anyway
        process = subprocess.Popen(
            [*command, *options],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    started = wait_for_driver(store, experiment_id, lambda: process.poll() is None, launched)
    if started is None:
        raise DriverNotStarted(experiment_id, process.pid, process.poll(), log_path)
    return DetachedDriver(process, log_path, started)


def wait_for_driver(
    store: Store, experiment_id: str, alive: Callable[[], bool], launched: float
) -> ExperimentRecord | None:
    """The experiment once a driver launched at ``launched`` (``time.time()``) runs it, or
    once it ended after that; None when the driver ended first (``alive()`` turned False) or
    after ``DRIVER_START_WAIT`` seconds (``alive()`` still True).

    A resumed experiment still shows how it ended last (STOPPED...) for a moment after its
    new driver took the lease: only RUNNING (or NO_MORE_TRIAL) under a live lease, or an end
    recorded after ``launched``, says that this driver started it.
    """
    deadline = time.monotonic() + DRIVER_START_WAIT
    while True:
        running = alive()
        record = store.get_experiment(experiment_id)
        if record.status.is_finished() and (record.finished_at or 0.0) >= launched:
            return record
        if record.driver_alive() and record.status in _RUNNING:
            return record
        if not running or time.monotonic() >= deadline:
            return None
        time.sleep(_POLL)


def _log_tail(log_path: Path) -> str:
    """The last ``LOG_TAIL`` lines of a driver's log, indented, for an error message."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()[-LOG_TAIL:]
    except OSError:
        lines = []
    tail = "".join(f"\n  {printable(line)}" for line in lines) or " (empty)"
    return f"the end of its log {log_path}:{tail}"
