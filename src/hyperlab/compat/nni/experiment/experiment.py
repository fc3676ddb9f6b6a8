"""NNI's ``Experiment`` (``nni.experiment.Experiment``) running on hyperlab.

```python
from hyperlab.compat.nni.experiment import Experiment    # instead of nni.experiment

experiment = Experiment('local')
experiment.config.trial_command = 'python3 model.py'
experiment.config.search_space = search_space
experiment.config.tuner.name = 'TPE'
experiment.config.tuner.class_args['optimize_mode'] = 'maximize'
experiment.config.max_trial_number = 10
experiment.config.trial_concurrency = 2
experiment.run(8080)       # True once DONE or STOPPED, False on ERROR
print(experiment.export_data())
experiment.stop()
```

The experiment is a hyperlab experiment in hyperlab's store (``$HYPERLAB_HOME/hyperlab.db``
unless ``storage=`` says otherwise), its trials hyperlab command trials (NNI trial scripts run
unchanged, with hyperlab's ``nni`` shim), and the web portal at the port hyperlab's dashboard
and REST API (NNI's routes included), on 127.0.0.1. The driver runs in a thread of this process
(``RunMode.Background``, ``Foreground``) or in a process of its own (``RunMode.Detach``).

Reads and changes go the hyperlab way: an experiment this object runs, resumes or views is read
from the store and changed by control requests in the store, which its driver applies;
``Experiment.connect(port)`` reads and changes one through the REST API at the port. As with
NNI, Ctrl-C in ``run`` stops the experiment (``run`` then returns None), and so does the end
of the script after ``start`` (unless ``RunMode.Detach``).
"""

from __future__ import annotations

import atexit
import enum
import json
import logging
import os
import secrets
import subprocess
import sys
import time
import warnings
from typing import Any
from urllib.parse import urlsplit

from hyperlab.compat.nni.experiment._calls import SourceCalls
from hyperlab.compat.nni.experiment._launch import (
    POLL,
    STOP_WAIT,
    DriverThread,
    spawn_driver,
    stop_driver,
)
from hyperlab.compat.nni.experiment._rest_source import RestSource
from hyperlab.compat.nni.experiment._resume import resume_changes
from hyperlab.compat.nni.experiment._source import FINISHED, Source
from hyperlab.compat.nni.experiment._store_source import StoreSource
from hyperlab.compat.nni.experiment.config import ExperimentConfig, nni_message, to_hyperlab
from hyperlab.errors import ConfigError, ExperimentNotFound
from hyperlab.executors import CommandTrial
from hyperlab.experiment import Experiment as HyperlabExperiment
from hyperlab.experiment import check_id
from hyperlab.server import TOKEN_FILE, BackgroundServer, check_serving, serve_in_background
from hyperlab.store import ID_ALPHABET, Store

__all__ = ["Experiment", "RunMode"]

_logger = logging.getLogger("hyperlab.compat.nni.experiment")

CONFIG_FILE = "nni-config.json"
"""The NNI config as given (NNI's camelCase), kept in the experiment's folder."""


class RunMode(enum.Enum):
    """Where the driver runs, and whether the experiment outlives the script (NNI's names).

    - ``Background``: in a thread of this process, quietly; stopped when the script ends.
    - ``Foreground``: the same, printing hyperlab's progress lines.
    - ``Detach``: in a process of its own, which goes on after the script ends (stop it with
      ``stop()``, ``Experiment.connect(port).stop()`` or ``hyperlab stop ID``).
    """

    Background = "background"
    Foreground = "foreground"
    Detach = "detach"


def _say(message: str) -> None:
    print(f"hyperlab: {message}", file=sys.stderr, flush=True)


def _as_experiment(obj: object) -> Experiment:
    """``obj`` itself, or the experiment whose id it is (``Experiment.resume('id')``, as NNI
    2.x wrote it)."""
    return obj if isinstance(obj, Experiment) else Experiment(None, id=str(obj))


