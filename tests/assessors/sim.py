"""Scripted learning curves for the assessors' and schedulers' experiments in simulated time
(``tests.simulation``): a trial that runs again (resumed after a pause, re-run after an
interruption, or a population based training branch) continues from where its training
stands, as from a checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hyperlab.executors import TrialSpec
from hyperlab.testing.fakes import Finish, Report, Step

Curve = Callable[[int, int], float]
"""(trial number, step) -> the reported loss."""


@dataclass
class Curves:
    """Trial ``n`` reports ``curve(n, step)`` under ``metric`` every ``every`` simulated seconds
    for ``epochs`` steps, then finishes; it continues from the step after the last one it
    delivered."""

    curve: Curve
    epochs: int
    every: float = 1.0
    metric: str = "loss"
    done: dict[int, int] = field(default_factory=dict)  # number -> the next step to report
    runs: dict[int, int] = field(default_factory=dict)  # number -> how many times it ran

    def __call__(self, spec: TrialSpec) -> Iterator[Step]:
        number = spec.number
        self.runs[number] = self.runs.get(number, 0) + 1
        for step in range(self.done.get(number, 0), self.epochs):
            yield Report(self.every, {self.metric: self.curve(number, step)}, step=step)
            self.done[number] = step + 1  # asked for the next step: this one was delivered
        yield Finish(0.0)


ParamsCurve = Callable[[dict[str, Any], int], float]
"""A trial's loss after ``resource`` steps of training with ``params``."""


class Checkpoints:
    """Where each simulated trial's training stands: the steps it has done.

    A trial continues from its own steps (a resumed or re-run trial) or, the first time it
    runs, from its parent's (a PBT branch restores its parent's checkpoint).
    """

    def __init__(self) -> None:
        self.steps: dict[int, int] = {}

    def script(
        self, curve: ParamsCurve, *, total: int, every: float = 1.0
    ) -> Callable[[TrialSpec], Iterator[Step]]:
        """Trials that report ``loss = curve(params, step + 1)`` every ``every`` simulated
        seconds at steps ``start .. total - 1`` and then finish."""

        def run(spec: TrialSpec) -> Iterator[Step]:
            start = self.steps.get(spec.number)
            if start is None:
                parent = None if spec.restore_from is None else int(Path(spec.restore_from).name)
                start = self.steps.get(parent, 0) if parent is not None else 0
                self.steps[spec.number] = start
            for step in range(start, total):
                yield Report(every, {"loss": curve(spec.params, step + 1)}, step)
                self.steps[spec.number] = step + 1  # runs once the report was delivered
            yield Finish(0.0)

        return run
