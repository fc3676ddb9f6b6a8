"""The JSON shapes of the REST API: pydantic models for responses and request bodies.

hyperlab's own routes use snake_case names and seconds since the epoch (NNI's shapes are in
``_nni_models``). Responses are built from the store's immutable records by the ``from_*``
helpers.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hyperlab.config import (
    MAX_CONCURRENCY,
    MAX_DURATION,
    MAX_TRIALS,
    Concurrency,
    ExperimentOptions,
    TrialCount,
    parse_duration,
)
from hyperlab.store import Control, ControlKind, ExperimentSummary, TrialEvent, UnreadableRequest
from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus

__all__ = [
    "AddTrialIn",
    "BestTrialOut",
    "ChangesOut",
    "ControlOut",
    "ControlsAccepted",
    "ErrorOut",
    "ExperimentOut",
    "ExperimentPatch",
    "ExperimentSummaryOut",
    "ImportIn",
    "ImportedOut",
    "ReportOut",
    "ReportRowOut",
    "ReportsOut",
    "TrialDetailOut",
    "TrialEventOut",
    "TrialOut",
    "finite",
    "finite_list",
]


def finite(value: float) -> float | None:
    """``value``, or None when it is not finite (JSON has no NaN nor infinity)."""
    return value if math.isfinite(value) else None


def finite_list(values: tuple[float, ...] | None) -> list[float | None] | None:
    """``values`` as a list, each not finite as None; None for None."""
    return None if values is None else [finite(v) for v in values]


class ErrorOut(BaseModel):
    """Every error: what is wrong, naming the field, the value received and the rule."""

    detail: str = Field(examples=["limit: input should be greater than or equal to 1, got '0'"])


# ---- hyperlab's own routes ----------------------------------------------------------------


class ExperimentSummaryOut(BaseModel):
    """One experiment in ``GET /api/v1/experiments`` (what ``hyperlab ls`` shows)."""

    id: str
    name: str | None
    status: ExperimentStatus
    driver_lost: bool = Field(
        description="It says RUNNING but no driver runs it (killed, or its machine is gone): "
        "show it as 'RUNNING (driver lost)'; `hyperlab resume` continues it."
    )
    created_at: float
    started_at: float | None
    finished_at: float | None
    elapsed: float = Field(description="Experiment time spent so far, summed over resumes (s).")
    n_trials: int = Field(description="All trials.")
    n_finished: int = Field(
        description="Trials that ended on their own (not SYS_CANCELED ones, which re-run)."
    )
    n_failed: int
    n_running: int
    best_value: float | None = Field(description="Best value of the succeeded trials.")
    max_trials: int | None
    max_duration: float | None = Field(description="Its time budget (s), if it has one.")
    metric: str | None = Field(description="The metric it optimizes, if named.")
    mode: Mode = Field(description="Which way its values are better.")

    @classmethod
    def from_summary(cls, summary: ExperimentSummary) -> ExperimentSummaryOut:
        """The response for one ``ExperimentSummary``."""
        return cls(**{name: getattr(summary, name) for name in cls.model_fields})


class BestTrialOut(BaseModel):
    """The best succeeded trial of an experiment."""

    number: int
    value: float
    params: dict[str, Any]


class ExperimentOut(BaseModel):
    """``GET /api/v1/experiments/{id}``: the stored record, trial counts and the best trial."""

    id: str
    name: str | None
    status: ExperimentStatus
    options: ExperimentOptions = Field(description="How it runs (metric, mode, budget...).")
    space: dict[str, Any] = Field(description="The search space in NNI's JSON format.")
    seed: int
    created_at: float
    started_at: float | None
    finished_at: float | None
    error: str | None
    driver_host: str | None
    driver_pid: int | None
    heartbeat_at: float | None
    driver_alive: bool = Field(description="A driver runs it now, so it accepts controls.")
    driver_lost: bool = Field(description="It says RUNNING but no driver runs it.")
    elapsed: float = Field(description="Experiment time spent so far, summed over resumes (s).")
    n_trials: int
    counts: dict[TrialStatus, int] = Field(description="Number of trials in each status.")
    best: BestTrialOut | None
    change_cursor: int = Field(
        default=0,
        description="The id of the newest trial status change: poll "
        "/changes?after=<it> for what changes next.",
    )
    environment: dict[str, Any] | None = Field(
        default=None,
        description="Where it was created: git commit, branch, status and diff, installed "
        "packages, Python, platform, host, CPUs and GPUs; null for experiments created before "
        "hyperlab recorded it.",
    )


class ReportOut(BaseModel):
    """One intermediate report of a trial."""

    step: int
    metrics: dict[str, Any]
    time: float
    attempt: int

    @classmethod
    def from_report(cls, report: Report) -> ReportOut:
        """The response for one ``Report``."""
        return cls(
            step=report.step, metrics=report.metrics, time=report.time, attempt=report.attempt
        )


class TrialEventOut(BaseModel):
    """One status change of a trial."""

    attempt: int
    status: TrialStatus
    time: float


class TrialOut(BaseModel):
    """One trial in ``GET /api/v1/experiments/{id}/trials``."""

    id: str = Field(description="<experiment id>-<number>; NNI's trialJobId.")
    experiment_id: str
    number: int
    params: dict[str, Any]
    status: TrialStatus
    attempt: int
    parent: int | None = Field(
        description="The trial whose checkpoint this one continued (population based training)."
    )
    source: str | None = Field(
        default=None, description="custom for a trial added by hand, null for the tuner's."
    )
    value: float | None
    values: list[float | None] | None = Field(
        default=None,
        description="Every objective's value in the order of the experiment's metrics, for an "
        "experiment with several objectives (`value` is the first; null for one not finite); "
        "null otherwise.",
    )
    constraints: list[float | None] | None = Field(
        default=None,
        description="Each constraint's value, <= 0 when met (null for one not finite); null "
        "without constraints.",
    )
    violation: float | None = Field(
        default=0.0,
        description="The sum of its positive constraint values (0 when feasible; null when "
        "not finite).",
    )
    feasible: bool = Field(default=True, description="No constraint is violated.")
    metrics: dict[str, Any]
    error: str | None
    seed: int | None
    created_at: float | None
    started_at: float | None
    finished_at: float | None
    duration: float | None
    reports: list[ReportOut] | None = Field(
        default=None, description="Intermediate reports, when asked for."
    )

    @classmethod
    def from_trial(cls, trial: Trial, *, reports: bool) -> TrialOut:
        """The response for one ``Trial``; ``reports`` attaches its reports."""
        return cls(
            id=trial.id,
            experiment_id=trial.experiment_id,
            number=trial.number,
            params=trial.params,
            status=trial.status,
            attempt=trial.attempt,
            parent=trial.parent,
            source=trial.source,
            value=trial.value,
            values=finite_list(trial.values),
            constraints=finite_list(trial.constraints),
            violation=finite(trial.violation),
            feasible=trial.feasible,
            metrics=trial.metrics,
            error=trial.error,
            seed=trial.seed,
            created_at=trial.created_at,
            started_at=trial.started_at,
            finished_at=trial.finished_at,
            duration=trial.duration,
            reports=[ReportOut.from_report(r) for r in trial.reports] if reports else None,
        )


class TrialDetailOut(TrialOut):
    """``GET /api/v1/experiments/{id}/trials/{number}``: a trial, its reports and status changes."""

    reports: list[ReportOut]
    events: list[TrialEventOut]

    @classmethod
    def from_records(cls, trial: Trial, events: list[TrialEvent]) -> TrialDetailOut:
        """The response for a trial and its status changes."""
        base = TrialOut.from_trial(trial, reports=True).model_dump()
        changes = [TrialEventOut(attempt=e.attempt, status=e.status, time=e.time) for e in events]
        return cls(**base, events=changes)


class ControlOut(BaseModel):
    """A control request and, once the driver handled it, its outcome."""

    id: int
    experiment_id: str
    kind: ControlKind | str = Field(
        description="stop, kill_trial, set_concurrency, set_max_trials... (or the stored text "
        "of a kind this version cannot read)"
    )
    payload: dict[str, Any] = Field(description="The request's arguments.")
    created_at: float
    applied_at: float | None
    state: Literal["pending", "applied", "rejected"]
    message: str | None = Field(description="Why the driver refused it, or what it did.")
    trial: int | None = Field(
        default=None,
        description="The number of the trial the request created (add_trial), once applied.",
    )

    @classmethod
    def from_control(cls, control: Control) -> ControlOut:
        """The response for one ``Control``."""
        outcome = control.outcome
        request = control.request
        payload = {} if isinstance(request, UnreadableRequest) else request.model_dump(mode="json")
        payload.pop("kind", None)
        state: Literal["pending", "applied", "rejected"] = "pending"
        if outcome is not None:
            state = "applied" if outcome.applied else "rejected"
        return cls(
            id=control.id,
            experiment_id=control.experiment_id,
            kind=control.kind,
            payload=payload,
            created_at=control.created_at,
            applied_at=control.applied_at,
            state=state,
            message=None if outcome is None else outcome.message,
            trial=None if outcome is None else outcome.trial,
        )


class ControlsAccepted(BaseModel):
    """202: the control requests were queued; follow them at ``GET /api/v1/controls/{id}``."""

    experiment_id: str
    control_ids: list[int]
    controls: list[ControlOut]


class ExperimentPatch(BaseModel):
    """``PATCH /api/v1/experiments/{id}``: new values for a running experiment.

    Each field given becomes one control request to the driver. The ranges are the options'
    (``hyperlab.config``): what a config file or ``hyperlab.run`` accepts, this accepts.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    concurrency: Concurrency | None = Field(
        default=None, description=f"Trials at once, 1 .. {MAX_CONCURRENCY}."
    )
    max_trials: TrialCount | None = Field(
        default=None, description=f"Trials to create, 1 .. {MAX_TRIALS}."
    )
    max_duration: float | None = Field(
        default=None,
        description="Seconds, or a string like '90s', '30m', '2h', '1d'; at most "
        f"{MAX_DURATION:.0f} (ten years).",
    )

    @field_validator("max_duration", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float | None:
        return parse_duration(value, "max_duration")


# ---- incremental reads ---------------------------------------------------------------------


class ChangesOut(BaseModel):
    """``GET /api/v1/experiments/{id}/changes``: what changed after a change cursor."""

    experiment_id: str
    status: ExperimentStatus
    driver_alive: bool
    cursor: int = Field(
        description="Pass as ?after= next time: every trial change after it will come then."
    )
    more: bool = Field(description="More trials changed than `limit`: poll again at once.")
    trials: list[TrialOut] = Field(
        description="The trials that changed after ?after=, as they are now, in the order of "
        "their latest change (without reports)."
    )
    n_trials: int
    counts: dict[TrialStatus, int] = Field(description="Number of trials in each status.")
    best: BestTrialOut | None


class ReportRowOut(BaseModel):
    """One intermediate report with its id (ids only grow: they order reports)."""

    id: int
    number: int = Field(description="The trial's number.")
    attempt: int
    step: int
    metrics: dict[str, Any]
    time: float


class ReportsOut(BaseModel):
    """``GET /api/v1/experiments/{id}/reports``: reports after a report id."""

    experiment_id: str
    cursor: int = Field(description="The id of the last report here (or ?after=): pass it next.")
    more: bool = Field(description="More reports than `limit` remain: poll again at once.")
    reports: list[ReportRowOut]


class ImportedOut(BaseModel):
    """A result imported into the experiment's tuner (not a trial)."""

    id: int = Field(description="Increasing: the order results were imported in.")
    params: dict[str, Any]
    value: float
    metrics: dict[str, Any]
    created_at: float


# ---- request bodies of the steering routes ----------------------------------------------------


class AddTrialIn(BaseModel):
    """``POST /api/v1/experiments/{id}/trials``: a trial to run next (NNI's customized trial)."""

    model_config = ConfigDict(extra="forbid")

    params: dict[str, Any] = Field(
        description="A parameter set of the experiment's search space.",
        examples=[{"lr": 0.01, "optimizer": "adam"}],
    )


class ImportIn(BaseModel):
    """``POST /api/v1/experiments/{id}/import``: results obtained elsewhere, for the tuner."""

    model_config = ConfigDict(extra="forbid")

    results: list[Any] = Field(
        description='Each {"params": {...}, "value": 0.1, "metrics": {...}} or NNI\'s '
        '{"parameter": {...}, "value": 0.1} (a value may be a dict whose "default" is the '
        "objective).",
        examples=[[{"params": {"lr": 0.01}, "value": 0.25}]],
    )
