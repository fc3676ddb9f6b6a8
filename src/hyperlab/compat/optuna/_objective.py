"""An Optuna objective run as a hyperlab trial function."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from hyperlab.compat.optuna._handle import StudyHandle
from hyperlab.compat.optuna.exceptions import TrialPruned
from hyperlab.compat.optuna.trial import USER_ATTRS, Trial
from hyperlab.errors import HyperlabError, TrialStopped
from hyperlab.reporting.context import current

__all__ = ["Objective"]


class Objective:
    """``func(trial) -> float`` as a hyperlab trial: returns ``{"value": v}`` (plus the
    trial's user attributes), ends EARLY_STOPPED on ``TrialPruned``, FAILED on an exception
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
        try:
            return result(value, trial.user_attrs)
        except HyperlabError as exc:  # not a number: the trial fails, as in Optuna
            self.failures[context.number] = (exc, value)
            raise


def result(value: Any, user_attrs: dict[str, Any]) -> dict[str, Any]:
    """A trial's final metrics: its value, and its user attributes when it set any."""
    return {"value": number_of(value), **({USER_ATTRS: user_attrs} if user_attrs else {})}


def number_of(value: Any) -> float:
    """The objective's value as a finite float, or the trial fails saying why (as Optuna
    marks it FAIL)."""
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise HyperlabError(
                f"the objective returned {len(value)} values; a single-objective study takes one"
            )
        value = value[0]
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise HyperlabError(
            f"the objective returned {value!r}, which is not a number (Optuna fails the "
            "trial likewise)"
        ) from None
    if math.isnan(number):
        raise HyperlabError("the objective returned nan (Optuna fails the trial likewise)")
    return number
