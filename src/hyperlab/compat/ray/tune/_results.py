"""What ``Tuner.fit()`` returns: a ``ResultGrid`` of ``Result``, read from the store.

Statuses as Ray names them: hyperlab's SUCCEEDED, EARLY_STOPPED, USER_CANCELED and
SYS_CANCELED (stopped by the time budget) are all ``TERMINATED``; FAILED is ``ERROR``.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperlab.compat.ray.tune._checkpoint import Checkpoint
from hyperlab.compat.ray.tune._space import Template
from hyperlab.errors import SearchSpaceError
from hyperlab.reporting import checkpoints as disk
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR
from hyperlab.trial import Trial, TrialStatus, flatten_params

if TYPE_CHECKING:
    import pandas

    from hyperlab.experiment import Result as HyperlabResult

__all__ = ["Result", "ResultGrid", "TuneError", "best_result", "ray_status"]

_RAY_STATUS = {
    TrialStatus.WAITING: "PENDING",
    TrialStatus.RUNNING: "RUNNING",
    TrialStatus.PAUSED: "PAUSED",
    TrialStatus.FAILED: "ERROR",
}
SCOPES = ("last", "avg", "last-5-avg", "last-10-avg", "all")


class TuneError(Exception):
    """A trial's failure (``Result.error``), or trials that failed (``tune.run``)."""


def ray_status(status: TrialStatus) -> str:
    """Ray's name for a hyperlab trial status."""
    return _RAY_STATUS.get(status, "TERMINATED")


class Result:
    """One trial's outcome.

    Attributes:
        config: The config the trainable got.
        metrics: Its last result, with ``config`` and ``trial_id``.
        path: Its folder.
        error: A ``TuneError`` with its traceback if it failed, else None.
        trial: The hyperlab trial record.
    """

    def __init__(self, trial: Trial, config: Any, path: Path) -> None:
        self.trial = trial
        self.config = config
        self.path = os.fspath(path)
        last = trial.reports[-1].metrics if trial.reports else trial.metrics
        self.metrics: dict[str, Any] = {**last, "config": config, "trial_id": trial.id}
        failed = trial.status is TrialStatus.FAILED
        self.error = TuneError(trial.error or "the trial failed") if failed else None

    @functools.cached_property
    def checkpoint(self) -> Checkpoint | None:
        """The trial's latest checkpoint, or None."""
        found = disk.latest(Path(self.path, CHECKPOINTS_DIR), [])
        if found is None:
            return None
        value = found[0]
        return Checkpoint(value) if isinstance(value, Path) else Checkpoint.from_dict(value)

    @property
    def metrics_dataframe(self) -> pandas.DataFrame:
        """Every result the trial reported, one row each (needs pandas)."""
        import pandas as pd

        return pd.DataFrame([report.metrics for report in self.trial.reports])

    def series(self, metric: str) -> list[Any]:
        """Every value of ``metric`` the trial reported, in order."""
        series = [r.metrics[metric] for r in self.trial.reports if metric in r.metrics]
        if not series and metric in self.trial.metrics:
            series = [self.trial.metrics[metric]]
        return series

    def __repr__(self) -> str:
        return f"Result(metrics={self.metrics!r}, path={self.path!r}, error={self.error!r})"


