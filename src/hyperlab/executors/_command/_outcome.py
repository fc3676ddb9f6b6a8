"""How an ended command trial is reported: finished, stopped or failed, and why.

A trial that exits 0 ends FINISHED with its final result, or else its last intermediate one;
with no result at all, or a non-zero exit, it is FAILED, the error quoting the exit status and
the last lines of its stderr.
"""

from __future__ import annotations

import signal
import time

from hyperlab.executors._command._launch import STDERR_FILE
from hyperlab.executors._command._run import CommandRun, Ending, tail
from hyperlab.executors.base import Failed, Finished, Stopped, TrialEnd

__all__ = ["outcome"]

STDERR_TAIL_LINES = 20


def outcome(run: CommandRun, trial_timeout: float | None) -> TrialEnd:
    """The end event of ``run``, whose shell and group are gone (or were abandoned)."""
    number, now, code = run.spec.number, time.time(), run.code
    if run.final is not None and (code == 0 or (code is None and run.adopted)):
        return Finished(number, now, run.final)
    if run.ending is Ending.STOP:
        return Stopped(number, now, run.final or run.last)
    if run.ending is Ending.TIMEOUT:
        return Failed(number, now, f"trial exceeded trial_timeout={trial_timeout:g}s")
    if not run.reaped:  # abandoned: only after SIGKILL, which follows ``ending``
        return Failed(number, now, "the command could not be killed")
    if code is None:  # adopted, and its shell ended without saying how
        status = (
            "ended without recording its exit status (it was killed, or replaced its "
            "shell with exec) after a resumed driver adopted it"
        )
        end = tail(run.folder / STDERR_FILE, STDERR_TAIL_LINES)
        if end:
            return Failed(number, now, f"the command {status}; the end of its stderr:\n{end}")
        return Failed(number, now, f"the command {status}")
    if code == 0:
        if run.last is not None:
            return Finished(number, now, run.last)
        return Failed(number, now, "the command exited 0 without reporting a result")
    if code < 0:
        try:
            status = f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            status = f"was killed by signal {-code}"
    else:
        status = f"exited with code {code}"
        if code == 127:
            status += " (command not found?)"
    end = tail(run.folder / STDERR_FILE, STDERR_TAIL_LINES)
    if end:
        return Failed(number, now, f"the command {status}; the end of its stderr:\n{end}")
    return Failed(number, now, f"the command {status} and wrote nothing to stderr")
