"""Executors: where trials run (``inprocess``, ``threads``, ``processes``, ``command``,
``ray``).

Pick one by name; ``CommandTrial`` is what the ``command`` executor runs, and a ``DevicePool``
places trials on GPUs. The names are imported when first used, so importing the package
loads no pydantic or numpy. What a trial itself calls, and the channel protocol every executor
speaks with it, live in ``hyperlab.reporting``. For other pools of worker processes (a
research's): ``hyperlab.executors.workers`` starts them, ``hyperlab.executors.routing`` sends
each trial's output to its logs, and ``hyperlab.executors.devices`` checks GPU memory;
``hyperlab.executors.pickling`` pickles an objective for them, keeping its file names.
"""

import importlib as _importlib
import typing as _typing

_EXPORTS = {
    "END_EVENTS": "hyperlab.executors.base",
    "EXECUTORS": "hyperlab.executors.base",
    "CommandTrial": "hyperlab.executors._command",
    "DevicePool": "hyperlab.executors.devices",
    "Event": "hyperlab.executors.base",
    "Executor": "hyperlab.executors.base",
    "Failed": "hyperlab.executors.base",
    "Finished": "hyperlab.executors.base",
    "Lost": "hyperlab.executors.base",
    "Reported": "hyperlab.executors.base",
    "Requested": "hyperlab.executors.base",
    "Started": "hyperlab.executors.base",
    "StatusReporter": "hyperlab.executors._run",
    "Stopped": "hyperlab.executors.base",
    "TrialEnd": "hyperlab.executors.base",
    "TrialSpec": "hyperlab.executors.base",
    "create_executor": "hyperlab.executors.base",
    "detect_gpus": "hyperlab.executors.devices",
    "executor_class": "hyperlab.executors.base",
    "executor_names": "hyperlab.executors.base",
    "register_executor": "hyperlab.executors.base",
}

__all__ = [
    "END_EVENTS",
    "EXECUTORS",
    "CommandTrial",
    "DevicePool",
    "Event",
    "Executor",
    "Failed",
    "Finished",
    "Lost",
    "Reported",
    "Requested",
    "Started",
    "StatusReporter",
    "Stopped",
    "TrialEnd",
    "TrialSpec",
    "create_executor",
    "detect_gpus",
    "executor_class",
    "executor_names",
    "register_executor",
]


def __getattr__(name: str) -> _typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperlab.executors' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if _typing.TYPE_CHECKING:
    from hyperlab.executors._command import CommandTrial
    from hyperlab.executors.base import (
        END_EVENTS,
        EXECUTORS,
        Event,
        Executor,
        Failed,
        Finished,
        Lost,
        Reported,
        Requested,
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
