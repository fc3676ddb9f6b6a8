"""The executor interface: run trials somewhere and turn what they do into events.

An executor knows nothing about tuners, assessors or the store. The driver ``submit``s
``TrialSpec``s and calls ``poll``; the executor hands every ``Event`` to the listener given to
``open``, always in the thread that called ``poll`` (so the driver's thread alone touches the
experiment's state). Every submitted trial ends with exactly one FINISHED, FAILED or STOPPED
event, and ``close`` leaves no trial running.
"""

from __future__ import annotations

import enum
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from hyperlab.errors import ConfigError

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


class EventKind(enum.Enum):
    """What happened to a trial."""

    STARTED = "started"
    REPORTED = "reported"
    FINISHED = "finished"  # the objective returned: ``metrics`` is its final result (or None)
    FAILED = "failed"  # it raised, crashed or timed out: ``error`` says how
    STOPPED = "stopped"  # it ended because ``stop`` asked it to


@dataclass(slots=True)
class Event:
    """One thing a trial did. ``time`` is epoch seconds."""

    kind: EventKind
    number: int
    time: float
    step: int | None = None
    metrics: dict | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """What an executor needs to run one trial."""

    number: int
    trial_id: str
    params: dict[str, Any]
    seed: int | None
    trial_dir: str | None
    attempt: int = 1
    devices: tuple[int, ...] = ()


Listener = Callable[[Event], None]


class Executor(ABC):
    """Runs trials of one objective, up to ``concurrency`` at a time.

    Args:
        objective: The trial function.
        concurrency: How many trials may run at once.
        trial_timeout: Seconds after which a running trial is failed, or None.
        stop_grace: Seconds a stopped trial gets to end by itself before it is killed.

    Subclasses implement ``submit``, ``poll``, ``stop`` and ``close``; they are driven by one
    thread and need no locks of their own beyond what their worker threads require.
    """

    name: ClassVar[str]
    runs_outside: ClassVar[bool] = False
    """True when trials run outside the driver's process: the store is flushed before submit."""

    def __init__(
        self,
        objective: Callable[..., Any],
        *,
        concurrency: int = 1,
        trial_timeout: float | None = None,
        stop_grace: float = 5.0,
    ) -> None:
        self.objective = objective
        self.concurrency = concurrency
        self.trial_timeout = trial_timeout
        self.stop_grace = stop_grace
        self.listener: Listener = _drop

    def open(self, listener: Listener) -> None:
        """Start; events go to ``listener`` from then on."""
        self.listener = listener

    @property
    @abstractmethod
    def running(self) -> int:
        """How many submitted trials have not ended yet."""

    @property
    def free_slots(self) -> int:
        """How many more trials ``submit`` accepts now."""
        return max(0, self.concurrency - self.running)

    @abstractmethod
    def submit(self, spec: TrialSpec) -> None:
        """Start (or queue to start at the next ``poll``) one trial."""

    @abstractmethod
    def poll(self, timeout: float) -> None:
        """Deliver the events that happened, waiting up to ``timeout`` seconds for the first."""

    @abstractmethod
    def stop(self, number: int) -> None:
        """Ask a running trial to stop; it ends with STOPPED (or FINISHED if it was done)."""

    @abstractmethod
    def close(self) -> None:
        """Stop every trial, wait ``stop_grace`` at most, kill what is left, release resources."""


def _drop(event: Event) -> None:
    """Listener of an executor that has not been opened."""


_REGISTRY: dict[str, str | type[Executor]] = {
    "inprocess": "hyperlab.executors._inprocess:InProcessExecutor",
    "threads": "hyperlab.executors._threads:ThreadExecutor",
    "processes": "hyperlab.executors._processes:ProcessExecutor",
}


def register_executor(name: str, cls: type[Executor] | str) -> None:
    """Make an executor class (or its ``"module:Class"`` path) available under ``name``."""
    _REGISTRY[name] = cls


def executor_names() -> list[str]:
    """The names ``executor=`` accepts."""
    return sorted(_REGISTRY)


def executor_class(name: str) -> type[Executor]:
    """The executor class registered as ``name``; ``ConfigError`` listing the known names."""
    try:
        entry = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ConfigError(
            f"executor: unknown executor {name!r}; known executors: {', '.join(executor_names())}"
        ) from None
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = _REGISTRY[name] = getattr(importlib.import_module(module), attr)
    return entry


def create_executor(name: str, objective: Callable[..., Any], **options: Any) -> Executor:
    """An executor of class ``name`` for ``objective`` with ``options``."""
    return executor_class(name)(objective, **options)
