"""Run one trial in the current thread and say how it ended: shared by every local executor."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Any

from hyperlab.errors import TrialStopped
from hyperlab.executors.base import Failed, Finished, Stopped, TrialEnd, TrialSpec
from hyperlab.reporting import (
    Emit,
    TrialContext,
    TrialTimeout,
    activate,
    deactivate,
    run_objective,
)

MAX_ERROR_CHARS = 8000


def make_context(spec: TrialSpec, emit: Emit, *, deadline: float | None = None) -> TrialContext:
    """The trial-side context for ``spec``, reporting through ``emit``."""
    return TrialContext(
        spec.number,
        spec.trial_id,
        spec.params,
        spec.seed,
        spec.trial_dir,
        emit,
        deadline=deadline,
        devices=spec.devices,
    )


def run_trial(objective: Callable[..., Any], ctx: TrialContext) -> TrialEnd:
    """Run ``objective`` with ``ctx`` as the current trial; how it ended, stamped now.

    Returns:
        ``Finished`` with the final metrics, ``Stopped`` with the last report, or ``Failed``
        with the error's text. ``KeyboardInterrupt`` and ``SystemExit`` propagate.
    """
    token = activate(ctx)
    number = ctx.number
    try:
        metrics = run_objective(objective, ctx)
    except TrialStopped:
        return Stopped(number, time.time(), ctx.last)
    except TrialTimeout as exc:
        return Failed(number, time.time(), str(exc))
    except Exception:
        return Failed(number, time.time(), format_error())
    finally:
        deactivate(token)
    if metrics is None and ctx.stop_requested:  # told to stop, it returned without a result
        return Stopped(number, time.time(), ctx.last)
    if metrics is None:
        return Failed(number, time.time(), "the objective returned None and reported no result")
    return Finished(number, time.time(), metrics)


def format_error() -> str:
    """The current exception's traceback, cut to its last ``MAX_ERROR_CHARS`` characters."""
    text = traceback.format_exc().rstrip()
    return text if len(text) <= MAX_ERROR_CHARS else "..." + text[-MAX_ERROR_CHARS:]
