"""Steering a running experiment, as NNI's dispatcher allows: a new search space, a trial added
by hand, results imported into the tuner.

Each is a control request (``UpdateSearchSpace``, ``AddTrial``, ``ImportData``) that goes
through the store, so it works from any process: the Python API (``Experiment``), the CLI and
the REST API check it here against the experiment as stored, send it, and wait for the
driver's outcome; the driver checks it again against what it runs and applies it
(``hyperlab.experiment._controls``). Nothing here imports the driver.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from sqlalchemy.engine import URL

from hyperlab.config import describe_validation_error, parse_duration
from hyperlab.errors import ConfigError, HyperlabError, SearchSpaceError
from hyperlab.reporting.context import is_finite_number
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    Control,
    ControlRequest,
    ExperimentRecord,
    ImportData,
    ImportedResult,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    Store,
    UpdateSearchSpace,
    home,
)
from hyperlab.trial import ExperimentStatus
from hyperlab.tuners.base import create_tuner

__all__ = [
    "budget_changes",
    "check_request",
    "control_value",
    "imported_results",
    "new_space",
    "not_running",
    "resume_command",
    "send_and_wait",
    "steer",
]

R = TypeVar("R", bound=BaseModel)

OUTCOME_TIMEOUT = 30.0
"""Seconds ``send_and_wait`` waits for the driver to apply a request."""


def control_value(model: type[R], field: str, value: Any) -> R:
    """The control request ``model(value=value)`` (``SetMaxTrials``, ``SetMaxDuration``,
    ``SetConcurrency``), checked strictly: ``'5'`` and ``True`` are not numbers. Whoever takes
    such a value (a running experiment's steering, ``resume``'s changes) checks it here, so
    the ranges hold the same everywhere.

    Raises:
        ConfigError: naming ``field``, the value and what was expected.
    """
    try:
        return model.model_validate({"value": value}, strict=True)
    except ValidationError as exc:
        problems = [err["msg"] for err in exc.errors()]
        expected = "; ".join(problem[0].lower() + problem[1:] for problem in problems)
        raise ConfigError(f"{field}: {expected}, got {value!r}") from None


def budget_changes(
    *,
    max_trials: Any = None,
    max_duration: Any = None,
    concurrency: Any = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The budget and concurrency given (those not None), each checked as the control request
    that changes it on a running experiment (``SetMaxTrials``, ``SetMaxDuration``,
    ``SetConcurrency``): whole numbers >= 1, a positive duration (seconds or ``"2h"``),
    which becomes seconds. What ``resume`` may change.

    Raises:
        ConfigError: naming the option (as ``names`` spells it: ``--max-trials``), the value
            and what was expected.
    """
    label = {"max_trials": "max_trials", "max_duration": "max_duration"}
    label |= {"concurrency": "concurrency", **(names or {})}
    changes: dict[str, Any] = {}
    if max_trials is not None:
        changes["max_trials"] = control_value(SetMaxTrials, label["max_trials"], max_trials).value
    if max_duration is not None:
        seconds = parse_duration(max_duration, label["max_duration"])
        request = control_value(SetMaxDuration, label["max_duration"], seconds)
        changes["max_duration"] = request.value
    if concurrency is not None:
        request_c = control_value(SetConcurrency, label["concurrency"], concurrency)
        changes["concurrency"] = request_c.value
    return changes


def resume_command(store: Store, experiment_id: str) -> str:
    """``hyperlab resume ID``, with ``--storage`` unless ``store`` is the home's default one
    (a password in its URL shown as ``***``)."""
    default = os.path.abspath(home().expanduser() / "hyperlab.db")
    if store.url == URL.create("sqlite", database=default).render_as_string():
        return f"hyperlab resume {experiment_id}"
    return f"hyperlab --storage {store.masked_url} resume {experiment_id}"


def not_running(record: ExperimentRecord, store: Store, *, also: str = "") -> ConfigError:
    """The error for steering an experiment no driver runs: ``experiment ID is not running
    (STATUS)``, with the command that starts it (``also``: another way, such as NNI's)."""
    verb = "run" if record.status is ExperimentStatus.INITIALIZED else "continue"
    how = f"`{resume_command(store, record.id)}`" + (f" or {also}" if also else "")
    return ConfigError(
        f"experiment {record.id} is not running ({record.shown_status}); only a running "
        f"experiment can be steered: {verb} it with {how}"
    )


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
        options.tuner,
        parsed,
        mode=options.modes,
        seed=record.seed,
        args=options.tuner_args,
        constrained=options.constraints is not None,
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
        others = [name for name in record.options.metrics[1:] if name]
        for i, result in enumerate(request.results):
            _check_params(record, result.params, f"results[{i}].params")
            missing = [name for name in others if not is_finite_number(result.metrics.get(name))]
            if missing:
                raise ConfigError(
                    f"results[{i}].metrics: the experiment has objectives "
                    f"{list(record.options.metrics)}; a result gives the first as its value and "
                    f"the others among its metrics, and {missing} is missing or not a number"
                )


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
        raise not_running(record, store)
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
