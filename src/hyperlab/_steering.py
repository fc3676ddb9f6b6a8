"""Steering a running experiment, as NNI's dispatcher allows: a new search space, a trial added
by hand, results imported into the tuner.

Each is a control request (``UpdateSearchSpace``, ``AddTrial``, ``ImportData``) that goes
through the store, so it works from any process: the Python API (``Experiment``), the CLI and
the REST API check it here against the experiment as stored, send it, and wait for the
driver's outcome; the driver checks it again against what it runs and applies it
(``hyperlab.experiment._controls``). Nothing here imports the driver.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from hyperlab.config import describe_validation_error
from hyperlab.errors import ConfigError, HyperlabError, SearchSpaceError
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    Control,
    ControlRequest,
    ExperimentRecord,
    ImportData,
    ImportedResult,
    Store,
    UpdateSearchSpace,
)
from hyperlab.tuners.base import create_tuner

__all__ = [
    "check_request",
    "imported_results",
    "new_space",
    "send_and_wait",
    "steer",
]

OUTCOME_TIMEOUT = 30.0
"""Seconds ``send_and_wait`` waits for the driver to apply a request."""


def new_space(record: ExperimentRecord, space: Any) -> SearchSpace:
    """``space`` (a ``SearchSpace``, a mapping, NNI JSON or a path) as the experiment's next
    search space.

    Raises:
        SearchSpaceError: the space is invalid (naming the parameter).
        ConfigError: the experiment's tuner cannot take it (``cmaes`` and a ``choice``, say),
            or the tuner was given as an object, which cannot be rebuilt on another space.
    """
    parsed = SearchSpace.coerce(space)
    if record.tuner is not None:
        raise ConfigError(
            f"search_space: experiment {record.id}'s tuner was given as an object, which cannot "
            "be rebuilt on another space; give the tuner by name to steer the space"
        )
    options = record.options
    create_tuner(
        options.tuner, parsed, mode=options.mode, seed=record.seed, args=options.tuner_args
    )
    return parsed


def imported_results(records: Iterable[Any]) -> list[ImportedResult]:
    """Results to import, from ``ImportedResult``s or dicts: hyperlab's ``{"params", "value",
    "metrics"}`` or NNI's export format ``{"parameter", "value"}``, where a value may be a dict
    whose ``"default"`` is the objective (the rest become metrics).

    Raises:
        ConfigError: naming the record and the field that is missing or not a finite number.
    """
    results = []
    for i, item in enumerate(records):
        if isinstance(item, ImportedResult):
            results.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ConfigError(
                f"results[{i}]: expected an object with params and value, got {item!r}"
            )
        data = dict(item)
        for nni_key in ("parameter", "parameters"):
            if nni_key in data and "params" not in data:
                data["params"] = data.pop(nni_key)
        data.pop("trial_job_id", None)  # NNI's export-data has it; an imported result has none
        value = data.get("value")
        if isinstance(value, Mapping):
            if "default" not in value:
                raise ConfigError(
                    f"results[{i}].value: a dict value needs a 'default' key (the objective), "
                    f"got {dict(value)!r}"
                )
            data["metrics"] = {**{k: v for k, v in value.items() if k != "default"}}
            data["value"] = value["default"]
        try:
            results.append(ImportedResult.model_validate(data))
        except ValidationError as exc:
            raise ConfigError(f"results[{i}]: {describe_validation_error(exc)}") from None
    if not results:
        raise ConfigError("results: nothing to import (an empty list)")
    return results


def check_request(record: ExperimentRecord, request: ControlRequest) -> None:
    """Check a steering request against the experiment as stored.

    Raises:
        ConfigError: naming what is wrong (a ``SearchSpaceError`` for parameters outside the
            space: the parameter and the bound it breaks).
    """
    if isinstance(request, UpdateSearchSpace):
        new_space(record, request.space)
    elif isinstance(request, AddTrial):
        _check_params(record, request.params, "params")
    elif isinstance(request, ImportData):
        for i, result in enumerate(request.results):
            _check_params(record, result.params, f"results[{i}].params")


def _check_params(record: ExperimentRecord, params: dict[str, Any], where: str) -> None:
    try:
        SearchSpace.from_nni(record.space).check(params)
    except SearchSpaceError as exc:
        raise SearchSpaceError(f"{where}: {exc}") from None


def steer(store: Store, experiment: str, request: ControlRequest) -> Control:
    """Check ``request`` against the experiment, send it to its driver and wait for the outcome
    (what ``Experiment`` and the CLI's steering commands do).

    Raises:
        ConfigError: the experiment is not running, the request does not fit it (naming the
            parameter), or the driver refused it (saying why).
        ExperimentNotFound: there is no such experiment.
    """
    record = store.get_experiment(store.resolve(experiment))
    if not record.driver_alive():
        raise ConfigError(
            f"experiment {record.id} is not running (status {record.status}); only a running "
            "experiment can be steered"
        )
    check_request(record, request)
    return send_and_wait(store, record.id, request)


def send_and_wait(
    store: Store, experiment_id: str, request: ControlRequest, *, timeout: float = OUTCOME_TIMEOUT
) -> Control:
    """Send ``request`` and wait until the experiment's driver applied it.

    Returns:
        The control, with the driver's outcome.

    Raises:
        ConfigError: the driver refused it (the message says why).
        HyperlabError: the driver did not apply it within ``timeout`` seconds (it stays
            queued; the driver applies it if it still runs).
    """
    control_id = store.send_control(experiment_id, request)
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        control = store.get_control(control_id)
        if control.outcome is not None:
            if not control.outcome.applied:
                raise ConfigError(f"experiment {experiment_id}: {control.outcome.message}")
            return control
        if time.monotonic() >= deadline:
            raise HyperlabError(
                f"experiment {experiment_id}: its driver did not apply {request.kind} within "
                f"{timeout:g}s (control {control_id} stays queued)"
            )
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
