"""``tune.Tuner``: a Ray Tune experiment run as an ordinary hyperlab experiment (stored,
listed by ``hyperlab ls``, resumable with ``Tuner.restore`` or ``hyperlab resume``)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperlab.compat.ray.tune._config import RunConfig, TuneConfig
from hyperlab.compat.ray.tune._function import function_form
from hyperlab.compat.ray.tune._objective import TrialObjective
from hyperlab.compat.ray.tune._plan import make_plan
from hyperlab.compat.ray.tune._refuse import refuse
from hyperlab.compat.ray.tune._results import ResultGrid
from hyperlab.compat.ray.tune._trainable import Resourced
from hyperlab.config import executor_fields

if TYPE_CHECKING:
    from hyperlab.experiment import Experiment
    from hyperlab.experiment import Result as HyperlabResult
    from hyperlab.store import ExperimentRecord, Store

__all__ = ["Tuner", "run_experiment"]


class Tuner:
    """Tune ``trainable`` over ``param_space`` (Ray's ``tune.Tuner``).

    Args:
        trainable: A function ``f(config)`` that calls ``tune.report`` (or Ray's older
            ``f(config, reporter)``, ``f(config, checkpoint_dir=None)``), a ``tune.Trainable``
            subclass, or either wrapped by ``tune.with_parameters``/``tune.with_resources``.
        param_space: The config: search primitives, ``grid_search``, constants, nested.
        tune_config: What to search and how.
        run_config: Where and how it runs.
        hyperlab_options: Arguments of ``hyperlab.run`` that Ray has no words for
            (``executor``, ``concurrency``, ``storage``, ``seed``, ``id``, ``ray_address``...;
            see ``docs/migrating.md``); they take precedence.

    Example:
        >>> from hyperlab.compat.ray import tune
        >>> tuner = tune.Tuner(train, param_space={"lr": tune.loguniform(1e-4, 1e-1)},
        ...                    tune_config=tune.TuneConfig(metric="loss", mode="min",
        ...                                                num_samples=20))
        >>> best = tuner.fit().get_best_result()
    """

    def __init__(
        self,
        trainable: Any = None,
        *,
        param_space: Mapping[str, Any] | None = None,
        tune_config: TuneConfig | None = None,
        run_config: RunConfig | None = None,
        hyperlab_options: Mapping[str, Any] | None = None,
    ) -> None:
        if trainable is None:
            raise TypeError("Tuner: a trainable is required")
        self._plan = make_plan(trainable, param_space, tune_config, run_config, hyperlab_options)
        self._restored: tuple[str, Any, dict[str, Any]] | None = None
        self._results: ResultGrid | None = None

    def fit(self) -> ResultGrid:
        """Run the experiment to its end (or continue a restored one) and return its results.

        A failed trial does not end the experiment (unless ``FailureConfig(fail_fast=...)``);
        its error is in the results.
        """
        if self._restored is not None:
            self._results = _continue(*self._restored)
            return self._results
        from hyperlab.experiment import Experiment

        plan = self._plan
        options = dict(plan.options)  # the executor's own go in executor_args
        executor = {name: options.pop(name) for name in executor_fields() if name in options}
        experiment = Experiment(plan.objective, plan.space, **options, executor_args=executor)
        result = run_experiment(experiment, plan.fail_fast)
        self._results = ResultGrid(
            result, plan.objective.template, plan.metric, plan.mode, experiment.folder
        )
        return self._results

    def get_results(self) -> ResultGrid:
        """The results of the last ``fit``."""
        if self._results is None:
            raise RuntimeError("Tuner.get_results: call fit() first")
        return self._results

    @classmethod
    def restore(
        cls,
        path: str | os.PathLike[str],
        trainable: Any,
        resume_unfinished: bool = True,
        resume_errored: bool = False,
        restart_errored: bool = False,
        param_space: Mapping[str, Any] | None = None,
        storage_filesystem: Any = None,
        *,
        hyperlab_options: Mapping[str, Any] | None = None,
    ) -> Tuner:
        """A Tuner whose ``fit()`` continues the experiment at ``path`` (``hyperlab.resume``):
        its interrupted trials run again from their checkpoints, with ``trainable`` (the
        same, or fixed code).

        Args:
            path: ``ResultGrid.experiment_path``, the ``<storage_path>/<name>`` folder of the
                run (its newest experiment), or the experiment's id or name.
            trainable: The trainable, given again as Ray asks.
            hyperlab_options: ``storage`` if the run used another store than the default.
        """
        owner = "Tuner.restore"
        refuse(owner, "resume_unfinished", resume_unfinished, True, "it always resumes")
        failed = "hyperlab does not run failed trials again; run a new Tuner for them"
        refuse(owner, "resume_errored", resume_errored, False, failed)
        refuse(owner, "restart_errored", restart_errored, False, failed)
        refuse(owner, "param_space", param_space, None, "the stored space is used")
        refuse(owner, "storage_filesystem", storage_filesystem, None, "give a local path")
        options = dict(hyperlab_options or {})
        unknown = sorted(set(options) - {"storage", "progress", "callbacks"})
        if unknown:
            raise ValueError(
                f"{owner}: hyperlab_options {unknown} cannot change on a restore; it takes "
                "storage, progress and callbacks"
            )
        _find(_store(options), path)  # an unknown path fails now
        function = trainable.trainable if isinstance(trainable, Resourced) else trainable
        if callable(function) and not isinstance(function, type):
            function_form(function)  # and a signature Ray would not call
        tuner = cls.__new__(cls)
        tuner._restored = (os.fspath(path), trainable, options)
        tuner._results = None
        return tuner

    @classmethod
    def can_restore(
        cls, path: str | os.PathLike[str], *, hyperlab_options: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether ``path`` holds an experiment ``restore`` can continue."""
        try:
            _find(_store(dict(hyperlab_options or {})), path)
        except (LookupError, ValueError):
            return False
        return True


def run_experiment(experiment: Experiment, fail_fast: bool | str) -> HyperlabResult:
    """Run ``experiment``; its result even when trials failed, as Ray returns it, except
    with ``fail_fast="raise"`` (the failed trial's exception propagates)."""
    from hyperlab.errors import TrialError
    from hyperlab.experiment import Result
    from hyperlab.trial import ExperimentStatus

    try:
        return experiment.run()
    except TrialError as exc:
        if exc.result is None:
            raise
        return exc.result
    except Exception:
        if fail_fast is not True:
            raise
        result = Result.read(experiment.store, experiment.id)
        if result.status is not ExperimentStatus.ERROR:
            raise
        return result


def _store(options: dict[str, Any]) -> Store:
    from hyperlab.store import Store

    return Store.open(options.get("storage"))


def _find(store: Store, path: str | os.PathLike[str]) -> ExperimentRecord:
    """The experiment at ``path``: its folder, a folder of experiments (the newest), or an
    id or a name.

    Raises:
        LookupError: None is there.
    """
    from hyperlab.errors import ExperimentNotFound

    folder = Path(path).expanduser()
    if not folder.is_dir():
        try:
            return store.get_experiment(store.resolve(os.fspath(path)))
        except ExperimentNotFound:
            raise LookupError(f"Tuner.restore: no folder and no experiment {path!r}") from None
    found = []
    for candidate in (folder, *sorted(p for p in folder.iterdir() if p.is_dir())):
        try:
            record = store.get_experiment(candidate.name)
        except ExperimentNotFound:
            continue
        if store.experiment_folder(record).resolve() == candidate.resolve():
            found.append(record)
    if not found:
        raise LookupError(f"Tuner.restore: {os.fspath(path)!r} holds no hyperlab experiment")
    return max(found, key=lambda record: record.created_at or 0.0)


def _continue(path: str, trainable: Any, options: dict[str, Any]) -> ResultGrid:
    from hyperlab.errors import TrialError
    from hyperlab.experiment import load_objective, resume

    store = _store(options)
    record = _find(store, path)
    stored = load_objective(record)
    if not isinstance(stored, TrialObjective):
        raise ValueError(f"Tuner.restore: experiment {record.id} was not made by a Tuner")
    if isinstance(trainable, Resourced):
        trainable = trainable.trainable
    objective = dataclasses.replace(stored, trainable=trainable)
    try:
        result = resume(record.id, objective=objective, **options)
    except TrialError as exc:
        if exc.result is None:
            raise
        result = exc.result
    metric, mode = record.options.first_metric, record.options.first_mode.value
    return ResultGrid(result, stored.template, metric, mode, store.experiment_folder(record))
