"""What the NNI-compatible routes share: the experiment a request serves, a trial found by its
trial job id, and control requests sent the way NNI's manager acts: at once.

NNI's manager changes its own state before it answers, so after ``update_trial_concurrency``
returns, NNI's client reads the new value back. hyperlab's driver applies control requests
within ~100 ms, so these routes wait for its outcome (``send_applied``): 200 once applied, 409
with the driver's reason when it refused, 202 if it is still pending after ``APPLY_WAIT``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request, Response
from fastapi import Path as PathParam

from hyperlab.errors import TrialNotFound
from hyperlab.server._context import MAX_TRIAL_NUMBER, acted_on, context
from hyperlab.server._models import ControlOut, ControlsAccepted
from hyperlab.store import Control, ControlRequest, ExperimentRecord
from hyperlab.trial import Trial

__all__ = [
    "APPLY_WAIT",
    "Selected",
    "TrialJobId",
    "apply_controls",
    "find_trial",
    "folder",
    "send_applied",
    "trial_number",
]

APPLY_WAIT = 5.0
"""Seconds a route waits for the driver to apply its control request before answering 202."""


def _selected(
    request: Request,
    experiment_id: Annotated[
        str | None,
        Query(description="The experiment, named once; default: the app's, else the newest."),
    ] = None,
) -> ExperimentRecord:
    del experiment_id  # declared for the OpenAPI document; acted_on read it (and checked it)
    return context(request).pick_experiment(acted_on(request))


Selected = Annotated[ExperimentRecord, Depends(_selected)]
"""The experiment a request is about (``?experiment_id=``, else the app's, else the newest):
the one its token was checked against."""
TrialJobId = Annotated[str, PathParam(description="A trial's id: <experiment id>-<number>.")]


def folder(request: Request, record: ExperimentRecord) -> Path:
    """The experiment's folder."""
    return context(request).store.experiment_folder(record)


def trial_number(record: ExperimentRecord, trial_job_id: str) -> int:
    """The number of the trial whose id is ``trial_job_id``; HTTP 404 naming the id when it
    cannot be one of ``record``'s trials (trial numbers are 0 to ``MAX_TRIAL_NUMBER``)."""
    prefix, _, number = trial_job_id.rpartition("-")
    digits = number.isascii() and number.isdigit() and len(number) <= len(str(MAX_TRIAL_NUMBER))
    if (
        prefix != record.id
        or not digits
        or number != str(int(number))
        or int(number) > MAX_TRIAL_NUMBER
    ):
        raise HTTPException(
            404,
            f"no trial job {trial_job_id!r} in experiment {record.id!r}; its trial job ids "
            f"look like '{record.id}-<number>'",
        )
    return int(number)


def find_trial(request: Request, record: ExperimentRecord, trial_job_id: str) -> Trial:
    """The trial whose id is ``trial_job_id``; HTTP 404 naming the id when there is none."""
    number = trial_number(record, trial_job_id)
    try:
        return context(request).store.get_trial(record.id, number)
    except TrialNotFound:
        raise HTTPException(
            404, f"no trial job {trial_job_id!r} in experiment {record.id!r} (no trial {number})"
        ) from None


def apply_controls(
    request: Request,
    record: ExperimentRecord,
    controls: list[ControlRequest],
    *,
    wait: float = APPLY_WAIT,
) -> list[Control]:
    """Send control requests to the running experiment and wait up to ``wait`` seconds for
    its driver to apply them.

    Returns:
        The controls as stored; one whose ``outcome`` is None is still pending (the driver
        applies it later).

    Raises:
        HTTPException: 409 when the experiment is not running, or its driver refused a
            request (naming the request and the driver's reason).
    """
    ctx = context(request)
    ids = ctx.send(record, controls).control_ids
    deadline = time.monotonic() + wait
    delay = 0.01
    while True:
        settled = [ctx.store.get_control(i) for i in ids]
        if all(c.outcome is not None for c in settled) or time.monotonic() >= deadline:
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
    for control in settled:
        if control.outcome is not None and not control.outcome.applied:
            raise HTTPException(409, _refusal(record, control))
    return settled


def send_applied(
    request: Request, response: Response, record: ExperimentRecord, controls: list[ControlRequest]
) -> ControlsAccepted:
    """``apply_controls``, answered as ``ControlsAccepted``: 200 once applied, 202 while one is
    still pending."""
    settled = apply_controls(request, record, controls)
    if any(control.outcome is None for control in settled):
        response.status_code = 202
    return ControlsAccepted(
        experiment_id=record.id,
        control_ids=[control.id for control in settled],
        controls=[ControlOut.from_control(control) for control in settled],
    )


def _refusal(record: ExperimentRecord, control: Control) -> str:
    message = control.outcome.message if control.outcome is not None else ""
    return (
        f"experiment {record.id!r}: its driver refused the {control.kind} request "
        f"(control {control.id}): {message}"
    )
