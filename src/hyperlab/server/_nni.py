"""NNI-compatible routes under ``/api/v1/nni/``, so NNI's tools and users feel at home.

They answer in the shapes of NNI's manager (``ts/nni_manager/rest_server/restHandler.ts`` and
the types in ``common/manager.ts`` and ``common/datastore.ts``): times in milliseconds,
``hyperParameters`` as JSON texts, and metric ``data`` as a JSON text of a JSON text, exactly as
NNI's own ``nni.experiment`` client and web UI decode them.

One experiment is served per request, as NNI's manager serves one: the one named by the
query parameter ``?experiment_id=ID``, else the app's default (``create_app(...,
experiment_id=ID)``), else the newest experiment in the store. Trial job ids are the trials'
ids, ``<experiment id>-<number>`` (what command trials see in ``NNI_TRIAL_JOB_ID``), and the
trial number is NNI's ``sequenceId`` and ``parameter_id``. Changes (``PUT experiment``,
``DELETE trial-jobs/ID``) become control requests in the store, like every other control.
"""

from __future__ import annotations

import json
import math
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Query, Request

from hyperlab.config import parse_duration
from hyperlab.errors import ConfigError
from hyperlab.server._context import context
from hyperlab.server._models import (
    ControlsAccepted,
    NniExperimentProfile,
    NniJobStatistics,
    NniMetricData,
    NniStatus,
    NniTrialJob,
)
from hyperlab.store import (
    ControlKind,
    ControlRequest,
    ExperimentRecord,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
)
from hyperlab.trial import Mode, Trial, TrialStatus

__all__ = ["router"]

router = APIRouter()

MetricType = Literal["PERIODICAL", "FINAL"]
_UPDATES: dict[str, tuple[type[SetConcurrency | SetMaxTrials | SetMaxDuration], tuple[str, ...]]]
_UPDATES = {
    # update_type: (control request, the profile fields that hold the new value: v2 name first)
    "TRIAL_CONCURRENCY": (SetConcurrency, ("trialConcurrency",)),
    "MAX_TRIAL_NUM": (SetMaxTrials, ("maxTrialNumber", "maxTrialNum")),
    "MAX_TRIAL_NUMBER": (SetMaxTrials, ("maxTrialNumber", "maxTrialNum")),
    "MAX_EXEC_DURATION": (SetMaxDuration, ("maxExperimentDuration", "maxExecDuration")),
}


def _selected(
    request: Request,
    experiment_id: Annotated[
        str | None,
        Query(description="The experiment to serve; default: the app's, else the newest."),
    ] = None,
) -> ExperimentRecord:
    return context(request).pick_experiment(experiment_id)


Selected = Annotated[ExperimentRecord, Depends(_selected)]
TrialJobId = Annotated[str, Path(description="A trial's id: <experiment id>-<number>.")]


# ---- translation into NNI's shapes ------------------------------------------------------------


def nni_status(status: TrialStatus) -> TrialStatus:
    """A trial status as NNI knows them: PAUSED (resumed later by a scheduler) is WAITING."""
    return TrialStatus.WAITING if status is TrialStatus.PAUSED else status


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def nni_value(metrics: dict[str, Any], metric: str | None) -> Any:
    """A result as NNI's trials report it: a number, or a dict whose ``default`` is the objective.

    Args:
        metrics: The metrics hyperlab stored.
        metric: The experiment's objective metric, if one was configured.
    """
    if len(metrics) == 1:
        return next(iter(metrics.values()))
    key = metric if metric in metrics else "default"
    if key not in metrics:
        return metrics
    return {"default": metrics[key], **{k: v for k, v in metrics.items() if k != key}}


def _record(trial: Trial, kind: MetricType, seq: int, at: float, value: Any) -> NniMetricData:
    return NniMetricData(
        timestamp=_ms(at) or 0,
        trialJobId=trial.id,
        parameterId=str(trial.number),
        type=kind,
        sequence=seq,
        data=json.dumps(json.dumps(value)),  # NNI stores the trial's JSON text as JSON
    )


def metric_records(
    trial: Trial, metric: str | None, kind: MetricType | None
) -> list[NniMetricData]:
    """The trial's intermediate reports (of its latest attempt) and final result, NNI-style."""
    records = []
    if kind in (None, "PERIODICAL"):
        records += [
            _record(trial, "PERIODICAL", r.step, r.time, nni_value(r.metrics, metric))
            for r in trial.reports
            if r.attempt == trial.attempt
        ]
    if kind in (None, "FINAL") and trial.status is TrialStatus.SUCCEEDED:
        at = trial.finished_at or trial.created_at or 0.0
        records.append(_record(trial, "FINAL", 0, at, nni_value(trial.metrics, metric)))
    return records


