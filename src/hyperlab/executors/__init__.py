"""Executors: where trials run (``inprocess``, ``threads``, ``processes``). Pick by name."""

from hyperlab.executors.base import (
    Event,
    EventKind,
    Executor,
    TrialSpec,
    create_executor,
    executor_class,
    executor_names,
    register_executor,
)

__all__ = [
    "Event",
    "EventKind",
    "Executor",
    "TrialSpec",
    "create_executor",
    "executor_class",
    "executor_names",
    "register_executor",
]
