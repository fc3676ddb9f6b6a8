"""Function trainables in each of the forms Ray Tune has taken, checked before anything runs
and called as Ray calls them.

- ``f(config)``: reports with ``tune.report`` (or ``tune.track.log``);
- ``f(config, reporter)`` (Ray before 2.0): reports with ``reporter(**metrics)``, hyperlab's
  ``StatusReporter`` sending through the trial's session (``done=True`` ends the function; in
  a trial told to stop it raises ``StopIteration``);
- ``f(config, checkpoint_dir=None)`` (Ray 1.x): gets the folder of the trial's latest
  checkpoint (None on a fresh start) and saves new ones with ``tune.checkpoint_dir(step)``.

A generator's yielded values and a function's returned value are results, as in Ray: a dict
of metrics, or a number (the metric ``_metric``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Number
from pathlib import Path
from typing import Any

from hyperlab.compat.ray.tune._session import CriteriaMet, Session
from hyperlab.compat.ray.tune._trainable import WithParameters
from hyperlab.errors import TrialStopped
from hyperlab.executors import StatusReporter

__all__ = ["Form", "RayReporter", "function_form", "run_function"]

FORMS = "def f(config), def f(config, reporter) or def f(config, checkpoint_dir=None)"
"""The function trainables hyperlab runs, as error messages name them."""
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


@dataclass(frozen=True)
class Form:
    """How a function trainable is called.

    Attributes:
        reporter: It gets a reporter, as its second positional argument (``by_keyword``:
            as the keyword argument ``reporter``).
        checkpoint_dir: It gets ``checkpoint_dir=`` (the latest checkpoint's folder, or None).
    """

    reporter: bool = False
    by_keyword: bool = False
    checkpoint_dir: bool = False


def function_form(function: Callable[..., Any]) -> Form:
    """How Ray would call ``function``; raises when it cannot be called with a config.

    A second positional parameter is the reporter if it is required or named ``reporter``
    (Ray 0.x gave any second argument a reporter, Ray 1.x only one named so); a parameter
    named ``checkpoint_dir`` gets the checkpoint folder. Other parameters must have defaults.

    Raises:
        TypeError: ``function`` needs arguments Ray never gives, named with what to write.
    """
    target, bound = (
        (function.function, frozenset(function.kwargs))
        if isinstance(function, WithParameters)
        else (function, frozenset())
    )
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # no signature to read (some builtins): f(config)
        return Form()
    params = [p for name, p in signature.parameters.items() if name not in bound]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = {p.name: p for p in params if p.kind is not p.POSITIONAL_ONLY}
    checkpoint = "checkpoint_dir" in named and named["checkpoint_dir"].kind is not _VAR_KEYWORD
    second = positional[1] if len(positional) > 1 else None
    form = Form(checkpoint_dir=checkpoint)
    if second is not None and second.name != "checkpoint_dir":
        if second.default is second.empty or second.name == "reporter":
            form = Form(reporter=True, checkpoint_dir=checkpoint)
    elif "reporter" in named and named["reporter"].kind is named["reporter"].KEYWORD_ONLY:
        form = Form(reporter=True, by_keyword=True, checkpoint_dir=checkpoint)
    args, kwargs = _arguments(form, {}, object(), None)
    try:
        signature.bind(*args, **kwargs, **dict.fromkeys(bound))
    except TypeError as exc:
        name = getattr(function, "__name__", type(function).__name__)
        raise TypeError(
            f"trainable {name}{signature}: cannot be called as Ray calls a function trainable "
            f"({exc}); write {FORMS}, and give other values with tune.with_parameters"
        ) from None
    return form


def _arguments(
    form: Form, config: Any, reporter: Any, folder: str | None
) -> tuple[list[Any], dict[str, Any]]:
    args: list[Any] = [config]
    kwargs: dict[str, Any] = {}
    if form.reporter and form.by_keyword:
        kwargs["reporter"] = reporter
    elif form.reporter:
        args.append(reporter)
    if form.checkpoint_dir:
        kwargs["checkpoint_dir"] = folder
    return args, kwargs


class RayReporter(StatusReporter):
    """The ``reporter`` of ``f(config, reporter)``: hyperlab's ``StatusReporter`` sending
    through the trial's session, with Ray's ``trial_name`` and ``trial_id``."""

    __slots__ = ("_session",)

    def __init__(self, session: Session) -> None:
        super().__init__(session.ctx, lambda value, metrics: _send(session, value, metrics))
        self._session = session

    @property
    def trial_id(self) -> str:
        """The trial's id: ``<experiment id>-<number>``."""
        return self._session.ctx.trial_id

    @property
    def trial_name(self) -> str:
        """``<trainable name>_<trial id>``, as Ray names trials."""
        return f"{self._session.trainable_name}_{self._session.ctx.trial_id}"


def _send(session: Session, value: Any, metrics: dict[str, Any]) -> None:
    if value is not None:  # Ray's reporter takes keywords only; hyperlab's a value too
        metrics = {**_result(value), **metrics}
    if session.log(metrics):
        raise CriteriaMet


def run_function(function: Callable[..., Any], session: Session) -> None:
    """Run one trial of ``function`` in ``session``: restore the trial's latest checkpoint
    (``tune.get_checkpoint``, ``checkpoint_dir``), call it in its form, report what it yields
    or returns, and save a checkpoint it made with ``tune.checkpoint_dir`` after its last
    report.

    Raises:
        ValueError: It yielded something that is not a result (a returned object that is not
            one is ignored, as Ray 0.x ignored return values); the trial's latest checkpoint
            is a dict and it takes a ``checkpoint_dir``.
        TrialStopped: The trial was stopped (``StopIteration`` of Ray's reporter is one).
    """
    form = function_form(function)
    state = session.restore()
    folder = None
    if form.checkpoint_dir and state is not None:
        if not isinstance(state, Path):
            raise ValueError(
                f"checkpoint_dir: trial {session.ctx.trial_id} continues from a dict "
                "checkpoint (Checkpoint.from_dict), which has no folder; save checkpoints "
                "with tune.checkpoint_dir(step=...) in a function taking checkpoint_dir"
            )
        folder = os.fspath(state)
    reporter = RayReporter(session) if form.reporter else None
    args, kwargs = _arguments(form, session.config, reporter, folder)
    try:
        output = function(*args, **kwargs)
        if inspect.isgenerator(output):
            for value in output:
                _handle(session, _result(value, "yielded"))
        elif output is not None and _is_result(output):  # other objects: ignored, as by Ray 0.x
            _handle(session, _result(output, "returned"))
    except StopIteration:  # Ray's runner ends a reporter function that raises it, quietly
        if not form.reporter or session.ctx.stop_requested:
            raise
    except RuntimeError as exc:  # PEP 479 wraps a reporter's stop inside a generator
        if isinstance(exc.__cause__, TrialStopped):
            raise exc.__cause__ from None
        raise
    session.save_pending()


def _handle(session: Session, result: dict[str, Any]) -> None:
    """Report a yielded or returned result; an empty one is skipped, as Ray skips it."""
    if result and session.log(result):
        raise CriteriaMet


def _is_result(value: Any) -> bool:
    return isinstance(value, Mapping) or (isinstance(value, Number) and not isinstance(value, bool))


def _result(value: Any, how: str = "reported") -> dict[str, Any]:
    """A result as Ray takes it: a dict of metrics, or a number as the metric ``_metric``."""
    if isinstance(value, Mapping):
        return dict(value)
    if _is_result(value):
        return {"_metric": value}
    raise ValueError(
        f"a function trainable {how} {type(value).__name__} {value!r:.80}: give a dict of "
        "metrics or a number (the metric '_metric'), or report with tune.report"
    )
