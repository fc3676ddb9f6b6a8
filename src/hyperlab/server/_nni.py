"""NNI-compatible routes under ``/api/v1/nni/``, so that NNI 3.0's own Python client
(``nni.experiment.Experiment.connect(port)``) and web UI work against a hyperlab experiment.

They answer in the shapes of NNI's manager (``ts/nni_manager/rest_server/restHandler.ts`` and
the types in ``common/manager.ts`` and ``common/datastore.ts``; see ``nni_shapes``). This module
holds the experiment's routes; the trials' are ``_nni_trials``'s:

```
GET    check-status                 {status, errors}
GET    experiment                   NNI's ExperimentProfile
PUT    experiment?update_type=      TRIAL_CONCURRENCY | MAX_TRIAL_NUM | MAX_EXEC_DURATION |
                                    SEARCH_SPACE; the body is the profile with the new value
DELETE experiment                   stop the experiment (NNI's client then waits for `pid`)
GET    experiments-info             NNI's manifest: every experiment of the store
GET    experiment-metadata          the served experiment's manifest entry
POST   experiment/import-data       [{parameter, value}] results fed to the tuner
GET    experiment/imported-data     JSON texts of the imported results
GET    version                      hyperlab's version, as a JSON string
```

One experiment is served per request, as NNI's manager serves one: the one named by the
query parameter ``?experiment_id=ID``, else the app's default (``create_app(...,
experiment_id=ID)``), else the newest experiment in the store. It is read once
(``_nni_common.Selected``), as the token was checked against it; ``experiment_id`` given twice
or empty is a 400, never a fall back to the default. Changes become control requests
in the store, like every other control; the routes wait briefly for the driver's outcome (see
``_nni_common``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Body, Query, Request, Response

from hyperlab._steering import check_request, control_value, imported_results
from hyperlab._version import __version__
from hyperlab.config import parse_duration
from hyperlab.errors import ConfigError, ExperimentNotFound, SearchSpaceError
from hyperlab.server._context import context
from hyperlab.server._models import ControlsAccepted
from hyperlab.server._nni_common import Selected, folder, send_applied
from hyperlab.server._nni_models import (
    NNI_READ_ERRORS,
    NNI_WRITE_ERRORS,
    NniExperimentInfo,
    NniExperimentProfile,
    NniStatus,
)
from hyperlab.server._nni_trials import router as trials_router
from hyperlab.server.nni_shapes import experiment_info, imported_text, profile
from hyperlab.store import (
    ControlKind,
    ControlRequest,
    ExperimentRecord,
    ImportData,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    StopExperiment,
    UpdateSearchSpace,
)

__all__ = ["router"]

router = APIRouter(responses=NNI_READ_ERRORS)

_FIELDS: dict[str, tuple[str, ...]] = {
    # update_type: the profile fields that may hold the new value (NNI v2's name first)
    "TRIAL_CONCURRENCY": ("trialConcurrency",),
    "MAX_TRIAL_NUM": ("maxTrialNumber", "maxTrialNum"),
    "MAX_TRIAL_NUMBER": ("maxTrialNumber", "maxTrialNum"),
    "MAX_EXEC_DURATION": ("maxExperimentDuration", "maxExecDuration"),
    "SEARCH_SPACE": ("searchSpace",),
}


def _positive_int(value: Any, field: str) -> int:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None or not math.isfinite(number) or number != int(number) or number <= 0:
        raise ConfigError(f"params.{field}: expected a positive integer, got {value!r}")
    return int(number)


def _space_update(record: ExperimentRecord, space: Any) -> UpdateSearchSpace:
    """The request for a new search space, checked against the experiment's tuner."""
    if not isinstance(space, dict) or not space:
        raise ConfigError(
            "params.searchSpace: expected a search space (a JSON object of at least one "
            f"parameter in NNI's format), got {space!r}"
        )
    update = UpdateSearchSpace(space=space)
    try:
        check_request(record, update)
    except SearchSpaceError as exc:  # names the parameter: say where it is
        raise SearchSpaceError(f"params.searchSpace.{exc}") from None
    return update


def _update(record: ExperimentRecord, update_type: str, params: dict[str, Any]) -> ControlRequest:
    """The control request an NNI profile update asks for; ConfigError naming what is wrong."""
    fields = _FIELDS.get(update_type)
    if fields is None:
        expected = ", ".join(_FIELDS)
        raise ConfigError(f"update_type: expected one of {expected}, got {update_type!r}")
    name = next((field for field in fields if params.get(field) is not None), None)
    if name is None:
        raise ConfigError(f"params.{fields[0]}: required for update_type {update_type}")
    value = params[name]
    if update_type == "SEARCH_SPACE":
        return _space_update(record, value)
    if update_type == "MAX_EXEC_DURATION":
        seconds = parse_duration(value, f"params.{name}")
        return control_value(SetMaxDuration, f"params.{name}", seconds)
    if update_type == "TRIAL_CONCURRENCY":
        return control_value(SetConcurrency, f"params.{name}", _positive_int(value, name))
    return control_value(SetMaxTrials, f"params.{name}", _positive_int(value, name))


