"""One actor of the ``ray`` executor's pool and the trial it runs, as the driver sees them."""

from __future__ import annotations

from typing import Any

from hyperlab.executors._output import WatchedLogs
from hyperlab.executors.base import TrialSpec

__all__ = ["Slot"]


class Slot:
    """One actor and the trial it runs (``spec`` None while it is idle, kept for the next)."""

    __slots__ = (
        "actor",
        "cursor",
        "deadline",
        "kill_at",
        "last",
        "logs",
        "node",
        "ref",
        "run",
        "skip",
        "spec",
        "started",
        "submitted",
    )

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.node: str | None = None  # the node it runs on, once it said
        self.spec: TrialSpec | None = None
        self.ref: Any = None  # the outstanding collect call
        self.run: Any = None  # the run call
        self.cursor = 0  # events received of this trial
        self.skip = 0  # reports of an adopted trial the store already has
        self.started = False
        self.submitted = 0.0  # when its trial was given to it (monotonic)
        self.deadline: float | None = None  # trial_timeout expires (monotonic)
        self.kill_at: float | None = None  # a stop request's grace expires (monotonic)
        self.last: dict[str, Any] | None = None  # its last report's metrics
        self.logs: WatchedLogs | None = None

    def end_trial(self) -> None:
        """Forget the trial, whose end was delivered, and stop watching its logs."""
        self.spec = self.ref = self.run = self.deadline = self.kill_at = self.last = None
        self.cursor = self.skip = 0
        self.started = False
        if self.logs is not None:
            self.logs.finish()
            self.logs = None