class Experiment(SourceCalls):
    """An NNI experiment, run by hyperlab.

    Args:
        config_or_platform: An ``ExperimentConfig``, ``'local'`` (a blank config to fill in
            through ``experiment.config``), or None to resume, view or read an existing
            experiment by ``id``.
        id: The experiment's id: 1 to 32 lowercase letters, digits, ``-`` or ``_``; by default
            8 random ones. Give an existing one to resume, view or read that experiment.
        storage: hyperlab's store (not NNI's): None for ``$HYPERLAB_HOME/hyperlab.db``, a
            ``sqlite:///`` or ``postgresql://`` URL, or a path ending in ``.db``.
        host: The address the web portal listens on (loopback by default; beyond it, every
            request needs the experiment's token).

    Attributes:
        config: The config (None for an experiment made from its id until ``resume`` or
            ``view`` loads it).
        id: The experiment's id.
        port: The web portal's port while this object serves it (or connected to it).

    Raises:
        ConfigError: an invalid id, or ``storage=':memory:'`` (the driver and the portal
            need a store they can share).
        UnsupportedFeature: a platform other than ``'local'``.
    """

    def __init__(
        self,
        config_or_platform: ExperimentConfig | str | list[str] | None,
        id: str | None = None,
        *,
        storage: str | os.PathLike[str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.id = "".join(secrets.choice(ID_ALPHABET) for _ in range(8)) if id is None else id
        check_id(self.id)
        self.storage = None if storage is None else os.fspath(storage)
        if self.storage is not None and self.storage.strip() == ":memory:":
            raise ConfigError(
                "storage: ':memory:' is private to one store object, and the experiment's "
                "driver and web portal each open the store; give a file or a postgresql:// URL"
            )
        self.host = host
        self.port: int | None = None
        self.config: ExperimentConfig | None
        if isinstance(config_or_platform, (str, list)):
            self.config = ExperimentConfig(config_or_platform)
        else:
            self.config = config_or_platform
        self._url: str | None = None
        self._store: Store | None = None
        self._source: Source | None = None
        self._resuming = False  # start() continues the stored experiment, not a new one
        self._changes: dict[str, Any] = {}  # what resume() changes: max_trials...
        self._controls_driver = False  # stop() stops the experiment: it was started here
        self._thread: DriverThread | None = None
        self._detached: subprocess.Popen[bytes] | None = None
        self._portal: BackgroundServer | None = None

    def __repr__(self) -> str:
        where = f" at {self.url}" if self.url else ""
        return f"<Experiment {self.id}{where}>"

    @property
    def url(self) -> str | None:
        """The web portal's address (``http://127.0.0.1:8080``) while it is served here or
        this object is connected to it; None otherwise."""
        return self._url

    # ---- where reads and controls go ---------------------------------------------------------

    def _open_store(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.storage)
        return self._store

    @property
    def _reads(self) -> Source:
        """The store (or, once connected, the REST API at the port)."""
        if self._source is None:
            self._source = StoreSource(self._open_store(), self.id, portal_url=self._url)
        return self._source

    def _served(self, url: str, port: int) -> None:
        self._url, self.port = url, port
        if isinstance(self._source, StoreSource):
            self._source.portal_url = url

    # ---- starting ----------------------------------------------------------------------------

    def start(
        self, port: int = 8080, debug: bool = False, run_mode: RunMode = RunMode.Background
    ) -> None:
        """Start the experiment and return once it runs, serving the web portal at ``port``.

        Unless ``run_mode`` is ``RunMode.Detach``, the experiment is stopped when the script
        ends (``atexit``); ``stop()`` stops it earlier.

        Args:
            port: The web portal's port (hyperlab's dashboard and REST API, NNI's routes
                included); 0 picks a free one (read it from ``port``).
            debug: NNI's debug logging; accepted, with no effect (hyperlab's driver log is
                the same either way).
            run_mode: See ``RunMode``.

        Raises:
            ConfigError: the config is invalid (naming the field), the port is in use, or the
                experiment already exists (creating) or runs (resuming): nothing is written.
            UnsupportedFeature: the config uses an NNI feature hyperlab lacks.
        """
        mode = RunMode(run_mode)
        if mode is not RunMode.Detach:
            atexit.register(self.stop)
        if self._source is None or isinstance(self._source, StoreSource):
            self._launch(port, mode)
        else:
            raise ConfigError(
                f"experiment {self.id} is connected to port {self.port}; it runs elsewhere"
            )

    def _launch(self, port: int, mode: RunMode) -> None:
        store = self._open_store()
        if self._resuming:
            store.get_experiment(self.id).check_not_running()
        new = None if self._resuming else self._new_experiment()
        if mode is RunMode.Detach:
            check_serving(port, self.host)
        else:
            self._serve(port)
        try:
            if new is not None:
                new.save()
                if self.config is not None:
                    config = json.dumps(self.config.json(), indent=2)
                    (new.folder / CONFIG_FILE).write_text(config)
            self._controls_driver = True  # from here on, stop() stops what was launched
            if mode is RunMode.Detach:
                self._detached = spawn_driver(store, self.id, port, self.host, self._changes)
                url = store.get_experiment(self.id).server_url or f"http://{self.host}:{port}"
                self._served(url, urlsplit(url).port or port)
                where = f"in the background (pid {self._detached.pid})"
            else:
                progress = None if mode is RunMode.Foreground else False
                self._thread = DriverThread(self.id, self.storage, progress, self._changes)
                self._thread.start(store)
                where = "here"
        except BaseException:  # Ctrl-C while the driver starts: stop() stops it
            self._controls_driver = self._thread is not None and self._thread.alive
            self._stop_portal()
            raise
        link = self._url if self._portal is None else self._printed_link(self._portal)
        _say(f"experiment {self.id} runs {where}; web portal: {link}")

    def _new_experiment(self) -> HyperlabExperiment:
        """The hyperlab experiment of the config (checked; nothing written yet)."""
        if self.config is None:
            raise ConfigError(
                f"experiment {self.id} has no config and is not in store "
                f"{self._open_store().masked_url}: give a config, or the id of an experiment"
            )
        config = to_hyperlab(self.config)
        trial: Any = CommandTrial(config.trial.command or "", code_dir=config.trial.code_dir)
        try:
            return HyperlabExperiment.from_options(
                trial,
                config.search_space,
                config.options(),
                storage=self.storage,
                id=self.id,
                progress=False,
            )
        except ConfigError as exc:
            raise type(exc)(nni_message(str(exc))) from None

    def _printed_link(self, portal: BackgroundServer) -> str:
        """The portal's link as printed: its token only on a terminal (see ``printed_link``)."""
        store = self._open_store()
        folder = store.experiment_folder(store.get_experiment(self.id))
        return portal.printed_link(self.id, folder / TOKEN_FILE)

    def _serve(self, port: int) -> BackgroundServer:
        """Serve the store's dashboard and REST API at ``port``, for this experiment."""
        if self._portal is None:
            self._portal = serve_in_background(
                self.storage, port, host=self.host, experiment_id=self.id
            )
            self._served(self._portal.url, self._portal.port)
        return self._portal

    # ---- stopping ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the experiment (if this object started it or is connected to it: its running
        trials end SYS_CANCELED, and run again on ``resume``), and the web portal served here.

        Returns once the experiment has ended. Called at the script's end after ``start``
        (unless ``RunMode.Detach``), and by Ctrl-C in ``run``.
        """
        atexit.unregister(self.stop)
        if self._controls_driver:
            _logger.info("Stopping experiment %s, please wait...", self.id)
            status = stop_driver(self._reads, self.id)
            if status in FINISHED:
                _say(
                    f"experiment {self.id} stopped ({status}); continue it with "
                    f"Experiment(None, id={self.id!r}).resume() or `hyperlab resume {self.id}`"
                )
            elif status is not None:
                _say(f"experiment {self.id} has not stopped within {STOP_WAIT:g}s ({status})")
            self._controls_driver = False
        if self._thread is not None:
            self._thread.join(STOP_WAIT)
            self._thread = None
        self._detached = None
        self._stop_portal()
        self._url, self.port = None, None
        if isinstance(self._source, RestSource):  # reads now go to the store (``storage``)
            self._source = None

    def _stop_portal(self) -> None:
        if self._portal is not None:
            self._portal.stop()
            self._portal = None
            if isinstance(self._source, StoreSource):
                self._source.portal_url = None

    # ---- running -----------------------------------------------------------------------------

    def _wait_completion(self) -> bool:
        while True:
            status = self.get_status()
            if status in ("DONE", "STOPPED"):
                return True
            if status == "ERROR":
                return False
            time.sleep(POLL)

    def _run_impl(self, port: int, wait_completion: bool) -> bool | None:
        try:
            self.start(port)
            if wait_completion:
                return self._wait_completion()
        except KeyboardInterrupt:
            _say("KeyboardInterrupt detected: stopping the experiment")
            self.stop()
        return None

    def run(
        self, port: int = 8080, wait_completion: bool = True, debug: bool = False
    ) -> bool | None:
        """Start the experiment (see ``start``) and wait until it ends.

        Ctrl-C stops the experiment. Otherwise it is not stopped when ``run`` returns: the web
        portal stays up until ``stop()``, or the end of the script.

        Args:
            port: The web portal's port; 0 picks a free one.
            wait_completion: False returns None as soon as the experiment runs.
            debug: Accepted, with no effect (see ``start``).

        Returns:
            True once the experiment ended DONE or STOPPED, False if it ended in ERROR; None
            without ``wait_completion``, or after Ctrl-C (the experiment is then STOPPED).
        """
        return self._run_impl(port, wait_completion)

    def run_or_resume(
        self, port: int = 8080, wait_completion: bool = True, debug: bool = False
    ) -> bool | None:
        """``resume`` if the store has an experiment with this id (``has_checkpoint``), else
        ``run``; same arguments and return values as ``run``."""
        if self.has_checkpoint():
            return self.resume(port, wait_completion, debug)
        return self.run(port, wait_completion, debug)

    def has_checkpoint(self) -> bool:
        """Whether the store holds an experiment with this id (which ``resume`` continues)."""
        try:
            self._open_store().get_experiment(self.id)
        except ExperimentNotFound:
            return False
        return True

    def load_checkpoint(self) -> None:
        """Load the NNI config the experiment was created with, unless this object has one
        (hyperlab resumes from the store alone: the config is for reading)."""
        if self.config is not None:
            return
        store = self._open_store()
        path = store.experiment_folder(store.get_experiment(self.id)) / CONFIG_FILE
        if path.is_file():
            self.config = ExperimentConfig(**json.loads(path.read_text()))

    def save_checkpoint(self) -> None:
        """Nothing to do: the store holds the experiment as it runs (as with NNI's HPO)."""

    def _existing(self, action: str) -> None:
        if not self.has_checkpoint():
            raise ExperimentNotFound(
                f"experiment {self.id} is not in store {self._open_store().masked_url}, so it "
                f"cannot be {action}"
            )
        self.load_checkpoint()

    def resume(
        self, port: int = 8080, wait_completion: bool = True, debug: bool = False
    ) -> bool | None:
        """Continue a stopped (or crashed) experiment: its finished trials are replayed into a
        fresh tuner, interrupted ones run again; then as ``run``.

        ``Experiment(None, id=ID).resume(port)``; ``Experiment.resume(ID, port)`` works too.

        Given a config (``Experiment(config, id=ID)``, or ``run_or_resume``), it is compared
        with the stored experiment, as NNI does: a new ``max_trial_number``,
        ``max_experiment_duration`` or ``trial_concurrency`` applies (and is recorded in the
        store); any other field that differs (search space, trial command, tuner, assessor,
        ``optimize_mode``...) keeps its stored value, with a ``UserWarning`` naming it.

        Raises:
            ExperimentNotFound: the store has no experiment with this id.
            ExperimentBusy: a driver runs it now.
            ConfigError: the config given is invalid (naming the field); nothing is written.
        """
        experiment = _as_experiment(self)
        given = experiment.config is not None
        experiment._existing("resumed")
        if given:
            experiment._compare_config()
        experiment._resuming = True
        return experiment._run_impl(port, wait_completion)

    def _compare_config(self) -> None:
        """Take the budget and concurrency of ``config``; warn about the fields that differ
        from the stored experiment's and cannot change."""
        assert self.config is not None
        record = self._open_store().get_experiment(self.id)
        record.check_not_running()  # before any warning: it would not resume at all
        compared = resume_changes(self.config, record)
        for line in compared.kept:
            warnings.warn(f"experiment {self.id}: {line}", UserWarning, stacklevel=3)
        if compared.applied:
            _say(f"experiment {self.id} resumes with {', '.join(compared.applied)}")
        self._changes = compared.changes

    def view(self, port: int = 8080, non_blocking: bool = False) -> Experiment:
        """Serve the web portal of an experiment of the store (running or not) at ``port``.

        ``Experiment(None, id=ID).view(port)``; ``Experiment.view(ID, port)`` works too.

        Args:
            port: The web portal's port; 0 picks a free one.
            non_blocking: False serves until Ctrl-C; True returns at once (the portal then
                runs until ``stop()`` or the end of the script).

        Returns:
            The experiment.

        Raises:
            ExperimentNotFound: the store has no experiment with this id.
        """
        experiment = _as_experiment(self)
        experiment._existing("viewed")
        portal = experiment._serve(port)
        _say(f"experiment {experiment.id}: web portal at {experiment._printed_link(portal)}")
        if not non_blocking:
            try:
                while True:
                    time.sleep(1.0)
            except KeyboardInterrupt:
                _say("KeyboardInterrupt detected: the web portal stops")
            finally:
                experiment.stop()
        return experiment

    @classmethod
    def connect(cls, port: int) -> Experiment:
        """Attach to the experiment whose web portal (hyperlab's REST API) is at ``port`` on
        this machine, run by another script, ``hyperlab run --port`` or ``hyperlab serve``.

        Its reads and changes go through the REST API; ``stop()`` stops it.

        Raises:
            HyperlabError: nothing answers at the port.
        """
        experiment = cls(None)
        source = RestSource(port)
        experiment.id = source.experiment_id
        experiment._source = source
        experiment._controls_driver = True
        experiment._served(source.url, port)
        status = source.status()
        _say(f"connected to port {port}: experiment {experiment.id}, status {status}")
        return experiment
