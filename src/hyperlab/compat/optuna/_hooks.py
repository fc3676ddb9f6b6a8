"""What an ``optimize`` keeps of its study's trials while it runs, fed by the driver's hooks.

The driver buffers its store writes and commits them now and then, so a read of the store
in the middle of ``optimize`` misses the trials that ended since the last commit. Optuna's
callbacks (and objectives) read ``study.trials`` and expect every trial that ended, the one
just ended included. ``TrialView`` is that list, in memory: read from the store once when
``optimize`` starts, then updated by the driver's ``on_trial_start``, ``on_report`` and
``on_trial_end`` (``OptimizeHooks``), so a read costs a copy of the list, as Optuna's
``study.trials`` does, and no database query. ``OptimizeHooks`` also calls the user's
callbacks, once the view has the trial.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import threading
from collections.abc import Callable, Container, Iterable
from typing import Any

from hyperlab.compat.optuna._objective import Objective
from hyperlab.compat.optuna.distributions import to_spec
from hyperlab.compat.optuna.trial import FrozenTrial, TrialState
from hyperlab.experiment import Callback
from hyperlab.trial import Report
from hyperlab.trial import Trial as Record

__all__ = ["OptimizeHooks", "TrialView"]


class TrialView:
    """The study's trials during one ``optimize``: those that ended before it and since,
    and the running ones, as ``FrozenTrial`` objects (see the module's docstring).

    Args:
        trials: The study's trials as stored when ``optimize`` starts.
        live: The live ``Trial`` of a running trial's number (None once it ended).
    """

    def __init__(self, trials: Iterable[FrozenTrial], live: Callable[[int], Any]) -> None:
        self.live = live
        self._frozen: dict[int, FrozenTrial] = {t.number: t for t in trials}
        self._running: dict[int, Record] = {}
        self._reports: dict[int, list[Report]] = {}
        self._lock = threading.Lock()

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
            frozen = FrozenTrial.from_record(
                dataclasses.replace(record, reports=tuple(reports)), specs
            )
            self._frozen[frozen.number] = frozen
        return frozen

    def trials(
        self, states: Container[TrialState] | None = None, deepcopy: bool = True
    ) -> list[FrozenTrial]:
        """The trials in number order (those in ``states`` only, when given); a running one
        with the parameters its live ``Trial`` suggested so far.
        Copies, unless ``deepcopy`` is False (as Optuna's ``get_trials``)."""
        with self._lock:
            found = dict(self._frozen)
            running = [
                (record, list(self._reports.get(record.number, ())))
                for record in self._running.values()
            ]
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


class OptimizeHooks(Callback):
    """The driver's hooks of one ``optimize``: keep ``view`` up to date, collect garbage
    (``gc_after_trial``) and call the user's callbacks with the study and the trial.

    Args:
        study: The study, as the callbacks get it.
        objective: The running objective (its live trials).
        view: The study's trials.
        callbacks: Optuna's callbacks, ``callback(study, frozen_trial)``.
        collect: Run ``gc.collect()`` after each trial.
    """

    def __init__(
        self,
        study: Any,
        objective: Objective,
        view: TrialView,
        callbacks: list[Callable[[Any, FrozenTrial], None]],
        collect: bool,
    ) -> None:
        self.study = study
        self.objective = objective
        self.view = view
        self.callbacks = callbacks
        self.collect = collect

    def on_trial_start(self, trial: Record) -> None:
        self.view.started(trial)

    def on_report(self, trial: Record, report: Report) -> None:
        self.view.reported(trial, report)

    def on_trial_end(self, trial: Record) -> None:
        if self.collect:
            gc.collect()
        live = self.objective.trials.pop(trial.number, None)
        specs = {} if live is None else {n: to_spec(d) for n, d in live.distributions.items()}
        specs.update(
            {
                n: {"_type": "choice", "_value": [v]}
                for n, v in trial.params.items()
                if n not in specs and n in self.study.grid_names
            }
        )
        frozen = self.view.ended(trial, specs)
        for callback in self.callbacks:
            callback(self.study, frozen)
