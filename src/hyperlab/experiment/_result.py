"""``Result``: everything about one experiment, read from the store."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hyperlab.experiment._failures import error_kind
from hyperlab.trial import ExperimentStatus, Mode, Trial, TrialStatus

if TYPE_CHECKING:
    import pandas

    from hyperlab.store import Store

__all__ = ["Result"]


@dataclass(frozen=True)
class Result:
    """An experiment's trials and its best one, read from the store.

    The trials are read when first used (an experiment may hold a great many), the best trial
    by one query unless the trials are already loaded; both reflect the store at that moment.

    Attributes:
        experiment_id: The experiment's id.
        status: Its status when the result was read.
        mode: Which way values are better.
        metric: The objective's metric name, if one was given.
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
            mode=record.options.mode,
            metric=record.options.metric,
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
        """The succeeded trial with the best value (the earliest among equals), or None."""
        if "trials" not in self.__dict__ and self.store is not None:
            return self.store.get_best_trial(self.experiment_id, self.mode)
        return self.mode.best(self.trials)

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
        if self.best_trial is not None:
            line += f", best {self.best_value:.6g} (trial {self.best_trial.number})"
        return line

    @property
    def best_params(self) -> dict[str, Any] | None:
        """The best trial's parameters."""
        best = self.best_trial
        return None if best is None else best.params

    @property
    def best_value(self) -> float | None:
        """The best trial's objective value."""
        best = self.best_trial
        return None if best is None else best.value

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per trial: number, status, value, attempt, duration, ``params.*``, ``metrics.*``.

        Nested parameters are flattened with ``/`` (``params.layer/kernel``). Needs pandas
        (``pip install 'hyperlab[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Result.to_dataframe() needs pandas: pip install 'hyperlab[pandas]'"
            ) from None
        rows = [trial.as_row() for trial in self.trials]
        return pd.DataFrame(rows)
