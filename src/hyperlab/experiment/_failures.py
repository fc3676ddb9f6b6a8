"""When failed trials end an experiment: failures are loud, never mistaken for success.

Three rules, checked on every failed trial:

- **fail fast**: while no trial has succeeded, if the first ``fail_fast`` trials (default
  ``max(3, concurrency)``) all failed the same way (same exception class, or same message),
  the experiment ends in ERROR at once with that error: a wrong metric name or an objective
  that forgets to ``return`` costs a few trainings, not a budget;
- **in a row**: ``max_failed_trials`` consecutive failures (default 10) end it in ERROR;
- ``continue_on_failure=False`` ends it at the first failure.
"""

from __future__ import annotations

import re

from hyperlab.config import DEFAULT_MAX_FAILED_TRIALS, ExperimentOptions
from hyperlab.trial import Trial, TrialStatus

__all__ = ["FailureWatch", "error_kind", "last_line"]

_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")
_NUMBER = re.compile(r"\d+(\.\d+)?")


def last_line(error: str | None) -> str:
    """The last non-empty line of an error text (a traceback's exception line)."""
    lines = [line.strip() for line in (error or "").strip().splitlines() if line.strip()]
    return lines[-1] if lines else "?"


def error_kind(error: str | None) -> str:
    """What kind of failure an error text is: its exception's class name when it ends like a
    traceback (``ValueError: ...``), else its last line with the numbers blanked out."""
    line = last_line(error)
    match = _EXCEPTION.match(line)
    if match and (":" in line or match.group(1)[:1].isupper()) and " " not in match.group(1):
        return match.group(1)
    return _NUMBER.sub("#", line)[:120]


class FailureWatch:
    """Follows the trials that end and says when failures must end the experiment.

    Args:
        options: ``fail_fast``, ``max_failed_trials`` and ``continue_on_failure`` are read.
        concurrency: The experiment's concurrency (the default fail-fast count depends on it).
    """

    def __init__(self, options: ExperimentOptions, concurrency: int) -> None:
        if not options.continue_on_failure:
            self.in_a_row = 1
        else:
            self.in_a_row = options.max_failed_trials or DEFAULT_MAX_FAILED_TRIALS
        fail_fast = options.fail_fast
        if fail_fast is True:
            self.first = max(3, concurrency)
        else:
            self.first = int(fail_fast) if fail_fast else 0
        self.succeeded = 0
        self.failed = 0
        self.consecutive = 0
        self.first_failures: list[Trial] = []  # while none succeeded, up to ``first``

    def record(self, trial: Trial) -> str | None:
        """Take note of a trial that ended; the ERROR message if the experiment must end."""
        if trial.status is TrialStatus.SUCCEEDED:
            self.succeeded += 1
            self.consecutive = 0
            return None
        if trial.status is not TrialStatus.FAILED:
            return None
        self.failed += 1
        self.consecutive += 1
        if not self.succeeded and len(self.first_failures) < self.first:
            self.first_failures.append(trial)
            if len(self.first_failures) == self.first:
                kinds = {error_kind(t.error) for t in self.first_failures}
                if len(kinds) == 1:
                    first = self.first_failures[0]
                    return (
                        f"the first {self.first} trials all failed with {kinds.pop()} and none "
                        f"succeeded, so the experiment stopped early (fail_fast={self.first}; "
                        f"fail_fast=False tolerates it). Trial {first.number}'s error:\n"
                        f"{(first.error or '').strip()}"
                    )
        if self.consecutive >= self.in_a_row:
            return (
                f"{self.consecutive} trials failed in a row (limit {self.in_a_row}, "
                f"max_failed_trials); the last one's error: {last_line(trial.error)}"
            )
        return None
