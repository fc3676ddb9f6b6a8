"""NNI's trial functions (``nni.trial``), answered by the running hyperlab trial."""

from __future__ import annotations

import copy
import logging
import warnings
from typing import Any

from hyperlab.reporting import TrialContext, find_current

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

_logger = logging.getLogger("nni")
_params: dict[str, Any] | None = None
"""What the last ``get_next_parameter`` returned, for ``get_current_parameter``."""
_intermediate_seq = 0


def _trial() -> TrialContext | None:
    return find_current()


def get_next_parameter() -> dict[str, Any]:
    """The trial's parameters (a fresh copy on every call, with the same values).

    Outside a hyperlab trial: ``{}`` and a ``RuntimeWarning``, like NNI without its runtime.
    """
    global _params
    ctx = _trial()
    if ctx is None:
        warnings.warn(
            "Running NNI code without a hyperlab trial: get_next_parameter() returns {}",
            RuntimeWarning,
            stacklevel=2,
        )
        _params = {}
    else:
        _params = copy.deepcopy(ctx.params)
    return _params


def get_next_parameters() -> dict[str, Any]:
    """Alias of ``get_next_parameter``."""
    return get_next_parameter()


def get_current_parameter(tag: str | None = None) -> Any:
    """The parameters returned by the last ``get_next_parameter`` (or one of them); None before."""
    if _params is None:
        return None
    return _params if tag is None else _params[tag]


def report_intermediate_result(metric: Any) -> None:
    """Report an intermediate result: a number, or a dict whose ``default`` is the number.

    Raises:
        hyperlab.TrialStopped: In a function trial that was told to stop.
    """
    global _intermediate_seq
    ctx = _trial()
    if ctx is None:
        _logger.info("Intermediate result: %s  (Index %s)", metric, _intermediate_seq)
    else:
        ctx.report(metric, None, None)
    _intermediate_seq += 1


def report_final_result(metric: Any) -> None:
    """Report the final result: a number, or a dict whose ``default`` is the number."""
    ctx = _trial()
    if ctx is None:
        _logger.info("Final result: %s", metric)
    else:
        ctx.set_final(metric)


def get_experiment_id() -> str:
    """The id of the running trial's experiment."""
    ctx = _trial()
    return STANDALONE if ctx is None else ctx.experiment_id


def get_trial_id() -> str:
    """The running trial's id."""
    ctx = _trial()
    return STANDALONE if ctx is None else ctx.trial_id


def get_sequence_id() -> int:
    """The running trial's number in its experiment (NNI's "Trial No.")."""
    ctx = _trial()
    return 0 if ctx is None else ctx.number
