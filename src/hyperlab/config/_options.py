"""The run options (``ExperimentOptions``, ``GpuConfig``, ``ResearchOptions``): their ranges,
durations, and how a stored or given set of options is validated.

Every entry point (``hyperlab.run``, ``Experiment``, config files, the REST API) validates
through these models; a bad value becomes a ``ConfigError`` that names the field, the value
received and what was expected.
"""

from __future__ import annotations

import math
import os
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from hyperlab.errors import ConfigError
from hyperlab.trial import Mode

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
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)\s*$")


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
    elif isinstance(value, str) and (match := _DURATION.match(value)):
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


class GpuConfig(BaseModel):
    """Where trials run: device indices (or ``"auto"``: what ``nvidia-smi`` lists), how many
    each trial holds, and how many trials may share one device.

    With ``memory_ratio`` (BatchFlow's option of that name), a trial starts only once each of
    its devices has that fraction of its memory free, looked at up to ``n_gpu_checks`` times
    ``gpu_check_delay`` seconds apart (it fails otherwise); None starts trials without looking.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    indices: list[Any] | Literal["auto"] = "auto"
    per_trial: int = Field(default=1, ge=1, le=MAX_GPUS)
    max_trials_per_gpu: int = Field(default=1, ge=1, le=MAX_GPUS)
    memory_ratio: float | None = Field(default=None, gt=0, le=1)
    n_gpu_checks: int = Field(default=3, ge=1, le=MAX_GPU_CHECKS)
    gpu_check_delay: float = Field(default=5.0, ge=0, le=MAX_GPU_CHECK_DELAY)

    @field_validator("memory_ratio", "n_gpu_checks", "gpu_check_delay", mode="before")
    @classmethod
    def _not_bool(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"gpus.{info.field_name}: expected a number, got {value!r}")
        return value


class ResearchOptions(BaseModel):
    """What makes an experiment a research (``hyperlab.Research``): its units, iterations and
    how its configs are spread. Each trial of a research is one config x repetition; its params
    are the config's aliases (see ``hyperlab.research.Domain``) plus ``repetition``, and each of
    its reports is one iteration (``step``) holding the variables saved in it (``save_to``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_iters: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS)
    n_configs: TrialCount | None = None
    n_reps: TrialCount = 1
    repeat_each: TrialCount | None = None
    workers: Concurrency = 1
    branches: Concurrency = 1
    units: list[str] = Field(default_factory=list)
    variables: list[str] = Field(default_factory=list)
    config_keys: list[str] = Field(default_factory=list)
    profile: bool = False
    domain: str = ""
    project_dir: str | None = None
    """The user's project: the folder of the script that built the research (else the working
    directory then), whose git state its environment records."""


def _duration_field(cls: type, value: Any, info: ValidationInfo) -> float | None:
    return parse_duration(value, info.field_name or "duration")


class ExperimentOptions(BaseModel):
    """How an experiment runs. See ``hyperlab.run`` for what each option means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    metric: str | None = None
    mode: Mode = Mode.MIN
    tuner: str = "auto"
    tuner_args: dict[str, Any] = Field(default_factory=dict)
    assessor: str | None = None
    assessor_args: dict[str, Any] = Field(default_factory=dict)
    checkpoint_keep: int = Field(default=1, ge=1, le=MAX_CHECKPOINTS)
    max_trials: TrialCount | None = None
    max_duration: float | None = Field(default=None, gt=0, le=MAX_DURATION)
    concurrency: Concurrency = 1
    executor: str = "inprocess"
    trial_timeout: float | None = Field(default=None, gt=0, le=MAX_DURATION)
    max_failed_trials: TrialCount | None = None
    continue_on_failure: bool = True
    fail_fast: bool | int = True
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    gpus: GpuConfig | None = None
    working_dir: str | None = None
    max_log_bytes: int | None = Field(
        default=DEFAULT_MAX_LOG_BYTES, ge=MIN_MAX_LOG_BYTES, le=MAX_MAX_LOG_BYTES
    )
    echo_output: bool = False
    research: ResearchOptions | None = None
    ray_address: str | None = None
    resources: dict[str, float | int | str] | None = None
    max_node_failures: int = Field(default=3, ge=0, le=MAX_NODE_FAILURES)
    store_outage: float = Field(default=DEFAULT_STORE_OUTAGE, gt=0, le=MAX_STORE_OUTAGE)
    suggested: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Recorded by the driver: the distributions trials defined as they ran
    (``hyperlab.suggest``), name to NNI spec."""
    budget_signals: list[
        tuple[float, int, bool] | tuple[float, int, bool, list[tuple[int, int, bool]]]
    ] = Field(default_factory=list)
    """Recorded by the driver: each time it told the assessor that no trial numbered ``count``
    or above would be created (``(time, count, True, heard)``: the budget was spent, the tuner
    ran out) and that more would after all (``(time, count, False, heard)``: the budget was
    raised), with what the assessor had heard of each trial by then (``heard``: ``(number,
    reports, ended)``), so that a resumed experiment's replay tells its fresh assessor the same
    at the same point of the trials' history. Older records have no ``heard``."""

    _durations = field_validator("max_duration", "trial_timeout", "store_outage", mode="before")(
        _duration_field
    )

    @field_validator("working_dir", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @field_validator("tuner_args", "assessor_args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("fail_fast")
    @classmethod
    def _fail_fast(cls, value: bool | int) -> bool | int:
        if not isinstance(value, bool) and not 1 <= value <= MAX_TRIALS:
            raise ValueError(
                f"fail_fast: expected True, False or a number of trials in 1 .. {MAX_TRIALS}, "
                f"got {value!r}"
            )
        return value


_STORED_CAPS = {
    "checkpoint_keep": MAX_CHECKPOINTS,
    "max_trials": MAX_TRIALS,
    "max_duration": MAX_DURATION,
    "concurrency": MAX_CONCURRENCY,
    "trial_timeout": MAX_DURATION,
    "max_failed_trials": MAX_TRIALS,
    "fail_fast": MAX_TRIALS,
    "max_log_bytes": MAX_MAX_LOG_BYTES,
    "max_node_failures": MAX_NODE_FAILURES,
}


def parse_stored_options(data: dict[str, Any]) -> ExperimentOptions:
    """The options of an experiment as the store keeps them (``model_dump(mode="json")``).

    Keys this version does not know (written by a newer hyperlab) are left out. A number above
    its range that a hyperlab without ranges stored (``max_trials: 10000000000`` meant "no
    end") reads as the range's end, so that the experiment stays readable and resumable.

    Raises:
        ValidationError: when a known field holds a value the model refuses.
    """
    fields = ExperimentOptions.model_fields
    known = {k: v for k, v in data.items() if k in fields}
    for name, cap in _STORED_CAPS.items():
        value = known.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > cap:
            known[name] = cap
    return ExperimentOptions.model_validate(known)


def validate_options(**options: Any) -> ExperimentOptions:
    """``ExperimentOptions(**options)`` with pydantic's errors turned into one ``ConfigError``."""
    try:
        return ExperimentOptions(**options)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per invalid field: its name, what is wrong, and the value received."""
    lines = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "options"
        message = err["msg"]
        if message.startswith("Value error, "):  # raised by our validators: already complete
            lines.append(message.removeprefix("Value error, "))
            continue
        if err["type"] == "extra_forbidden":
            lines.append(f"{field}: unknown option")
            continue
        lines.append(f"{field}: {message[0].lower()}{message[1:]}, got {err.get('input')!r}")
    return "; ".join(lines)
