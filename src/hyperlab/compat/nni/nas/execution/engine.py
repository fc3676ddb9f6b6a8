"""NNI's ``ExecutionEngine`` interface (``nni.nas.execution.engine``): what a strategy calls
to run models, and the model events it may listen to.

The events are dispatched here, to the callbacks in the order registered, then applied to the
model (``default_callback``) unless a callback prevented it; a callback's exception goes to
whoever dispatched the event (for ``SequentialExecutionEngine``: out of ``submit_models``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from ..space import Metrics, ModelStatus
from .event import (
    FinalMetricEvent,
    IntermediateMetricEvent,
    ModelEvent,
    ModelEventType,
    TrainingEndEvent,
)

__all__ = ["ExecutionEngine"]

ModelCallback = Callable[[Any], None]
"""A model-event callback: called with the event, returns nothing."""

_EVENTS: dict[ModelEventType, type[ModelEvent]] = {
    ModelEventType.FinalMetric: FinalMetricEvent,
    ModelEventType.IntermediateMetric: IntermediateMetricEvent,
    ModelEventType.TrainingEnd: TrainingEndEvent,
}


class ExecutionEngine(ABC):
    """Runs the models a strategy submits and tells its callbacks what happened to them.

    A strategy submits models (``submit_models``) while ``budget_available()``, reads them
    back (``list_models``) and may register callbacks per ``ModelEventType``.
    """

    def __init__(self) -> None:
        self._callbacks: dict[ModelEventType, list[ModelCallback]] = defaultdict(list)

    def register_model_event_callback(
        self, event_type: ModelEventType | str, callback: ModelCallback
    ) -> None:
        """Call ``callback(event)`` on each event of ``event_type`` (a ``ModelEventType`` or
        its value, such as ``"training_end"``), after those registered before it.

        Raises:
            ValueError: an unknown event type.
        """
        self._callbacks[ModelEventType(event_type)].append(callback)

    def unregister_model_event_callback(
        self, event_type: ModelEventType | str, callback: ModelCallback
    ) -> None:
        """Stop calling ``callback`` on events of ``event_type``.

        Raises:
            ValueError: ``callback`` is not registered for ``event_type``.
        """
        self._callbacks[ModelEventType(event_type)].remove(callback)

    def dispatch_model_event(self, event: ModelEvent | ModelEventType | str, **fields: Any) -> None:
        """Give ``event`` to the callbacks of its type, then apply it to its model
        (``default_callback``) unless one stopped or prevented that. ``event`` may be an
        event type with the event's ``fields`` (``model``, ``metric`` or ``status``).

        Raises:
            Exception: what a callback raised (the later callbacks are not called then).
        """
        if not isinstance(event, ModelEvent):
            event = _EVENTS[ModelEventType(event)](**fields)
        for callback in list(self._callbacks[event.event_type]):
            if event._canceled:
                break
            callback(event)
        if not event._canceled and not event._default_canceled:
            self.default_callback(event)

    def default_callback(self, event: ModelEvent) -> None:
        """Apply ``event`` to its model: a metric joins ``model.metrics``, a training end
        sets ``model.status``."""
        model = event.model
        if isinstance(event, TrainingEndEvent):
            model.status = event.status
            return
        metrics = _metrics_of(model)
        if isinstance(event, FinalMetricEvent):
            metrics.final = event.metric
        elif isinstance(event, IntermediateMetricEvent):
            metrics.add_intermediate(event.metric)

    @abstractmethod
    def submit_models(self, *models: Any) -> None:
        """Run ``models``."""

    @abstractmethod
    def list_models(self, status: ModelStatus | None = None) -> Iterable[Any]:
        """The models submitted (those in ``status`` if given)."""

    @abstractmethod
    def wait_models(self, *models: Any) -> None:
        """Return once ``models`` (all submitted ones if none are given) ended."""

    @abstractmethod
    def idle_worker_available(self) -> bool:
        """Whether a model submitted now would start at once."""

    @abstractmethod
    def budget_available(self) -> bool:
        """Whether models may still be submitted."""

    @abstractmethod
    def shutdown(self) -> None:
        """End the engine: it runs no more models."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """The engine's counters, for ``load_state_dict`` in a new engine."""

    @abstractmethod
    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take up the counters of ``state_dict``."""


def _metrics_of(model: Any) -> Metrics:
    """``model.metrics``, made first when the model has none."""
    metrics = getattr(model, "metrics", None)
    if metrics is None:
        metrics = model.metrics = Metrics()
    return metrics
