"""What an ``optimize`` keeps of its study's trials while it runs, fed by the driver's hooks.

The driver buffers its store writes and commits them now and then, so a read of the store
in the middle of ``optimize`` misses the trials that ended since the last commit. Optuna's
callbacks (and objectives) read ``study.trials`` and expect every trial that ended, the one
just ended included. ``TrialView`` is that list, in memory: read from the store once when
``optimize`` starts, then updated by the driver's ``on_trial_start``, ``on_report`` and
``on_trial_end`` (``OptimizeHooks``), so a read costs a copy of the list, as Optuna's
``study.trials`` does, and no database query. ``OptimizeHooks`` also logs Optuna's line per
finished trial and calls the user's callbacks, in Optuna's order (the line, then the
callbacks), after the view has the trial.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import gc
import heapq
import logging
import threading
from collections.abc import Callable, Container, Iterable
from typing import Any

from hyperlab.compat.optuna._objective import Objective, ValuesRejected
from hyperlab.compat.optuna.distributions import to_spec
from hyperlab.compat.optuna.logging import trial_logger
from hyperlab.compat.optuna.trial import FrozenTrial, Trial, TrialState
from hyperlab.experiment import Callback
from hyperlab.trial import Report
from hyperlab.trial import Trial as Record

__all__ = ["OptimizeHooks", "TrialView", "WorkerHooks", "ended_specs"]


class TrialView:
    """The study's trials during one ``optimize``: those that ended before it and since,
    and the running ones, as ``FrozenTrial`` objects (see the module's docstring).

    Args:
        trials: The study's trials as stored when ``optimize`` starts.
        maximize: Whether the study maximizes (for its best trial); None for several
            objectives (no best trial).
        live: The live ``Trial`` of a running trial's number (None once it ended).
    """

    def __init__(
        self, trials: Iterable[FrozenTrial], maximize: bool | None, live: Callable[[int], Any]
    ) -> None:
        self.maximize = maximize
        self.live = live
        self._frozen: dict[int, FrozenTrial] = {}
        self._order: list[FrozenTrial] = []  # the values of _frozen, in number order
        self._by_state: dict[TrialState, list[FrozenTrial]] = {s: [] for s in TrialState}
        self._running: dict[int, Record] = {}
        self._reports: dict[int, list[Report]] = {}
        self._best: FrozenTrial | None = None
        self._lock = threading.Lock()
        for trial in trials:
            self._keep(trial)

    def started(self, record: Record) -> None:
        """Trial ``record`` started (or started again)."""
        with self._lock:
            self._running[record.number] = record
            self._reports.setdefault(record.number, [])

    def reported(self, record: Record, report: Report) -> None:
        """Running trial ``record`` reported ``report``."""
        with self._lock:
            self._reports.setdefault(record.number, []).append(report)

    def ended(self, record: Record, specs: dict[str, Any]) -> FrozenTrial:
        """Trial ``record`` ended; ``specs`` are its parameters' distributions. Returns the
        frozen trial, as ``study.trials`` lists it from now on."""
        with self._lock:
            self._running.pop(record.number, None)
            reports = self._reports.pop(record.number, [])
            frozen = FrozenTrial.from_record(record, specs, reports)
            self._keep(frozen)
        return frozen

    def _keep(self, trial: FrozenTrial) -> None:
        number = trial.number
        order = self._order
        before = self._frozen.get(number)
        if before is not None:  # ended again (it was waiting when optimize began)
            order[bisect.bisect_left(order, number, key=_number)] = trial
            same = self._by_state[before.state]
            del same[bisect.bisect_left(same, number, key=_number)]
        else:
            _insert(order, trial)
        _insert(self._by_state[trial.state], trial)
        self._frozen[number] = trial
        best = self._best
        if best is not None and best.number == number:  # the best one changed: look again
            self._best = None
            for kept in order:
                self._rank(kept)
        else:
            self._rank(trial)

    def _rank(self, trial: FrozenTrial) -> None:
        """Make ``trial`` the best one if it is (a lower number wins among equals)."""
        if self.maximize is None or trial.state is not TrialState.COMPLETE:
            return
        value = trial.value
        if value is None or not trial.feasible:
            return
        best = self._best
        if (
            best is None
            or _better(value, best.value, self.maximize)
            or (value == best.value and trial.number < best.number)
        ):
            self._best = trial

    @property
    def running(self) -> bool:
        """Whether a trial it saw start has not ended."""
        with self._lock:
            return bool(self._running)

    @property
    def best(self) -> FrozenTrial | None:
        """The feasible COMPLETE trial with the best value (the lowest number among equals),
        if any (None with several objectives)."""
        return self._best

    def trials(
        self, states: Container[TrialState] | None = None, deepcopy: bool = True
    ) -> list[FrozenTrial]:
        """The trials in number order (those in ``states`` only, when given); a running one
        with the parameters its live ``Trial`` suggested so far.
        Copies, unless ``deepcopy`` is False (as Optuna's ``get_trials``)."""
        with self._lock:
            running = [
                (record, list(self._reports.get(record.number, ())))
                for record in self._running.values()
            ]
            if not running:  # between two in-process trials: those ended, in order already
                listed = self._ended(states)
                return copy.deepcopy(listed) if deepcopy else listed
            ended = list(self._order)
        found = {trial.number: trial for trial in ended}
        for record, reports in running:
            trial = self.live(record.number)
            specs = {} if trial is None else {n: to_spec(d) for n, d in trial.distributions.items()}
            found[record.number] = FrozenTrial.from_record(
                dataclasses.replace(
                    record,
                    params={**record.params, **({} if trial is None else trial.params)},
                    reports=tuple(reports),
                ),
                specs,
            )
        listed = [found[n] for n in sorted(found) if states is None or found[n].state in states]
        return copy.deepcopy(listed) if deepcopy else listed

    def _ended(self, states: Container[TrialState] | None) -> list[FrozenTrial]:
        """The trials kept in ``states`` (all when None), in number order: a new list."""
        if states is None:
            return list(self._order)
        parts = [self._by_state[state] for state in TrialState if state in states]
        if len(parts) == 1:
            return list(parts[0])
        return list(heapq.merge(*parts, key=_number))


def _number(trial: FrozenTrial) -> int:
    return trial.number


def _insert(trials: list[FrozenTrial], trial: FrozenTrial) -> None:
    """Put ``trial`` into ``trials``, kept in number order (mostly at the end, as trials end
    in order)."""
    if not trials or trials[-1].number < trial.number:
        trials.append(trial)
    else:
        bisect.insort(trials, trial, key=_number)


def _better(value: float, than: float | None, maximize: bool) -> bool:
    return than is None or (value > than if maximize else value < than)


class OptimizeHooks(Callback):
    """The driver's hooks of one ``optimize``: keep ``view`` up to date, log Optuna's line
    for each finished trial, collect garbage (``gc_after_trial``) and call the user's
    callbacks with the study and the trial.

    Args:
        study: The study, as the callbacks get it.
        objective: The running objective (its live trials and what failed them).
        view: The study's trials.
        callbacks: Optuna's callbacks, ``callback(study, frozen_trial)``.
        collect: Run ``gc.collect()`` after each trial.
        own_only: Log and call the callbacks only for the trials this process ran (a study
            other processes' workers run trials of: each logs and calls back its own, as
            Optuna's processes do).
    """

    def __init__(
        self,
        study: Any,
        objective: Objective,
        view: TrialView,
        callbacks: list[Callable[[Any, FrozenTrial], None]],
        collect: bool,
        own_only: bool = False,
    ) -> None:
        self.study = study
        self.objective = objective
        self.view = view
        self.callbacks = callbacks
        self.collect = collect
        self.own_only = own_only

    def on_trial_start(self, trial: Record) -> None:
        self.view.started(trial)

    def on_report(self, trial: Record, report: Report) -> None:
        self.view.reported(trial, report)

    def on_trial_end(self, trial: Record) -> None:
        if self.collect:
            gc.collect()
        live = self.objective.trials.pop(trial.number, None)
        failure = self.objective.failures.pop(trial.number, None)
        frozen = self.view.ended(trial, ended_specs(trial, live, self.study.grid_names))
        if live is None and self.own_only:
            return  # a worker ran it, in the process that logs it and calls back
        params = frozen.params if live is None else live.params
        log_trial(frozen, params, self.view.best, failure, trial.error)
        for callback in self.callbacks:
            callback(self.study, frozen)


class WorkerHooks:
    """What a process that joined a study as a worker does after each trial it ran, once
    the driver recorded its end: log Optuna's line, collect garbage, call its callbacks
    (``Worker``'s ``after_trial``).

    Args:
        study: The study, as the callbacks get it (it reads the store).
        objective: This process's objective (its live trials and what failed them).
        callbacks: Optuna's callbacks, ``callback(study, frozen_trial)``.
        collect: Run ``gc.collect()`` after each trial.
    """

    def __init__(
        self,
        study: Any,
        objective: Objective,
        callbacks: list[Callable[[Any, FrozenTrial], None]],
        collect: bool,
    ) -> None:
        self.study = study
        self.objective = objective
        self.callbacks = callbacks
        self.collect = collect

    def __call__(self, number: int) -> bool:
        """Trial ``number``, which ran here, ended: False while the store does not have it."""
        study = self.study
        record = study._store().get_trial(study._id, number)
        if not record.status.is_finished():
            return False
        if self.collect:
            gc.collect()
        live = self.objective.trials.pop(number, None)
        failure = self.objective.failures.pop(number, None)
        frozen = FrozenTrial.from_record(record, ended_specs(record, live, study.grid_names))
        params = frozen.params if live is None else live.params
        best = None
        maximize = study._maximize()  # None with several objectives: no best trial
        if (
            maximize is not None
            and frozen.state is TrialState.COMPLETE
            and trial_logger().isEnabledFor(logging.INFO)
        ):  # the line's "Best is trial N": one indexed query, not a read of every trial
            found = study._store().get_best_trial(study._id, "max" if maximize else "min")
            best = None if found is None else FrozenTrial.from_record(found, {})
        log_trial(frozen, params, best, failure, record.error)
        for callback in self.callbacks:
            callback(study, frozen)
        return True


def ended_specs(
    record: Record, live: Trial | None, grid_names: frozenset[str]
) -> dict[str, dict[str, Any]]:
    """The distributions of ended trial ``record``'s parameters, as its ``FrozenTrial`` in a
    view has them: those its live ``Trial`` suggested, and a grid's (one value each)."""
    specs = {} if live is None else {n: to_spec(d) for n, d in live.distributions.items()}
    specs.update(
        {
            n: {"_type": "choice", "_value": [v]}
            for n, v in record.params.items()
            if n not in specs and n in grid_names
        }
    )
    return specs


def log_trial(
    trial: FrozenTrial,
    params: dict[str, Any],
    best: FrozenTrial | None,
    failure: tuple[BaseException, Any] | None,
    error: str | None,
) -> None:
    """Log Optuna's line (or lines) for a finished trial: INFO for a complete or pruned
    one, WARNING for a failed one, with Optuna's words. ``failure`` is what the objective
    raised (or the exception its value raised) and the value it returned; ``error`` is why
    hyperlab says the trial failed, for a trial that failed otherwise (cancelled)."""
    logger = trial_logger()
    number = trial.number
    if trial.state is TrialState.COMPLETE:
        if logger.isEnabledFor(logging.INFO) and trial.values and len(trial.values) > 1:
            logger.info(
                f"Trial {number} finished with values: {trial.values} and parameters: {params}."
            )
        elif logger.isEnabledFor(logging.INFO):
            line = f"Trial {number} finished with value: {trial.value} and parameters: {params}."
            if best is not None:
                line += f" Best is trial {best.number} with value: {best.value}."
            logger.info(line)
    elif trial.state is TrialState.PRUNED:
        reason = "" if failure is None else str(failure[0])
        logger.info(f"Trial {number} pruned. {reason}")
    elif trial.state is TrialState.FAIL:
        exc, value = (None, None) if failure is None else failure
        if isinstance(exc, ValuesRejected):  # Optuna says why, without a traceback
            error, exc = str(exc), None
        logger.warning(
            f"Trial {number} failed with parameters: {params} because of the following "
            f"error: {error if exc is None else repr(exc)}.",
            exc_info=None if exc is None else (type(exc), exc, exc.__traceback__),
        )
        logger.warning(f"Trial {number} failed with value {value!r}.")
