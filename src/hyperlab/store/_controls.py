"""Control requests: what the CLI, the server and ``Experiment.stop`` ask a running driver to do.

Each kind of request is a frozen pydantic model with its payload as typed fields, told apart by
``kind``; the store keeps the kind in a column and the other fields as the JSON payload, and
hands back the same models. The driver answers each with a ``ControlOutcome``.

Example:
    >>> store.send_control(exp_id, SetConcurrency(value=4))
    >>> [c.request for c in store.pending_controls(exp_id)]
    [SetConcurrency(kind=<ControlKind.SET_CONCURRENCY: 'set_concurrency'>, value=4)]
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from hyperlab.config import MAX_DURATION, Concurrency, TrialCount, describe_validation_error
from hyperlab.errors import ConfigError

__all__ = [
    "AddTrial",
    "Control",
    "ControlKind",
    "ControlOutcome",
    "ControlRequest",
    "ImportData",
    "ImportedResult",
    "KillTrial",
    "SetConcurrency",
    "SetMaxDuration",
    "SetMaxTrials",
    "StopExperiment",
    "UnreadableRequest",
    "UpdateSearchSpace",
    "parse_request",
]


class ControlKind(str, enum.Enum):
    """What a control request asks for."""

    STOP = "stop"
    KILL_TRIAL = "kill_trial"
    SET_CONCURRENCY = "set_concurrency"
    SET_MAX_TRIALS = "set_max_trials"
    SET_MAX_DURATION = "set_max_duration"
    UPDATE_SEARCH_SPACE = "update_search_space"
    ADD_TRIAL = "add_trial"
    IMPORT_DATA = "import_data"

    def __str__(self) -> str:
        return self.value


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StopExperiment(_Request):
    """Stop the experiment: no new trials, running ones are stopped, status STOPPED."""

    kind: Literal[ControlKind.STOP] = ControlKind.STOP


class KillTrial(_Request):
    """Kill one waiting or running trial; it ends USER_CANCELED."""

    kind: Literal[ControlKind.KILL_TRIAL] = ControlKind.KILL_TRIAL
    number: int = Field(ge=0)


class SetConcurrency(_Request):
    """Run up to ``value`` trials at once from now on."""

    kind: Literal[ControlKind.SET_CONCURRENCY] = ControlKind.SET_CONCURRENCY
    value: Concurrency


class SetMaxTrials(_Request):
    """Create at most ``value`` trials in all."""

    kind: Literal[ControlKind.SET_MAX_TRIALS] = ControlKind.SET_MAX_TRIALS
    value: TrialCount


class SetMaxDuration(_Request):
    """End the experiment once it has run ``value`` seconds."""

    kind: Literal[ControlKind.SET_MAX_DURATION] = ControlKind.SET_MAX_DURATION
    value: float = Field(gt=0, le=MAX_DURATION, allow_inf_nan=False)


class UpdateSearchSpace(_Request):
    """Propose from ``space`` (NNI search-space JSON) from now on. The tuner is rebuilt on it
    and learns again from the finished trials and imported results that fit it; every trial
    keeps the parameters it ran with."""

    kind: Literal[ControlKind.UPDATE_SEARCH_SPACE] = ControlKind.UPDATE_SEARCH_SPACE
    space: dict[str, Any]


class AddTrial(_Request):
    """Run a trial with ``params`` next (NNI's customized trial); it counts in ``max_trials``."""

    kind: Literal[ControlKind.ADD_TRIAL] = ControlKind.ADD_TRIAL
    params: dict[str, Any]


class ImportedResult(BaseModel):
    """A result obtained elsewhere: ``params`` of the search space and the objective's
    ``value`` (``metrics`` may add others)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    params: dict[str, Any]
    value: float = Field(allow_inf_nan=False)
    metrics: dict[str, Any] = Field(default_factory=dict)


class ImportData(_Request):
    """Feed ``results`` to the tuner as if their trials had run (NNI's import data); they are
    kept as imported results, not trials, and do not count in ``max_trials``."""

    kind: Literal[ControlKind.IMPORT_DATA] = ControlKind.IMPORT_DATA
    results: list[ImportedResult] = Field(min_length=1)


ControlRequest = Annotated[
    StopExperiment
    | KillTrial
    | SetConcurrency
    | SetMaxTrials
    | SetMaxDuration
    | UpdateSearchSpace
    | AddTrial
    | ImportData,
    Field(discriminator="kind"),
]
"""Any control request; ``request.kind`` tells which."""

_REQUEST: TypeAdapter[ControlRequest] = TypeAdapter(ControlRequest)


def parse_request(kind: str, payload: dict[str, Any]) -> ControlRequest:
    """The typed request of ``kind`` with ``payload`` (as the store keeps them).

    Raises:
        ConfigError: for an unknown kind or a payload that does not fit it, naming the field.
    """
    if kind not in ControlKind._value2member_map_:
        raise ConfigError(
            f"control {kind!r}: unknown kind (sent by a newer hyperlab?); known kinds: "
            f"{', '.join(k.value for k in ControlKind)}"
        )
    if not isinstance(payload, dict):
        raise ConfigError(f"control {kind!r}: expected a JSON object as payload, got {payload!r}")
    try:
        return _REQUEST.validate_python({**payload, "kind": kind})
    except ValidationError as exc:
        raise ConfigError(f"control {kind!r}: {describe_validation_error(exc)}") from None


@dataclass(frozen=True)
class UnreadableRequest:
    """A stored request this version cannot read (a newer hyperlab's kind, say).

    Attributes:
        kind: The kind as stored.
        problem: Why it cannot be read.
    """

    kind: str
    problem: str


@dataclass(frozen=True)
class ControlOutcome:
    """What the driver made of a request.

    Attributes:
        applied: True when the driver did what was asked; False when it refused.
        message: Why it refused, or what it did (may be empty).
        trial: The number of the trial the request created (``AddTrial``), if any.
    """

    applied: bool
    message: str = ""
    trial: int | None = None

    @classmethod
    def ok(cls, message: str = "", *, trial: int | None = None) -> ControlOutcome:
        """The request was carried out."""
        return cls(True, message, trial)

    @classmethod
    def rejected(cls, message: str) -> ControlOutcome:
        """The request was refused, for the reason ``message``."""
        return cls(False, message)


@dataclass(frozen=True)
class Control:
    """A control request as stored, with its outcome once the driver handled it.

    Attributes:
        id: Increasing per store; the driver applies controls in id order.
        experiment_id: The experiment it is for.
        request: What is asked (an ``UnreadableRequest`` if this version cannot read it).
        created_at: When it was sent (epoch seconds).
        applied_at: When the driver handled it; None while pending.
        outcome: What the driver made of it; None while pending.
    """

    id: int
    experiment_id: str
    request: ControlRequest | UnreadableRequest
    created_at: float
    applied_at: float | None = None
    outcome: ControlOutcome | None = None

    @property
    def kind(self) -> ControlKind | str:
        """``request.kind``: a ``ControlKind``, or the stored text of an unreadable one."""
        return self.request.kind
