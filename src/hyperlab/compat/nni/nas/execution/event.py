"""NNI's model events (``nni.nas.execution.event``): what an execution engine tells the
callbacks a strategy registered, one event per new metric and one when a model's training
ended.

A callback may stop an event from reaching the callbacks registered after it
(``stop_propagation``) or keep the engine from applying it to the model
(``prevent_default``): the status or metric is then left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from ..space import ModelStatus

__all__ = [
    "FinalMetricEvent",
    "IntermediateMetricEvent",
    "ModelEvent",
    "ModelEventType",
    "TrainingEndEvent",
]


class ModelEventType(str, Enum):
    """The kinds of model event, each the ``event_type`` of one event class."""

    FinalMetric = "final_metric"
    IntermediateMetric = "intermediate_metric"
    TrainingEnd = "training_end"


@dataclass
class ModelEvent:
    """Something that happened to ``model`` (a submitted model)."""

    event_type: ClassVar[ModelEventType]
    model: Any

    def __post_init__(self) -> None:
        self._canceled = False
        self._default_canceled = False

    def stop_propagation(self) -> None:
        """Give the event to no later callback, and do not apply it to the model."""
        self._canceled = True

    def prevent_default(self) -> None:
        """Do not apply the event to the model (later callbacks still get it)."""
        self._default_canceled = True


@dataclass
class FinalMetricEvent(ModelEvent):
    """The model reported its final metric (``nni.report_final_result``): as reported, a
    number or a dict with ``default``."""

    event_type: ClassVar[ModelEventType] = ModelEventType.FinalMetric
    metric: Any


@dataclass
class IntermediateMetricEvent(ModelEvent):
    """The model reported an intermediate metric (``nni.report_intermediate_result``)."""

    event_type: ClassVar[ModelEventType] = ModelEventType.IntermediateMetric
    metric: Any


@dataclass
class TrainingEndEvent(ModelEvent):
    """The model's training ended, with ``status`` (Trained, Failed or Interrupted)."""

    event_type: ClassVar[ModelEventType] = ModelEventType.TrainingEnd
    status: ModelStatus
