"""The one schema of an experiment's options (pydantic), and the parsing of durations.

Every entry point (``hyperlab.run``, ``Experiment``, config files, the REST API) validates
through ``ExperimentOptions``; a bad value becomes a ``ConfigError`` that names the field, the
value received and what was expected.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hyperlab.errors import ConfigError

__all__ = ["DEFAULT_MAX_FAILED_TRIALS", "ExperimentOptions", "parse_duration", "validate_options"]

DEFAULT_MAX_FAILED_TRIALS = 10
"""Consecutive failed trials after which an experiment ends in ERROR, unless set otherwise."""

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)\s*$")


def parse_duration(value: Any, field: str) -> float | None:
    """Seconds from a number or a string like ``"90s"``, ``"30m"``, ``"2h"``, ``"1d"``.

    Raises:
        ConfigError: naming ``field`` when the value is not a positive duration.
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
    return seconds


class ExperimentOptions(BaseModel):
    """How an experiment runs. See ``hyperlab.run`` for what each option means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    metric: str | None = None
    mode: Literal["min", "max"] = "min"
    tuner: str = "random"
    tuner_args: dict[str, Any] = Field(default_factory=dict)
    max_trials: int | None = Field(default=None, ge=1)
    max_duration: float | None = None
    concurrency: int = Field(default=1, ge=1)
    executor: str = "inprocess"
    trial_timeout: float | None = None
    max_failed_trials: int | None = Field(default=None, ge=1)
    continue_on_failure: bool = True
    seed: int | None = Field(default=None, ge=0, lt=2**63)

    @field_validator("max_duration", "trial_timeout", mode="before")
    @classmethod
    def _duration(cls, value: Any, info: Any) -> float | None:
        return parse_duration(value, info.field_name)

    @field_validator("tuner_args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        return {} if value is None else value

    @property
    def failure_limit(self) -> int:
        """Consecutive failures that end the experiment."""
        if not self.continue_on_failure:
            return 1
        return self.max_failed_trials or DEFAULT_MAX_FAILED_TRIALS


def validate_options(**options: Any) -> ExperimentOptions:
    """``ExperimentOptions(**options)`` with pydantic's errors turned into one ``ConfigError``."""
    try:
        return ExperimentOptions(**options)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
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
