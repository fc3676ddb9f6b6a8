"""Run one trial in the current thread and say how it ended: shared by every local executor.

The objective is called with the arguments its signature asks for: none, the params, or the
params and a Ray Tune style ``reporter`` (``StatusReporter``); a generator's values are its
reports.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from hyperlab.errors import TrialStopped
from hyperlab.executors.base import Failed, Finished, Stopped, TrialEnd, TrialSpec
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR
from hyperlab.reporting.context import (
    Ask,
    Emit,
    TrialContext,
    TrialTimeout,
    activate,
    as_metrics,
    deactivate,
)

__all__ = [
    "ReporterStopped",
    "StatusReporter",
    "format_error",
    "make_context",
    "run_objective",
    "run_trial",
]

MAX_ERROR_CHARS = 8000
TIME_THIS_ITER_S = "time_this_iter_s"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def make_context(
    spec: TrialSpec,
    emit: Emit,
    *,
    deadline: float | None = None,
    ask: Ask | None = None,
    synchronous: bool = False,
) -> TrialContext:
    """The trial-side context for ``spec``, reporting through ``emit`` and asking the driver
    (``hyperlab.suggest``, verdicts) through ``ask``.

    Its reports are round trips when ``spec.round_trip`` says something listens, unless
    ``synchronous``: ``emit`` itself runs the driver's handler, which decides before it returns.
    """
    restore = spec.restore_from
    return TrialContext(
        spec.number,
        spec.trial_id,
        spec.params,
        spec.seed,
        spec.trial_dir,
        emit,
        deadline=deadline,
        devices=spec.devices,
        restore_dir=None if restore is None else os.path.join(restore, CHECKPOINTS_DIR),
        checkpoint_keep=spec.checkpoint_keep,
        checkpoint_score=spec.checkpoint_score,
        attempt=spec.attempt,
        ask=ask,
        round_trip=spec.round_trip and not synchronous,
    )


def run_trial(objective: Callable[..., Any], ctx: TrialContext) -> TrialEnd:
    """Run ``objective`` with ``ctx`` as the current trial; how it ended, stamped now.

    Returns:
        ``Finished`` with the final metrics, ``Stopped`` with the last report (also when the
        objective returned nothing after it was told to stop, as Ray-style code that catches
        the reporter's ``StopIteration`` does), or ``Failed`` with the error's text and the
        exception the objective raised. ``KeyboardInterrupt`` and ``SystemExit`` propagate.
    """
    token = activate(ctx)
    number = ctx.number
    try:
        metrics = run_objective(objective, ctx)
    except TrialStopped:
        return Stopped(number, time.time(), ctx.last)
    except TrialTimeout as exc:
        return Failed(number, time.time(), str(exc))
    except Exception as exc:
        return Failed(number, time.time(), format_error(), exc)
    finally:
        deactivate(token)
    if metrics is None and ctx.stop_requested:  # told to stop, it returned without a result
        return Stopped(number, time.time(), ctx.last)
    if metrics is None:
        return Failed(number, time.time(), "the objective returned None and reported no result")
    return Finished(number, time.time(), metrics)


def format_error() -> str:
    """The current exception's traceback from its first frame outside hyperlab (the user's
    code, as Optuna and Ray Tune show it; whole if every frame is hyperlab's), cut to its last
    ``MAX_ERROR_CHARS`` characters."""
    exc = sys.exc_info()[1]
    if exc is None:
        return ""
    first = exc.__traceback__
    while first is not None and _is_hyperlab(first.tb_frame.f_code.co_filename):
        first = first.tb_next
    shown = exc.__traceback__ if first is None else first
    text = "".join(traceback.format_exception(type(exc), exc, shown)).rstrip()
    return text if len(text) <= MAX_ERROR_CHARS else "..." + text[-MAX_ERROR_CHARS:]


def _is_hyperlab(filename: str) -> bool:
    """Whether ``filename`` is one of hyperlab's own modules."""
    return os.path.abspath(filename).startswith(_PACKAGE_DIR)


class ReporterStopped(TrialStopped, StopIteration):
    """What a Ray-style reporter raises in a trial told to stop: a ``TrialStopped`` that is
    also a ``StopIteration``, so Ray Tune code that catches the latter keeps working."""


class _Done(Exception):
    """Raised by a reporter called with ``done=True`` to end the objective."""


class StatusReporter:
    """The ``reporter`` of an objective ``f(params, reporter)``, as Ray Tune's function API has it.

    ``reporter(mean_loss=0.3)`` reports, adding ``time_this_iter_s`` (seconds since the
    previous report, or since the objective started) unless given; ``done=True`` ends the
    objective after reporting. In a trial told to stop, a call raises ``ReporterStopped``.
    ``logdir`` is the trial's folder (a string), or None without one.

    Args:
        ctx: The trial's context.
        send: Where a call's result goes, as ``send(value, metrics)``; by default the trial's
            own ``report``. ``hyperlab.compat.ray`` sends through its session, which adds
            Ray's automatic metrics and checks the run's stop criteria.
    """

    __slots__ = ("_ctx", "_last", "_send")

    def __init__(
        self, ctx: TrialContext, send: Callable[[Any, dict[str, Any]], object] | None = None
    ) -> None:
        self._ctx = ctx
        self._last = time.monotonic()
        self._send = send

    def __call__(self, value: Any = None, *, done: bool = False, **metrics: Any) -> None:
        now = time.monotonic()
        if value is not None or metrics:
            given = isinstance(value, dict) and TIME_THIS_ITER_S in value
            if not given and TIME_THIS_ITER_S not in metrics:
                metrics[TIME_THIS_ITER_S] = now - self._last
            self._last = now
            try:
                if self._send is None:
                    self._ctx.report(value, None, metrics)
                else:
                    self._send(value, metrics)
            except ReporterStopped:
                raise
            except TrialStopped as exc:
                raise ReporterStopped(*exc.args) from None
        elif self._ctx.stop_requested:
            raise ReporterStopped(f"trial {self._ctx.trial_id} was told to stop")
        if done:
            raise _Done

    @property
    def logdir(self) -> str | None:
        """The trial's folder (created on first use), like Ray's ``reporter.logdir``."""
        folder = self._ctx.trial_dir
        if folder is not None:
            os.makedirs(folder, exist_ok=True)
        return folder


def _call(objective: Callable, ctx: TrialContext) -> Any:
    """Call the objective with the arguments its signature asks for."""
    n_args = _arity(objective)
    if n_args == 0:
        return objective()
    if n_args == 1:
        return objective(ctx.params)
    try:
        return objective(ctx.params, StatusReporter(ctx))
    except TrialStopped:
        raise
    except StopIteration:  # Ray's runner ends a function that raises it without an error
        return None


def _arity(fn: Callable) -> int:
    """``_positional_arity`` cached per function (objectives are called thousands of times)."""
    try:
        return _cached_arity(fn)
    except TypeError:  # an unhashable callable object
        return _positional_arity(fn)


def _positional_arity(fn: Callable) -> int:
    """How many positional arguments ``fn`` takes, capped at 2 (0, params, reporter).

    A parameter named ``checkpoint_dir`` and those after it do not count: Ray's
    ``f(config, checkpoint_dir=None)`` is a function of its config, not of a reporter.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have no signature: assume (params)
        return 1
    count = 0
    for p in sig.parameters.values():
        if p.name == "checkpoint_dir":
            break
        if p.kind is p.VAR_POSITIONAL:
            return 2 if count < 2 else count
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return min(count, 2)


_cached_arity = functools.lru_cache(maxsize=64)(_positional_arity)


def run_objective(objective: Callable, ctx: TrialContext) -> dict | None:
    """Run ``objective`` for ``ctx`` and return its final metrics.

    The final result is what the objective returned (a number or a dict), or, when it returned
    None, the final result it declared (NNI's) or else its last report (for generators: the
    last value yielded). Once it reported, as Ray Tune has it, what a Ray-style
    ``f(config, reporter)`` returns is ignored, and so is anything but a number or a dict that
    any objective returns (``return model`` after the reports). Exceptions propagate.
    """
    try:
        result = _call(objective, ctx)
        if inspect.isgenerator(result):
            try:
                while True:
                    ctx.report(next(result))
            except StopIteration as stop:
                result = stop.value
            except RuntimeError as exc:  # PEP 479 wraps a reporter's stop inside a generator
                if isinstance(exc.__cause__, TrialStopped):
                    raise exc.__cause__ from None
                raise
    except _Done:
        result = None
    reported = ctx.last is not None
    if reported and (_arity(objective) == 2 or not isinstance(result, (dict, numbers.Real))):
        result = None  # Ray's rule: what the function returns after its reports is ignored
    if result is None:
        if ctx.stop_requested:  # it ended by itself once told to stop: run_trial says Stopped
            return None
        return ctx.final if ctx.final is not None else ctx.last
    return as_metrics(result)
