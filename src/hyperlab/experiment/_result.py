"""``Result``: everything about one experiment, read from the store."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hyperlab.experiment._failures import error_kind
from hyperlab.pareto import hypervolume, pareto_front
from hyperlab.trial import ExperimentStatus, Mode, Trial, TrialStatus

if TYPE_CHECKING:
    import pandas

    from hyperlab.assessors import Assessor
    from hyperlab.experiment._whatif import Order
    from hyperlab.experiment._whatif_records import AssessorReplay
    from hyperlab.store import Store

__all__ = ["Result"]


_LOOP_CALLS = frozenset(
    {"submit", "wait", "as_completed", "budget_available", "state_dict", "load_state_dict"}
)
"""``Experiment``'s strategy-loop calls, which a loaded ``Result`` cannot make."""


@dataclass(frozen=True)
class Result:
    """An experiment's trials and its best one, read from the store.

    The trials are read when first used (an experiment may hold a great many), the best trial
    by one query unless the trials are already loaded; both reflect the store at that moment.

    Attributes:
        experiment_id: The experiment's id.
        status: Its status when the result was read.
        mode: Which way values are better (the first objective's, with several).
        metric: The objective's metric name, if one was given (the first objective's, with
            several).
        modes: Each objective's direction, in order.
        metrics: Each objective's metric name, in order (``(None,)`` when none was given).
        error: Why the experiment ended in ERROR, if it did.
        driver_lost: It says RUNNING but no driver runs it any more (killed, or its machine
            lost); ``hyperlab.resume`` continues it.
    """

    experiment_id: str
    status: ExperimentStatus
    mode: Mode
    metric: str | None
    error: str | None = None
    driver_lost: bool = False
    store: Store | None = field(default=None, repr=False, compare=False)
    modes: tuple[Mode, ...] = ()
    metrics: tuple[str | None, ...] = ()

    def __getattr__(self, name: str) -> Any:
        """A strategy loop's call on a loaded experiment, which is read-only: say so."""
        if name in _LOOP_CALLS:
            raise AttributeError(
                f"{name}: this is a read-only view of experiment {self.experiment_id} "
                "(hyperlab.load reads the store and runs nothing); to drive it from a strategy "
                f"loop, continue it with hyperlab.Experiment.resume({self.experiment_id!r}, "
                "storage=...)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __post_init__(self) -> None:
        if not self.modes:
            object.__setattr__(self, "modes", (self.mode,))
        if not self.metrics:
            object.__setattr__(self, "metrics", (self.metric,))

    @property
    def multi_objective(self) -> bool:
        """True when the experiment has several objectives (``best_trials`` is its front)."""
        return len(self.modes) > 1

    @classmethod
    def read(cls, store: Store, experiment_id: str) -> Result:
        """The experiment as ``store`` holds it now.

        Raises:
            ExperimentNotFound: there is no such experiment.
        """
        record = store.get_experiment(experiment_id)
        return cls(
            experiment_id=record.id,
            status=record.status,
            mode=record.options.first_mode,
            metric=record.options.first_metric,
            modes=record.options.modes,
            metrics=record.options.metrics,
            error=record.error,
            driver_lost=record.driver_lost,
            store=store,
        )

    @functools.cached_property
    def trials(self) -> list[Trial]:
        """Every trial in number order, with params, status, value, metrics and reports."""
        return [] if self.store is None else self.store.get_trials(self.experiment_id)

    @functools.cached_property
    def best_trial(self) -> Trial | None:
        """The feasible succeeded trial with the best value (the earliest among equals), or
        None.

        Raises:
            ValueError: the experiment has several objectives: no one trial is best; see
                ``best_trials``.
        """
        self._single("best_trial")
        if "trials" not in self.__dict__ and self.store is not None:
            return self.store.get_best_trial(self.experiment_id, self.mode)
        return self.mode.best(self.trials)

    @functools.cached_property
    def best_trials(self) -> list[Trial]:
        """The Pareto front: the feasible succeeded trials no other such trial dominates, in
        number order (Optuna's ``study.best_trials``); with one objective, the best trial and
        those tied with it."""
        return pareto_front(self.trials, self.modes)

    def pareto_front(self) -> pandas.DataFrame:
        """``best_trials`` as a DataFrame: one row per trial (as ``to_dataframe``), with a
        column per objective named after its metric. Needs pandas."""
        frame = self._frame(self.best_trials)
        for index, name in enumerate(self.metrics):
            frame[name or "value"] = [t.objectives[index] for t in self.best_trials]  # type: ignore[index]
        return frame

    def hypervolume(self, reference_point: Sequence[float]) -> float:
        """The hypervolume the front dominates up to ``reference_point`` (one value per
        objective, in the objectives' own units and directions: a point worse than every
        trial of interest); 0 without feasible succeeded trials.

        Raises:
            ConfigError: ``reference_point`` has not one finite value per objective.
        """
        front = self.best_trials
        points = [t.objectives for t in front if t.objectives is not None]
        return hypervolume(points, reference_point, self.modes)

    def _single(self, name: str) -> None:
        if self.multi_objective:
            raise ValueError(
                f"{name}: the experiment has {len(self.modes)} objectives "
                f"({', '.join(map(str, self.metrics))}), so no one trial is best; use "
                "result.best_trials (the Pareto front) or result.pareto_front()"
            )

    def replay(
        self,
        assessor: str | type[Assessor] | Assessor,
        assessor_args: dict[str, Any] | None = None,
        *,
        order: Order = "time",
    ) -> AssessorReplay:
        """What ``assessor`` would have done on this experiment's stored learning curves
        (each trial's reports), run in simulated time: which trials it would have stopped and
        at which step, the epochs saved, and whether the best trial would have survived. The
        same as ``hyperlab replay``; the experiment may still run (its reports so far are used).

        Args:
            assessor: A registered name (``"asha"``), an ``Assessor`` subclass, or an instance
                (copied, so it stays fresh).
            assessor_args: The assessor's arguments, as ``run(assessor_args=...)`` takes them
                (``{"objective": name}`` for one objective of several).
            order: ``"time"``: the reports in the order of their stored times (trials side by
                side, as they ran); ``"sequential"``: one trial at a time in number order, as
                with ``concurrency=1``.

        Returns:
            An ``AssessorReplay``: ``stopped``, ``saved``, ``saved_percent``, ``best_with``,
            ``best_survived``, ``trials``... (``as_dict()`` for JSON).

        Raises:
            ConfigError: an unknown assessor or ``order``, arguments it refuses, or an
                experiment without intermediate reports.

        Example:
            >>> replay = hyperlab.load("k3x9p2ab").replay(
            ...     "asha", {"min_resource": 1, "max_resource": 27, "reduction_factor": 3})
            >>> replay.saved_percent, replay.best_survived
        """
        from hyperlab.experiment._whatif import replay_assessor

        if self.store is None:
            raise ValueError("replay: this Result was not read from a store")
        record = self.store.get_experiment(self.experiment_id)
        return replay_assessor(record, self.trials, assessor, assessor_args, order=order)

    @property
    def failed_trials(self) -> list[Trial]:
        """The trials that ended FAILED, in number order."""
        return [t for t in self.trials if t.status is TrialStatus.FAILED]

    def failures(self) -> dict[str, int]:
        """How many trials failed each way (exception class, or message), most common first."""
        counts = Counter(error_kind(t.error) for t in self.failed_trials)
        return dict(counts.most_common())

    def summary(self) -> str:
        """One line: status, trials, failures (with the most common error) and the best value."""
        trials = self.trials
        status = f"{self.status} (driver lost)" if self.driver_lost else str(self.status)
        line = f"experiment {self.experiment_id}: {status}, {len(trials)} trials"
        failures = self.failures()
        if failures:
            kind, count = next(iter(failures.items()))
            line += f", {sum(failures.values())} failed (most often {kind}: {count})"
        if self.multi_objective:
            line += f", {len(self.best_trials)} on the Pareto front"
        elif self.best_trial is not None:
            line += f", best {self.best_value:.6g} (trial {self.best_trial.number})"
        return line

    @property
    def best_params(self) -> dict[str, Any] | None:
        """The best trial's parameters (``ValueError`` with several objectives: see
        ``best_trials``)."""
        best = self.best_trial
        return None if best is None else best.params

    @property
    def best_value(self) -> float | None:
        """The best trial's objective value (``ValueError`` with several objectives: see
        ``best_trials``)."""
        best = self.best_trial
        return None if best is None else best.value

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per trial: number, status, value, attempt, duration, ``params.*``, ``metrics.*``.

        Nested parameters are flattened with ``/`` (``params.layer/kernel``). Needs pandas
        (``pip install 'hyperlab[pandas]'``).
        """
        return self._frame(self.trials)

    @staticmethod
    def _frame(trials: list[Trial]) -> pandas.DataFrame:
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Result needs pandas for tables: pip install 'hyperlab[pandas]'"
            ) from None
        return pd.DataFrame([trial.as_row() for trial in trials])
