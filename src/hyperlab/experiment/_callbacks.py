"""User callbacks: code the driver calls as trials start, report and end.

As NNI's execution engines dispatch model events to callbacks, the driver calls each callback's
``on_trial_start``, ``on_report`` and ``on_trial_end``. The calls happen in the driver's thread,
one at a time, with frozen records, after the store row they describe was written. A callback
that raises is logged (once per callback and method) and never ends the experiment.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from hyperlab.errors import ConfigError
from hyperlab.trial import Report, Trial

__all__ = ["HOOKS", "Callback", "CallbackRunner", "check_callbacks"]

HOOKS = ("on_trial_start", "on_report", "on_trial_end")
"""The methods the driver calls, in the order a trial meets them."""

_log = logging.getLogger(__name__)


class Callback:
    """Hooks called by the driver as trials start, report and end; each does nothing here.

    Subclass it and override the methods you need, or pass any object that has some of them:
    ``hyperlab.run(..., callbacks=[MyCallback()])``. The driver calls them in its own thread
    (never concurrently), with frozen records, after the store row they describe was written,
    so ``hyperlab.load`` already shows what they are told. A callback that raises is logged
    once per callback and method (``logging``, logger ``hyperlab.experiment._callbacks``) and
    the experiment goes on. Callbacks are not stored: pass them again to ``resume``.
    Keep them quick: the driver waits for them.

    Example:
        >>> class Printer(hyperlab.Callback):
        ...     def on_trial_end(self, trial):
        ...         print(trial.number, trial.status, trial.value)
        >>> hyperlab.run(objective, space, max_trials=10, callbacks=[Printer()])
    """

    def on_trial_start(self, trial: Trial) -> None:
        """``trial`` (RUNNING) started; also for a trial resumed after a pause or adopted by
        a resumed experiment."""

    def on_report(self, trial: Trial, report: Report) -> None:
        """``trial`` (RUNNING, without its reports) reported ``report``."""

    def on_trial_end(self, trial: Trial) -> None:
        """``trial`` ended: SUCCEEDED, FAILED, EARLY_STOPPED, USER_CANCELED, or SYS_CANCELED
        when the experiment's end interrupted it (it runs again on resume). A paused trial
        ends later, when it does; the record comes without its reports."""


def check_callbacks(callbacks: Sequence[Any] | None) -> tuple[Any, ...]:
    """The callbacks as a tuple, checked: each has at least one of ``HOOKS``, all callable.

    Raises:
        ConfigError: ``callbacks`` is not a list or tuple, or an item has no hook, or a hook
            that is not callable (naming the item and what it got).
    """
    if callbacks is None:
        return ()
    if isinstance(callbacks, str | bytes) or not isinstance(callbacks, Sequence):
        raise ConfigError(
            f"callbacks: expected a list of callbacks (objects with {', '.join(HOOKS)} "
            f"methods, such as hyperlab.Callback), got {callbacks!r}; pass [callback] for one"
        )
    for index, callback in enumerate(callbacks):
        found = [name for name in HOOKS if hasattr(callback, name)]
        if not found:
            raise ConfigError(
                f"callbacks[{index}]: expected an object with an on_trial_start, on_report or "
                f"on_trial_end method (such as a hyperlab.Callback), got {callback!r}"
            )
        for name in found:
            if not callable(getattr(callback, name)):
                raise ConfigError(
                    f"callbacks[{index}].{name}: expected a method, got {getattr(callback, name)!r}"
                )
    return tuple(callbacks)


class _Hook(NamedTuple):
    label: str  # "callbacks[0] (Printer).on_report", for the log
    method: Callable[..., Any]


class CallbackRunner:
    """Calls the callbacks' hooks for the driver and keeps their errors from it.

    Args:
        callbacks: As ``check_callbacks`` returned them.
        experiment_id: Named in the log line of a callback's error.
        keep_errors: Keep a callback's first error in ``error`` rather than log it
            (``callbacks_raise=True``): the driver's loop raises it, which ends the run in
            ERROR; never from inside a trial that reported, whatever its executor.
    """

    def __init__(
        self, callbacks: Sequence[Any], experiment_id: str, *, keep_errors: bool = False
    ) -> None:
        self.experiment_id = experiment_id
        self.keep_errors = keep_errors
        self.error: Exception | None = None
        self._hooks: dict[str, list[_Hook]] = {name: [] for name in HOOKS}
        for index, callback in enumerate(callbacks):
            for name in HOOKS:
                method = getattr(callback, name, None)
                no_op = getattr(method, "__func__", None) is getattr(Callback, name)
                if method is not None and not no_op:  # Callback's own hooks do nothing
                    label = f"callbacks[{index}] ({type(callback).__qualname__}).{name}"
                    self._hooks[name].append(_Hook(label, method))
        self._logged: set[str] = set()

    def trial_started(self, trial: Trial) -> None:
        """Call every ``on_trial_start(trial)``."""
        for hook in self._hooks["on_trial_start"]:
            self._call(hook, trial.number, trial)

    def reported(self, trial: Trial, report: Report) -> None:
        """Call every ``on_report(trial, report)``."""
        for hook in self._hooks["on_report"]:
            self._call(hook, trial.number, trial, report)

    def trial_ended(self, trial: Trial) -> None:
        """Call every ``on_trial_end(trial)``."""
        for hook in self._hooks["on_trial_end"]:
            self._call(hook, trial.number, trial)

    def _call(self, hook: _Hook, number: int, *args: Any) -> None:
        try:
            hook.method(*args)
        except Exception as exc:
            if self.keep_errors:
                if self.error is None:
                    self.error = exc
                return
            if hook.label in self._logged:
                return
            self._logged.add(hook.label)
            _log.warning(
                "hyperlab: %s raised on trial %d of experiment %s: %s: %s; the experiment "
                "goes on, and later errors of this method are not logged",
                hook.label,
                number,
                self.experiment_id,
                type(exc).__name__,
                exc,
                exc_info=True,
            )
