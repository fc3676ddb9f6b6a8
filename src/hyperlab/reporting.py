"""The trial-side API: what code running inside a trial calls, in every executor.

```python
def objective(params):
    for epoch in range(10):
        loss = train_one_epoch(params)
        hyperlab.report(loss=loss)   # intermediate result; raises TrialStopped if told to stop
    return {"loss": loss}            # final result
```

The executor sets the current trial's ``TrialContext`` before calling the objective: a context
variable for in-process and thread trials, a process-wide one in worker processes. In a command
trial nobody sets one: the first call builds it from the ``HYPERLAB_*`` environment variables
the ``command`` executor gives the process (``HYPERLAB_PARAMS_FILE`` and friends), and reports
go out as JSON lines appended to the ``HYPERLAB_CHANNEL`` file.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hyperlab.errors import HyperlabError, TrialStopped

__all__ = [
    "TrialContext",
    "find_current",
    "get_params",
    "report",
    "run_objective",
    "trial_devices",
    "trial_dir",
    "trial_seed",
]

Emit = Callable[[int, dict], None]
"""How a context hands a report to its executor: ``emit(step, metrics)``."""

EmitFinal = Callable[[dict], None]
"""How a context hands a final result (``set_final``) to its executor, if it must."""

PARAMS_FILE_VAR = "HYPERLAB_PARAMS_FILE"
"""The environment variable that marks a command trial: the path of its parameter file."""


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
        emit_final: Called with the metrics given to ``set_final``, or None.
    """

    __slots__ = (
        "_stop_requested",
        "deadline",
        "devices",
        "emit",
        "emit_final",
        "final",
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
        emit_final: EmitFinal | None = None,
    ) -> None:
        self.number = number
        self.trial_id = trial_id
        self.params = params
        self.seed = seed
        self.trial_dir = trial_dir
        self.emit = emit
        self.deadline = deadline
        self.devices = devices
        self.emit_final = emit_final
        self.next_step = 0
        self.last: dict | None = None
        self.final: dict | None = None
        self._stop_requested = False

    @property
    def experiment_id(self) -> str:
        """The id of the trial's experiment (trial ids are ``<experiment id>-<number>``)."""
        return self.trial_id.rpartition("-")[0] or self.trial_id

    def request_stop(self) -> None:
        """Make the trial's next ``report`` raise ``TrialStopped`` (callable from any thread)."""
        self._stop_requested = True

    @property
    def stop_requested(self) -> bool:
        """Whether the trial has been told to stop."""
        return self._stop_requested

    def report(
        self, value: Any = None, step: int | None = None, metrics: dict | None = None
    ) -> dict:
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

    def set_final(self, value: Any = None, metrics: dict | None = None) -> dict:
        """Declare the trial's final result (NNI's ``report_final_result``); returns it.

        A function trial that then returns None ends with this result; a command trial that
        exits 0 ends with the last one declared.
        """
        merged = as_metrics(value, metrics)
        self.final = merged
        if self.emit_final is not None:
            self.emit_final(merged)
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


def activate(ctx: TrialContext | None) -> contextvars.Token:
    """Make ``ctx`` the current trial in this thread; undo with ``deactivate(token)``.

    A pair of calls rather than a context manager: this is on every trial's path.
    """
    return _current.set(ctx)


def deactivate(token: contextvars.Token) -> None:
    """Restore the current trial that ``activate`` replaced."""
    _current.reset(token)


def find_current() -> TrialContext | None:
    """The running trial's context, or None outside a trial."""
    ctx = _current.get() or _process_context
    if ctx is None and PARAMS_FILE_VAR in os.environ:
        ctx = _context_from_environment()
    return ctx


def current() -> TrialContext:
    """The running trial's context; ``HyperlabError`` outside a trial."""
    ctx = find_current()
    if ctx is None:
        raise HyperlabError(
            "no trial is running here: hyperlab.get_params(), report() and friends work only "
            "inside a trial started by hyperlab"
        )
    return ctx


_environment_lock = threading.Lock()


def _context_from_environment() -> TrialContext:
    """Build (once per process) the context of a command trial from its environment."""
    global _process_context
    with _environment_lock:
        if _process_context is not None:
            return _process_context
        env = os.environ
        path = env[PARAMS_FILE_VAR]
        try:
            with open(path, encoding="utf-8") as f:
                document = json.load(f)
        except (OSError, ValueError) as exc:
            raise HyperlabError(
                f"{PARAMS_FILE_VAR}: cannot read the trial's parameters from {path!r} "
                f"({type(exc).__name__}: {exc})"
            ) from None
        params = document.get("parameters", document) if isinstance(document, dict) else None
        if not isinstance(params, dict):
            raise HyperlabError(
                f"{PARAMS_FILE_VAR}: expected a JSON object with a 'parameters' object in "
                f"{path!r}, got {document!r}"
            )
        channel = _Channel(env.get("HYPERLAB_CHANNEL"))
        seed = env.get("HYPERLAB_SEED", "")
        devices = env.get("HYPERLAB_DEVICES", "")
        _process_context = TrialContext(
            int(env.get("HYPERLAB_TRIAL_NUMBER", "0")),
            env.get("HYPERLAB_TRIAL_ID", "?"),
            params,
            int(seed) if seed else None,
            env.get("HYPERLAB_TRIAL_DIR") or None,
            channel.report,
            devices=tuple(int(d) for d in devices.split(",") if d),
            emit_final=channel.final,
        )
        return _process_context


class _Channel:
    """The writing end of a command trial's metrics channel: a file of tagged JSON lines.

    Every line is appended with one ``write`` on an ``O_APPEND`` descriptor, so lines from
    several processes of one trial never interleave, and the driver sees each one at once.
    Without a channel path, reports are dropped.
    """

    __slots__ = ("fd", "path")

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.fd: int | None = None

    def report(self, step: int, metrics: dict) -> None:
        self.write({"tag": "report", "time": time.time(), "step": step, "metrics": metrics})

    def final(self, metrics: dict) -> None:
        self.write({"tag": "final", "time": time.time(), "metrics": metrics})

    def write(self, message: dict) -> None:
        if not self.path:
            return
        try:
            line = json.dumps(message, default=json_default) + "\n"
        except (TypeError, ValueError) as exc:
            raise HyperlabError(
                f"report(): metrics must be numbers, strings, lists or dicts, got "
                f"{message['metrics']!r} ({exc})"
            ) from None
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self.fd, line.encode("utf-8"))


def json_default(value: Any) -> Any:
    """JSON fallback: numpy/torch scalars and arrays as Python numbers and lists."""
    for method in ("item", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                return convert()
            except (TypeError, ValueError):
                continue
    raise TypeError(f"{type(value).__name__} {value!r} is not JSON serializable")


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
    n_args = _arity(objective)
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


def _arity(fn: Callable) -> int:
    """``_positional_arity`` cached per function (objectives are called thousands of times)."""
    try:
        return _cached_arity(fn)
    except TypeError:  # an unhashable callable object
        return _positional_arity(fn)


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


_cached_arity = functools.lru_cache(maxsize=64)(_positional_arity)


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
        return ctx.final if ctx.final is not None else ctx.last
    return as_metrics(result)


def is_finite_number(x: Any) -> bool:
    """True for real numbers that are neither NaN nor infinite (bools excluded)."""
    if isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except TypeError:
        return False