def best_result(
    results: list[Result], metric: str, mode: str, scope: str, filter_nan_and_inf: bool
) -> Result:
    """The result whose ``metric``, summarised by ``scope``, is best by ``mode`` (the first
    of equals).

    Raises:
        ValueError: An unknown ``scope`` or ``mode``.
        RuntimeError: No trial has a (finite) value.
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
    sign = 1 if mode == "min" else -1
    candidates = []
    for index, result in enumerate(results):
        series = result.series(metric)
        if not series:
            continue
        odd = next((v for v in series if not _is_number(v)), None)
        if odd is not None:
            raise ValueError(
                f"metric {metric!r}: trial {result.trial.id} reported {odd!r}, not a number"
            )
        value = _summary(series, scope, sign)
        if filter_nan_and_inf and not math.isfinite(value):
            continue
        candidates.append((sign * value, index))
    if not candidates:
        raise RuntimeError(
            f"no trial reported {'a finite' if filter_nan_and_inf else 'a'} {metric!r}: no "
            "best result"
        )
    return results[min(candidates)[1]]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _summary(series: list[Any], scope: str, sign: int) -> Any:
    if scope == "last":
        return series[-1]
    if scope == "all":
        return min(series, key=lambda value: sign * value)
    window = {"avg": len(series), "last-5-avg": 5, "last-10-avg": 10}[scope]
    tail = series[-window:]
    return sum(tail) / len(tail)


class ResultGrid:
    """The results of an experiment, one per trial in creation order.

    Args:
        result: The hyperlab result of the experiment.
        template: The translated param_space (to give back Ray's configs).
        metric / mode: The run's, used when ``get_best_result`` is given none.
        folder: The experiment's folder.
    """

    def __init__(
        self,
        result: HyperlabResult,
        template: Template,
        metric: str | None,
        mode: str | None,
        folder: Path,
    ) -> None:
        self.hyperlab_result = result
        self.experiment_path = os.fspath(folder)
        self._metric = metric
        self._mode = mode
        self._results = [
            Result(trial, _config(template, trial), folder / "trials" / str(trial.number))
            for trial in result.trials
        ]

    def __len__(self) -> int:
        return len(self._results)

    def __getitem__(self, index: int) -> Result:
        return self._results[index]

    def __iter__(self) -> Iterator[Result]:
        return iter(self._results)

    @property
    def errors(self) -> list[TuneError]:
        """The errors of the failed trials."""
        return [r.error for r in self._results if r.error is not None]

    @property
    def num_errors(self) -> int:
        """How many trials failed."""
        return len(self.errors)

    @property
    def num_terminated(self) -> int:
        """How many trials ended without failing (finished, stopped early or by the budget)."""
        return sum(ray_status(r.trial.status) == "TERMINATED" for r in self._results)

    def get_best_result(
        self,
        metric: str | None = None,
        mode: str | None = None,
        scope: str = "last",
        filter_nan_and_inf: bool = True,
    ) -> Result:
        """The best trial's result.

        Args:
            metric / mode: Default to the run's.
            scope: ``"last"`` compares each trial's last value, ``"avg"`` the mean of all its
                values, ``"last-5-avg"``/``"last-10-avg"`` of its last 5/10, ``"all"`` its
                best value.
            filter_nan_and_inf: Skip values that are NaN or infinite.
        """
        metric, mode = metric or self._metric, mode or self._mode
        if metric is None or mode is None:
            raise ValueError(
                "get_best_result: no metric and mode; pass them, or set them in TuneConfig"
            )
        return best_result(self._results, metric, mode, scope, filter_nan_and_inf)

    def get_dataframe(
        self, filter_metric: str | None = None, filter_mode: str | None = None
    ) -> pandas.DataFrame:
        """One row per trial: its last result (or, with ``filter_metric``, its best by
        ``filter_mode``), ``config/...`` columns, ``trial_id`` and ``logdir`` (needs pandas)."""
        import pandas as pd

        rows = []
        for result in self._results:
            metrics = result.metrics
            if filter_metric is not None:
                if filter_mode not in ("min", "max"):
                    raise ValueError(
                        f"get_dataframe: filter_mode must be 'min' or 'max' with "
                        f"filter_metric, got {filter_mode!r}"
                    )
                sign = 1 if filter_mode == "min" else -1
                reports = [r.metrics for r in result.trial.reports if filter_metric in r.metrics]
                if reports:
                    metrics = min(reports, key=lambda m: sign * m[filter_metric])
            row = {k: v for k, v in metrics.items() if k != "config"}
            row.update(flatten_params(result.config, "config/"))
            row.update(trial_id=result.trial.id, logdir=result.path)
            rows.append(row)
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return f"ResultGrid<{len(self)} results in {self.experiment_path}>"


def _config(template: Template, trial: Trial) -> Any:
    """The config ``trial``'s trainable got; for a trial that failed building it (one of its
    ``sample_from`` functions raised), its searched values alone."""
    seed = 0 if trial.seed is None else trial.seed
    try:
        return template.resolve(trial.params, seed)
    except (RuntimeError, SearchSpaceError):
        if trial.status is not TrialStatus.FAILED:
            raise
        return template.resolve(trial.params, seed, derive=False)
