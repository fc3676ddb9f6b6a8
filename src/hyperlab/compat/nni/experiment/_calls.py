"""NNI's ``Experiment`` calls that go to the experiment's ``Source`` (its store, or the REST
API at a port): the reads (``get_status``, ``list_trial_jobs``, ``export_data``...) and the
changes to a running experiment (``update_*``, ``kill_trial_job``), which are control
requests its driver applies. ``Experiment`` has them from ``SourceCalls``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from hyperlab.compat.nni.experiment._source import Source, trial_number
from hyperlab.compat.nni.experiment.data import TrialJob, TrialMetricData, TrialResult
from hyperlab.config import describe_validation_error, parse_duration
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.store import (
    ControlRequest,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    UpdateSearchSpace,
)

__all__ = ["SourceCalls"]

_logger = logging.getLogger("hyperlab.compat.nni.experiment")

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")


def _request(model: type[M], field: str, **payload: Any) -> M:
    """The control request, or ConfigError naming the NNI ``field`` and the value."""
    try:
        return model.model_validate(payload, strict=True)
    except ValidationError as exc:
        raise ConfigError(f"{field}: {describe_validation_error(exc)}") from None


class _ClassOrInstanceMethod(Generic[R]):
    """A method also callable on the class, where it runs on ``owner(None)`` (NNI's docs call
    ``Experiment.get_all_experiments_metadata()``: the experiment of no id, on the default
    store)."""

    def __init__(self, method: Callable[[Any], R]) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    def __get__(self, obj: object, owner: Callable[[None], Any]) -> Callable[[], R]:
        if obj is not None:
            return functools.partial(self._method, obj)
        return functools.wraps(self._method)(lambda: self._method(owner(None)))


class SourceCalls:
    """NNI's reads of an experiment and its changes to a running one, through the
    experiment's ``Source``."""

    id: str
    """The experiment's id."""

    @property
    def _reads(self) -> Source:
        """Where the reads and controls go: the store, or the REST API at a port."""
        raise NotImplementedError

    # ---- reading -----------------------------------------------------------------------------

    def get_status(self) -> str:
        """NNI's status: ``INITIALIZED``, ``RUNNING``, ``NO_MORE_TRIAL``, ``STOPPING``,
        ``DONE``, ``STOPPED`` or ``ERROR`` (also when its driver was lost)."""
        return self._reads.status()

    def get_trial_job(self, trial_job_id: str) -> TrialJob:
        """The trial whose id is ``trial_job_id`` (``<experiment id>-<number>``).

        Raises:
            TrialNotFound: naming the id, when there is no such trial.
        """
        return TrialJob(**self._reads.trial_job(trial_job_id))

    def list_trial_jobs(self) -> list[TrialJob]:
        """Every trial, in number order."""
        return [TrialJob(**job) for job in self._reads.trial_jobs()]

    def get_job_statistics(self) -> list[dict[str, Any]]:
        """How many trials have each status: ``[{'trialJobStatus', 'trialJobNumber'}]``."""
        return self._reads.job_statistics()

    def get_job_metrics(self, trial_job_id: str | None = None) -> dict[str, list[TrialMetricData]]:
        """The results trials reported (intermediate and final), by trial job id; of one trial
        with ``trial_job_id``."""
        metrics: dict[str, list[TrialMetricData]] = {}
        for record in self._reads.metric_data(trial_job_id):
            metrics.setdefault(record["trialJobId"], []).append(TrialMetricData(**record))
        return metrics

    def get_experiment_profile(self) -> dict[str, Any]:
        """NNI's experiment profile: ``id``, ``params`` (the config in NNI's camelCase),
        ``execDuration`` (s), ``logDir``, ``startTime``, ``endTime`` (ms), ``nextSequenceId``."""
        return self._reads.profile()

    def get_experiment_metadata(self, exp_id: str) -> dict[str, Any]:
        """The entry of ``exp_id`` in NNI's experiment manifest (``{}`` if there is none)."""
        entries = self.get_all_experiments_metadata()
        return next((entry for entry in entries if entry["id"] == exp_id), {})

    @_ClassOrInstanceMethod
    def get_all_experiments_metadata(self) -> list[dict[str, Any]]:
        """NNI's experiment manifest of every experiment of the store: ``id``,
        ``experimentName``, ``status``, ``port``, ``pid`` of a live driver, ``webuiUrl``...

        Called on the class, it reads the default store (``$HYPERLAB_HOME/hyperlab.db``).
        """
        return self._reads.experiments_info()

    def export_data(self) -> list[TrialResult]:
        """Every succeeded trial's parameters and final result."""
        return [TrialResult(**result) for result in self._reads.export_data()]

    # ---- changing a running experiment ---------------------------------------------------------

    def _control(self, request: ControlRequest) -> None:
        self._reads.control(request)
        _logger.info("experiment %s: %s applied", self.id, request.kind)

    def update_trial_concurrency(self, value: int) -> None:
        """Run up to ``value`` trials at once from now on.

        Raises:
            ConfigError: ``value`` is not a positive integer, or the experiment is not running.
        """
        self._control(_request(SetConcurrency, "trial_concurrency", value=value))

    def update_max_trial_number(self, value: int) -> None:
        """Create ``value`` trials in all (the experiment ends once they ended).

        Raises:
            ConfigError: ``value`` is not a positive integer, or the experiment is not running.
        """
        self._control(_request(SetMaxTrials, "max_trial_number", value=value))

    def update_max_experiment_duration(self, value: str | int | float) -> None:
        """End the experiment once it has run ``value``: ``'90s'``, ``'30m'``, ``'2h'``,
        ``'1d'`` or seconds, counted from its start (summed over resumes).

        Raises:
            ConfigError: ``value`` is not a positive duration, or the experiment is not running.
        """
        seconds = parse_duration(value, "max_experiment_duration")
        self._control(_request(SetMaxDuration, "max_experiment_duration", value=seconds))

    def update_search_space(self, value: dict[str, Any]) -> None:
        """Propose from ``value`` (NNI's search-space JSON) from now on; the tuner learns again
        from the finished trials that fit it.

        Raises:
            SearchSpaceError: the space is invalid (naming the parameter).
            ConfigError: the experiment is not running, or its tuner cannot take the space.
        """
        space = SearchSpace.coerce(value).to_nni()
        self._control(_request(UpdateSearchSpace, "search_space", space=space))

    def kill_trial_job(self, trial_job_id: str) -> None:
        """Kill a waiting or running trial: it ends USER_CANCELED.

        Raises:
            TrialNotFound: no trial has this id.
            ConfigError: the trial is not waiting or running, or the experiment is not running.
        """
        number = trial_number(self.id, trial_job_id)
        self._control(KillTrial(number=number))
