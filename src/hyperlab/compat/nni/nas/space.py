"""NNI's ``nni.nas.space``, as much as an execution engine and a strategy loop use: a model's
status (``ModelStatus``), its metrics (``Metrics``), and what a submitted model must have
(``ExecutableModel``).

NNI's ``ExecutableModelSpace`` (a PyTorch model space with its evaluator, frozen by a sample)
has all of it; so does any object that follows ``ExecutableModel``: the engine needs
``execute()`` and ``sample``, and gives the object ``status`` and ``metrics`` if it has none.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, Protocol

__all__ = ["ExecutableModel", "Metrics", "ModelStatus"]


class ModelStatus(str, Enum):
    """Where a model is in its life: created (``Initialized``), being sampled (``Mutating``),
    ready to run (``Frozen``), then ``Training`` and one of the ends (``completed()``)."""

    Initialized = "initialized"
    Mutating = "mutating"
    Frozen = "frozen"
    Training = "training"
    Trained = "trained"
    Failed = "failed"
    Interrupted = "interrupted"
    Invalid = "invalid"
    Retrying = "retrying"

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def frozen(self) -> bool:
        """Whether the model's choices are all made (it may be submitted unless completed)."""
        return self not in (ModelStatus.Initialized, ModelStatus.Mutating)

    def completed(self) -> bool:
        """Whether the model ended for good: its status changes no more."""
        return self in (
            ModelStatus.Trained,
            ModelStatus.Failed,
            ModelStatus.Interrupted,
            ModelStatus.Invalid,
        )


class Metrics:
    """A model's metrics: the intermediate ones in the order reported, and the final one.

    Each is a number, or NNI's dict whose ``default`` is the number; it is kept as a float
    (the rest of such a dict is dropped, as NNI's strict metrics do).
    """

    def __init__(self) -> None:
        self._intermediates: list[float] = []
        self._final: float | None = None

    def __bool__(self) -> bool:
        return bool(self._intermediates) or self._final is not None

    def __repr__(self) -> str:
        return f"Metrics(intermediates={self._intermediates!r}, final={self._final!r})"

    @property
    def intermediates(self) -> Sequence[float]:
        """The intermediate metrics, first reported first."""
        return self._intermediates

    @property
    def final(self) -> float | None:
        """The final metric, or None before one was set."""
        return self._final

    @final.setter
    def final(self, metric: Any) -> None:
        self._final = _number(metric)

    def add_intermediate(self, metric: Any) -> None:
        """Append an intermediate metric.

        Raises:
            ValueError: not a number, nor a dict with a numeric ``default``.
        """
        self._intermediates.append(_number(metric))

    def clear(self) -> None:
        """Forget every metric (a model about to run again)."""
        self._intermediates.clear()
        self._final = None


def _number(metric: Any) -> float:
    value = metric["default"] if isinstance(metric, Mapping) and "default" in metric else metric
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"metric: expected a number, or a dict whose 'default' is a number, got {metric!r}"
        )
    return float(value)


class ExecutableModel(Protocol):
    """What ``SequentialExecutionEngine.submit_models`` takes: an object that trains and
    evaluates itself in ``execute()`` (reporting with ``nni.report_intermediate_result`` and
    ``nni.report_final_result``), with ``sample``, the choices that made it: a mapping of JSON
    values, stored as its trial's parameters.

    The engine reads ``status`` (a ``ModelStatus``; Frozen when absent) and sets it, and sets
    ``metrics`` (a ``Metrics``, made when absent). NNI's ``ExecutableModelSpace`` is one.
    """

    sample: Mapping[str, Any] | None

    def execute(self) -> Any:
        """Train and evaluate the model; what it returns is not used."""
