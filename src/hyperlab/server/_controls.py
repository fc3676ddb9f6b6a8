"""Routes that steer a running experiment: stop it, kill a trial, change its concurrency or
budget, give it a new search space, add a trial, import results; read a control's outcome
and the imported results; remove an experiment no driver runs.

Each change is a control request appended to the store; the experiment's driver applies it
within ~100 ms and records the outcome (``GET /api/v1/controls/{id}``). Steering requests are
checked against the experiment as stored first (``hyperlab._steering``), so a bad
one gets a 422 naming the parameter and the bound; the driver checks again against what it
runs. Requests for an experiment no driver runs get a 409.
"""

from __future__ import annotations

import shutil
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Path, Query, Request, Response
from pydantic import BaseModel, Field

from hyperlab._steering import check_request, imported_results
from hyperlab.errors import ConfigError, StoreError
from hyperlab.server._context import (
    MAX_ID,
    READ_ERRORS,
    WRITE_ERRORS,
    ExperimentId,
    TrialNumber,
    context,
)
from hyperlab.server._models import (
    AddTrialIn,
    ControlOut,
    ControlsAccepted,
    ExperimentPatch,
    ImportedOut,
    ImportIn,
)
from hyperlab.store import (
    AddTrial,
    ControlRequest,
    ImportData,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    StopExperiment,
    UpdateSearchSpace,
)

__all__ = ["router"]

router = APIRouter(tags=["controls"])

_STEERING = (
    " The request is checked against the experiment's search space first (422 naming the "
    "parameter and the bound); then queued for the driver (409 when none runs it). Follow "
    "it at GET /api/v1/controls/{id}."
)


def _steer(request: Request, experiment_id: str, control: ControlRequest) -> ControlsAccepted:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    check_request(record, control)
    return ctx.send(record, [control])


@router.delete(
    "/experiments/{experiment_id}",
    status_code=204,
    summary="Remove an experiment that no driver runs: its trials, reports and folder",
    responses=WRITE_ERRORS,
)
def remove_experiment(request: Request, experiment_id: ExperimentId) -> Response:
    store = context(request).store
    record = store.get_experiment(experiment_id)
    if record.driver_alive():
        raise HTTPException(
            409,
            f"experiment {experiment_id!r} is running (driver pid {record.driver_pid} on "
            f"{record.driver_host}); stop it before removing it",
        )
    store.delete_experiment(experiment_id)
    shutil.rmtree(store.experiment_folder(record), ignore_errors=True)
    return Response(status_code=204)


@router.post(
    "/experiments/{experiment_id}/stop",
    response_model=ControlsAccepted,
    status_code=202,
    summary="Stop a running experiment (its running trials end USER_CANCELED)",
    responses=WRITE_ERRORS,
)
def stop_experiment(request: Request, experiment_id: ExperimentId) -> ControlsAccepted:
    ctx = context(request)
    return ctx.send(ctx.store.get_experiment(experiment_id), [StopExperiment()])


@router.post(
    "/experiments/{experiment_id}/trials/{number}/kill",
    response_model=ControlsAccepted,
    status_code=202,
    summary="Kill a waiting or running trial (it ends USER_CANCELED)",
    responses=WRITE_ERRORS,
)
def kill_trial(
    request: Request, experiment_id: ExperimentId, number: TrialNumber
) -> ControlsAccepted:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    ctx.require_active_trial(record, number)
    return ctx.send(record, [KillTrial(number=number)])


@router.patch(
    "/experiments/{experiment_id}",
    response_model=ControlsAccepted,
    status_code=202,
    summary="Change a running experiment's concurrency or budget",
    description="Each field given becomes one control request, applied in this order: "
    "concurrency, max_trials, max_duration.",
    responses=WRITE_ERRORS,
)
def patch_experiment(
    request: Request, experiment_id: ExperimentId, patch: Annotated[ExperimentPatch, Body()]
) -> ControlsAccepted:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    requests: list[ControlRequest] = []
    if patch.concurrency is not None:
        requests.append(SetConcurrency(value=patch.concurrency))
    if patch.max_trials is not None:
        requests.append(SetMaxTrials(value=patch.max_trials))
    if patch.max_duration is not None:
        requests.append(SetMaxDuration(value=patch.max_duration))
    if not requests:
        raise ConfigError(
            "body: give at least one of concurrency, max_trials, max_duration, "
            f"got {patch.model_dump()}"
        )
    return ctx.send(record, requests)


@router.put(
    "/experiments/{experiment_id}/search-space",
    response_model=ControlsAccepted,
    status_code=202,
    summary="Give a running experiment a new search space (NNI search-space JSON)",
    description="The tuner is rebuilt on it and learns again from the finished trials and "
    "imported results that fit it; trials keep the parameters they ran with." + _STEERING,
    responses=WRITE_ERRORS,
)
def update_search_space(
    request: Request,
    experiment_id: ExperimentId,
    space: Annotated[
        dict[str, Any],
        Body(
            description="NNI search-space JSON: {name: {_type, _value}}.",
            examples=[{"lr": {"_type": "loguniform", "_value": [1e-5, 1e-1]}}],
        ),
    ],
) -> ControlsAccepted:
    return _steer(request, experiment_id, UpdateSearchSpace(space=space))


