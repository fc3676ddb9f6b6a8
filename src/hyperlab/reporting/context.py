"""A running trial's context: what it knows about itself and how it talks to its driver.

The executor sets the current trial's ``TrialContext`` before calling the objective: a context
variable for in-process and thread trials, a process-wide one in worker processes. In a command
trial nobody sets one: ``find_current`` builds it from the ``HYPERLAB_*`` environment variables
(``hyperlab.reporting.channel``).
"""

from __future__ import annotations

import contextvars
import json
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from hyperlab.errors import HyperlabError, TrialStopped
from hyperlab.reporting._writer import ChannelWriter
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR

__all__ = [
    "REQUEST_KINDS",
    "Ask",
    "Emit",
    "EmitFinal",
    "RequestKind",
    "TrialContext",
    "TrialTimeout",
    "activate",
    "as_metrics",
    "current",
    "deactivate",
    "find_current",
    "is_finite_number",
    "process_context",
    "set_process_context",
]

PARAMS_FILE_VAR = "HYPERLAB_PARAMS_FILE"
"""The environment variable that marks a command trial: the path of its parameter file."""

Emit = Callable[[int, dict], None]
"""How a context hands a report to its executor: ``emit(step, metrics)``."""

RequestKind = Literal["parameter", "fixed", "verdict", "early_stop", "phase"]
"""What a running trial asks the driver (``TrialContext.request``):

- ``"parameter"``: the value of parameter ``name`` drawn from ``spec`` (``hyperlab.suggest``);
- ``"fixed"``: parameter ``name`` of distribution ``spec["distribution"]`` takes the value
  ``spec["value"]`` the trial was given (Optuna's ``enqueue_trial``); answered with it;
- ``"verdict"``: whether the driver has decided to stop the trial, given every report it sent
  so far (``hyperlab.should_stop``, Optuna's ``trial.should_prune()``), a bool;
- ``"early_stop"``: the trial stops itself early, by a rule of its own (Optuna's
  ``raise TrialPruned()``): its end counts as EARLY_STOPPED, not as a cancellation;
- ``"phase"``: a multi-phase NNI trial (``nni.get_next_parameter()`` called again;
  ``hyperlab.experiment._phases``): ``spec={"index": k}`` asks for phase ``k``'s parameter
  set (k >= 1; the trial's params are phase 0), answered with a new set from the tuner, the
  same set when phase ``k`` was asked before, or None when no more can be proposed;
  ``spec={"index": k, "result": metrics}`` records phase ``k``'s final result, answered None.
"""

REQUEST_KINDS: tuple[RequestKind, ...] = (
    "parameter",
    "fixed",
    "verdict",
    "early_stop",
    "phase",
)

Ask = Callable[["TrialContext", int, RequestKind, str, dict], Any]
"""How a context asks the driver: ``ask(ctx, index, kind, name, spec)``, which waits for the
answer (``ValueError`` with the driver's error). One per executor, not per trial: it is on
every trial's path."""

