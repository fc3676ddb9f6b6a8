"""The records of ``Result.replay`` (``hyperlab replay``): what an assessor would have done to
each trial of an experiment, and in all (``hyperlab.experiment._whatif`` runs the replay)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hyperlab.trial import Mode, TrialStatus

__all__ = ["PAUSED", "RAN", "STOPPED", "UNFINISHED", "AssessorReplay", "ReplayedTrial"]

RAN, STOPPED, PAUSED, UNFINISHED = "ran", "stopped", "paused", "unfinished"
"""A trial's outcome: run to its stored end, stopped (or paused for good), still paused (the
experiment has not ended), or not ended in the store either."""


@dataclass(frozen=True)
class ReplayedTrial:
    """One trial as the replayed assessor would have left it.

    Attributes:
        number: The trial's number.
        status: Its status in the store.
        value: Its stored final value (None unless it has one).
        outcome: ``"ran"`` (to its stored end), ``"stopped"`` (a STOP, or a pause never
            resumed), ``"paused"`` (still paused: the experiment has not ended) or
            ``"unfinished"`` (it has not ended in the store either).
        stopped_at: The step of the report it was stopped (or last paused) at; None when it
            ran on.
        reports: How many reports its stored curve has; ``kept``: how many it would have sent.
        resource: The resource at its last stored report (``step + 1``, or the assessor's
            ``resource_attr``); ``kept_resource``: at its last report kept.
        pauses: How many times it was paused; resumes: how many times it was resumed (a
            stopped trial with fewer resumes than pauses was stopped at its last pause).
        last_value: The judged value at its last report kept (what a stopped trial had reached).
    """

    number: int
    status: TrialStatus
    value: float | None
    outcome: str
    stopped_at: int | None
    reports: int
    kept: int
    resource: float
    kept_resource: float
    pauses: int = 0
    resumes: int = 0
    last_value: float | None = None

    @property
    def stopped(self) -> bool:
        """True when the assessor would have ended it before its stored end."""
        return self.outcome == STOPPED

    def as_dict(self) -> dict[str, Any]:
        """The trial as JSON-ready values."""
        return {
            "number": self.number,
            "status": self.status.value,
            "value": self.value,
            "outcome": self.outcome,
            "stopped_at_step": self.stopped_at,
            "reports": self.reports,
            "kept_reports": self.kept,
            "resource": self.resource,
            "kept_resource": self.kept_resource,
            "pauses": self.pauses,
            "resumes": self.resumes,
            "last_value": self.last_value,
        }


@dataclass(frozen=True)
class AssessorReplay:
    """What an assessor would have done on an experiment's stored learning curves.

    Attributes:
        experiment_id: The experiment replayed.
        assessor: The assessor, as its ``repr`` shows it (its arguments).
        order: ``"time"`` or ``"sequential"`` (see ``hyperlab.experiment._whatif``).
        modes: Each objective's direction; metrics: each objective's name.
        trials: Every trial that started, in number order.
        best_without: The best trial without the assessor (its number), or with several
            objectives the Pareto front's; empty when no trial succeeded.
        best_with: The same among the trials the assessor lets run to their end.
        notes: What the replay could not see or do (curves cut short in the store, trials
            that never reported, branches it cannot run).
    """

    experiment_id: str
    assessor: str
    order: str
    modes: tuple[Mode, ...]
    metrics: tuple[str | None, ...]
    trials: tuple[ReplayedTrial, ...]
    best_without: tuple[int, ...]
    best_with: tuple[int, ...]
    notes: tuple[str, ...] = ()

    @property
    def stopped(self) -> list[ReplayedTrial]:
        """The trials it would have stopped, in number order."""
        return [t for t in self.trials if t.stopped]

    @property
    def resource(self) -> float:
        """Resource (epochs) the stored curves used in all."""
        return sum(t.resource for t in self.trials)

    @property
    def kept_resource(self) -> float:
        """Resource (epochs) the trials would have used with the assessor."""
        return sum(t.kept_resource for t in self.trials)

    @property
    def saved(self) -> float:
        """Resource (epochs) saved."""
        return self.resource - self.kept_resource

    @property
    def saved_percent(self) -> float:
        """``saved`` as a percentage of ``resource`` (0 when nothing was used)."""
        return 100.0 * self.saved / self.resource if self.resource > 0 else 0.0

    @property
    def best_survived(self) -> bool:
        """Whether the best trial (every trial of the Pareto front) would have run to its end."""
        return set(self.best_without) <= set(self.best_with)

    @property
    def best_value_without(self) -> float | None:
        """The best value without the assessor (one objective), or None."""
        return self._value(self.best_without)

    @property
    def best_value_with(self) -> float | None:
        """The best value with the assessor (one objective), or None."""
        return self._value(self.best_with)

    def _value(self, numbers: tuple[int, ...]) -> float | None:
        if len(self.modes) > 1 or not numbers:
            return None
        return self.trial(numbers[0]).value

    def trial(self, number: int) -> ReplayedTrial:
        """Trial ``number``'s replay (KeyError when it did not start)."""
        for t in self.trials:
            if t.number == number:
                return t
        raise KeyError(number)

    def as_dict(self) -> dict[str, Any]:
        """The replay as JSON-ready values (what ``hyperlab replay --json`` prints)."""
        return {
            "experiment": self.experiment_id,
            "assessor": self.assessor,
            "order": self.order,
            "metric": list(self.metrics),
            "mode": [m.value for m in self.modes],
            "stopped": [t.number for t in self.stopped],
            "resource": self.resource,
            "kept_resource": self.kept_resource,
            "saved": self.saved,
            "saved_percent": round(self.saved_percent, 2),
            "reports": sum(t.reports for t in self.trials),
            "kept_reports": sum(t.kept for t in self.trials),
            "best": {
                "without": list(self.best_without),
                "with": list(self.best_with),
                "value_without": self.best_value_without,
                "value_with": self.best_value_with,
                "survived": self.best_survived,
            },
            "notes": list(self.notes),
            "trials": [t.as_dict() for t in self.trials],
        }