class CheckedOut(BaseModel):
    """A steering request that would be accepted."""

    ok: bool = True
    detail: str = Field(description="What it would do.")


@router.post(
    "/experiments/{experiment_id}/search-space/check",
    response_model=CheckedOut,
    summary="Check a search space without sending it (422 naming the parameter if invalid)",
    description="What the dashboard's editor asks before it sends anything: the same checks as "
    "the PUT, against the experiment as stored; nothing changes.",
    responses=WRITE_ERRORS,
)
def check_search_space(
    request: Request,
    experiment_id: ExperimentId,
    space: Annotated[dict[str, Any], Body(description="NNI search-space JSON.")],
) -> CheckedOut:
    record = context(request).store.get_experiment(experiment_id)
    check_request(record, UpdateSearchSpace(space=space))
    return CheckedOut(detail=f"a search space of {len(space)} parameters")


@router.post(
    "/experiments/{experiment_id}/trials/check",
    response_model=CheckedOut,
    summary="Check a trial's params without adding it (422 naming the parameter and bound)",
    responses=WRITE_ERRORS,
)
def check_trial(
    request: Request, experiment_id: ExperimentId, body: Annotated[AddTrialIn, Body()]
) -> CheckedOut:
    record = context(request).store.get_experiment(experiment_id)
    check_request(record, AddTrial(params=body.params))
    return CheckedOut(detail="params in the search space")


@router.post(
    "/experiments/{experiment_id}/trials",
    response_model=ControlsAccepted,
    status_code=202,
    summary="Add a trial with given parameters, run next (NNI's customized trial)",
    description="It counts in max_trials and is marked source=custom. Once applied, the "
    "control's `trial` is the new trial's number." + _STEERING,
    responses=WRITE_ERRORS,
)
def add_trial(
    request: Request, experiment_id: ExperimentId, body: Annotated[AddTrialIn, Body()]
) -> ControlsAccepted:
    return _steer(request, experiment_id, AddTrial(params=body.params))


_IMPORT_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "oneOf": [
                    ImportIn.model_json_schema(),
                    {
                        "type": "array",
                        "items": {"type": "object"},
                        "title": "NNI's import data",
                        "description": 'NNI\'s list of {"parameter": {...}, "value": ...}.',
                    },
                ]
            },
            "example": {"results": [{"params": {"lr": 0.01}, "value": 0.25}]},
        }
    },
}


@router.post(
    "/experiments/{experiment_id}/import",
    response_model=ControlsAccepted,
    status_code=202,
    summary="Import results obtained elsewhere into the experiment's tuner",
    description="The body is {results: [...]} or NNI's list of {parameter, value} alone. "
    "Imported results are kept apart from trials (GET .../imported) and do not count in "
    "max_trials." + _STEERING,
    responses=WRITE_ERRORS,
    openapi_extra={"requestBody": _IMPORT_BODY},
)
def import_results(
    request: Request,
    experiment_id: ExperimentId,
    body: Annotated[Any, Body()],
) -> ControlsAccepted:
    if isinstance(body, dict):
        unknown = sorted(set(body) - {"results"})
        if unknown:
            raise ConfigError(f"{unknown[0]}: unknown field, got {body[unknown[0]]!r}")
        body = body.get("results", [])
    if not isinstance(body, list):
        raise ConfigError(f'body: expected {{"results": [...]}} or a list of results, got {body!r}')
    return _steer(request, experiment_id, ImportData(results=imported_results(body)))


@router.get(
    "/experiments/{experiment_id}/imported",
    response_model=list[ImportedOut],
    summary="The results imported into the experiment's tuner, in import order",
    description="The header X-Total-Count holds how many there are in all.",
    responses={
        **READ_ERRORS,
        200: {"headers": {"X-Total-Count": {"description": "All imported results."}}},
    },
)
def list_imported(
    request: Request,
    response: Response,
    experiment_id: ExperimentId,
    after: Annotated[
        int, Query(ge=0, le=MAX_ID, description="Only those with an id above this.")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000, description="At most this many.")] = 1000,
) -> list[ImportedOut]:
    rows = context(request).store.get_imported(experiment_id)
    response.headers["X-Total-Count"] = str(len(rows))
    return [ImportedOut(**row._asdict()) for row in rows if row.id > after][:limit]


@router.get(
    "/controls/{control_id}",
    response_model=ControlOut,
    summary="A control request and, once applied, its outcome",
    description="state is pending until the driver applies the request (within ~100 ms); "
    "a request sent just as the experiment ended stays pending. For add_trial, `trial` is "
    "then the new trial's number.",
    responses=READ_ERRORS,
)
def get_control(
    request: Request,
    control_id: Annotated[int, Path(ge=1, le=MAX_ID, description="The control id.")],
) -> ControlOut:
    try:
        control = context(request).store.get_control(control_id)
    except StoreError as exc:
        if str(exc).startswith("no control request"):
            raise HTTPException(404, str(exc)) from None
        raise
    return ControlOut.from_control(control)
