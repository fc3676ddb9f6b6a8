"""NNI's trial routes: trial jobs (listed, read, cancelled, added by hand), their statistics,
metric records and NNI's ``export-data``:

```
GET    trial-jobs[?status=]          NNI's TrialJobInfo of every trial
POST   trial-jobs                    the body is a parameter set: a customized trial, run next
                                     within the budget; answers {sequenceId}
GET    trial-jobs/{trialJobId}       one trial
DELETE trial-jobs/{trialJobId}       cancel it: it ends USER_CANCELED
GET    job-statistics                [{trialJobStatus, trialJobNumber}]
GET    metric-data[/{trialJobId}]    MetricDataRecords (?type=PERIODICAL|FINAL)
GET    metric-data-latest            every final result and each trial's latest report
GET    metric-data-range/{min}/{max} the records of the trials numbered min to max
GET    export-data                   [{parameter, value (a JSON text), trialJobId}], one per
                                     phase of a multi-phase trial
```

Trial job ids are the trials' ids, ``<experiment id>-<number>``, and the trial number is NNI's
``sequenceId`` and ``parameter_id`` (a multi-phase trial's later phases have their own
``parameter_id``, in its ``hyperParameters`` and their FINAL records). Shapes are
``nni_shapes``'s; routes as NNI 3.0's manager has them
(``ts/nni_manager/rest_server/restHandler.ts``); an unknown trial job id is a 404 naming it
(NNI's manager answers an empty 200).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from hyperlab._steering import check_request
from hyperlab.server._context import context
from hyperlab.server._models import ControlsAccepted
from hyperlab.server._nni_common import (
    APPLY_WAIT,
    Selected,
    TrialJobId,
    apply_controls,
    find_trial,
    folder,
    send_applied,
)
from hyperlab.server._nni_models import (
    NNI_READ_ERRORS,
    NNI_WRITE_ERRORS,
    NniExportedResult,
    NniJobStatistics,
    NniMetricData,
    NniSequenceId,
    NniTrialJob,
)
from hyperlab.server.nni_shapes import (
    exported_results,
    metric_records,
    nni_status,
    trial_job,
)
from hyperlab.store import AddTrial, ExperimentRecord, KillTrial
from hyperlab.trial import Trial, TrialStatus

__all__ = ["router"]

router = APIRouter(responses=NNI_READ_ERRORS)

MetricTypeQuery = Annotated[
    Literal["PERIODICAL", "FINAL", "CUSTOM", "REQUEST_PARAMETER"] | None,
    Query(alias="type", description="PERIODICAL or FINAL (NNI's other types: none here)."),
]
SequenceId = Annotated[int, PathParam(description="A trial number (NNI's sequenceId).")]


def _batches(request: Request, record: ExperimentRecord, *, reports: bool) -> Iterator[list[Trial]]:
    """The experiment's trials a batch at a time: NNI's listings have no paging (its client
    and web UI read every trial), so they are read, shaped and sent in batches instead, and a
    request holds one batch of parameters in memory whatever the experiment's size."""
    return context(request).store.iter_trials(record.id, reports=reports)


def _streamed(items: Iterator[BaseModel], *, exclude_none: bool = False) -> StreamingResponse:
    """A JSON list sent as its items are made (the route's ``response_model`` documents it)."""

    def body() -> Iterator[bytes]:
        separator = b"["
        for item in items:
            yield separator + item.model_dump_json(exclude_none=exclude_none).encode()
            separator = b","
        yield b"]" if separator == b"," else b"[]"

    return StreamingResponse(body(), media_type="application/json")


def _all_metrics(
    batches: Iterable[list[Trial]], metric: str | None, keep: Callable[[Trial], bool] = bool
) -> list[NniMetricData]:
    """The metric records of the trials ``keep`` takes, oldest first (records hold no
    parameters: they are kept while the trials' batches go)."""
    records = [
        item
        for trials in batches
        for trial in trials
        if keep(trial)
        for item in metric_records(trial, metric)
    ]
    return sorted(records, key=lambda item: item.timestamp)


@router.get("/job-statistics", response_model=list[NniJobStatistics], summary="Trials per status")
def job_statistics(request: Request, record: Selected) -> list[NniJobStatistics]:
    counts: dict[TrialStatus, int] = {}
    for trials in _batches(request, record, reports=False):
        for trial in trials:
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
) -> StreamingResponse:
    where = folder(request, record)
    metric = record.options.first_metric
    jobs = (
        trial_job(t, metric, where)
        for trials in _batches(request, record, reports=False)
        for t in trials
        if status in (None, nni_status(t.status))
    )
    return _streamed(jobs, exclude_none=True)


