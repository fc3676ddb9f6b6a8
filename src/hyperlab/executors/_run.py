"""Run one trial in the current thread and say how it ended: shared by every local executor."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from hyperlab.errors import TrialStopped
from hyperlab.executors.base import EventKind, TrialSpec
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


def run_trial(
    objective: Callable[..., Any], ctx: TrialContext
) -> tuple[EventKind, dict | None, str | None]:
    """Run ``objective`` with ``ctx`` as the current trial.

    Returns:
        ``(FINISHED, final metrics, None)``, ``(STOPPED, last report, None)`` or
        ``(FAILED, None, error text)``. ``KeyboardInterrupt`` and ``SystemExit`` propagate.
    """
    token = activate(ctx)
    try:
        metrics = run_objective(objective, ctx)
    except TrialStopped:
        return EventKind.STOPPED, ctx.last, None
    except TrialTimeout as exc:
        return EventKind.FAILED, None, str(exc)
    except Exception:
        return EventKind.FAILED, None, format_error()
    finally:
        deactivate(token)
    if metrics is None:
        return EventKind.FAILED, None, "the objective returned None and reported no result"
    return EventKind.FINISHED, metrics, None


def format_error() -> str:
    """The current exception's traceback, cut to its last ``MAX_ERROR_CHARS`` characters."""
    text = traceback.format_exc().rstrip()
    return text if len(text) <= MAX_ERROR_CHARS else "..." + text[-MAX_ERROR_CHARS:]
