"""The JSON shapes of the NNI-compatible routes (``/api/v1/nni/...``): NNI 3.0's camelCase names
and milliseconds, as NNI's manager sends them (``ts/nni_manager/common/manager.ts`` and
``common/datastore.ts``; the entries of ``experiments-info`` are those of NNI's experiment
manifest, written by ``nni/tools/nnictl/config_utils.py``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from hyperlab.server._context import error_responses
from hyperlab.trial import TrialStatus

__all__ = [
    "NNI_READ_ERRORS",
    "NNI_WRITE_ERRORS",
    "NniErrorOut",
    "NniExperimentInfo",
    "NniExperimentProfile",
    "NniExportedResult",
    "NniJobStatistics",
    "NniMetricData",
    "NniSequenceId",
    "NniStatus",
    "NniTrialJob",
]


class NniErrorOut(BaseModel):
    """Every error of the NNI-compatible routes: hyperlab's ``detail``, and the same text as
    ``error``, which NNI's clients read."""

    detail: str
    error: str


def _nni_errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {**spec, "model": NniErrorOut} for code, spec in error_responses(*codes).items()}


NNI_READ_ERRORS = _nni_errors(400, 404, 422, 503)
"""The errors an NNI route answers (404: no such experiment or trial job)."""
NNI_WRITE_ERRORS = _nni_errors(400, 401, 403, 404, 409, 413, 415, 422, 503)
"""The errors an NNI route that sends a control request answers."""


class NniStatus(BaseModel):
    """NNI's ``NNIManagerStatus``."""

    status: str = Field(description="INITIALIZED, RUNNING, STOPPING, STOPPED, DONE...")
    errors: list[str]


class NniExperimentProfile(BaseModel):
    """NNI's ``ExperimentProfile``: times in milliseconds, ``execDuration`` in seconds."""

    id: str
    params: dict[str, Any] = Field(description="The config in NNI's v2 field names.")
    execDuration: int
    logDir: str
    startTime: int | None = None
    endTime: int | None = None
    nextSequenceId: int
    revision: int


class NniMetricData(BaseModel):
    """NNI's ``MetricDataRecord``; ``data`` is a JSON text of a JSON text, as NNI stores it."""

    timestamp: int
    trialJobId: str
    parameterId: str
    type: Literal["PERIODICAL", "FINAL"]
    sequence: int
    data: str


class NniTrialJob(BaseModel):
    """NNI's ``TrialJobInfo``; ``hyperParameters`` holds JSON texts."""

    trialJobId: str
    sequenceId: int
    status: TrialStatus
    startTime: int
    endTime: int | None = None
    hyperParameters: list[str]
    logPath: str
    finalMetricData: list[NniMetricData] | None = None
    stderrPath: str | None = None


class NniJobStatistics(BaseModel):
    """NNI's ``TrialJobStatistics``: how many trials are in one status."""

    trialJobStatus: TrialStatus
    trialJobNumber: int


class NniExperimentInfo(BaseModel):
    """One entry of NNI's experiment manifest (``experiments-info``)."""

    id: str
    experimentName: str | None
    port: int | None = Field(description="Where its API is served; null when unknown or gone.")
    status: str = Field(description="NNI's: a lost driver shows as STOPPED, as NNI shows a crash.")
    platform: str
    startTime: int
    endTime: int | Literal["N/A"] = Field(description="Milliseconds, or 'N/A' until it ends.")
    tag: list[str]
    pid: int | None = Field(description="The live driver's process id; null when none runs.")
    webuiUrl: list[str]
    logDir: str = Field(description="The folder that holds the experiment's folder.")
    prefixUrl: str | None


class NniSequenceId(BaseModel):
    """What NNI answers to a customized trial: the new trial's ``sequenceId`` (its number)."""

    sequenceId: int | None = Field(
        description="The new trial's number; null (with 202) while the driver has not queued it."
    )


class NniExportedResult(BaseModel):
    """One entry of NNI's ``export-data``: ``value`` is the final result as a JSON text."""

    parameter: dict[str, Any]
    value: str
    trialJobId: str
