"""Running the driver of an experiment saved in the store (status INITIALIZED, or stopped):
``DriverThread`` runs ``hyperlab.resume`` in a thread of this process (``RunMode.Background``
and ``Foreground``), ``spawn_driver`` runs ``hyperlab resume`` in a process of its own that
outlives this one (``RunMode.Detach``, as ``hyperlab run --detach`` does). Both return once
the driver holds the experiment, or raise saying why it did not start.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hyperlab.errors import HyperlabError
from hyperlab.experiment import detached_command
from hyperlab.store import Store
from hyperlab.store.tokens import open_private_log
from hyperlab.trial import ExperimentStatus

__all__ = ["DriverThread", "spawn_driver"]

RUNNING = (ExperimentStatus.RUNNING, ExperimentStatus.NO_MORE_TRIAL)
"""The statuses of an experiment a driver runs."""
START_WAIT = 30.0
"""Seconds a driver may take to start the experiment."""
LOG_TAIL = 20
"""Lines of a detached driver's log quoted when it could not start."""


def _wait_started(
    store: Store, experiment_id: str, alive: Callable[[], bool], why_not: Callable[[], Exception]
) -> None:
    """Return once a driver runs the experiment (or ran it to its end already); raise
    ``why_not()`` when the driver ended before, HyperlabError after ``START_WAIT`` seconds."""
    launched = time.time()
    deadline = time.monotonic() + START_WAIT
    while True:
        running = alive()
        record = store.get_experiment(experiment_id)
        if record.status.is_finished() and (record.finished_at or 0.0) >= launched:
            return
        # a resumed experiment still shows how it ended last for a moment after its driver
        # took the lease: only RUNNING (or NO_MORE_TRIAL) says that this driver runs it
        if record.driver_alive() and record.status in RUNNING:
            return
        if not running:
            raise why_not()
        if time.monotonic() >= deadline:
            raise HyperlabError(
                f"experiment {experiment_id}: its driver has not started it within {START_WAIT:g}s"
            )
        time.sleep(0.02)


class DriverThread:
    """``hyperlab.resume(experiment_id)`` in a daemon thread of this process.

    Args:
        experiment_id: An experiment saved in the store.
        storage: The store, as ``hyperlab.resume`` takes it.
        progress: As ``hyperlab.resume`` takes it: False for silence.
        changes: ``hyperlab.resume``'s ``max_trials``, ``max_duration``, ``concurrency``.
    """

    def __init__(
        self,
        experiment_id: str,
        storage: str | None,
        progress: bool | None,
        changes: Mapping[str, Any] | None = None,
    ) -> None:
        self.experiment_id = experiment_id
        self._changes = dict(changes or {})
        self.failure: BaseException | None = None
        """What ``hyperlab.resume`` raised (a ``TrialError`` when no trial succeeded...)."""
        self._thread = threading.Thread(
            target=self._run,
            args=(storage, progress),
            name=f"hyperlab-nni-{experiment_id}",
            daemon=True,
        )

    def _run(self, storage: str | None, progress: bool | None) -> None:
        from hyperlab.experiment import resume

        try:
            resume(self.experiment_id, storage=storage, progress=progress, **self._changes)
        except BaseException as exc:  # the store says how it ended; this says why
            self.failure = exc

    def start(self, store: Store) -> None:
        """Start the driver; return once it runs the experiment.

        Raises:
            Exception: what ``hyperlab.resume`` raised if it ended before (``ExperimentBusy``
                when another driver runs the experiment, say).
        """
        self._thread.start()

        def why_not() -> Exception:
            if isinstance(self.failure, Exception):
                return self.failure
            return HyperlabError(f"experiment {self.experiment_id}: its driver ended at once")

        _wait_started(store, self.experiment_id, lambda: self.alive, why_not)

    @property
    def alive(self) -> bool:
        """Whether the driver's thread still runs."""
        return self._thread.is_alive()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the driver to end."""
        self._thread.join(timeout)


def spawn_driver(
    store: Store,
    experiment_id: str,
    port: int,
    host: str,
    changes: Mapping[str, Any] | None = None,
) -> subprocess.Popen[bytes]:
    """Run ``hyperlab resume ID --port PORT`` in a new session (it outlives this process, and
    Ctrl-C here does not reach it); return once it runs the experiment. ``changes`` (as
    ``DriverThread`` takes them) become ``--max-trials``, ``--max-duration``, ``--concurrency``.

    Its output goes to ``driver.log`` in the experiment's folder.

    Raises:
        HyperlabError: it exited before it started the experiment (quoting the end of its log),
            or did not start it in time.
    """
    folder = store.experiment_folder(store.get_experiment(experiment_id))
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "driver.log"
    command, env = detached_command(store, experiment_id)
    command += ["--port", str(port), "--host", host]
    for name, value in (changes or {}).items():
        command += ["--" + name.replace("_", "-"), str(value)]
    with open_private_log(log_path) as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )

    def why_not() -> Exception:
        return HyperlabError(
            f"experiment {experiment_id}: its detached driver exited with code "
            f"{process.poll()} before it started; {_tail(log_path)}"
        )

    _wait_started(store, experiment_id, lambda: process.poll() is None, why_not)
    return process


def _tail(log_path: Path) -> str:
    try:
        lines = log_path.read_text(errors="replace").splitlines()[-LOG_TAIL:]
    except OSError:
        lines = []
    return f"the end of its log {log_path}:" + ("".join(f"\n  {line}" for line in lines) or " -")
