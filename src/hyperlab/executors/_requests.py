"""A running trial's requests for parameters (``hyperlab.suggest``), on the executor's side.

The trial's thread calls its context's ``ask(ctx, index, name, spec)``: the executor hands a
``Requested`` event to the driver and the thread waits for ``Executor.answer``. ``Answers``
is where the answers wait for the threads that asked (threads, processes' workers, Ray actors);
a trial told to stop while it waits stops (``TrialStopped``) instead.
"""

from __future__ import annotations

import threading
from typing import Any

from hyperlab.errors import TrialStopped
from hyperlab.reporting.context import TrialContext

__all__ = ["Answers"]

WAKE = 0.1
"""Seconds between two looks at a waiting trial's stop flag."""


class Answers:
    """Answers by (trial number, request index), put by the driver's side, taken by trials."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._got: dict[tuple[int, int], tuple[Any, str | None]] = {}

    def put(self, number: int, index: int, value: Any, error: str | None) -> None:
        with self._lock:
            self._got[(number, index)] = (value, error)
            self._lock.notify_all()

    def take(self, ctx: TrialContext, index: int) -> Any:
        """Wait for the answer to ``ctx``'s request ``index``: its value, or ``ValueError``
        with the driver's error; ``TrialStopped`` if the trial is told to stop meanwhile."""
        key = (ctx.number, index)
        with self._lock:
            while key not in self._got:
                if ctx.stop_requested:
                    raise TrialStopped(f"trial {ctx.trial_id} was told to stop")
                self._lock.wait(WAKE)
            value, error = self._got.pop(key)
        if error is not None:
            raise ValueError(error)
        return value
