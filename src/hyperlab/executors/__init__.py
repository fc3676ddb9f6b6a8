"""Executors: where trials run (``inprocess``, ``threads``, ``processes``, ``command``).

Pick one by name; ``CommandTrial`` is what the ``command`` executor runs, and a ``DevicePool``
places trials on GPUs.
"""

from hyperlab.executors._command import CommandTrial
from hyperlab.executors.base import (
    END_EVENTS,
    EXECUTORS,
    Event,
    Executor,
    Failed,
    Finished,
    Reported,
    Started,
    Stopped,
    TrialEnd,
    TrialSpec,
    create_executor,
    executor_class,
    executor_names,
    register_executor,
)
from hyperlab.executors.devices import DevicePool, detect_gpus

__all__ = [
    "END_EVENTS",
    "EXECUTORS",
    "CommandTrial",
    "DevicePool",
    "Event",
    "Executor",
    "Failed",
    "Finished",
    "Reported",
    "Started",
    "Stopped",
    "TrialEnd",
    "TrialSpec",
    "create_executor",
    "detect_gpus",
    "executor_class",
    "executor_names",
    "register_executor",
]