def _served_at(request: Request, record: ExperimentRecord) -> tuple[str | None, int | None]:
    """Where ``record``'s API is served: its own driver's server while that runs, else this
    server (which reads every experiment of its store)."""
    if record.server_url and record.driver_alive():
        try:
            return record.server_url, urlsplit(record.server_url).port
        except ValueError:
            pass
    return str(request.base_url).rstrip("/"), request.url.port


def _info(request: Request, record: ExperimentRecord) -> NniExperimentInfo:
    url, port = _served_at(request, record)
    return experiment_info(record, folder(request, record), url=url, port=port)


def _nni_result(i: int, item: Any) -> Any:
    """An NNI import record as ``imported_results`` reads it: without the ``trialJobId`` of
    NNI's export, and with a value given as a JSON text (as ``export-data`` gives it) decoded,
    as NNI's dispatcher decodes it."""
    if not isinstance(item, Mapping):
        return item
    data = {key: value for key, value in item.items() if key != "trialJobId"}
    value = data.get("value")
    if isinstance(value, str):
        try:
            data["value"] = json.loads(value)
        except ValueError:
            raise ConfigError(
                f"results[{i}].value: expected a number, {{'default': number, ...}} or the "
                f"JSON text of one, got {value!r}"
            ) from None
    return data


# ---- routes -------------------------------------------------------------------------------


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
    return profile(record, trials, folder(request, record))


@router.put(
    "/experiment",
    response_model=ControlsAccepted,
    summary="NNI's profile update, applied by the driver as a control request",
    responses=NNI_WRITE_ERRORS,
    description="update_type: TRIAL_CONCURRENCY, MAX_TRIAL_NUM (or MAX_TRIAL_NUMBER), "
    "MAX_EXEC_DURATION, SEARCH_SPACE. The body is NNI's profile ({params: {...}}, as GET "
    "experiment gives it, with the new value) or its params alone. Answers once the driver "
    "applied it (202 if it has not within a few seconds; 409 if it refused).",
)
def update_profile(
    request: Request,
    response: Response,
    record: Selected,
    update_type: Annotated[str, Query(description="What to change.")],
    body: Annotated[dict[str, Any], Body(description="NNI's experiment profile.")],
) -> ControlsAccepted:
    nested = body.get("params")
    params: dict[str, Any] = nested if isinstance(nested, dict) else body
    return send_applied(request, response, record, [_update(record, update_type, params)])


@router.delete(
    "/experiment",
    response_model=ControlsAccepted,
    summary="Stop the experiment (NNI's stop): running trials end, the driver exits",
    responses=NNI_WRITE_ERRORS,
    description="Answers at once, as NNI's manager does; NNI's client then waits for the "
    "driver's process (`pid` of experiments-info) to exit. An experiment that has already "
    "ended answers 200 with no control request.",
)
def stop_experiment(request: Request, record: Selected) -> ControlsAccepted:
    if record.status.is_finished():
        return ControlsAccepted(experiment_id=record.id, control_ids=[], controls=[])
    return context(request).send(record, [StopExperiment()])


@router.get(
    "/experiments-info",
    response_model=list[NniExperimentInfo],
    summary="NNI's experiment manifest: every experiment of the store",
)
def experiments_info(request: Request) -> list[NniExperimentInfo]:
    store = context(request).store
    entries = []
    for summary in store.list_experiments():
        try:
            record = store.get_experiment(summary.id)
        except ExperimentNotFound:  # deleted since it was listed
            continue
        entries.append(_info(request, record))
    return entries


@router.get(
    "/experiment-metadata",
    response_model=NniExperimentInfo,
    summary="The served experiment's entry of NNI's experiment manifest",
)
def experiment_metadata(request: Request, record: Selected) -> NniExperimentInfo:
    return _info(request, record)


@router.post(
    "/experiment/import-data",
    response_model=ControlsAccepted,
    summary="Feed results obtained elsewhere to the tuner (NNI's import data)",
    responses=NNI_WRITE_ERRORS,
    description="The body is NNI's import format: [{parameter: {...}, value: number or "
    "{default: number, ...}}] (export-data's records work as they are). 422 names the record "
    "that has no value or whose parameters are outside the search space; nothing is imported "
    "then.",
)
def import_data(
    request: Request,
    response: Response,
    record: Selected,
    records: Annotated[list[Any], Body(description="The results to import.")],
) -> ControlsAccepted:
    results = imported_results([_nni_result(i, item) for i, item in enumerate(records)])
    request_ = ImportData(results=results)
    check_request(record, request_)
    return send_applied(request, response, record, [request_])


@router.get(
    "/experiment/imported-data",
    response_model=list[str],
    summary="The imported results: JSON texts of lists of {parameter, value}",
)
def imported_data(request: Request, record: Selected) -> list[str]:
    return [imported_text(result) for result in context(request).store.get_imported(record.id)]


@router.get("/version", response_model=str, summary="hyperlab's version")
def version() -> str:
    return __version__


router.include_router(trials_router)
