"""What the trials of ``hyperlab.testing.ExecutorContract`` do: one set of behaviours for every
executor.

A trial's ``params["behaviour"]`` picks one:

- ``"finish"``: reports ``steps`` times, ``interval`` seconds apart, then returns
  ``final_metrics``.
- ``"raise"``: raises ``ValueError(params["message"])`` at once.
- ``"report_forever"``: reports every ``interval`` seconds for ``duration`` seconds (a trial to
  stop, or to close the executor on).
- ``"hang"``: sleeps ``duration`` seconds without reporting (a trial to time out).
- ``"ask"``: asks the driver for parameter ``lr`` (``ASKED``, as ``hyperlab.suggest`` does),
  reports it, and returns it as ``loss``.

Function executors run ``behave`` (a module-level function, so worker processes unpickle it by
reference); command trials run this module, ``python -m hyperlab.testing.behaviours
[BEHAVIOUR]``, which reads the same params (the behaviour from them unless given). Trials
that run long write their process id to ``pid`` in their folder, so a test can check that
nothing of them is left. Only the standard library and ``hyperlab.reporting`` are imported,
so the module starts fast, even under ``python -S``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from hyperlab.reporting import report, trial_dir
from hyperlab.reporting.context import current

__all__ = [
    "ASKED",
    "BEHAVIOURS",
    "PID_FILE",
    "behave",
    "final_metrics",
    "main",
    "report_metrics",
]

BEHAVIOURS = ("finish", "raise", "report_forever", "hang", "ask")
"""The behaviours ``behave`` knows."""

PID_FILE = "pid"
"""The file, in a long-running trial's folder, that holds the trial's process id."""

ASKED = ("lr", {"_type": "uniform", "_value": [0, 1]})
"""The parameter an ``"ask"`` trial asks for: its name and NNI spec."""

DEFAULT_INTERVAL = 0.02
DEFAULT_DURATION = 30.0


def report_metrics(params: dict[str, Any], step: int) -> dict[str, Any]:
    """What a trial reports at ``step``."""
    return {"loss": float(params.get("x", 1.0)) / (step + 1), "step": step}


def final_metrics(params: dict[str, Any]) -> dict[str, Any]:
    """What a ``"finish"`` trial returns."""
    steps = int(params.get("steps", 3))
    return {"loss": float(params.get("x", 1.0)) / (steps + 1), "steps": steps}


def behave(params: dict[str, Any]) -> dict[str, Any] | None:
    """Act out ``params["behaviour"]`` in the current trial; the final metrics, if any.

    Raises:
        ValueError: For ``"raise"``, or an unknown behaviour.
    """
    behaviour = params.get("behaviour")
    interval = float(params.get("interval", DEFAULT_INTERVAL))
    duration = float(params.get("duration", DEFAULT_DURATION))
    if behaviour == "finish":
        for step in range(int(params.get("steps", 3))):
            report(report_metrics(params, step))
            time.sleep(interval)
        return final_metrics(params)
    if behaviour == "raise":
        raise ValueError(str(params.get("message", "the trial raised on purpose")))
    if behaviour == "report_forever":
        _write_pid()
        end = time.monotonic() + duration
        step = 0
        while time.monotonic() < end:
            report(report_metrics(params, step))
            step += 1
            time.sleep(interval)
        return report_metrics(params, step)
    if behaviour == "ask":
        value = current().suggest(*ASKED)
        report(asked=value)
        return {"loss": value}
    if behaviour == "hang":
        _write_pid()
        time.sleep(duration)
        return None
    raise ValueError(f"params['behaviour']: expected one of {BEHAVIOURS}, got {behaviour!r}")


def _write_pid() -> None:
    (trial_dir() / PID_FILE).write_text(str(os.getpid()))


def main(argv: list[str]) -> None:
    """Run a command trial: ``behave`` with the trial's params, its result as the final one."""
    params = dict(current().params)
    if argv:
        params["behaviour"] = argv[0]
    result = behave(params)
    if result is not None:
        current().set_final(result)


if __name__ == "__main__":
    main(sys.argv[1:])
