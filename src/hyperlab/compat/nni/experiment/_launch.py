"""Running the driver of an experiment saved in the store (status INITIALIZED, or stopped):
``DriverThread`` runs ``hyperlab.resume`` in a thread of this process (``RunMode.Background``
and ``Foreground``), ``spawn_driver`` runs ``hyperlab resume`` in a process of its own that
outlives this one (``RunMode.Detach``, with ``hyperlab.experiment.start_detached``, as
``hyperlab run --detach``). Both return once the driver holds the experiment (waiting as
``hyperlab.experiment.wait_for_driver``, up to ``DRIVER_START_WAIT`` seconds), or raise saying
why it did not start. ``stop_driver`` asks a running driver to stop and waits for it.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import Any

from hyperlab.compat.nni.experiment._rest_source import RestSource
from hyperlab.compat.nni.experiment._source import FINISHED, Source
from hyperlab.errors import HyperlabError
from hyperlab.experiment import DRIVER_START_WAIT, start_detached, wait_for_driver
from hyperlab.store import Store

__all__ = ["POLL", "STOP_WAIT", "DriverThread", "spawn_driver", "stop_driver"]

_logger = logging.getLogger("hyperlab.compat.nni.experiment")

POLL = 0.1
"""Seconds between two looks at the experiment's status while waiting for it."""
STOP_WAIT = 60.0
"""Seconds ``stop`` waits for the driver to stop the experiment."""


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
        launched = time.time()
        self._thread.start()
        if wait_for_driver(store, self.experiment_id, lambda: self.alive, launched) is not None:
            return
        if self.alive:
            raise HyperlabError(
                f"experiment {self.experiment_id}: its driver has not started it within "
                f"{DRIVER_START_WAIT:g}s"
            )
        if isinstance(self.failure, Exception):
            raise self.failure
        raise HyperlabError(f"experiment {self.experiment_id}: its driver ended at once")

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
    """Run ``hyperlab resume ID --port PORT --host HOST`` detached (``start_detached``: it
    outlives this process, and Ctrl-C here does not reach it); return once it runs the
    experiment. ``changes`` (as ``DriverThread`` takes them) become ``--max-trials``,
    ``--max-duration``, ``--concurrency``.

    Raises:
        DriverNotStarted: it exited before it started the experiment (quoting the end of its
            log), or did not start it in time.
    """
    options = ["--port", str(port), "--host", host]
    for name, value in (changes or {}).items():
        options += ["--" + name.replace("_", "-"), str(value)]
    return start_detached(store, experiment_id, options).process


def stop_driver(source: Source, experiment_id: str) -> str | None:
    """Ask the experiment's driver to stop, through ``source``, and wait up to ``STOP_WAIT``
    seconds for it to end the experiment.

    Returns:
        The last status read (``STOPPED`` when a connected experiment's REST API went away
        with it), or None when the experiment had ended already.
    """
    try:
        status = source.status()
        if status in FINISHED:
            return None
        source.request_stop()
        deadline = time.monotonic() + STOP_WAIT
        while status not in FINISHED and time.monotonic() < deadline:
            time.sleep(POLL)
            status = source.status()
    except HyperlabError as exc:  # a connected experiment's server went away with it
        if not isinstance(source, RestSource):
            raise
        _logger.debug("experiment %s: %s", experiment_id, exc)
        status = "STOPPED"
    return status