EmitFinal = Callable[[dict], None]
"""How a context hands a final result (``set_final``) to its executor, if it must."""


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
        checkpoint_dir: Where its checkpoints go; default ``<trial_dir>/checkpoints``.
        restore_dir: The checkpoints folder of the trial it continues (population based
            training), read when it has none of its own, or None.
        checkpoint_keep: How many of its latest checkpoints it keeps.
        checkpoint_score: ``(metric, "min" | "max")``: keep instead the ``checkpoint_keep``
            checkpoints whose reports were best in that metric, and the newest; or None.
        attempt: Which run of the trial this is (1, then one more each time it runs again
            after an interruption).
        command: True in a command trial, which defers SIGTERM while a reported step is not
            yet saved by the ``checkpoint`` that follows it.
        ask: How the trial asks the driver (``request``), or None where trials cannot.
        round_trip: Something listens to the reports (an assessor or scheduler): each
            ``report`` then waits, through ``ask``, until the driver has taken it and decided
            on it, so a stop or pause takes effect at that very report. Executors whose
            ``emit`` already runs the driver's handler (``inprocess``) leave it False.
    """

    __slots__ = (
        "_stop_requested",
        "ask",
        "asked",
        "attempt",
        "checkpoint_dir",
        "checkpoint_keep",
        "checkpoint_score",
        "checkpointing",
        "command",
        "deadline",
        "devices",
        "emit",
        "emit_final",
        "final",
        "last",
        "last_step",
        "next_step",
        "number",
        "params",
        "requests",
        "restore_dir",
        "round_trip",
        "saving",
        "seed",
        "trial_dir",
        "trial_id",
        "unsaved",
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
        checkpoint_dir: str | None = None,
        restore_dir: str | None = None,
        checkpoint_keep: int = 1,
        checkpoint_score: tuple[str, str] | None = None,
        attempt: int = 1,
        command: bool = False,
        ask: Ask | None = None,
        round_trip: bool = False,
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
        if checkpoint_dir is None and trial_dir is not None:
            checkpoint_dir = _checkpoints_in(trial_dir)
        self.checkpoint_dir = checkpoint_dir
        self.restore_dir = restore_dir
        self.checkpoint_keep = checkpoint_keep
        self.checkpoint_score = checkpoint_score
        self.attempt = attempt
        self.command = command
        self.next_step = 0
        self.last_step: int | None = None  # the step of the last report (or loaded checkpoint)
        self.last: dict | None = None
        self.final: dict | None = None
        self.checkpointing = False  # it called checkpoint() or load_checkpoint()
        self.unsaved = False  # it reported since its last checkpoint
        self.saving = False  # a checkpoint is being written
        self._stop_requested = False
        self.ask = ask
        self.round_trip = round_trip and ask is not None
        self.asked: dict[str, dict] = {}  # name -> the spec it was asked with, in this run
        self.requests = 0  # requests made in this run: the next one's index

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
        self,
        value: Any = None,
        step: int | None = None,
        metrics: dict | None = None,
        *,
        enforce: bool = True,
    ) -> dict:
        """Send one intermediate result; returns the metrics dict that was sent.

        A trial told to stop is stopped (``TrialStopped``) before it sends anything. With
        ``round_trip`` it returns only once the driver has decided on this report. When the
        stop is decided on this report, a trial that checkpoints is let go on to save this
        step: its next ``checkpoint`` raises, once saved. With ``enforce=False`` a stop is
        only recorded, never raised, and the report is sent even once the trial was told to
        stop: the trial asks ``should_stop()`` and stops by itself, or ends as it would
        (Optuna's ``trial.report`` and ``trial.should_prune()``).
        """
        if self._stop_requested and enforce:
            raise TrialStopped(f"trial {self.trial_id} was told to stop")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TrialTimeout(f"trial {self.trial_id} exceeded its trial_timeout")
        merged = as_metrics(value, metrics)
        if step is None:
            step = self.next_step
        self.next_step = step + 1
        self.last_step = step
        self.last = merged
        self.unsaved = True
        self.emit(step, merged)
        if self.round_trip and not self._stop_requested:
            self._await_verdict()
        if self._stop_requested and enforce and not self.checkpointing:  # decided on this report
            raise TrialStopped(f"trial {self.trial_id} was told to stop")
        return merged

    def _await_verdict(self) -> None:
        """Wait until the driver has taken the report just sent and the assessor decided on
        it (a ``verdict`` request: the driver answers it after every report sent before)."""
        try:
            stop = self.request("verdict")
        except TrialStopped:  # the stop came while it waited: the flag is set
            return
        if stop:
            self._stop_requested = True

    def suggest(self, name: str, spec: dict, *, fixed: Any = None) -> Any:
        """The value of parameter ``name`` drawn from ``spec`` (NNI JSON), asked of the
        driver the first time this run asks for ``name``; the same value after that.
        With ``fixed`` (not None), the parameter takes that value instead of a drawn one, and
        the driver records it as it records a drawn one.

        Raises:
            ValueError: ``spec`` contradicts how ``name`` was asked before, in this trial or
                in the search space (the message names both definitions).
            HyperlabError: This executor's trials cannot ask for parameters.
            TrialStopped: The trial was told to stop while it waited.
        """
        before = self.asked.get(name)
        if before is not None:
            if before != spec:
                raise ValueError(
                    f"parameter {name!r}: asked as {spec} after {before} in this trial; "
                    "ask for one parameter with one distribution"
                )
            return self.params[name]
        if self.ask is None:
            raise HyperlabError(
                f"suggest({name!r}): trial {self.trial_id} runs where trials cannot ask the "
                "driver for parameters (research units, a command run outside hyperlab); "
                "declare the parameter in the search space instead"
            )
        if fixed is None:
            value = self.request("parameter", name, spec)
        else:
            value = self.request("fixed", name, {"distribution": spec, "value": fixed})
        self.asked[name] = spec
        self.params[name] = value
        return value

    def request(self, kind: RequestKind, name: str = "", spec: dict | None = None) -> Any:
        """Ask the driver (see ``RequestKind``) and wait for its answer.

        Raises:
            HyperlabError: This trial runs where it cannot ask the driver.
            ValueError: The driver refused the request (its message).
            TrialStopped: The trial was told to stop while it waited.
        """
        if self.ask is None:
            raise HyperlabError(
                f"trial {self.trial_id} runs where trials cannot ask the driver ({kind} "
                f"{name!r}): research units and commands run outside hyperlab cannot"
            )
        index, self.requests = self.requests, self.requests + 1
        return self.ask(self, index, kind, name, spec or {})

    def should_stop(self) -> bool:
        """Whether the trial should stop now: it was told to, or the driver decided so on
        the reports it sent so far (asked, where the trial can ask)."""
        if self._stop_requested:
            return True
        if self.ask is None:
            return False
        return bool(self.request("verdict"))

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


def _checkpoints_in(trial_dir: str) -> str:
    """``os.path.join(trial_dir, CHECKPOINTS_DIR)``, without its checks in the common case (a
    context is made for every trial)."""
    if os.sep == "/" and type(trial_dir) is str and trial_dir and trial_dir[-1] != "/":
        return f"{trial_dir}/{CHECKPOINTS_DIR}"
    return os.path.join(trial_dir, CHECKPOINTS_DIR)


def process_context() -> TrialContext | None:
    """The trial set for every thread of this process, if any (worker processes, commands)."""
    return _process_context


_environment_lock = threading.Lock()


def find_current() -> TrialContext | None:
    """The running trial's context, or None outside a trial.

    In a command trial nobody set one: the first call builds it from the ``HYPERLAB_*``
    variables its executor gave the process (``hyperlab.reporting.channel``).
    """
    global _process_context
    ctx = _current.get() or _process_context
    if ctx is None and PARAMS_FILE_VAR in os.environ:
        with _environment_lock:
            if _process_context is None:
                _process_context = context_from_environment(os.environ)
            ctx = _process_context
    return ctx


def context_from_environment(env: Mapping[str, str]) -> TrialContext:
    """The context of the command trial that ``env`` (its ``trial_variables``) describes.

    Raises:
        HyperlabError: The parameter file cannot be read or holds no parameters object.
    """
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
    channel = ChannelWriter(env.get("HYPERLAB_CHANNEL"))
    seed = env.get("HYPERLAB_SEED", "")
    devices = env.get("HYPERLAB_DEVICES", "")
    keep = env.get("HYPERLAB_CHECKPOINT_KEEP", "")
    order, _, score = env.get("HYPERLAB_CHECKPOINT_SCORE", "").partition(":")
    attempt = env.get("HYPERLAB_ATTEMPT", "")
    trial_dir = env.get("HYPERLAB_TRIAL_DIR") or None
    can_ask = bool(channel.path and trial_dir)
    return TrialContext(
        int(env.get("HYPERLAB_TRIAL_NUMBER", "0")),
        env.get("HYPERLAB_TRIAL_ID", "?"),
        params,
        int(seed) if seed else None,
        trial_dir,
        channel.report,
        devices=tuple(int(d) for d in devices.split(",") if d),
        emit_final=channel.final,
        checkpoint_dir=env.get("HYPERLAB_CHECKPOINT_DIR") or None,
        restore_dir=env.get("HYPERLAB_RESTORE_DIR") or None,
        checkpoint_keep=int(keep) if keep.isdigit() and int(keep) > 0 else 1,
        checkpoint_score=(score, order) if score and order in ("min", "max") else None,
        attempt=int(attempt) if attempt.isdigit() else 1,
        command=True,
        ask=channel.ask if can_ask else None,
        round_trip=env.get("HYPERLAB_ROUND_TRIP") == "1",
    )


def current() -> TrialContext:
    """The running trial's context; ``HyperlabError`` outside a trial."""
    ctx = find_current()
    if ctx is None:
        raise HyperlabError(
            "no trial is running here: hyperlab.get_params(), report() and friends work only "
            "inside a trial started by hyperlab"
        )
    return ctx


class TrialTimeout(Exception):
    """Raised by ``report`` in an in-process trial that ran past its deadline."""


def is_finite_number(x: Any) -> bool:
    """True for real numbers that are neither NaN nor infinite (bools excluded)."""
    if isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except (TypeError, OverflowError):  # not a number; an int too large for a float
        return False
