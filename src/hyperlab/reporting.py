"""The trial-side API: what code running inside a trial calls, in every executor.

```python
def objective(params):
    for epoch in range(10):
        loss = train_one_epoch(params)
        hyperlab.report(loss=loss)   # intermediate result; raises TrialStopped if told to stop
    return {"loss": loss}            # final result
```

The executor sets the current trial's ``TrialContext`` before calling the objective: a context
variable for in-process and thread trials, a process-wide one in worker processes.
"""

from __future__ import annotations

import contextvars
import inspect
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hyperlab.errors import HyperlabError, TrialStopped

__all__ = [
    "TrialContext",
    "get_params",
    "report",
    "run_objective",
    "trial_devices",
    "trial_dir",
    "trial_seed",
]

Emit = Callable[[int, dict], None]
"""How a context hands a report to its executor: ``emit(step, metrics)``."""


class TrialContext:
    """Everything a running trial knows about itself, and its channel to the driver.

    Args:
        number: The trial's number in its experiment.
        trial_id: The trial's id.
        params: The parameter set to evaluate.
        seed: The trial's own seed.
        trial_dir: Its folder (created on first use of ``trial_dir()``).
        emit: Called with ``(step, metrics)`` for every report.
        deadline: ``time.monotonic()`` value after which ``report`` raises ``TrialError``
            (how in-process trials honour ``trial_timeout``), or None.
        devices: The accelerator indices the trial holds.
    """

    __slots__ = (
        "_stop_requested",
        "deadline",
        "devices",
        "emit",
        "last",
        "next_step",
        "number",
        "params",
        "seed",
        "trial_dir",
        "trial_id",
    )

    def __init__(
        self,
        number: int,
        trial_id: str,
        params: dict[str, Any],
        seed: int | None,
        trial_dir: str | None,
        emit: Emit,
        *,
        deadline: float | None = None,
        devices: tuple[int, ...] = (),
    ) -> None:
        self.number = number
        self.trial_id = trial_id
        self.params = params
        self.seed = seed
        self.trial_dir = trial_dir
        self.emit = emit
        self.deadline = deadline
        self.devices = devices
        self.next_step = 0
        self.last: dict | None = None
        self._stop_requested = False

    def request_stop(self) -> None:
        """Make the trial's next ``report`` raise ``TrialStopped`` (callable from any thread)."""
        self._stop_requested = True

    @property
    def stop_requested(self) -> bool:
        """Whether the trial has been told to stop."""
        return self._stop_requested

    def report(self, value: Any = None, step: int | None = None, metrics: dict | None = None) -> dict:
        """Send one intermediate result; returns the metrics dict that was sent."""
        if self._stop_requested:
            raise TrialStopped(f"trial {self.trial_id} was told to stop")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TrialTimeout(f"trial {self.trial_id} exceeded its trial_timeout")
        merged = as_metrics(value, metrics)
        if step is None:
            step = self.next_step
        self.next_step = step + 1
        self.last = merged
        self.emit(step, merged)
        if self._stop_requested:  # an in-process assessor may have decided during emit
            raise TrialStopped(f"trial {self.trial_id} was told to stop")
        return merged


def as_metrics(value: Any, metrics: dict | None = None) -> dict:
    """Merge a bare value (a number, or NNI's dict with a ``default`` key) and named metrics."""
    merged: dict = {}
    if isinstance(value, dict):
        merged.update(value)
    elif value is not None:
        merged["default"] = value
    if metrics:
        merged.update(metrics)
    if not merged:
        raise HyperlabError("report() needs a value or at least one named metric")
    return merged


_current: contextvars.ContextVar[TrialContext | None] = contextvars.ContextVar(
    "hyperlab_trial", default=None
)
_process_context: TrialContext | None = None


def set_process_context(ctx: TrialContext | None) -> None:
    """Make ``ctx`` the current trial for every thread of this process (worker processes)."""
    global _process_context
    _process_context = ctx


@contextmanager
def activate(ctx: TrialContext) -> Iterator[TrialContext]:
    """Make ``ctx`` the current trial in this thread for the duration of the block."""
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


def current() -> TrialContext:
    """The running trial's context; ``HyperlabError`` outside a trial."""
    ctx = _current.get() or _process_context
    if ctx is None:
        raise HyperlabError(
            "no trial is running here: hyperlab.get_params(), report() and friends work only "
            "inside a trial started by hyperlab"
        )
    return ctx


def get_params() -> dict[str, Any]:
    """The parameter set of the running trial."""
    return current().params


def report(value: Any = None, *, step: int | None = None, **metrics: Any) -> None:
    """Report an intermediate result of the running trial.

    Args:
        value: A number (stored as metric ``default``) or a dict of metrics.
        step: The step it belongs to; defaults to one more than the previous report's.
        **metrics: Named metrics, e.g. ``report(loss=0.3, accuracy=0.9)``.

    Raises:
        TrialStopped: The trial was told to stop (by an assessor or a user); let it propagate.
    """
    current().report(value, step, metrics)


def trial_dir() -> Path:
    """The running trial's own folder (created on first call) for logs, outputs, checkpoints."""
    ctx = current()
    if ctx.trial_dir is None:
        raise HyperlabError(f"trial {ctx.trial_id} has no folder")
    path = Path(ctx.trial_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def trial_seed() -> int:
    """The running trial's seed, derived from the experiment's seed and the trial number."""
    seed = current().seed
    return 0 if seed is None else seed


def trial_devices() -> tuple[int, ...]:
    """The accelerator indices the running trial holds (empty without devices)."""
    return current().devices


class TrialTimeout(Exception):
    """Raised by ``report`` in an in-process trial that ran past its deadline."""


class _Done(Exception):
    """Raised by a Ray-style reporter called with ``done=True`` to end the objective."""


def _call(objective: Callable, ctx: TrialContext) -> Any:
    """Call the objective with the arguments its signature asks for."""
    n_args = _positional_arity(objective)
    if n_args == 0:
        return objective()
    if n_args == 1:
        return objective(ctx.params)

    def reporter(value: Any = None, *, done: bool = False, **metrics: Any) -> None:
        if value is not None or metrics:
            ctx.report(value, None, metrics)
        if done:
            raise _Done

    return objective(ctx.params, reporter)


def _positional_arity(fn: Callable) -> int:
    """How many positional arguments ``fn`` takes, capped at 2 (0, params, reporter)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have no signature: assume (params)
        return 1
    count = 0
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return 2 if count < 2 else count
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return min(count, 2)


def run_objective(objective: Callable, ctx: TrialContext) -> dict | None:
    """Run ``objective`` for ``ctx`` and return its final metrics.

    The final result is what the objective returned (a number or a dict), or, when it returned
    None, the last report (for generators: the last value yielded). Exceptions propagate.
    """
    try:
        result = _call(objective, ctx)
        if inspect.isgenerator(result):
            try:
                while True:
                    ctx.report(next(result))
            except StopIteration as stop:
                result = stop.value
    except _Done:
        result = None
    if result is None:
        return ctx.last
    return as_metrics(result)


def is_finite_number(x: Any) -> bool:
    """True for real numbers that are neither NaN nor infinite (bools excluded)."""
    if isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except TypeError:
        return False