def _trial_job(trial: Trial, metric: str | None, folder: str) -> NniTrialJob:
    hyper = {
        "parameter_id": trial.number,
        "parameter_source": "algorithm",
        "parameters": trial.params,
        "parameter_index": 0,
    }
    log_path = f"file://localhost:{folder}/trials/{trial.number}"
    failed = trial.status is TrialStatus.FAILED
    return NniTrialJob(
        trialJobId=trial.id,
        sequenceId=trial.number,
        status=nni_status(trial.status),
        startTime=_ms(trial.started_at or trial.created_at),
        endTime=_ms(trial.finished_at),
        hyperParameters=[json.dumps(hyper)],
        logPath=log_path,
        finalMetricData=metric_records(trial, metric, "FINAL") or None,
        stderrPath=f"{log_path}/stderr.log" if failed else None,
    )


def _duration(seconds: Any) -> str | None:
    return None if seconds is None else f"{float(seconds):g}s"


def nni_params(record: ExperimentRecord) -> dict[str, Any]:
    """The experiment's config in NNI's v2 field names, where they map."""
    options = record.options
    mode = "maximize" if options.mode is Mode.MAX else "minimize"
    params = {
        "experimentName": record.name,
        "searchSpace": record.space,
        "trialConcurrency": options.concurrency,
        "maxTrialNumber": options.max_trials,
        "maxExperimentDuration": _duration(options.max_duration),
        "trialGpuNumber": options.gpus.per_trial if options.gpus else 0,
        "experimentWorkingDirectory": options.working_dir,
        "tuner": {
            "name": options.tuner,
            "classArgs": {**options.tuner_args, "optimize_mode": mode},
        },
        "trainingService": {"platform": "local"},
    }
    return {key: value for key, value in params.items() if value is not None}


def _folder(request: Request, record: ExperimentRecord) -> str:
    return str(context(request).store.experiment_folder(record))


def _trial_number(record: ExperimentRecord, trial_job_id: str) -> int:
    prefix, _, number = trial_job_id.rpartition("-")
    if prefix != record.id or not number.isdigit():
        raise HTTPException(
            404,
            f"no trial job {trial_job_id!r} in experiment {record.id!r}; its trial job ids "
            f"look like '{record.id}-<number>'",
        )
    return int(number)


def _positive_int(value: Any, field: str) -> int:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None or not math.isfinite(number) or number != int(number) or number <= 0:
        raise ConfigError(f"params.{field}: expected a positive integer, got {value!r}")
    return int(number)


# ---- routes -----------------------------------------------------------------------------


@router.get("/check-status", response_model=NniStatus, summary="NNI's manager status")
def check_status(request: Request, record: Selected) -> NniStatus:
    status = str(record.status)
    if record.driver_lost:  # NNI has no such state: its manager would be gone, an ERROR
        gone = (
            f"the experiment's driver (pid {record.driver_pid} on {record.driver_host}) is "
            f"gone; continue it with `hyperlab resume {record.id}`"
        )
        return NniStatus(status="ERROR", errors=[gone])
    if not record.status.is_finished():
        pending = context(request).store.pending_controls(record.id)
        if any(control.kind is ControlKind.STOP for control in pending):
            status = "STOPPING"
    return NniStatus(status=status, errors=[record.error] if record.error else [])


@router.get(
    "/experiment",
    response_model=NniExperimentProfile,
    response_model_exclude_none=True,
    summary="NNI's experiment profile",
)
def get_profile(request: Request, record: Selected) -> NniExperimentProfile:
    trials = context(request).store.get_trials(record.id, reports=False)
    start = record.started_at or record.created_at
    end = record.finished_at if record.status.is_finished() else None
    return NniExperimentProfile(
        id=record.id,
        params=nni_params(record),
        execDuration=int(max(0.0, (end or time.time()) - start)) if record.started_at else 0,
        logDir=_folder(request, record),
        startTime=_ms(start),
        endTime=_ms(end),
        nextSequenceId=max((t.number for t in trials), default=-1) + 1,
        revision=0,
    )


