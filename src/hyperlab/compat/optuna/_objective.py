"""An Optuna objective run as a hyperlab trial function."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from hyperlab.compat.optuna._handle import StudyHandle
from hyperlab.compat.optuna.exceptions import TrialPruned
from hyperlab.compat.optuna.trial import (
    CONSTRAINTS_KEY,
    SYSTEM_ATTRS,
    USER_ATTRS,
    Trial,
    constraints_of,
)
from hyperlab.errors import HyperlabError, TrialStopped
from hyperlab.reporting.context import current
from hyperlab.trial import Trial as Record

__all__ = ["METRIC", "Objective", "ValuesRejected", "metric_names", "result", "stored_constraints"]

METRIC = "value"
"""The metric of a single-objective study's value."""


class Objective:
    """``func(trial) -> float`` (or a sequence, one value per objective) as a hyperlab trial:
    returns its metrics (``result``), ends EARLY_STOPPED on ``TrialPruned``, FAILED on an exception
    in ``catch``; any other exception fails the trial and ends ``optimize`` with it, once the
    running trials ended, as Optuna does.

    Args:
        study: The study it optimizes.
        func: The Optuna objective.
        catch: Exceptions that fail a trial and let the study go on.
    """

    def __init__(
        self,
        study: StudyHandle,
        func: Callable[[Trial], Any],
        catch: tuple[type[BaseException], ...],
    ) -> None:
        self.study = study
        self.func = func
        self.catch = catch
        self.fatal: BaseException | None = None
        self.trials: dict[int, Trial] = {}
        self.failures: dict[int, tuple[BaseException, Any]] = {}
        """What ended each running trial that did not complete (the exception, and the value
        the objective returned, if any), for the study's log line."""
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """What is stored with the experiment (so ``hyperlab resume`` runs it): the study and
        the objective, not this run's state."""
        return {"study": self.study, "func": self.func, "catch": self.catch}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["study"], state["func"], state["catch"])  # type: ignore[misc]

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        context = current()
        trial = Trial(self.study, context, self.study.next_enqueued(), self.study.grid_names)
        self.trials[context.number] = trial
        try:
            value = self.func(trial)
            try:
                return result(self.study, trial, value)
            except ValuesRejected as exc:  # not a value per objective: the trial fails
                self.failures[context.number] = (exc, value)
                raise
        except ValuesRejected:
            raise
        except TrialPruned as exc:
            self.failures[context.number] = (exc, None)
            if context.ask is not None:
                context.request("early_stop")
            raise TrialStopped(str(exc) or "pruned") from None
        except TrialStopped:
            raise
        except Exception as exc:
            self.failures[context.number] = (exc, None)
            if not isinstance(exc, self.catch):  # Optuna ends optimize with it, at the end
                with self._lock:
                    if self.fatal is None:
                        self.fatal = exc
                self.study.stop()
            raise


class ValuesRejected(HyperlabError):
    """What the objective returned (or ``tell`` was given) is not a value per objective:
    the trial fails with Optuna's message, as Optuna's does."""


def values_of(returned: Any, objectives: int) -> list[float]:
    """The objective's value(s) as finite floats, one per objective, or ``ValuesRejected``
    with Optuna's message (not a number, NaN, or another count than ``objectives``)."""
    values = list(returned) if isinstance(returned, Sequence) else [returned]
    errors = []
    numbers = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError):
            errors.append(f"The value {value!r} could not be cast to float")
            continue
        if math.isnan(number):
            errors.append(f"The value {value} is not acceptable")
        numbers.append(number)
    if errors:
        raise ValuesRejected("; ".join(errors))
    if len(numbers) != objectives:
        raise ValuesRejected(
            f"The number of the values {len(numbers)} did not match the number of the "
            f"objectives {objectives}"
        )
    return numbers


def result(study: StudyHandle, trial: Trial, returned: Any) -> dict[str, Any]:
    """A completed trial's final metrics: its value (``value``, or ``values_0``,
    ``values_1``... with several objectives), its user attributes and its system
    attributes (its constraints) when it has any. The sampler's ``constraints_func``, if
    any, judges the trial here, as Optuna's sampler does when a trial completes.

    Raises:
        ValuesRejected: ``returned`` is not one number per objective.
        ValueError: the ``constraints_func`` returned NaN, as Optuna.
    """
    values = values_of(returned, len(study.directions))
    metrics: dict[str, Any] = (
        {METRIC: values[0]}
        if len(values) == 1
        else {name: v for name, v in zip(metric_names(len(values)), values, strict=True)}
    )
    system = trial.system_attrs
    judge = study.sampler.constraints_func
    if judge is not None:
        found = judge(trial.frozen())
        constraints = [float(c) for c in found]
        if any(math.isnan(c) for c in constraints):
            raise ValueError("Constraint values cannot be NaN.")
        system[CONSTRAINTS_KEY] = constraints
    if trial.user_attrs:
        metrics[USER_ATTRS] = trial.user_attrs
    if system:
        metrics[SYSTEM_ATTRS] = system
    return metrics


def metric_names(objectives: int) -> tuple[str, ...]:
    """The metrics of a study's objectives: ``("value",)`` for one, ``("values_0",
    "values_1", ...)`` (Optuna's names in ``trials_dataframe``) for several."""
    if objectives == 1:
        return (METRIC,)
    return tuple(f"values_{i}" for i in range(objectives))


def stored_constraints(record: Record) -> list[float]:
    """The constraints of a finished hyperlab trial of a study, from the system attributes
    it stored: the experiment's constraints function, so that hyperlab's tuners,
    ``Result.best_trials`` and the dashboard see them. A trial without any is feasible, as in
    Optuna: ``[]`` (hyperlab then stores no constraints for it)."""
    system = record.metrics.get(SYSTEM_ATTRS)
    return list(constraints_of(system).values()) if isinstance(system, dict) else []
