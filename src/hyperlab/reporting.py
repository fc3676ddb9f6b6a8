"""The trial-side API: what code running inside a trial calls, in every executor.

```python
def objective(params):
    state = hyperlab.load_checkpoint() or {"epoch": -1}   # continue a paused or re-run trial
    for epoch in range(state["epoch"] + 1, 10):
        loss = train_one_epoch(params)
        hyperlab.report(loss=loss)   # intermediate result; raises TrialStopped if told to stop
        hyperlab.checkpoint({"epoch": epoch, "model": model.state_dict()})
    return {"loss": loss}            # final result
```

The executor sets the current trial's ``TrialContext`` before calling the objective: a context
variable for in-process and thread trials, a process-wide one in worker processes. In a command
trial nobody sets one: the first call builds it from the ``HYPERLAB_*`` environment variables
the ``command`` executor gives the process (``HYPERLAB_PARAMS_FILE`` and friends), and reports
go out as JSON lines appended to the ``HYPERLAB_CHANNEL`` file.

``checkpoint`` saves a trial's state in its folder and ``load_checkpoint`` reads the latest
back, so that a paused or re-run trial continues; the files and how they are written atomically
are described in ``hyperlab.executors._checkpoints``.
"""

from __future__ import annotations

import contextvars
import json
import math
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from hyperlab.errors import HyperlabError, TrialStopped

__all__ = [
    "TrialContext",
    "checkpoint",
    "find_current",
    "get_params",
    "load_checkpoint",
    "report",
    "should_stop",
    "suggest",
    "trial_devices",
    "trial_dir",
    "trial_seed",
]

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