@router.post(
    "/trial-jobs",
    response_model=NniSequenceId,
    summary="Add a trial by hand (NNI's customized trial): it runs next, counted in the budget",
    responses=NNI_WRITE_ERRORS,
    description="The body is the trial's parameters. Answers once the driver queued the trial, "
    "with its number (202 and null if the driver has not yet); 422 names a parameter outside "
    "the search space and the bound it breaks; 409 when the driver refused it (budget spent).",
)
def add_trial_job(
    request: Request,
    response: Response,
    record: Selected,
    params: Annotated[dict[str, Any], Body(description="The trial's parameters.")],
) -> NniSequenceId:
    add = AddTrial(params=params)
    check_request(record, add)
    (control,) = apply_controls(request, record, [add], wait=2 * APPLY_WAIT)
    if control.outcome is None:
        response.status_code = 202
        return NniSequenceId(sequenceId=None)
    return NniSequenceId(sequenceId=control.outcome.trial)


@router.get(
    "/trial-jobs/{trial_job_id}",
    response_model=NniTrialJob,
    response_model_exclude_none=True,
    summary="NNI's TrialJobInfo of one trial",
)
def get_trial_job(request: Request, record: Selected, trial_job_id: TrialJobId) -> NniTrialJob:
    trial = find_trial(request, record, trial_job_id)
    return trial_job(trial, record.options.first_metric, folder(request, record))


@router.delete(
    "/trial-jobs/{trial_job_id}",
    response_model=ControlsAccepted,
    summary="Cancel a trial: it ends USER_CANCELED (a kill_trial control request)",
    responses=NNI_WRITE_ERRORS,
)
def cancel_trial_job(
    request: Request, response: Response, record: Selected, trial_job_id: TrialJobId
) -> ControlsAccepted:
    trial = find_trial(request, record, trial_job_id)
    context(request).require_active_trial(record, trial.number)
    return send_applied(request, response, record, [KillTrial(number=trial.number)])


@router.get(
    "/metric-data", response_model=list[NniMetricData], summary="Every trial's metric records"
)
def metric_data(
    request: Request, record: Selected, metric_type: MetricTypeQuery = None
) -> list[NniMetricData]:
    records = _all_metrics(_batches(request, record, reports=True), record.options.first_metric)
    return [item for item in records if metric_type in (None, item.type)]


@router.get(
    "/metric-data/{trial_job_id}",
    response_model=list[NniMetricData],
    summary="One trial's metric records",
)
def trial_metric_data(
    request: Request,
    record: Selected,
    trial_job_id: TrialJobId,
    metric_type: MetricTypeQuery = None,
) -> list[NniMetricData]:
    trial = find_trial(request, record, trial_job_id)
    records = metric_records(trial, record.options.first_metric)
    return [item for item in records if metric_type in (None, item.type)]


@router.get(
    "/metric-data-latest",
    response_model=list[NniMetricData],
    summary="Every final result, and each trial's latest intermediate one",
)
def latest_metric_data(request: Request, record: Selected) -> list[NniMetricData]:
    finals: list[NniMetricData] = []
    latest: dict[str, NniMetricData] = {}
    for item in _all_metrics(_batches(request, record, reports=True), record.options.first_metric):
        if item.type != "PERIODICAL":
            finals.append(item)
        elif item.trialJobId not in latest or latest[item.trialJobId].sequence <= item.sequence:
            latest[item.trialJobId] = item
    return finals + list(latest.values())


@router.get(
    "/metric-data-range/{min_seq_id}/{max_seq_id}",
    response_model=list[NniMetricData],
    summary="The metric records of the trials numbered min_seq_id to max_seq_id (inclusive)",
)
def metric_data_range(
    request: Request, record: Selected, min_seq_id: SequenceId, max_seq_id: SequenceId
) -> list[NniMetricData]:
    batches = _batches(request, record, reports=True)
    chosen: Callable[[Trial], bool] = lambda t: min_seq_id <= t.number <= max_seq_id  # noqa: E731
    return _all_metrics(batches, record.options.first_metric, chosen)


@router.get(
    "/export-data",
    response_model=list[NniExportedResult],
    summary="Every succeeded trial's (and phase's) parameters and final result (value: a JSON "
    "text)",
)
def export_data(request: Request, record: Selected) -> StreamingResponse:
    metric = record.options.first_metric
    results = (
        result
        for trials in _batches(request, record, reports=False)
        for trial in trials
        for result in exported_results(trial, metric)
    )
    return _streamed(results)
