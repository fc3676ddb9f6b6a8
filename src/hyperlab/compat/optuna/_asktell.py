"""Optuna's ask-and-tell interface on a hyperlab experiment.

The study's experiment runs in the background on the ``threads`` executor, with as many
trial slots as the user holds asked trials: ``ask()`` opens one slot, the driver starts a
trial in it, and the trial's function hands its context to the user and waits; ``suggest_*``
and ``report`` on it go to the driver as in any trial; ``tell()`` gives the function its
outcome, it ends, and the slot closes. The driver stays the only one that talks to the tuner,
the pruner and the store.

While the session runs, the study's trials are served from memory (a ``TrialView``, as during
``optimize``), kept in step by the driver's hooks: ``tell`` returns the trial as the view has
it once the driver recorded it, without reading the store back.
"""

from __future__ import annotations

import copy
import queue
import threading
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hyperlab.compat.optuna._handle import StudyHandle
from hyperlab.compat.optuna._hooks import TrialView, ended_specs
from hyperlab.compat.optuna._objective import ValuesRejected, result, values_of
from hyperlab.compat.optuna.trial import FrozenTrial, Trial, TrialState
from hyperlab.errors import HyperlabError, TrialStopped
from hyperlab.experiment import Callback
from hyperlab.reporting.context import TrialContext, current

if TYPE_CHECKING:
    from hyperlab.experiment import Experiment
    from hyperlab.trial import Report
    from hyperlab.trial import Trial as Record

__all__ = ["AskTell", "check_told"]

WAKE = 0.1
"""Seconds between two looks at a waiting trial's stop flag."""
TOLD_WAIT = 60.0
"""Seconds ``tell`` waits for the driver to record the trial's end."""


