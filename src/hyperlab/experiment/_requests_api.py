"""What an ``Experiment`` handle asks of its experiment while it runs, through the store or
its driver: stop, drain, steering (NNI's dispatcher semantics)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from hyperlab._steering import imported_results, steer
from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError
from hyperlab.experiment._driver import Driver
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    Control,
    ControlRequest,
    ExperimentRecord,
    ImportData,
    ImportedResult,
    StopExperiment,
    Store,
    UpdateSearchSpace,
)
from hyperlab.trial import Trial

__all__ = ["Requests"]


class Requests:
    """The requests of ``hyperlab.Experiment`` to its running experiment (a base class of it,
    on the state it keeps)."""

    _store: Store
    _record: ExperimentRecord
    _options: ExperimentOptions
    _history: Iterable[Trial] | None  # the stored trials a resume replays; None if new
    _driver: Driver | None

    @property
    def id(self) -> str:
        """The experiment's id: the one chosen with ``id=``, else 8 random lowercase letters
        and digits."""
        return self._record.id

    def stop(self) -> None:
        """Ask the driver to stop: the experiment ends STOPPED, its running trials are
        SYS_CANCELED (they run again on ``resume``).

        Works from any thread; the request goes through the store like ``hyperlab stop ID``.
        Stopping an experiment that was not started, or has ended, does nothing (as NNI's).
        """
        if self._history is None and self._driver is None:  # not saved nor started
            return
        record = self._store.get_experiment(self.id)
        if record.status.is_finished() and not record.driver_alive():
            return  # a request now would wait for the next driver, which drops it
        self._store.send_control(self.id, StopExperiment())

    def drain(self) -> None:
        """Start no more trials: the experiment ends DONE once its running trials ended (as
        Optuna's ``study.stop()``), where ``stop`` cancels them.

        Works at once from any thread of the process running it (a callback included).

        Raises:
            ConfigError: the experiment does not run in this process (``stop`` reaches one
                running elsewhere).
        """
        driver = self._driver
        if driver is None or driver.status.is_finished():
            now = "it was not run here" if driver is None else f"it ended {driver.status}"
            raise ConfigError(
                f"experiment {self.id}: drain() needs it running in this process "
                f"(run() or start()); {now}"
            )
        driver.request_drain()

    # ---- steering a running experiment (NNI's dispatcher semantics) ----------------------------

    def update_search_space(
        self, space: SearchSpace | Mapping[str, Any] | str | os.PathLike
    ) -> None:
        """Propose from ``space`` from now on. The tuner is rebuilt on it and learns again from
        the finished trials (and imported results) that fit it; every trial keeps the
        parameters it ran with. Waits until the driver applied it.

        Raises:
            SearchSpaceError: the space is invalid (naming the parameter).
            ConfigError: the experiment is not running, or its tuner cannot take the space.
        """
        nni = SearchSpace.coerce(space).to_nni()
        self._steer(UpdateSearchSpace(space=nni))

    def add_trial(self, params: Mapping[str, Any]) -> int:
        """Run a trial with ``params`` next (NNI's customized trial); it counts in
        ``max_trials``. Returns its number once the driver queued it.

        Raises:
            SearchSpaceError: a parameter is missing, unknown or outside the space (naming
                it and the bound).
            ConfigError: the experiment is not running, or its trial budget is spent.
        """
        control = self._steer(AddTrial(params=dict(params)))
        assert control.outcome is not None and control.outcome.trial is not None
        return control.outcome.trial

    def import_data(self, results: Iterable[Mapping[str, Any] | ImportedResult]) -> int:
        """Feed results obtained elsewhere to the tuner as if their trials had run (NNI's
        import data); they are kept as imported results, not trials, and do not count in
        ``max_trials``. Returns how many were imported.

        Args:
            results: ``{"params": {...}, "value": v}`` (``"metrics"`` optional), or NNI's
                export format ``{"parameter": {...}, "value": v or {"default": v, ...}}``.

        Raises:
            SearchSpaceError: a result's parameters are outside the space (naming it).
            ConfigError: a result has no finite value, or the experiment is not running.
        """
        checked = imported_results(results)
        self._steer(ImportData(results=checked))
        return len(checked)

    def _steer(self, request: ControlRequest) -> Control:
        if self._history is None and self._driver is None:  # not saved nor started
            raise ConfigError(
                f"experiment {self.id} is not running (not started yet); only a running "
                "experiment can be steered: start it with start() first"
            )
        return steer(self._store, self.id, request)
