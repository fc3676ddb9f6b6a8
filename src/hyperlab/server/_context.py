"""What every route shares: the app's store, its default experiment, the experiment a request
acts on, and sending controls.

The server only reads the store and appends control requests to it; the experiment's driver
picks them up, applies them and records the outcome (see DESIGN.md, "Control goes through the
store too").
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Path, Request

from hyperlab._steering import not_running
from hyperlab.errors import ExperimentNotFound, HyperlabError
from hyperlab.server._listing import MemoCache, Snapshots
from hyperlab.server._models import ControlOut, ControlsAccepted, ErrorOut
from hyperlab.server._security import AmbiguousExperiment, experiment_of
from hyperlab.store import ControlRequest, ExperimentRecord, Store
from hyperlab.store.tokens import read_token
from hyperlab.trial import Trial

__all__ = [
    "MAX_ID",
    "READ_ERRORS",
    "WRITE_ERRORS",
    "ApiContext",
    "ExperimentId",
    "TrialNumber",
    "acted_on",
    "context",
    "error_responses",
]

MAX_TRIAL_NUMBER = 2**31 - 1  # trials.number is a 32-bit integer
MAX_ID = 2**62
"""The largest id or cursor a route accepts (row ids are 64-bit integers)."""

_ERRORS = {
    400: "The experiment is named ambiguously: experiment_id twice, empty, or other than the "
    "path's.",
    401: "No token: writes need X-Hyperlab-Token (or the dashboard's cookie).",
    403: "A wrong token, or a write from another site.",
    404: "No such experiment, trial or control.",
    409: "No driver runs the experiment (or the trial already finished): nothing would apply "
    "the request.",
    413: "The body is too large.",
    415: "The body is not JSON (Content-Type: application/json).",
    422: "A value does not parse or fit: the detail names the field, the value and the rule.",
    501: "An optional dependency is missing: the detail names the pip extra to install.",
    503: "The store cannot be read.",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI descriptions of the error answers ``codes`` (each ``{"detail": "..."}``)."""
    return {code: {"model": ErrorOut, "description": _ERRORS[code]} for code in codes}


READ_ERRORS = error_responses(400, 404, 422, 503)
"""The errors a read route answers."""
WRITE_ERRORS = error_responses(400, 401, 403, 404, 409, 413, 415, 422, 503)
"""The errors a route that sends a control request answers."""


def acted_on(request: Request) -> str | None:
    """The experiment ``request`` acts on: the one its token was checked against
    (``hyperlab.server._security.experiment_of``: the path's id, else ``?experiment_id=``, else
    the app's default experiment); None when it names none and the app has no default.

    Raises:
        HTTPException: 400 when the request names its experiment ambiguously.
    """
    try:
        return experiment_of(request.scope, context(request).experiment_id)
    except AmbiguousExperiment as exc:
        raise HTTPException(400, str(exc)) from None


def _path_experiment(
    request: Request,
    experiment_id: Annotated[
        str,
        Path(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$",
            description="The experiment's id (1 to 32 letters, digits, _, - or .).",
        ),
    ],
) -> str:
    acting = acted_on(request)
    if acting != experiment_id:  # both read the request's path: only a bug could part them
        raise HTTPException(
            400, f"experiment_id: the path names {experiment_id!r}, the request {acting!r}"
        )
    return acting


ExperimentId = Annotated[str, Depends(_path_experiment)]
"""The experiment of a route under ``/api/v1/experiments/{experiment_id}``: the path's id, the
one the request's token was checked against (``acted_on``)."""
TrialNumber = Annotated[
    int, Path(ge=0, le=MAX_TRIAL_NUMBER, description="The trial's number (0, 1, 2...).")
]


class ApiContext:
    """What every route needs: the app's store, its default experiment, and control requests.

    Args:
        store: The store the app reads and sends control requests to.
        experiment_id: The experiment the NNI-compatible routes serve when a request names
            none; None for the newest experiment in the store.
        owns_store: Close the store when the app shuts down.
    """

    def __init__(self, store: Store, *, experiment_id: str | None, owns_store: bool) -> None:
        self.store = store
        self.experiment_id = experiment_id
        self.owns_store = owns_store
        self.snapshots = Snapshots()
        self.memo = MemoCache()
        self._tokens: dict[str, str] = {}

    def experiment_token(self, experiment_id: str) -> str | None:
        """The token of an experiment (read from its folder once), or None if it has none."""
        token = self._tokens.get(experiment_id)
        if token is None:
            try:
                record = self.store.get_experiment(experiment_id)
            except HyperlabError:
                return None
            token = read_token(self.store.experiment_folder(record))
            if token is not None:
                self._tokens[experiment_id] = token
        return token

    def pick_experiment(self, experiment_id: str | None) -> ExperimentRecord:
        """The experiment a single-experiment route serves: ``experiment_id`` (what
        ``acted_on`` answers), else the newest in the store.

        Raises:
            ExperimentNotFound: when that experiment does not exist or the store is empty.
        """
        if experiment_id is None:
            newest = self.store.list_experiments()[:1]
            if not newest:
                raise ExperimentNotFound(
                    f"no experiment in {self.store!r} yet; pass ?experiment_id=ID once one exists"
                )
            experiment_id = newest[0].id
        return self.store.get_experiment(experiment_id)

    def require_running(self, record: ExperimentRecord) -> None:
        """HTTP 409 unless a driver runs ``record`` now and will obey a control request."""
        if record.driver_alive():
            return
        if record.status.is_finished() or record.driver_pid is None:  # names the command
            detail = str(not_running(record, self.store))  # that starts it
        else:
            detail = (
                f"experiment {record.id!r} has status {record.status} but its driver (pid "
                f"{record.driver_pid} on {record.driver_host}) is gone; continue it with "
                f"`hyperlab resume {record.id}`"
            )
        raise HTTPException(409, detail)

    def require_active_trial(self, record: ExperimentRecord, number: int) -> Trial:
        """The trial, or HTTP 404 when it does not exist and 409 when it already finished."""
        trial = self.store.get_trial(record.id, number)
        if trial.status.is_finished():
            raise HTTPException(
                409,
                f"trial {number} of experiment {record.id!r} already finished "
                f"(status {trial.status}); only waiting or running trials can be killed",
            )
        return trial

    def send(self, record: ExperimentRecord, requests: list[ControlRequest]) -> ControlsAccepted:
        """Append control requests for a running experiment; HTTP 409 when it is not running."""
        self.require_running(record)
        ids = [self.store.send_control(record.id, request) for request in requests]
        controls = [ControlOut.from_control(self.store.get_control(i)) for i in ids]
        return ControlsAccepted(experiment_id=record.id, control_ids=ids, controls=controls)


def context(request: Request) -> ApiContext:
    """The ``ApiContext`` of the app serving ``request``."""
    return request.app.state.hyperlab