class AskTell(Callback):
    """One ask-and-tell session of a study (see the module's docstring).

    Args:
        study: The study.
        trials: Its trials as stored when the session starts.
        maximize: Whether it maximizes (None with several objectives), for its best trial.
    """

    def __init__(
        self, study: StudyHandle, trials: Iterable[FrozenTrial], maximize: bool | None
    ) -> None:
        self.study = study
        self.experiment: Experiment | None = None
        self.view = TrialView(trials, maximize, self._live)
        self._started: queue.Queue[TrialContext] = queue.Queue()
        self._outcomes: dict[int, queue.Queue[tuple[TrialState, Any]]] = {}
        self._asked: dict[int, Trial] = {}  # the live trials, by number, until they ended
        self._recorded: dict[int, threading.Event] = {}
        self._ended: dict[int, FrozenTrial] = {}  # told trials the driver recorded, until read
        self._lock = threading.Lock()

    # ---- the user's side -------------------------------------------------------------------

    def ask(self) -> Trial:
        """A new trial, running once the driver started it."""
        executor = self._executor()
        with self._lock:
            executor.concurrency += 1
        while True:
            try:
                context = self._started.get(timeout=WAKE)
                break
            except queue.Empty:
                self._check_running()
        trial = Trial(self.study, context, self.study.next_enqueued(), self.study.grid_names)
        with self._lock:
            self._asked[trial.number] = trial
        return trial

    def tell(self, trial: Trial | int, state: TrialState, values: Any) -> FrozenTrial:
        """End ``trial`` with ``state`` (and ``values`` when COMPLETE); returns it (a copy)
        once the driver recorded it."""
        number = trial if isinstance(trial, int) else trial.number
        with self._lock:
            outcome = self._outcomes.pop(number, None)
            recorded = self._recorded.setdefault(number, threading.Event())
            if outcome is not None:  # its slot closes before it ends: none opens meanwhile
                self._executor().concurrency -= 1
        if outcome is None:
            raise ValueError(f"trial {number} is not an asked trial waiting for tell()")
        outcome.put((state, values))
        if not recorded.wait(TOLD_WAIT):
            raise HyperlabError(f"trial {number}: the driver did not record its end in time")
        with self._lock:
            frozen = self._ended.pop(number)
        return copy.deepcopy(frozen)

    def _live(self, number: int) -> Trial | None:
        with self._lock:
            return self._asked.get(number)

    def _check_running(self) -> None:
        """Raise why the study's experiment ended, if it did (no trial would ever come)."""
        experiment = self.experiment
        assert experiment is not None
        if experiment.running:
            return
        failure = None
        try:
            experiment.wait()  # raises what ended it, if something did
        except Exception as exc:
            failure = exc
        raise HyperlabError(
            f"the study's experiment {experiment.id} ended ({experiment.status.value}); "
            "no trial can be asked"
        ) from failure

    def _executor(self) -> Any:
        assert self.experiment is not None
        return self.experiment.executor

    # ---- the trial's side ------------------------------------------------------------------

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        """The trial function: hand the context to ``ask``, wait for ``tell``."""
        context = current()
        box: queue.Queue[tuple[TrialState, Any]] = queue.Queue(maxsize=1)
        with self._lock:
            self._outcomes[context.number] = box
            self._recorded.setdefault(context.number, threading.Event())
        self._started.put(context)
        while True:
            if context.stop_requested:
                raise TrialStopped(f"trial {context.number}: the study's session ended")
            try:
                state, values = box.get(timeout=WAKE)
                break
            except queue.Empty:
                continue
        with self._lock:
            trial = self._asked.get(context.number)
        if state is TrialState.PRUNED:
            if context.ask is not None:
                context.request("early_stop")
            raise TrialStopped("pruned")
        if state is TrialState.FAIL or trial is None:
            raise HyperlabError("told FAIL")
        return result(self.study, trial, values)

    # ---- the driver's side -----------------------------------------------------------------

    def on_trial_start(self, trial: Record) -> None:
        self.view.started(trial)

    def on_report(self, trial: Record, report: Report) -> None:
        self.view.reported(trial, report)

    def on_trial_end(self, trial: Record) -> None:
        assert self.experiment is not None
        with self._lock:
            live = self._asked.pop(trial.number, None)
            event = self._recorded.pop(trial.number, None)
        try:
            frozen = self.view.ended(trial, ended_specs(trial, live, self.study.grid_names))
            if event is not None:
                with self._lock:
                    self._ended[trial.number] = frozen
            self.experiment.store.flush()  # other readers (load_study) see it on return
        finally:
            if event is not None:
                event.set()


def check_told(
    values: float | Sequence[float] | None, state: TrialState | None, objectives: int
) -> tuple[TrialState, list[float] | None]:
    """The state and values ``tell(values, state)`` ends a trial with, as Optuna's: values
    without a state that are not one number per objective (or no values) make it FAIL, with
    a ``UserWarning`` saying why.

    Raises:
        ValueError: a state with values it cannot have (or without those it needs), or
            COMPLETE values that are not one number per objective (Optuna's messages).
    """
    told = None if values is None else list(values) if isinstance(values, Sequence) else [values]
    if state is TrialState.COMPLETE and told is None:
        raise ValueError(
            "No values were told. Values are required when state is TrialState.COMPLETE."
        )
    if state in (TrialState.PRUNED, TrialState.FAIL) and told is not None:
        raise ValueError(
            "Values were told. Values cannot be specified when state is "
            "TrialState.PRUNED or TrialState.FAIL."
        )
    if state not in (None, TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL):
        raise ValueError(f"Cannot tell with state TrialState.{TrialState(state).name}.")
    if state is not None and state is not TrialState.COMPLETE:
        return state, None
    if told is None:
        warnings.warn("The value None could not be cast to float.", UserWarning, stacklevel=3)
        return TrialState.FAIL, None
    try:
        return TrialState.COMPLETE, values_of(told, objectives)
    except ValuesRejected as exc:
        if state is TrialState.COMPLETE:
            raise ValueError(str(exc)) from None
        warnings.warn(str(exc), UserWarning, stacklevel=3)
        return TrialState.FAIL, None
