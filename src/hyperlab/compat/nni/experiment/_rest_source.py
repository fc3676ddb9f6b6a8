"""``RestSource``: an experiment read and controlled through NNI's REST routes
(``/api/v1/nni/...``) at a port of this machine, for ``Experiment.connect(port)``.

The server behind the port (``Experiment.run``/``start`` of this module, ``hyperlab run
--port``, ``hyperlab serve``) turns each change into a control request in the store and answers
once the driver applied it. Loopback writes to NNI's routes need no token, as NNI's own client
sends none.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from hyperlab.compat.nni.experiment._source import Json
from hyperlab.errors import ConfigError, ExperimentNotFound, HyperlabError, TrialNotFound
from hyperlab.store import (
    ControlRequest,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    UpdateSearchSpace,
)

__all__ = ["RestSource"]

PREFIX = "/api/v1/nni"
TIMEOUT = 30.0
"""Seconds one request may take (an update waits up to 5 s for the driver)."""


class RestSource:
    """The experiment served at ``http://127.0.0.1:<port>``: the one the server serves by
    default (``hyperlab serve``: the newest), named in every later request.

    Raises:
        HyperlabError: nothing answers at the port.
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self.host = "127.0.0.1"
        self._query: dict[str, str] = {}
        self.experiment_id = str(self._call("GET", "/experiment")["id"])
        self._query = {"experiment_id": self.experiment_id}

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self.port}"

    def _call(self, method: str, path: str, body: Any = None, **query: str) -> Any:
        address = f"{self.url}{PREFIX}{path}"
        if query or self._query:
            address += "?" + urllib.parse.urlencode({**self._query, **query})
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(address, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as exc:
            raise _error(method, path, exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise HyperlabError(
                f"no experiment's REST API answers at {self.url} ({reason}); is it running "
                "with this port?"
            ) from None
        if status == 202:
            raise HyperlabError(
                f"{method} {path}: the experiment's driver has not applied the change yet; it "
                "stays queued and is applied if the driver still runs"
            )
        return json.loads(text or b"null")

    def status(self) -> str:
        return str(self._call("GET", "/check-status")["status"])

    def profile(self) -> Json:
        return dict(self._call("GET", "/experiment"))

    def trial_jobs(self) -> list[Json]:
        return list(self._call("GET", "/trial-jobs"))

    def trial_job(self, trial_job_id: str) -> Json:
        return dict(self._call("GET", f"/trial-jobs/{_quoted(trial_job_id)}"))

    def job_statistics(self) -> list[Json]:
        return list(self._call("GET", "/job-statistics"))

    def metric_data(self, trial_job_id: str | None) -> list[Json]:
        path = "/metric-data" if trial_job_id is None else f"/metric-data/{_quoted(trial_job_id)}"
        return list(self._call("GET", path))

    def export_data(self) -> list[Json]:
        return list(self._call("GET", "/export-data"))

    def experiments_info(self) -> list[Json]:
        return list(self._call("GET", "/experiments-info"))

    def control(self, request: ControlRequest) -> None:
        if isinstance(request, KillTrial):
            self._call("DELETE", f"/trial-jobs/{self.experiment_id}-{request.number}")
            return
        update: tuple[str, str, Any]
        if isinstance(request, SetConcurrency):
            update = ("TRIAL_CONCURRENCY", "trialConcurrency", request.value)
        elif isinstance(request, SetMaxTrials):
            update = ("MAX_TRIAL_NUM", "maxTrialNumber", request.value)
        elif isinstance(request, SetMaxDuration):
            update = ("MAX_EXEC_DURATION", "maxExperimentDuration", request.value)
        elif isinstance(request, UpdateSearchSpace):
            update = ("SEARCH_SPACE", "searchSpace", request.space)
        else:
            raise ConfigError(f"{request.kind}: not a change NNI's experiment profile takes")
        kind, field, value = update
        self._call("PUT", "/experiment", {"params": {field: value}}, update_type=kind)

    def request_stop(self) -> None:
        self._call("DELETE", "/experiment")


def _quoted(trial_job_id: str) -> str:
    return urllib.parse.quote(str(trial_job_id), safe="")


def _error(method: str, path: str, exc: urllib.error.HTTPError) -> HyperlabError:
    """The error an HTTP error answer stands for, with the server's message."""
    try:
        detail = json.loads(exc.read()).get("detail")
    except (ValueError, AttributeError):
        detail = None
    message = str(detail or f"{method} {path}: HTTP {exc.code} {exc.reason}")
    if exc.code == 404:
        trial = path.startswith(("/trial-jobs/", "/metric-data/"))
        return TrialNotFound(message) if trial else ExperimentNotFound(message)
    if exc.code in (400, 409, 422):
        return ConfigError(message)
    return HyperlabError(f"{method} {path}: HTTP {exc.code}: {message}")
