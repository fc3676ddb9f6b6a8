"""NNI 3.0's records of trials (``nni.experiment.data``), built from the JSON of NNI's REST API
(``/api/v1/nni/...``) as NNI's client builds them: the same fields, camelCase names included,
and the same decoding (a final result's ``value`` is a JSON text; a metric's ``data`` a JSON
text of a JSON text; hyper-parameters JSON texts).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["TrialHyperParameters", "TrialJob", "TrialMetricData", "TrialResult"]


@dataclasses.dataclass(init=False)
class TrialResult:
    """One entry of ``Experiment.export_data()``: a succeeded trial's parameters and final
    result.

    Attributes:
        parameter: The trial's parameters.
        value: Its final result: a number, or a dict whose ``default`` is the objective.
        trialJobId: The trial's id (``<experiment id>-<number>``).
    """

    parameter: dict[str, Any]
    value: Any
    trialJobId: str

    def __init__(self, parameter: dict[str, Any], value: str, trialJobId: str) -> None:
        self.parameter = parameter
        self.value = json.loads(value)
        self.trialJobId = trialJobId


@dataclasses.dataclass(init=False)
class TrialMetricData:
    """One result a trial reported (``Experiment.get_job_metrics()``).

    Attributes:
        timestamp: When it was reported, in milliseconds since the epoch.
        trialJobId: The trial's id.
        parameterId: The trial's number, as a string (as NNI sends it).
        type: ``'PERIODICAL'`` for an intermediate result, ``'FINAL'`` for the final one.
        sequence: The intermediate result's index (its step); 0 for the final one.
        data: The result: a number, or a dict whose ``default`` is the objective.
    """

    timestamp: int
    trialJobId: str
    parameterId: str
    type: str
    sequence: int
    data: Any

    def __init__(
        self,
        timestamp: int,
        trialJobId: str,
        parameterId: str,
        type: str,
        sequence: int,
        data: str,
    ) -> None:
        self.timestamp = timestamp
        self.trialJobId = trialJobId
        self.parameterId = parameterId
        self.type = type
        self.sequence = sequence
        self.data = json.loads(json.loads(data))


@dataclasses.dataclass
class TrialHyperParameters:
    """The parameters a trial runs with, as NNI's dispatcher sends them.

    Attributes:
        parameter_id: The trial's number for its own parameters (phase 0); for a later phase
            of a multi-phase trial, the number they were proposed under.
        parameter_source: ``'algorithm'`` (proposed by the tuner) or ``'customized'`` (added
            by hand).
        parameters: The parameters.
        parameter_index: 0 for the trial's own parameters, 1, 2... for its later phases.
        placement_constraint: Not used by hyperlab.
        version_info: Not used by hyperlab.
    """

    parameter_id: int
    parameter_source: str
    parameters: dict[str, Any]
    parameter_index: int
    placement_constraint: dict[str, Any] | None = None
    version_info: dict[str, Any] | None = None


@dataclasses.dataclass(init=False)
class TrialJob:
    """A trial (``Experiment.get_trial_job(id)``, ``list_trial_jobs()``).

    Attributes:
        trialJobId: The trial's id (``<experiment id>-<number>``).
        status: NNI's status: ``WAITING``, ``RUNNING``, ``SUCCEEDED``, ``FAILED``,
            ``EARLY_STOPPED``, ``USER_CANCELED`` or ``SYS_CANCELED``.
        hyperParameters: Its parameters (one ``TrialHyperParameters``).
        logPath: Its folder, as a ``file://`` URL.
        startTime: When it started (or was created, while waiting), in ms since the epoch.
        endTime: When it ended, in ms since the epoch; -1 while it has not.
        finalMetricData: Its final result, once it succeeded.
        stderrPath: Its ``stderr.log``, once it failed; ``''`` otherwise.
        sequenceId: Its number.
        message: Not used by hyperlab (``'--'``).
    """

    trialJobId: str
    status: str
    hyperParameters: list[TrialHyperParameters]
    logPath: str
    startTime: int
    endTime: int
    finalMetricData: list[TrialMetricData]
    stderrPath: str
    sequenceId: int
    message: str

    def __init__(
        self,
        trialJobId: str,
        status: str,
        startTime: int,
        sequenceId: int,
        logPath: str = "",
        endTime: int = -1,
        stderrPath: str = "",
        hyperParameters: list[str] | None = None,
        finalMetricData: list[dict[str, Any]] | None = None,
        message: str = "--",
        **kwargs: Any,
    ) -> None:
        self.trialJobId = trialJobId
        self.status = status
        self.hyperParameters = [
            TrialHyperParameters(**json.loads(text)) for text in hyperParameters or []
        ]
        self.logPath = logPath
        self.startTime = startTime
        self.endTime = endTime
        self.finalMetricData = [TrialMetricData(**item) for item in finalMetricData or []]
        self.stderrPath = stderrPath
        self.sequenceId = sequenceId
        self.message = message
