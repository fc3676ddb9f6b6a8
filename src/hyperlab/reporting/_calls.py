"""The calls a trial makes: parameters, reports, requests, its folder, checkpoints.

Each works in every executor, on the current trial (``hyperlab.reporting.context``).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperlab.errors import HyperlabError, TrialStopped
from hyperlab.reporting import checkpoints as disk
from hyperlab.reporting.channel import json_default
from hyperlab.reporting.context import TrialContext, current, process_context

__all__ = [
    "checkpoint",
    "get_params",
    "load_checkpoint",
    "report",
    "should_stop",
    "suggest",
    "trial_devices",
    "trial_dir",
    "trial_seed",
]


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
    trial's newest ``checkpoint_keep`` checkpoints are kept (with ``checkpoint_score``, the
    ``checkpoint_keep`` whose reports scored best, and the newest). A checkpoint is written whole
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
    disk.prune(folder, ctx.checkpoint_keep, ctx.checkpoint_score)
    if ctx.stop_requested:
        raise TrialStopped(f"trial {ctx.trial_id} was told to stop (its checkpoint is saved)")
    return path


def load_checkpoint() -> dict[str, Any] | Path | None:
    """The running trial's latest checkpoint: the dict it saved, or the folder of the copy.

    A trial that continues another (population based training) and has no checkpoint of its
    own gets that trial's latest, copied into its own folder first. The trial's next report
    defaults to the step after the one the checkpoint recorded. A trial run again after an
    interruption (its driver died, say) first reports again the report its checkpoint followed,
    at that step: so the store has it even if the interruption lost it. A function trial that
    then has nothing left to run ends with the value the checkpoint recorded (a paused trial
    resumed at its last step, a branch of a finished parent). A corrupt checkpoint is skipped
    with a ``RuntimeWarning`` naming its file: the one before it is loaded, or None.

    Returns:
        The saved dict, the ``Path`` of the saved folder's copy (read it before the trial's
        next ``checkpoint_keep`` checkpoints delete it), or None when there is none.

    Raises:
        HyperlabError: An intact checkpoint cannot be unpickled here (a class it holds cannot
            be imported, say).
    """
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
    report = meta.get("report")
    if ctx.last is None and isinstance(report, dict) and report:
        ctx.last = report  # a trial with nothing left to run ends with the value it resumed at
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
    ctx = process_context()
    if ctx is not None and (ctx.saving or ctx.unsaved) and os.getpid() == _sigterm_pid:
        ctx.request_stop()
        return
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
