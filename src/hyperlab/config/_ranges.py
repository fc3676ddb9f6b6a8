"""The ranges of every number a user sets, the types that carry them, and durations.

The options (``hyperlab.config``), the control requests that change them on a running
experiment (``hyperlab.store``), the REST API's bodies and the CLI's flags all take these
bounds, so a value is accepted or refused alike wherever it is given.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import Field

from hyperlab.errors import ConfigError

DEFAULT_MAX_FAILED_TRIALS = 10
"""Consecutive failed trials after which an experiment ends in ERROR, unless set otherwise."""

DEFAULT_MAX_LOG_BYTES = 50 * 1024 * 1024
"""The cap on each of a trial's ``stdout.log`` and ``stderr.log``, unless set otherwise."""
MIN_MAX_LOG_BYTES = 1024
"""The smallest cap ``max_log_bytes`` takes."""

# ---- ranges: the bounds of every number a user sets ---------------------------------------
# The options below, the control requests that change them on a running experiment
# (``hyperlab.store``), the REST API's bodies and the CLI's flags all take these bounds, so a
# value is accepted or refused alike wherever it is given. docs/config.md lists them (Ranges)
# and says why each is where it is.

MAX_CONCURRENCY = 10_000
"""The most trials at once (``concurrency``, a research's ``workers`` and ``branches``)."""
MAX_TRIAL_NUMBER = 2**31 - 1
"""The largest trial number (trial numbers are 32-bit integers in the store)."""
MAX_TRIALS = MAX_TRIAL_NUMBER
"""The most trials a count may name: ``max_trials``, ``max_failed_trials``, ``fail_fast``, a
research's configs and repetitions (no experiment can number more); what stands for "no end"
where a number is needed (Optuna's ``optimize`` without ``n_trials``, Ray's unlimited
failures)."""
MAX_DURATION = 10 * 365 * 86400.0
"""The longest duration, in seconds (ten years): ``max_duration``, ``trial_timeout``."""
MAX_CHECKPOINTS = MAX_TRIALS
"""The most checkpoints a trial keeps (``checkpoint_keep``): any count, keeping costs only
the checkpoints the trial writes (Ray's "keep them all" is this)."""
MAX_MAX_LOG_BYTES = 1 << 40
"""The largest cap ``max_log_bytes`` takes (1 TiB; ``None`` keeps everything)."""
MAX_NODE_FAILURES = 1000
"""The most re-runs of a trial whose Ray node died (``max_node_failures``)."""
MAX_STORE_OUTAGE = 86400.0
"""The longest a running experiment rides out a database that does not answer, in seconds
(a day: ``store_outage``)."""
DEFAULT_STORE_OUTAGE = 60.0
"""How long a running experiment rides out a database that does not answer, unless set
otherwise (seconds)."""
MAX_GPUS = 1024
"""The most devices a trial holds, and trials one device holds (``gpus.per_trial``,
``gpus.max_trials_per_gpu``)."""
MAX_GPU_CHECKS = 10_000
"""The most looks at a device's free memory before a trial fails (``gpus.n_gpu_checks``)."""
MAX_GPU_CHECK_DELAY = 3600.0
"""The longest wait between two looks, in seconds (``gpus.gpu_check_delay``)."""
MAX_ITERATIONS = 1_000_000_000
"""The most iterations of a research's units (``research.n_iters``)."""

Concurrency = Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
"""Trials at once: 1 .. ``MAX_CONCURRENCY``."""
TrialCount = Annotated[int, Field(ge=1, le=MAX_TRIALS)]
"""A number of trials: 1 .. ``MAX_TRIALS``."""

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)\s*$")
"""A duration as a string: a number of seconds, minutes, hours or days (``"90s"``, ``"2h"``)."""
"""A duration as a string: a number of seconds, minutes, hours or days (``"90s"``, ``"2h"``)."""


def parse_duration(value: Any, field: str) -> float | None:
    """Seconds from a number or a string like ``"90s"``, ``"30m"``, ``"2h"``, ``"1d"``.

    Raises:
        ConfigError: naming ``field`` when the value is not a positive duration of at most
            ``MAX_DURATION`` seconds.
    """
    if value is None:
        return None
    seconds: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (match := DURATION.match(value)):
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(
            f"{field}: expected a positive number of seconds or a string like '90s', '30m', "
            f"'2h', '1d', got {value!r}"
        )
    if seconds > MAX_DURATION:
        raise ConfigError(
            f"{field}: expected at most {MAX_DURATION:.0f} seconds (3650d, ten years), "
            f"got {value!r}"
        )
    return seconds
