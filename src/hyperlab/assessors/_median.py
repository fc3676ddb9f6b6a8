"""The median stopping rule (Google Vizier's; NNI's ``Medianstop``, like Optuna's
``MedianPruner``).

At each report from ``start_step`` on, a trial is stopped when its best value so far is strictly
worse than the median of the completed trials' running averages at the same resource.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from hyperlab.assessors.base import Assessor, Decision, Verdicts
from hyperlab.errors import ConfigError
from hyperlab.trial import Report, Trial, TrialStatus

__all__ = ["MedianAssessor"]


class MedianAssessor(Assessor):
    """Stops a trial whose best value so far is worse than the median of the completed
    trials' running averages at the same resource.

    On a report at resource ``r`` (``step + 1`` by default) with ``r >= start_step``, the
    *running average* at ``r`` of every other trial that succeeded and reported at ``r`` or
    beyond is the mean of its values reported at resources up to ``r``. When there is at least
    one, and the judged trial's best value over its reports so far is strictly worse than their
    median, the trial is stopped (EARLY_STOPPED). With an even count the median is the more
    lenient of the two middle values. This is NNI's ``Medianstop`` exactly (and Vizier's rule):
    only completed trials count, so nothing is stopped before a trial succeeded, and a trial
    reporting further than every completed one is not judged there.

    By default nothing is judged at the first report (``start_step=2``): a trial's first value
    says little about where it ends, and judging it stops slow starters that end best (see
    ``docs/early-stopping.md``). NNI's ``Medianstop`` judges from the first (``start_step=0``).

    Args:
        start_step: Judge only reports at resource ``>= start_step`` (with the default
            resource, from the ``start_step``-th report on, as NNI's ``start_step``).
        resource_attr: The reported metric that counts the resource; None for ``step + 1``.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's, passed by the
            framework (see ``Assessor``).

    Example:
        >>> hyperlab.run(train, space, metric="accuracy", mode="max",
        ...              assessor="median", assessor_args={"start_step": 3})
    """

    def __init__(
        self,
        *,
        start_step: int = 2,
        resource_attr: str | None = None,
        **kwargs: Any,
    ) -> None:
        if start_step < 0:
            raise ConfigError(
                f"MedianAssessor: `start_step >= 0` must hold, got start_step={start_step!r}"
            )
        super().__init__(resource_attr=resource_attr, **kwargs)
        self.start_step = start_step
        self._curves: dict[int, _Curve] = {}
        self._completed: set[int] = set()  # succeeded: their curves are the reference
        self.verdicts = Verdicts()

    def on_start(self, trial: Trial, now: float) -> None:
        self.verdicts.started(trial.number)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        number = trial.number
        known = self.verdicts.known(number, report.attempt)
        if known is not None:
            return known
        loss = self.loss(report)
        resource = self.resource(report)
        curve = self._curves.setdefault(number, _Curve())
        curve.add(resource, loss)
        if resource < self.start_step:
            return Decision.CONTINUE
        averages = []
        for n in self._completed:
            other = self._curves.get(n)
            if n != number and other is not None and other.reached(resource):
                mean = other.mean_until(resource)
                if mean is not None:
                    averages.append(mean)
        averages.sort()
        if not averages:
            return Decision.CONTINUE
        median = averages[len(averages) // 2]  # in loss terms: the more lenient middle value
        if curve.best_until(resource) > median:
            return self.verdicts.stop(number, report.attempt)
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        status = trial.status
        if status is TrialStatus.SUCCEEDED:
            self._completed.add(trial.number)
        self.verdicts.ended(trial)

    def __repr__(self) -> str:
        return f"MedianAssessor(start_step={self.start_step}, mode={self.mode.value!r})"


class _Curve:
    """One trial's losses by resource (increasing), with their running means and minima."""

    __slots__ = ("bests", "losses", "resources", "sums")

    def __init__(self) -> None:
        self.resources: list[float] = []
        self.losses: list[float] = []
        self.sums: list[float] = []
        self.bests: list[float] = []

    def add(self, resource: float, loss: float) -> None:
        """Record ``loss`` at ``resource`` (a re-run's report replaces the earlier one)."""
        resources = self.resources
        if not resources or resource > resources[-1]:
            resources.append(resource)
            self.losses.append(loss)
            self.sums.append(loss + (self.sums[-1] if self.sums else 0.0))
            self.bests.append(min(loss, self.bests[-1]) if self.bests else loss)
            return
        i = bisect_left(resources, resource)
        if resources[i] == resource:
            self.losses[i] = loss
        else:
            resources.insert(i, resource)
            self.losses.insert(i, loss)
        total, best = 0.0, float("inf")
        self.sums, self.bests = [], []
        for value in self.losses:
            total += value
            best = min(best, value)
            self.sums.append(total)
            self.bests.append(best)

    def reached(self, resource: float) -> bool:
        return bool(self.resources) and self.resources[-1] >= resource

    def mean_until(self, resource: float) -> float | None:
        """The mean loss over the reports at resources up to ``resource``; None if none."""
        i = bisect_right(self.resources, resource)
        return self.sums[i - 1] / i if i else None

    def best_until(self, resource: float) -> float:
        return self.bests[bisect_right(self.resources, resource) - 1]
