"""NNI's trial functions (``nni.trial``), answered by the running hyperlab trial.

Multi-phase trials work as in NNI: the first ``get_next_parameter()`` returns the trial's
params (phase 0); each later call asks the driver for another parameter set from the tuner
(phase 1, 2...; request kind ``"phase"``, see ``hyperlab.experiment._phases``), or returns
None when it has no more. ``report_final_result`` reports the final result of the phase the
last ``get_next_parameter()`` returned: phase 0's is the trial's own final result, a later
phase's is recorded with that phase and its tuner learns from it at once.

What the shim remembers (the current phase, its params, whether its result was reported, the
count of intermediate results) is kept per trial run, so threads running several trials in one
process, and worker processes running one trial after another, keep them apart.
"""

from __future__ import annotations

import copy
import logging
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from hyperlab.errors import HyperlabError
from hyperlab.reporting.context import TrialContext, as_metrics, find_current

__all__ = [
    "get_current_parameter",
    "get_experiment_id",
    "get_next_parameter",
    "get_next_parameters",
    "get_sequence_id",
    "get_trial_id",
    "report_final_result",
    "report_intermediate_result",
]

STANDALONE = "STANDALONE"
KEEP = 128
"""Trial runs of one process whose shim state is kept (the latest ones)."""

_logger = logging.getLogger("nni")


@dataclass
class _Run:
    """The shim's state for one run of one trial (``ctx`` None: outside any trial)."""

    ctx: TrialContext | None
    phase: int = -1  # the phase the last get_next_parameter returned; -1 before the first
    params: dict[str, Any] | None = None  # what it returned, for get_current_parameter
    reported: bool = False  # the phase's final result was reported
    sequence: int = 0  # intermediate results reported so far (NNI's "sequence")


_runs: dict[int, _Run] = {}  # id(ctx) -> its state; the run holds ctx, so the id stays its own
_runs_lock = threading.Lock()


def _run() -> _Run:
    """The state of the trial run calling, made on its first call."""
    ctx = find_current()
    with _runs_lock:
        run = _runs.get(id(ctx))
        if run is None or run.ctx is not ctx:
            run = _runs[id(ctx)] = _Run(ctx)
            while len(_runs) > KEEP:
                del _runs[next(iter(_runs))]
    return run


def get_next_parameter() -> dict[str, Any] | None:
    """The parameters of the trial's next phase: the trial's own params on the first call (a
    copy), a new set from the tuner on each later one, None when it has no more.

    Outside a hyperlab trial: ``{}`` and a ``RuntimeWarning``, like NNI without its runtime.

    Raises:
        HyperlabError: A later call in a trial that cannot ask the driver (a research unit,
            a command run outside hyperlab).
        TrialStopped: The trial was told to stop while it waited for the driver.
    """
    run = _run()
    ctx = run.ctx
    if ctx is None:
        warnings.warn(
            "Running NNI code without a hyperlab trial: get_next_parameter() returns {}",
            RuntimeWarning,
            stacklevel=2,
        )
        run.params, run.phase, run.reported = {}, 0, False
        return run.params
    if run.phase < 0:
        params: Any = ctx.params
        run.phase = 0
    else:
        index = run.phase + 1
        if ctx.ask is None:
            raise HyperlabError(
                f"nni.get_next_parameter(): trial {ctx.trial_id} asks for phase {index}, but "
                "it runs where trials cannot ask the driver for another parameter set (a "
                "research unit, a command run outside hyperlab); call it once per trial there"
            )
        params = ctx.request("phase", "", {"index": index})
        if params is None:  # no more: asking again asks for the same phase
            run.params = None
            return None
        run.phase = index
    run.params = copy.deepcopy(params)
    run.reported = False
    return run.params


def get_next_parameters() -> dict[str, Any] | None:
    """Alias of ``get_next_parameter``."""
    return get_next_parameter()


def get_current_parameter(tag: str | None = None) -> Any:
    """The parameters the last ``get_next_parameter`` returned (or the one named ``tag``);
    None before the first call, and after one that returned None."""
    params = _run().params
    if params is None:
        return None
    return params if tag is None else params[tag]


def report_intermediate_result(metric: Any) -> None:
    """Report an intermediate result: a number, or a dict whose ``default`` is the number.

    Raises:
        hyperlab.TrialStopped: In a function trial that was told to stop.
    """
    run = _run()
    if run.ctx is None:
        _logger.info("Intermediate result: %s  (Index %s)", metric, run.sequence)
    else:
        run.ctx.report(metric, None, None)
    run.sequence += 1


def report_final_result(metric: Any) -> None:
    """Report the final result of the current phase: a number, or a dict whose ``default``
    is the number. Phase 0's (also before any ``get_next_parameter``) is the trial's final
    result; a later phase's is recorded with that phase.

    Raises:
        HyperlabError: The phase already has its final result, or the last
            ``get_next_parameter()`` returned None (there is no phase to report for).
        TrialStopped: The trial was told to stop while it waited for the driver.
    """
    run = _run()
    ctx = run.ctx
    if ctx is None:
        _logger.info("Final result: %s", metric)
        return
    if run.phase >= 0 and run.params is None:
        raise HyperlabError(
            f"nni.report_final_result({metric!r}): the last nni.get_next_parameter() of trial "
            f"{ctx.trial_id} returned None, so there is no phase to report a result for; "
            "report each phase's result before asking for the next one"
        )
    if run.reported:
        raise HyperlabError(
            f"nni.report_final_result({metric!r}): phase {run.phase} of trial {ctx.trial_id} "
            "already has its final result; a phase reports one final result (call "
            "nni.get_next_parameter() for the next phase first)"
        )
    run.phase = max(run.phase, 0)
    if run.phase == 0:
        ctx.set_final(metric)
    else:
        spec = {"index": run.phase, "result": as_metrics(metric)}
        ctx.request("phase", "", spec)
    run.reported = True


def get_experiment_id() -> str:
    """The id of the running trial's experiment (``"STANDALONE"`` outside a trial)."""
    ctx = find_current()
    return STANDALONE if ctx is None else ctx.experiment_id


def get_trial_id() -> str:
    """The running trial's id, ``<experiment id>-<number>`` (``"STANDALONE"`` outside)."""
    ctx = find_current()
    return STANDALONE if ctx is None else ctx.trial_id


def get_sequence_id() -> int:
    """The running trial's number in its experiment (NNI's "Trial No."; 0 outside)."""
    ctx = find_current()
    return 0 if ctx is None else ctx.number