@router.put(
    "/experiment",
    response_model=ControlsAccepted,
    summary="NNI's profile update, sent to the driver as a control request",
    description="update_type: TRIAL_CONCURRENCY, MAX_TRIAL_NUM (or MAX_TRIAL_NUMBER), "
    "MAX_EXEC_DURATION. The body is NNI's profile ({params: {...}}) or its params alone.",
)
def update_profile(
    request: Request,
    record: Selected,
    update_type: Annotated[str, Query(description="What to change.")],
    profile: Annotated[dict[str, Any], Body(description="NNI's experiment profile.")],
) -> ControlsAccepted:
    if update_type not in _UPDATES:
        expected = ", ".join(_UPDATES)
        if update_type == "SEARCH_SPACE":
            raise ConfigError(
                "update_type: hyperlab cannot change the search space of a running experiment; "
                f"supported: {expected}"
            )
        raise ConfigError(f"update_type: expected one of {expected}, got {update_type!r}")
    make, fields = _UPDATES[update_type]
    nested = profile.get("params")
    params: dict[str, Any] = nested if isinstance(nested, dict) else profile
    name = next((field for field in fields if params.get(field) is not None), None)
    if name is None:
        raise ConfigError(f"params.{fields[0]}: required for update_type {update_type}")
    request_: ControlRequest
    if make is SetMaxDuration:
        request_ = SetMaxDuration(value=parse_duration(params[name], f"params.{name}") or 0.0)
    else:
        request_ = make(value=_positive_int(params[name], name))
    return context(request).send(record, [request_])


@router.get("/job-statistics", response_model=list[NniJobStatistics], summary="Trials per status")
def job_statistics(request: Request, record: Selected) -> list[NniJobStatistics]:
    counts: dict[TrialStatus, int] = {}
    for trial in context(request).store.get_trials(record.id, reports=False):
        status = nni_status(trial.status)
        counts[status] = counts.get(status, 0) + 1
    return [NniJobStatistics(trialJobStatus=s, trialJobNumber=n) for s, n in counts.items()]


@router.get(
    "/trial-jobs",
    response_model=list[NniTrialJob],
    response_model_exclude_none=True,
    summary="NNI's TrialJobInfo of every trial",
)
def list_trial_jobs(
    request: Request,
    record: Selected,
    status: Annotated[TrialStatus | None, Query(description="Only this status.")] = None,
) -> list[NniTrialJob]:
    folder = _folder(request, record)
    metric = record.options.metric
    trials = context(request).store.get_trials(record.id, reports=False)
    return [_trial_job(t, metric, folder) for t in trials if status in (None, nni_status(t.status))]


@router.get(
    "/trial-jobs/{trial_job_id}",
    response_model=NniTrialJob,
    response_model_exclude_none=True,
    summary="NNI's TrialJobInfo of one trial",
)
def get_trial_job(request: Request, record: Selected, trial_job_id: TrialJobId) -> NniTrialJob:
    trial = context(request).store.get_trial(record.id, _trial_number(record, trial_job_id))
    return _trial_job(trial, record.options.metric, _folder(request, record))


@router.delete(
    "/trial-jobs/{trial_job_id}",
    response_model=ControlsAccepted,
    summary="Cancel a trial (a kill_trial control request)",
)
def cancel_trial_job(
    request: Request, record: Selected, trial_job_id: TrialJobId
) -> ControlsAccepted:
    ctx = context(request)
    number = _trial_number(record, trial_job_id)
    ctx.require_active_trial(record, number)
    return ctx.send(record, [KillTrial(number=number)])


@router.get(
    "/metric-data", response_model=list[NniMetricData], summary="Every trial's metric records"
)
def metric_data(
    request: Request,
    record: Selected,
    metric_type: Annotated[
        MetricType | None, Query(alias="type", description="PERIODICAL or FINAL.")
    ] = None,
) -> list[NniMetricData]:
    metric = record.options.metric
    records = [
        item
        for trial in context(request).store.get_trials(record.id, reports=True)
        for item in metric_records(trial, metric, metric_type)
    ]
    return sorted(records, key=lambda item: item.timestamp)


@router.get(
    "/metric-data/{trial_job_id}",
    response_model=list[NniMetricData],
    summary="One trial's metric records",
)
def trial_metric_data(
    request: Request,
    record: Selected,
    trial_job_id: TrialJobId,
    metric_type: Annotated[
        MetricType | None, Query(alias="type", description="PERIODICAL or FINAL.")
    ] = None,
) -> list[NniMetricData]:
    trial = context(request).store.get_trial(record.id, _trial_number(record, trial_job_id))
    return metric_records(trial, record.options.metric, metric_type)