PARAMS_FILE_VAR = "HYPERLAB_PARAMS_FILE"
"""The environment variable that marks a command trial: the path of its parameter file."""
CHECKPOINTS_DIR = "checkpoints"
"""The folder of a trial's checkpoints, inside its own folder."""
ANSWERS_DIR = "answers"
"""The folder where the driver answers a command trial's requests for parameters."""
ANSWER_POLL = 0.01
"""Seconds between two looks for the driver's answer to a command trial's request."""


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
        attempt: Which run of the trial this is (1, then one more each time it runs again
            after an interruption).
        command: True in a command trial, which defers SIGTERM while a reported step is not
            yet saved by the ``checkpoint`` that follows it.
        ask: How the trial asks the driver (``request``), or None where trials cannot.
    """

    __slots__ = (
        "_stop_requested",
        "ask",
        "asked",
        "attempt",
        "checkpoint_dir",
        "checkpoint_keep",
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
        attempt: int = 1,
        command: bool = False,
        ask: Ask | None = None,
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
            checkpoint_dir = os.path.join(trial_dir, CHECKPOINTS_DIR)
        self.checkpoint_dir = checkpoint_dir
        self.restore_dir = restore_dir
        self.checkpoint_keep = checkpoint_keep
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
        self, value: Any = None, step: int | None = None, metrics: dict | None = None
    ) -> dict:
        """Send one intermediate result; returns the metrics dict that was sent.

        A trial told to stop is stopped (``TrialStopped``) before it sends anything. When the
        stop comes while it sends (an in-process assessor decides at once), a trial that
        checkpoints is let go on to save this step: its next ``checkpoint`` raises, once saved.
        """
        if self._stop_requested:
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
        if self._stop_requested and not self.checkpointing:  # decided during emit
            raise TrialStopped(f"trial {self.trial_id} was told to stop")
        return merged

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
        keep = env.get("HYPERLAB_CHECKPOINT_KEEP", "")
        attempt = env.get("HYPERLAB_ATTEMPT", "")
        _process_context = TrialContext(
            int(env.get("HYPERLAB_TRIAL_NUMBER", "0")),
            env.get("HYPERLAB_TRIAL_ID", "?"),
            params,
            int(seed) if seed else None,
            env.get("HYPERLAB_TRIAL_DIR") or None,
            channel.report,
            devices=tuple(int(d) for d in devices.split(",") if d),
            emit_final=channel.final,
            checkpoint_dir=env.get("HYPERLAB_CHECKPOINT_DIR") or None,
            restore_dir=env.get("HYPERLAB_RESTORE_DIR") or None,
            checkpoint_keep=int(keep) if keep.isdigit() and int(keep) > 0 else 1,
            attempt=int(attempt) if attempt.isdigit() else 1,
            command=True,
        )
        if channel.path and _process_context.trial_dir:
            _process_context.ask = channel.ask
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

    def ask(self, ctx: TrialContext, index: int, kind: RequestKind, name: str, spec: dict) -> Any:
        """A command trial's ``ask``: a ``request`` line on the channel, then a wait for the
        driver's answer, written to ``answers/<attempt>-<index>.json`` in the trial's folder."""
        answer = Path(ctx.trial_dir or ".") / ANSWERS_DIR / f"{ctx.attempt}-{index}.json"
        message = {"tag": "request", "time": time.time(), "index": index, "kind": kind}
        self.write({**message, "name": name, "spec": spec})
        while True:
            try:
                with open(answer, encoding="utf-8") as f:
                    got = json.load(f)
                break
            except FileNotFoundError:
                time.sleep(ANSWER_POLL)
        if got.get("error") is not None:
            raise ValueError(got["error"])
        return got.get("value")

    def write(self, message: dict) -> None:
        if not self.path:
            return
        try:
            line = json.dumps(message, default=json_default) + "\n"
        except (TypeError, ValueError) as exc:
            raise HyperlabError(
                f"report(): metrics must be numbers, strings, lists or dicts, got "
                f"{message.get('metrics', message)!r} ({exc})"
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


def should_stop() -> bool:
    """Whether the running trial should stop now (Optuna's ``trial.should_prune()``).

    True once it was told to stop, or when the assessor decided so on the reports it sent
    so far: the driver is asked, so the answer takes every earlier ``report`` into account.
    A trial that gets True should end soon (``raise hyperlab.TrialStopped``, or return);
    its next ``report`` raises ``TrialStopped`` anyway.
    """
    return current().should_stop()


def suggest(name: str, distribution: Any) -> Any:
    """The running trial's value of parameter ``name``, defined here, as it runs (define by
    run, as Optuna's ``trial.suggest_*``).

    The first call for ``name`` asks the driver, which answers with the value its tuner
    proposed when ``name`` is in the search space, or else draws one from ``distribution``
    (seeded by the trial's seed) and adds ``name`` to the experiment's search space. Either
    way the value is in the trial's params, in the store. Later calls return the same value.

    Args:
        name: The parameter's name.
        distribution: A hyperlab parameter (``hyperlab.loguniform(1e-4, 1e-1)``...) or its
            NNI spec (``{"_type": "loguniform", "_value": [1e-4, 0.1]}``).

    Raises:
        SearchSpaceError: ``distribution`` is not a valid parameter (named).
        ValueError: It contradicts how ``name`` is defined in the search space or was asked
            before in this trial; the message names both definitions.
        HyperlabError: Outside a trial, or in a command or research trial.
    """
    from hyperlab.space import SearchSpace

    ctx = current()
    spec = SearchSpace({name: distribution}).to_nni()[name]
    return ctx.suggest(name, spec)


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


def checkpoint(state: Mapping[str, Any] | str | os.PathLike) -> Path:
    """Save the running trial's state, so that a paused or re-run trial continues from it.

    Call it right after ``report``: the checkpoint records the step of the trial's last report,
    and ``load_checkpoint`` makes the next report's default step the one after it. Only the
    trial's newest ``checkpoint_keep`` checkpoints are kept. A checkpoint is written whole
    (files fsynced, then renamed into place), so a trial killed meanwhile leaves nothing that
    is ever loaded.

    Args:
        state: A dict of picklable values (pickled with cloudpickle), or the path of a folder
            whose contents are copied (model files saved by a framework, say).

    Returns:
        The checkpoint's folder, ``<trial folder>/checkpoints/checkpoint-<n>``.

    Raises:
        HyperlabError: The trial has no folder, ``state`` is neither a dict nor a folder, or
            a value cannot be pickled (the message names its key and type).
        TrialStopped: The trial has been told to stop: raised once the state is saved.
    """
    from hyperlab.executors import _checkpoints as disk

    ctx = current()
    if ctx.checkpoint_dir is None:
        raise HyperlabError(
            f"checkpoint(): trial {ctx.trial_id} has no folder to keep checkpoints in "
            "(its executor gave it none)"
        )
    payload, source = None, None
    if isinstance(state, (str, os.PathLike)):
        source = Path(state)
        if not source.is_dir():
            raise HyperlabError(
                f"checkpoint(): expected a dict of picklable values or a folder to copy, got "
                f"the path {os.fspath(state)!r}, which is not a folder"
            )
        if Path(ctx.checkpoint_dir).resolve().is_relative_to(source.resolve()):
            raise HyperlabError(
                f"checkpoint(): the folder to copy, {os.fspath(state)!r}, holds the trial's "
                f"checkpoints folder {ctx.checkpoint_dir!r}: save what to keep in a folder of "
                "its own"
            )
    elif isinstance(state, Mapping):
        payload = disk.pickle_state(state)
    else:
        raise HyperlabError(
            "checkpoint(): expected a dict of picklable values or a folder to copy, got "
            f"{disk.type_name(state)}"
        )
    _start_checkpointing(ctx)
    folder = Path(ctx.checkpoint_dir)
    ctx.saving = True
    try:
        meta = {
            "step": ctx.last_step,
            "report": _as_json(ctx.last),
            "trial_id": ctx.trial_id,
            "attempt": ctx.attempt,
        }
        path = disk.write_checkpoint(folder, meta, payload=payload, source=source)
    finally:
        ctx.saving = False
    ctx.unsaved = False
    disk.prune(folder, ctx.checkpoint_keep)
    if ctx.stop_requested:
        raise TrialStopped(f"trial {ctx.trial_id} was told to stop (its checkpoint is saved)")
    return path


def load_checkpoint() -> dict[str, Any] | Path | None:
    """The running trial's latest checkpoint: the dict it saved, or the folder of the copy.

    A trial that continues another (population based training) and has no checkpoint of its
    own gets that trial's latest, copied into its own folder first. The trial's next report
    defaults to the step after the one the checkpoint recorded. A trial run again after an
    interruption (its driver died, say) first reports again the report its checkpoint followed,
    at that step: so the store has it even if the interruption lost it. A corrupt checkpoint is
    skipped with a ``RuntimeWarning`` naming its file: the one before it is loaded, or None.

    Returns:
        The saved dict, the ``Path`` of the saved folder's copy (read it before the trial's
        next ``checkpoint_keep`` checkpoints delete it), or None when there is none.

    Raises:
        HyperlabError: An intact checkpoint cannot be unpickled here (a class it holds cannot
            be imported, say).
    """
    from hyperlab.executors import _checkpoints as disk

    ctx = current()
    _start_checkpointing(ctx)
    own = None if ctx.checkpoint_dir is None else Path(ctx.checkpoint_dir)
    corrupt: list[disk.Corrupt] = []
    found = None
    if own is not None:
        found = disk.latest(own, corrupt)
    if found is None and ctx.restore_dir is not None:
        parent, skipped = Path(ctx.restore_dir), len(corrupt)
        found = disk.latest(parent, corrupt, copy_to=own, trial_id=ctx.trial_id)
        if found is None and len(corrupt) == skipped:
            warnings.warn(
                f"hyperlab: trial {ctx.trial_id} continues from {parent}, which holds no "
                "checkpoint: it starts from scratch",
                RuntimeWarning,
                stacklevel=2,
            )
    where = "starts from scratch" if found is None else f"continues from {found[2]}"
    for bad in corrupt:
        warnings.warn(
            f"hyperlab: checkpoint file {bad.file} is corrupt ({bad.reason}); it is skipped "
            f"and trial {ctx.trial_id} {where}",
            RuntimeWarning,
            stacklevel=2,
        )
    if found is None:
        return None
    value, meta, path = found
    step = meta.get("step")
    if isinstance(step, int) and not isinstance(step, bool):
        ctx.last_step, ctx.next_step = step, step + 1
        _report_again(ctx, meta, own is not None and path.parent == own)
    ctx.unsaved = False
    return value


def _as_json(metrics: dict | None) -> Any:
    """``metrics`` as JSON values (numpy scalars as numbers), or None if they are not."""
    try:
        return json.loads(json.dumps(metrics, default=json_default))
    except (TypeError, ValueError):
        return None


def _report_again(ctx: TrialContext, meta: dict[str, Any], own: bool) -> None:
    """In a trial run again, send the report its own checkpoint of an earlier run followed."""
    attempt, report = meta.get("attempt"), meta.get("report")
    if not own or not isinstance(attempt, int) or attempt >= ctx.attempt:
        return  # a resumed pause (the same run), or a branch's copy of its parent's
    if isinstance(report, dict) and report and ctx.last_step is not None:
        ctx.emit(ctx.last_step, report)
        ctx.last = report


class TrialTimeout(Exception):
    """Raised by ``report`` in an in-process trial that ran past its deadline."""


_sigterm_guarded = False
_sigterm_pid = 0  # the process that guards its SIGTERM (not its forked children)


def _start_checkpointing(ctx: TrialContext) -> None:
    """Mark the trial as one that checkpoints; in a command trial, guard its SIGTERM.

    A command trial is stopped by SIGTERM. Between a report and the checkpoint that saves its
    step (or while a checkpoint is written) the signal is deferred: the trial then stops when
    that checkpoint is saved, or at its next report. Elsewhere SIGTERM acts as by default, and
    always in processes forked from the trial's. A script that set its own SIGTERM handler keeps
    it.
    """
    global _sigterm_guarded, _sigterm_pid
    ctx.checkpointing = True
    if not ctx.command or _sigterm_guarded:
        return
    _sigterm_guarded = True
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        _sigterm_pid = os.getpid()
        signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: Any) -> None:
    ctx = _process_context
    if ctx is not None and (ctx.saving or ctx.unsaved) and os.getpid() == _sigterm_pid:
        ctx.request_stop()
        return
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def is_finite_number(x: Any) -> bool:
    """True for real numbers that are neither NaN nor infinite (bools excluded)."""
    if isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except TypeError:
        return False
