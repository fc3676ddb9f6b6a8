"""NNI's ``SequentialExecutionEngine`` (``nni.nas.execution.sequential``) on
``hyperlab.Experiment``'s strategy loop: each submitted model is one trial, run in this
process, one at a time, stored, shown on the dashboard and counted by hyperlab's budget.

```python
engine = SequentialExecutionEngine(max_model_count=20, space=SPACE, storage="sqlite:///nas.db")
while engine.budget_available():
    engine.submit_models(freeze(random_sample(SPACE)))   # returns once the model ended
best = max(engine.list_models(ModelStatus.Trained), key=lambda m: m.metrics.final)
engine.shutdown()
```

What maps to what:

- A model is a trial. Its ``sample`` (the choices that made it) is the trial's params, checked
  against ``space``; the live object stays in this process under its trial number, and the
  trial's objective calls its ``execute()`` (executor ``inprocess``, concurrency 1).
- Inside ``execute()``, ``nni.report_intermediate_result`` and ``nni.report_final_result`` (the
  ``nni`` shim) are the trial's reports and final result.
- Once the trial ended (its end committed to the store), ``submit_models`` dispatches, in this
  thread, an ``IntermediateMetricEvent`` per report, a ``FinalMetricEvent`` if the model
  reported a final result, and a ``TrainingEndEvent`` with its status (SUCCEEDED: Trained;
  USER_CANCELED, SYS_CANCELED: Interrupted; FAILED and EARLY_STOPPED: Failed, as NNI's
  training-service engine maps them). So callbacks may submit models themselves (NNI's
  retry of a failed model), and their exceptions come out of ``submit_models``.
- ``max_model_count`` is ``max_trials``; ``max_duration`` counts the ended trials' durations
  (``budget_time="trials"``): the model running when the sum reaches it finishes;
  ``continue_on_failure`` is passed through, with ``fail_fast=False`` and no limit on failures
  in a row (``max_failed_trials``), as NNI's engine goes on past any number; the
  experiment's own callbacks raise (``callbacks_raise=True``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from hyperlab.config import MAX_TRIALS
from hyperlab.errors import ConfigError
from hyperlab.experiment import Experiment
from hyperlab.reporting import find_current
from hyperlab.trial import ExperimentStatus, Trial, TrialStatus

from ..space import ModelStatus
from .engine import ExecutionEngine, _metrics_of
from .event import FinalMetricEvent, IntermediateMetricEvent, TrainingEndEvent

__all__ = ["SequentialExecutionEngine"]

ENGINE_OPTIONS = frozenset(
    {
        "executor",
        "concurrency",
        "max_trials",
        "max_duration",
        "budget_time",
        "continue_on_failure",
        "fail_fast",
        "max_failed_trials",
        "callbacks_raise",
        "tuner",
    }
)
"""The experiment options the engine sets itself (its arguments, and NNI's semantics)."""

MODEL_STATUS = {
    TrialStatus.SUCCEEDED: ModelStatus.Trained,
    TrialStatus.FAILED: ModelStatus.Failed,
    TrialStatus.EARLY_STOPPED: ModelStatus.Failed,
    TrialStatus.USER_CANCELED: ModelStatus.Interrupted,
    TrialStatus.SYS_CANCELED: ModelStatus.Interrupted,
}
"""The status a model's training ended with, by its trial's end."""

_logger = logging.getLogger(__name__)


class SequentialExecutionEngine(ExecutionEngine):
    """Runs each submitted model in this process, one after another, as a trial of a
    ``hyperlab.Experiment`` (created here, started by the first ``submit_models``).

    Args:
        max_model_count: Models that may be submitted (``max_trials``); None for no limit.
        max_duration: Seconds of model training that may be spent, the ended models'
            durations summed (``budget_time="trials"``); None for no limit.
        continue_on_failure: False: a model that raises ends the experiment (ERROR), and
            ``submit_models`` raises that very exception; True: it is Failed and the
            engine goes on, however many fail.
        space: The search space the models' samples come from (a ``SearchSpace``, or a dict
            of hyperlab's parameters or of NNI's ``{"_type", "_value"}`` specs); each
            ``model.sample`` must be a parameter set of it.
        storage: The store (as ``hyperlab.Experiment`` takes it).
        **options: Other options of ``hyperlab.Experiment`` (``name``, ``mode``, ``metric``,
            ``callbacks``, ``progress``, ``seed``...), except those the engine sets:
            ``ENGINE_OPTIONS``.

    Raises:
        ConfigError: an option the engine sets, or a bad option (nothing is written).
    """

    def __init__(
        self,
        max_model_count: int | None = None,
        max_duration: float | None = None,
        continue_on_failure: bool = False,
        *,
        space: Any,
        storage: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        taken = sorted(ENGINE_OPTIONS & set(options))
        if taken:
            raise ConfigError(
                f"SequentialExecutionEngine: {taken[0]}={options[taken[0]]!r} is the engine's "
                f"to set (it sets {', '.join(sorted(ENGINE_OPTIONS))}); remove it"
            )
        self._experiment = Experiment(
            self._execute,
            space,
            storage=storage,
            executor="inprocess",
            concurrency=1,
            max_trials=max_model_count,
            max_duration=max_duration,
            budget_time="trials",
            continue_on_failure=continue_on_failure,
            fail_fast=False,
            max_failed_trials=MAX_TRIALS,  # failures in a row never end it, as in NNI
            callbacks_raise=True,
            **options,
        )
        self._continue_on_failure = continue_on_failure
        self._history: list[Any] = []
        self._handles: dict[int, Any] = {}  # id(model) -> its latest trial's handle
        self._live: dict[int, Any] = {}  # trial number -> the model its objective runs
        self._finals: dict[int, dict[str, Any]] = {}  # trial number -> its final result
        self._numbering = threading.Lock()  # held from a submit until its model is known
        self._open = contextlib.ExitStack()  # the experiment's `with`, until shutdown
        self._entered = False

    @property
    def experiment(self) -> Experiment:
        """The hyperlab experiment the models are the trials of (its ``id``, ``result()``)."""
        return self._experiment

    # ---- running models -------------------------------------------------------------------

    def submit_models(self, *models: Any) -> None:
        """Run each model in turn, as NNI's sequential engine does: each returns once it
        ended and its events were dispatched.

        Raises:
            TypeError: a model without ``execute()`` or without a ``sample`` mapping of JSON
                values (naming which); nothing of it is run.
            RuntimeError: a model that is not frozen, or already completed (as NNI's).
            SearchSpaceError: a sample outside ``space``.
            ConfigError: the budget is spent (NNI's sentence: "Maximum number of models
                reached", "Maximum duration reached"), or the experiment ended (a model
                failed with ``continue_on_failure=False``, or ``shutdown``).
            Exception: with ``continue_on_failure=False``, what the failed model raised; what
                a model-event callback raised.
        """
        for index, model in enumerate(models):
            self._run(model, _sample(model, index))

    def _run(self, model: Any, sample: dict[str, Any]) -> None:
        status = getattr(model, "status", ModelStatus.Frozen)
        if not status.frozen() or status.completed():
            raise RuntimeError(
                f"SequentialExecutionEngine: a model is submitted once frozen and not "
                f"completed, got {model!r} with status {status!r}"
            )
        with self._numbering:  # its trial's objective looks the model up under it
            handle = self._experiment.submit(sample)  # the first one starts the experiment
            if not self._entered:  # left as a `with` block is, by shutdown
                self._open.push(self._experiment)
                self._entered = True
            self._live[handle.number] = model
            model.status = ModelStatus.Training
            _metrics_of(model)
        self._history.append(model)
        self._handles[id(model)] = handle
        try:
            trial = self._experiment.wait(handle)[0]
            failed = trial.status is TrialStatus.FAILED and not self._continue_on_failure
            if failed or self._experiment.status is ExperimentStatus.ERROR:
                # the run ends at it, and the handle may resolve (at the commit of the trial's
                # end) before that end: leaving the experiment's `with` waits for it and raises
                # what ended it (the model's own exception, or an experiment callback's), once
                self._open.close()
        except BaseException:
            if handle.done() and handle.exception() is None:
                self._ended(model, handle.result())
            raise
        self._ended(model, handle.result())

    def _execute(self, params: dict[str, Any]) -> None:
        """The trials' objective: run the model submitted as this trial."""
        ctx = find_current()
        assert ctx is not None  # an objective runs in its trial
        with self._numbering:
            model = self._live.pop(ctx.number)
        try:
            model.execute()
        finally:
            if ctx.final is not None:
                self._finals[ctx.number] = ctx.final

    def _ended(self, model: Any, trial: Trial) -> None:
        """Dispatch the events of ``model``'s ended trial, as stored."""
        final = self._finals.pop(trial.number, None)
        stored = self._experiment.store.get_trial(self._experiment.id, trial.number)
        for report in stored.reports:
            self.dispatch_model_event(IntermediateMetricEvent(model, _as_reported(report.metrics)))
        if final is not None:
            self.dispatch_model_event(FinalMetricEvent(model, _as_reported(final)))
        self.dispatch_model_event(TrainingEndEvent(model, MODEL_STATUS[trial.status]))

    # ---- reading --------------------------------------------------------------------------

    def list_models(self, status: ModelStatus | None = None) -> list[Any]:
        """The models submitted to this engine, first submitted first; with ``status``, those
        whose status is it now."""
        if status is None:
            return list(self._history)
        return [model for model in self._history if model.status == status]

    def wait_models(self, *models: Any) -> None:
        """Return once the trials of ``models`` (of every model submitted, if none is given)
        ended; ``submit_models`` returns only then already.

        Raises:
            ValueError: a model not submitted to this engine.
        """
        for model in models:
            if id(model) not in self._handles:
                raise ValueError(f"wait_models: {model!r} was not submitted to this engine")
        chosen = models or self._history
        self._experiment.wait([self._handles[id(model)] for model in chosen])

    def idle_worker_available(self) -> bool:
        """True: ``submit_models`` runs a model at once (and returns once it ended)."""
        return True

    def budget_available(self) -> bool:
        """Whether a model may still be submitted: fewer than ``max_model_count`` so far, less
        than ``max_duration`` of training spent, and the experiment not ended."""
        return self._experiment.budget_available()

    # ---- ending and resuming ---------------------------------------------------------------

    def shutdown(self) -> None:
        """End the experiment (DONE; ERROR if a model or callback ended it already, whose
        exception ``submit_models`` raised): it is stored and shown as ended, and no model
        can be submitted any more."""
        self._open.close()

    def state_dict(self) -> dict[str, Any]:
        """``{"model_count", "total_duration"}``: the models submitted, and the seconds of
        training ``max_duration`` counts (counted ones included)."""
        return self._experiment.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Count the models and training time of ``state_dict`` (from another engine's
        ``state_dict``) in this engine's budget. The models themselves are not brought back:
        ``list_models`` lists this engine's only. Before the first ``submit_models``.

        Raises:
            ConfigError: after the first ``submit_models``, or a bad ``state_dict``.
        """
        self._experiment.load_state_dict(state_dict)
        if state_dict["model_count"] > 0:
            _logger.warning(
                "SequentialExecutionEngine: %d models were counted from state_dict, but not "
                "brought back: list_models() lists only the models submitted to this engine",
                state_dict["model_count"],
            )


def _sample(model: Any, index: int) -> dict[str, Any]:
    """``model.sample`` as a trial's params, checked to be a mapping of JSON values."""
    where = f"submit_models: models[{index}]"
    if not callable(getattr(model, "execute", None)):
        raise TypeError(
            f"{where}: {model!r} has no execute() method; a model needs execute() and a "
            "sample mapping (see nni.nas.space.ExecutableModel)"
        )
    sample = getattr(model, "sample", None)
    if not isinstance(sample, Mapping):
        raise TypeError(
            f"{where}.sample: expected a mapping of the choices that made the model (its "
            f"trial's params), got {sample!r}"
        )
    try:
        json.dumps(dict(sample), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}.sample: expected JSON values, got {sample!r} ({exc})") from None
    return dict(sample)


def _as_reported(metrics: Mapping[str, Any]) -> Any:
    """A stored result as the model reported it: the number alone for ``{"default": x}``."""
    return metrics["default"] if set(metrics) == {"default"} else dict(metrics)
