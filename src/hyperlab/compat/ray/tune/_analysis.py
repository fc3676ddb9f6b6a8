"""The legacy ``tune.run(...)`` and the ``ExperimentAnalysis`` it returns."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hyperlab.compat.ray.tune._checkpoint import Checkpoint
from hyperlab.compat.ray.tune._config import (
    CheckpointConfig,
    FailureConfig,
    RunConfig,
    TuneConfig,
)
from hyperlab.compat.ray.tune._refuse import refuse
from hyperlab.compat.ray.tune._results import Result, ResultGrid, TuneError, best_result, ray_status
from hyperlab.compat.ray.tune._trainable import with_resources
from hyperlab.compat.ray.tune._tuner import Tuner

if TYPE_CHECKING:
    import pandas

__all__ = ["ExperimentAnalysis", "Trial", "run"]

_DEPRECATED = "DEPRECATED"


class Trial:
    """One trial of an ``ExperimentAnalysis`` (Ray's ``Trial``, read only).

    Attributes:
        trial_id: Its id.
        config: The config its trainable got.
        last_result: Its last result.
        status: ``"TERMINATED"``, ``"ERROR"``, ``"PAUSED"``, ``"RUNNING"`` or ``"PENDING"``.
        path: Its folder.
    """

    def __init__(self, result: Result) -> None:
        self._result = result
        self.trial_id = result.trial.id
        self.config = result.config
        self.last_result = result.metrics
        self.status = ray_status(result.trial.status)
        self.path = self.local_path = result.path

    @property
    def checkpoint(self) -> Checkpoint | None:
        """Its latest checkpoint, or None."""
        return self._result.checkpoint

    def __repr__(self) -> str:
        return f"Trial({self.trial_id}, {self.status})"


class ExperimentAnalysis:
    """The trials of a ``tune.run``, and the best one by the run's ``metric`` and ``mode``."""

    def __init__(self, grid: ResultGrid, metric: str | None, mode: str | None) -> None:
        self._grid = grid
        self.default_metric = metric
        self.default_mode = mode
        self.trials = [Trial(result) for result in grid]
        self.experiment_path = grid.experiment_path

    def get_best_trial(
        self,
        metric: str | None = None,
        mode: str | None = None,
        scope: str = "last",
        filter_nan_and_inf: bool = True,
    ) -> Trial | None:
        """The best trial (see ``ResultGrid.get_best_result``); None if none has the metric."""
        metric, mode = metric or self.default_metric, mode or self.default_mode
        if metric is None or mode is None:
            raise ValueError(
                "ExperimentAnalysis: no metric and mode; pass them, or give them to tune.run"
            )
        try:
            best = best_result(list(self._grid), metric, mode, scope, filter_nan_and_inf)
        except RuntimeError:
            return None
        return self.trials[list(self._grid).index(best)]

    def get_best_config(
        self, metric: str | None = None, mode: str | None = None, scope: str = "last"
    ) -> Any:
        """The best trial's config."""
        best = self.get_best_trial(metric, mode, scope)
        return None if best is None else best.config

    def get_last_checkpoint(self, trial: Trial | None = None) -> Checkpoint | None:
        """The latest checkpoint of ``trial`` (default: the best trial)."""
        trial = trial or self.best_trial
        return None if trial is None else trial.checkpoint

    @property
    def best_trial(self) -> Trial | None:
        """The best trial by the run's metric and mode."""
        return self.get_best_trial()

    @property
    def best_config(self) -> Any:
        """The best trial's config."""
        return self.get_best_config()

    @property
    def best_result(self) -> dict[str, Any] | None:
        """The best trial's last result."""
        best = self.best_trial
        return None if best is None else best.last_result

    @property
    def best_checkpoint(self) -> Checkpoint | None:
        """The best trial's latest checkpoint."""
        return self.get_last_checkpoint()

    @property
    def best_logdir(self) -> str | None:
        """The best trial's folder."""
        best = self.best_trial
        return None if best is None else best.path

    @property
    def results(self) -> dict[str, dict[str, Any]]:
        """Each trial's last result, by trial id."""
        return {trial.trial_id: trial.last_result for trial in self.trials}

    @property
    def results_df(self) -> pandas.DataFrame:
        """Each trial's last result, one row per trial indexed by trial id (needs pandas)."""
        return self._grid.get_dataframe().set_index("trial_id")

    def dataframe(self, metric: str | None = None, mode: str | None = None) -> pandas.DataFrame:
        """One row per trial: its last result, or its best by ``metric`` and ``mode``."""
        return self._grid.get_dataframe(filter_metric=metric, filter_mode=mode)

    @property
    def trial_dataframes(self) -> dict[str, pandas.DataFrame]:
        """Every result of each trial, by trial id."""
        return {result.trial.id: result.metrics_dataframe for result in self._grid}


def run(
    run_or_experiment: Any,
    *,
    name: str | None = None,
    metric: str | None = None,
    mode: str | None = None,
    stop: Any = None,
    time_budget_s: float | datetime.timedelta | None = None,
    config: Mapping[str, Any] | None = None,
    resources_per_trial: Any = None,
    num_samples: int = 1,
    storage_path: str | None = None,
    storage_filesystem: Any = None,
    search_alg: Any = None,
    scheduler: Any = None,
    checkpoint_config: CheckpointConfig | None = None,
    verbose: Any = None,
    progress_reporter: Any = None,
    log_to_file: bool = False,
    trial_name_creator: Any = None,
    trial_dirname_creator: Any = None,
    sync_config: Any = None,
    export_formats: Any = None,
    max_failures: int = 0,
    fail_fast: bool | str = False,
    restore: str | None = None,
    resume: Any = None,
    resume_config: Any = None,
    reuse_actors: bool = False,
    raise_on_failed_trial: bool = True,
    callbacks: Any = None,
    max_concurrent_trials: int | None = None,
    keep_checkpoints_num: int | None = None,
    checkpoint_score_attr: str | None = None,
    checkpoint_freq: int = 0,
    checkpoint_at_end: bool = False,
    chdir_to_trial_dir: Any = _DEPRECATED,
    local_dir: str | None = None,
    hyperlab_options: Mapping[str, Any] | None = None,
) -> ExperimentAnalysis:
    """Ray Tune's legacy entry point: runs the trials and returns an ``ExperimentAnalysis``.

    The arguments are ``Tuner``'s, flattened (``config`` is the ``param_space``,
    ``resources_per_trial`` as ``tune.with_resources``); ``hyperlab_options`` as for
    ``Tuner``. With ``raise_on_failed_trial`` (the default), failed trials raise a
    ``TuneError`` naming them once the run is over.
    """
    for argument, value in (("search_alg", search_alg), ("scheduler", scheduler)):
        if isinstance(value, str):
            raise NotImplementedError(
                f"tune.run({argument}={value!r}): names have no hyperlab equivalent; pass an "
                "instance (tune.search.optuna.OptunaSearch(), tune.schedulers.ASHAScheduler())"
            )
    again = "continue a run with Tuner.restore(path, trainable)"
    for argument, value in (("restore", restore), ("resume", resume)):
        refuse("tune.run", argument, value, None, again)
    refuse("tune.run", "resume_config", resume_config, None, again)
    refuse("tune.run", "export_formats", export_formats, None, "save what you need yourself")
    legacy = (keep_checkpoints_num, checkpoint_score_attr, checkpoint_freq, checkpoint_at_end)
    if checkpoint_config is None:
        order, score = "max", checkpoint_score_attr
        if score is not None and score.startswith("min-"):  # Ray's way of saying "min"
            order, score = "min", score[len("min-") :]
        checkpoint_config = CheckpointConfig(legacy[0], score, order, *legacy[2:])
    elif legacy != (None, None, 0, False):
        raise ValueError("tune.run: give checkpoint_config or the checkpoint_* arguments")
    trainable = run_or_experiment
    if resources_per_trial is not None:
        trainable = with_resources(trainable, resources_per_trial)
    tuner = Tuner(
        trainable,
        param_space=config,
        tune_config=TuneConfig(
            mode=mode,
            metric=metric,
            search_alg=search_alg,
            scheduler=scheduler,
            num_samples=num_samples,
            max_concurrent_trials=max_concurrent_trials,
            time_budget_s=time_budget_s,
            reuse_actors=reuse_actors,
            trial_name_creator=trial_name_creator,
            trial_dirname_creator=trial_dirname_creator,
            chdir_to_trial_dir=chdir_to_trial_dir,
        ),
        run_config=RunConfig(
            name=name,
            storage_path=storage_path,
            storage_filesystem=storage_filesystem,
            failure_config=FailureConfig(max_failures=max_failures, fail_fast=fail_fast),
            checkpoint_config=checkpoint_config,
            sync_config=sync_config,
            verbose=verbose,
            stop=stop,
            callbacks=callbacks,
            progress_reporter=progress_reporter,
            log_to_file=log_to_file,
            local_dir=local_dir,
        ),
        hyperlab_options=hyperlab_options,
    )
    grid = tuner.fit()
    analysis = ExperimentAnalysis(grid, metric, mode)
    failed = [trial for trial in analysis.trials if trial.status == "ERROR"]
    if failed and raise_on_failed_trial:
        raise TuneError(f"trials did not complete: {failed}")
    return analysis
